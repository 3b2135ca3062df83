"""The rating web app: FastAPI, HTML rendered on the server (no front-end build), one page per pair.

(FastAPI resolves the handlers' type hints from this module's globals, so its names are imported at the top;
only ``counterfair rate serve`` and the tests import this module.)

Security: it binds 127.0.0.1 unless told otherwise, and on any other address every request needs the access token
(given once as ``?token=...``, then kept in a cookie); the Host header must name the bound address (a DNS-rebinding
page that resolves its own name to 127.0.0.1 is refused); every text is HTML-escaped (the texts are internet comments
and may contain markup or script) and the Content-Security-Policy allows only this app's own script and stylesheet;
every form carries a per-session CSRF token, and POSTs from another origin are refused; each rater name has a
passphrase, set at its first sign-in; a rating is accepted only for the pair the app offered that rater.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Form, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.middleware.sessions import SessionMiddleware

from ..errors import InputError
from ..views.report import edit_html
from .store import ProjectGone, Rating, RatingStore, rater_name

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
STATIC = Path(__file__).parent / "static"
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; script-src 'self'; form-action 'self'; base-uri 'none'; "
        "frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def host_name(header: str) -> str:
    """The host of a Host header, without its port (``[::1]:8765`` -> ``::1``)."""
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class _Pages:
    """What the handlers share: the store, the templates, the session's CSRF token and the rating page."""

    def __init__(self, store: RatingStore) -> None:
        self.store = store
        self.env = Environment(
            loader=FileSystemLoader(Path(__file__).parent / "templates"), autoescape=select_autoescape(["j2"])
        )

    def render(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        return HTMLResponse(self.env.get_template(name).render(**context), status_code=status)

    @staticmethod
    def csrf_of(request: Request) -> str:
        session = request.session
        if "csrf" not in session:
            session["csrf"] = secrets.token_urlsafe(24)
        return str(session["csrf"])

    @staticmethod
    def check_csrf(request: Request, value: str) -> bool:
        expected = request.session.get("csrf")
        origin = request.headers.get("origin")
        if origin and origin != "null":
            host = request.headers.get("host", "")
            if origin.split("://", 1)[-1] != host:
                return False
        return bool(expected) and hmac.compare_digest(str(expected).encode("utf-8"), value.encode("utf-8"))

    def page(self, request: Request, rater: str, *, error: str | None = None, status: int = 200) -> Response:
        """The next pair this rater has not rated, or the done page."""
        pair = self.store.next_pair(rater)
        progress = self.store.progress(rater)
        if pair is None:
            return self.render("done.html.j2", status, rater=rater, progress=progress, csrf=self.csrf_of(request))
        return self.render(
            "rate.html.j2",
            status,
            rater=rater,
            pair=pair,
            progress=progress,
            csrf=self.csrf_of(request),
            diff_html=edit_html(pair["original"], pair["counterfactual"]),
            error=error,
        )


def create_app(
    directory: str | Path,
    *,
    token: str | None = None,
    secret: str | None = None,
    allowed_hosts: set[str] | None = LOOPBACK,
) -> Any:
    """The app for the rating project in ``directory``; ``token`` (if given) is required on every request, and the
    Host header must be one of ``allowed_hosts`` (``None``: any, for a wildcard bind behind the token)."""
    app = FastAPI(title="counterfair rating", docs_url=None, redoc_url=None, openapi_url=None)
    pages = _Pages(RatingStore(directory))
    _guard(app, token, allowed_hosts)

    @app.exception_handler(ProjectGone)
    async def gone(request: Request, err: ProjectGone) -> Response:
        return JSONResponse({"error": f"{err}; every rating saved so far is in that file"}, status_code=503)

    _sign_in_routes(app, pages)
    _rating_routes(app, pages)
    app.add_middleware(
        SessionMiddleware,
        secret_key=secret or secrets.token_urlsafe(32),
        same_site="strict",
        session_cookie="cf_session",
    )
    return app


def _guard(app: FastAPI, token: str | None, allowed_hosts: set[str] | None) -> None:
    """The Host check, the access token and the security headers, on every answer (refusals too). The cookie holds
    the token's sha256, not the token: a cookie must be Latin-1, a token may hold any character ("tök€n")."""
    cookie = hashlib.sha256(token.encode("utf-8")).hexdigest().encode("ascii") if token is not None else b""

    async def guarded(request: Request, call_next: Any) -> Response:
        if allowed_hosts is not None and host_name(request.headers.get("host", "")) not in allowed_hosts:
            return JSONResponse({"error": "this Host header does not name the rating app's address"}, status_code=400)
        if token is None:
            return await call_next(request)  # type: ignore[no-any-return]
        given = request.query_params.get("token")
        if given is not None:  # bytes: any characters
            allowed = hmac.compare_digest(given.encode("utf-8"), token.encode("utf-8"))
        else:
            allowed = hmac.compare_digest(request.cookies.get("cf_token", "").encode("ascii", "replace"), cookie)
        if not allowed:
            return JSONResponse({"error": "an access token is required (start URL ?token=...)"}, status_code=401)
        response: Response = await call_next(request)
        if given is not None:
            response.set_cookie("cf_token", cookie.decode("ascii"), httponly=True, samesite="strict")
        return response

    @app.middleware("http")
    async def secure(request: Request, call_next: Any) -> Response:
        response = await guarded(request, call_next)
        response.headers.update(SECURITY_HEADERS)
        return response


def _sign_in_routes(app: FastAPI, pages: _Pages) -> None:
    """The static files, the sign-in page, sign in (a passphrase per rater name) and sign out."""

    @app.get("/static/{name}")
    def static(name: str) -> Response:
        kinds = {"rate.js": "text/javascript", "rate.css": "text/css"}
        if name not in kinds:
            return Response(status_code=404)
        return Response((STATIC / name).read_bytes(), media_type=kinds[name])

    @app.get("/", response_class=HTMLResponse)
    def home(request: Request) -> Response:
        if request.session.get("rater"):
            return RedirectResponse("/rate", status_code=303)
        return pages.render("login.html.j2", csrf=pages.csrf_of(request), error=None)

    @app.post("/login")
    def login(request: Request, rater: str = Form(...), passphrase: str = Form(""), csrf: str = Form(...)) -> Response:
        def refuse(status: int, error: str) -> Response:
            return pages.render("login.html.j2", status, csrf=pages.csrf_of(request), error=error)

        if not pages.check_csrf(request, csrf):
            return refuse(403, "The form expired; please try again.")
        name = rater_name(rater)  # look-alike names (full-width letters, zero-width spaces) are one rater
        if not name or name.startswith("llm:"):
            return refuse(400, "Please give a rater name.")
        if len(passphrase) < 4:
            return refuse(400, "Please give a passphrase of at least 4 characters.")
        if not pages.store.sign_in(name, passphrase):
            return refuse(403, "This rater name is taken and the passphrase does not match.")
        request.session["rater"] = name
        return RedirectResponse("/rate", status_code=303)

    @app.post("/logout")
    def logout(request: Request, csrf: str = Form(...)) -> Response:
        if pages.check_csrf(request, csrf):
            request.session.clear()
        return RedirectResponse("/", status_code=303)


def _rating_routes(app: FastAPI, pages: _Pages) -> None:
    """The rating page, a rating (accepted only for the pair offered to this rater) and the progress API."""
    store = pages.store

    @app.get("/rate", response_class=HTMLResponse)
    def rate_page(request: Request) -> Response:
        rater = request.session.get("rater")
        if not rater:
            return RedirectResponse("/", status_code=303)
        return pages.page(request, str(rater))

    @app.post("/rate")
    def rate(
        request: Request,
        pair_id: str = Form(...),
        csrf: str = Form(...),
        fluent: str = Form(""),
        reference: str = Form(""),
        same_label: str = Form(""),
        meaning: str = Form(""),
        reject: str = Form(""),
    ) -> Response:
        rater = request.session.get("rater")
        if not rater:
            return RedirectResponse("/", status_code=303)
        if not pages.check_csrf(request, csrf):
            return pages.page(
                request, str(rater), error="The form expired or came from elsewhere; nothing was saved.", status=403
            )
        offered = store.next_pair(str(rater))
        if offered is None or offered["pair_id"] != pair_id:
            return pages.page(
                request, str(rater), error="That pair was not offered to you; nothing was saved.", status=409
            )
        try:
            value = int(meaning)
        except ValueError:
            return pages.page(request, str(rater), error="Please choose a similarity of meaning (0-4).", status=400)
        try:
            store.add(Rating(pair_id, str(rater), fluent, reference, same_label, value, reject == "1"))
        except InputError as err:
            return pages.page(request, str(rater), error=f"Not saved: {err}", status=400)
        return RedirectResponse("/rate", status_code=303)

    @app.get("/api/progress")
    def api_progress(request: Request) -> dict[str, int]:
        return store.progress(request.session.get("rater"))


def serve(
    directory: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    allowed_hosts: list[str] | None = None,
) -> None:
    """Run the app with uvicorn. On a non-loopback address a token is required (generated when not given).

    The Host header must name the bound address (loopback names on loopback; the address itself otherwise); on a
    wildcard bind (0.0.0.0, ::) any host is accepted unless ``allowed_hosts`` lists the names raters use.
    SIGTERM and Ctrl+C stop the server within a few seconds even while a request is being answered."""
    import uvicorn
    from rich.console import Console

    console = Console(stderr=True)
    if host not in LOOPBACK and not token:
        token = secrets.token_urlsafe(16)
    hosts: set[str] | None = set(allowed_hosts) if allowed_hosts else None
    if hosts is None and host not in ("0.0.0.0", "::"):
        hosts = LOOPBACK if host in LOOPBACK else {host}
    app = create_app(directory, token=token if host not in LOOPBACK or token else None, allowed_hosts=hosts)
    url = f"http://{host}:{port}/" + (f"?token={token}" if token else "")
    console.print(f"rating app for {directory}: open {url}  (Ctrl+C to stop)")
    uvicorn.run(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=3)
