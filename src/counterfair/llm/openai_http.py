"""Any OpenAI-compatible HTTP endpoint: vLLM, SGLang, Ollama, llama.cpp's server, hosted APIs.

Uses ``/v1/completions`` for raw prompts and ``/v1/chat/completions`` for message lists. Batching servers (vLLM,
SGLang, ``llama-server --parallel N``) are fast only when they have many requests at once, so the client keeps up to
up to ``concurrency`` sequences in flight (a request of ``n`` samples counts ``n``; a thread pool over one
connection pool; ``--llm-concurrency``, ``COUNTERFAIR_LLM_CONCURRENCY``), over all the samples of all the inputs of a
call, and puts the answers back in input order.

Samples: with ``n_per_request="auto"`` (the default) the first call with ``n`` > 1 asks for all ``n`` samples of an
input in one request (OpenAI, vLLM: the prompt is processed once); a server that refuses ``n`` or answers fewer
choices is asked one request per sample from then on (``seed + i`` for sample ``i``, reproducible on servers that
honour ``seed``). ``"on"``/``"off"`` force either. Each request is retried with exponential backoff on connection
errors, timeouts, HTTP 429 and 5xx (each retry said as a ``RuntimeWarning``); a redirect is refused, naming where
it points (following it would send the API key on); a request that still fails is reported for its input
(:class:`LLMRequestsFailed`) after every other request has finished, so the answers already received are kept.
``top_k`` is sent as an extra field, which vLLM and llama.cpp honour.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..errors import ConfigError, CounterfairError
from ..jsontypes import JSONObject
from ..progress import NullProgress, ProgressHook, answered
from ..redact import redact
from .base import Completion, Message, SamplingParams
from .values import Position

DEFAULT_CONCURRENCY = 32  # enough to keep a 16-slot llama-server or a vLLM replica busy


class LLMServerError(CounterfairError):
    """The LLM server is down, too slow, or answered something that is not a completion."""


class LLMRequestsFailed(LLMServerError):
    """Some inputs' requests failed after their retries; ``completed`` holds every other input's samples (None for
    a failed input) and ``failures`` the reason per failed input index."""

    def __init__(self, failures: dict[int, str], completed: list[list[Completion] | None]) -> None:
        self.failures = failures
        self.completed = completed
        shown = "; ".join(f"input {k}: {why}" for k, why in list(failures.items())[:3])
        more = f" (and {len(failures) - 3} more)" if len(failures) > 3 else ""
        super().__init__(
            f"{len(failures)} of {len(completed)} inputs got no answer from the LLM server: {shown}{more}; "
            "the other inputs' samples were kept"
        )


class _Refused(LLMServerError):
    """HTTP 4xx other than 429: the request itself is wrong, retrying will not help."""


def _first_token_logprobs(choice: dict[str, Any]) -> tuple[tuple[str, float], ...]:
    """The first token's top alternatives in a choice's ``logprobs`` (chat or completions format), if any."""
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, dict):
        return ()
    content = logprobs.get("content")
    try:  # a server's numbers that are not numbers: no alternatives, as when it sends none
        if isinstance(content, list) and content and isinstance(content[0], dict):  # chat completions
            top = content[0].get("top_logprobs") or []
            if isinstance(top, list):
                pairs = ((t.get("token", ""), t.get("logprob", -math.inf)) for t in top if isinstance(t, dict))
                return tuple((str(token), float(logprob)) for token, logprob in pairs)
        top_list = logprobs.get("top_logprobs")
        if isinstance(top_list, list) and top_list and isinstance(top_list[0], dict):  # completions: [{token: logprob}]
            return tuple((str(k), float(v)) for k, v in top_list[0].items())
    except (TypeError, ValueError):
        return ()
    return ()


def _trace(choice: dict[str, Any]) -> tuple[Position, ...]:
    """Every token of a choice's answer with its log-probability and top alternatives: the chat shape
    (``logprobs.content``: ``[{token, logprob, top_logprobs: [{token, logprob}]}]``) or the completions shape that
    llama-cpp-python's server also answers chat requests in (``tokens``, ``token_logprobs``, ``top_logprobs``:
    ``[{token: logprob}]``); empty when the server sent none or sent numbers that are not numbers."""
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, dict):
        return ()
    try:
        content = logprobs.get("content")
        if isinstance(content, list):
            return tuple(
                Position(
                    str(item.get("token", "")),
                    float(item.get("logprob", -math.inf)),
                    tuple(
                        (str(t.get("token", "")), float(t.get("logprob", -math.inf)))
                        for t in item.get("top_logprobs") or []
                        if isinstance(t, dict)
                    ),
                )
                for item in content
                if isinstance(item, dict)
            )
        tokens, chosen = logprobs.get("tokens"), logprobs.get("token_logprobs")
        if isinstance(tokens, list) and isinstance(chosen, list) and len(tokens) == len(chosen):
            tops = logprobs.get("top_logprobs")
            tops = tops if isinstance(tops, list) and len(tops) == len(tokens) else [{}] * len(tokens)
            return tuple(
                Position(
                    str(token),
                    float(lp) if lp is not None else -math.inf,
                    tuple((str(k), float(v)) for k, v in (top or {}).items()) if isinstance(top, dict) else (),
                )
                for token, lp, top in zip(tokens, chosen, tops, strict=True)
            )
    except (TypeError, ValueError, AttributeError):
        return ()
    return ()


#: the top alternatives per token asked of a server, most first: OpenAI and vLLM give up to 20, TGI 5
TOP_LOGPROBS = (20, 5)
MAX_RETRY_AFTER = 60.0  # the longest wait a server's Retry-After is honoured for


class _Window:
    """The requests a client keeps in flight: at most ``size`` (at least 1), halved when the server times out or
    says it is busy (429, 503), and grown back by one per ``size`` answers, up to ``cap`` (additive increase,
    multiplicative decrease: a one-slot server settles the client near what it can serve)."""

    def __init__(self, cap: int) -> None:
        self.cap, self.size, self.used = cap, float(cap), 0
        self._cond = threading.Condition()
        self._open = False  # released for good (a stop): nobody waits

    def __enter__(self) -> None:
        with self._cond:
            while not self._open and self.used >= max(1, int(self.size)):
                self._cond.wait()
            self.used += 1

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self.used -= 1
            self._cond.notify_all()

    def shrink(self) -> None:
        with self._cond:
            self.size = max(1.0, self.size / 2)

    def grow(self) -> None:
        with self._cond:
            self.size = min(float(self.cap), self.size + 1 / self.size)
            self._cond.notify_all()

    def release_all(self) -> None:
        with self._cond:
            self._open = True
            self._cond.notify_all()


def default_concurrency() -> int:
    configured = os.environ.get("COUNTERFAIR_LLM_CONCURRENCY", "").strip()
    if not configured:
        return DEFAULT_CONCURRENCY
    if not configured.isdigit() or int(configured) < 1:
        raise ConfigError(f"COUNTERFAIR_LLM_CONCURRENCY={configured!r}: expected a positive whole number")
    return int(configured)


class OpenAIHTTPLLM:
    """Client for an OpenAI-compatible server at ``base_url`` (e.g. ``http://127.0.0.1:8000/v1``)."""

    def __init__(
        self,
        base_url: str,
        *,
        model: str = "default",
        api_key: str | None = None,
        timeout: float = 120.0,
        retries: int = 2,
        context: int = 4096,
        concurrency: int | None = None,
        n_per_request: str = "auto",
        backoff: float = 1.0,
    ) -> None:
        base = base_url.rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise ConfigError(f"LLM endpoint {base_url!r} must start with http:// or https://")
        if n_per_request not in ("auto", "on", "off"):
            raise ConfigError(f"n_per_request must be auto, on or off, got {n_per_request!r}")
        self.base_url = base if base.endswith("/v1") else f"{base}/v1"
        self.shown_url = redact(self.base_url)  # what messages, the model's id and the records show
        self.model = model
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.timeout = timeout
        self.retries = retries
        self.context = context
        self.concurrency = concurrency if concurrency is not None else default_concurrency()
        if self.concurrency < 1:
            raise ConfigError(f"concurrency must be at least 1, got {self.concurrency}")
        self.backoff = backoff
        self.n_per_request = n_per_request
        self._n_supported: bool | None = {"on": True, "off": False}.get(n_per_request)
        self._top_logprobs: int | None = None  # alternatives per token the server allows (0: none); found once
        self._window = _Window(self.concurrency)  # requests in flight: halved on a timeout or 429, regrown slowly
        self._aborted = threading.Event()  # set by a stop (SIGTERM, Ctrl+C): nothing more is sent
        self._client: Any = None
        self._client_lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return f"{self.model}@{self.shown_url}"

    def _http(self) -> Any:
        with self._client_lock:
            if self._client is None:
                import httpx

                limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
                headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
                self._client = httpx.Client(limits=limits, headers=headers, timeout=self.timeout)
            return self._client

    def _abort(self) -> None:
        """Cut the connections of the requests in flight (their threads see an error at once and end, so the process
        can exit without waiting out the server), then forget the client: a later call opens a new one."""
        self._aborted.set()
        self._window.release_all()
        with self._client_lock:
            client, self._client = self._client, None
        if client is None:
            return
        import socket

        pool = getattr(getattr(client, "_transport", None), "_pool", None)
        for connection in list(getattr(pool, "connections", []) or []):
            stream = getattr(getattr(connection, "_connection", None), "_network_stream", None)
            sock = getattr(stream, "_sock", None)
            if isinstance(sock, socket.socket):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked reading it, as close() alone does not
        with contextlib.suppress(Exception):
            client.close()

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        import httpx

        from ..httpjson import BadAnswer, post_json

        url = f"{self.base_url}{path}"
        shown = f"{self.shown_url}{path}"
        last = ""
        for attempt in range(self.retries + 1):
            wait: float | None = None  # what the server asked for (Retry-After), bounded
            if self._aborted.is_set():
                raise LLMServerError("the run was stopped")
            try:  # the body capped after decompression, the whole answer within the timeout
                with self._window:
                    answer = post_json(self._http(), url, payload, deadline=self.timeout)
            except httpx.TimeoutException:
                self._window.shrink()  # a server that cannot keep up: fewer requests in flight
                last = f"no answer within {self.timeout:g} s"
            except httpx.HTTPError as err:
                last = f"cannot connect ({type(err).__name__}: {err})"
            except BadAnswer as err:
                raise LLMServerError(f"LLM server {err}") from None
            else:
                if 300 <= answer.status < 400:  # not followed: a redirect would resend the API key elsewhere
                    where = redact(answer.location) if answer.location else "no Location"
                    raise LLMServerError(
                        f"LLM server {shown} redirects (HTTP {answer.status}) to {where}; counterfair does not follow "
                        "redirects: give the endpoint it names (openai:URL#MODEL, the URL ending in /v1)"
                    )
                if answer.status < 400:
                    self._window.grow()
                    data = answer.data
                    if data is None:
                        raise LLMServerError(f"LLM server {shown} answered something that is not JSON: {answer.text!r}")
                    choices = data.get("choices") if isinstance(data, dict) else None
                    if not isinstance(choices, list) or not choices or not all(isinstance(c, dict) for c in choices):
                        raise LLMServerError(
                            f"LLM server {shown} answered JSON without a list of choices: {answer.text}"
                        )
                    return dict(data)
                if answer.status < 500 and answer.status != 429:
                    raise _Refused(f"LLM server {shown} answered HTTP {answer.status}: {answer.text}")
                last = f"HTTP {answer.status}: {answer.text[:200]}"
                if answer.status in (429, 503):  # busy: fewer in flight, and the wait it asks for (at most 60 s)
                    self._window.shrink()
                    wait = min(answer.retry_after, MAX_RETRY_AFTER) if answer.retry_after is not None else None
            if attempt < self.retries:
                import warnings

                pause = wait if wait is not None else min(self.backoff * 2**attempt, 30.0)
                warnings.warn(  # each retry said (the console shows it), not hidden until the last one fails
                    f"LLM server {shown}: {redact(str(last))}; trying again in {pause:g} s "
                    f"(retry {attempt + 1} of {self.retries})",
                    RuntimeWarning,
                    stacklevel=2,
                )
                time.sleep(pause)
        raise LLMServerError(f"LLM server {shown} failed after {self.retries + 1} tries: {redact(str(last))}")

    def _payload(self, params: SamplingParams, seed: int | None, n: int) -> JSONObject:
        payload: JSONObject = {
            "model": self.model,
            "temperature": params.temperature,
            "top_k": params.top_k,
            "top_p": 1.0,
            "max_tokens": params.max_tokens,
        }
        if n > 1:
            payload["n"] = n
        if seed is not None:
            payload["seed"] = seed
        if params.stop:
            payload["stop"] = list(params.stop)
        return payload

    @staticmethod
    def _choices(data: dict[str, Any], key: str) -> list[Completion]:
        out = []

        def index(choice: Any) -> int:  # a server's index of another type keeps its place
            value = choice.get("index", 0) if isinstance(choice, dict) else 0
            return value if isinstance(value, int) and not isinstance(value, bool) else 0

        for choice in sorted(data["choices"], key=index):
            message = choice.get("message")
            text = (
                choice.get("text") if key == "text" else message.get("content") if isinstance(message, dict) else None
            )
            if not isinstance(text, str):
                raise LLMServerError(f"LLM server answered a choice without {key!r}: {str(choice)[:200]}")
            reason = str(choice.get("finish_reason") or "stop")
            out.append(Completion(text, reason, _first_token_logprobs(choice), _trace(choice)))
        return out

    def _probe_n(
        self, path: str, key: str, body: dict[str, Any], params: SamplingParams
    ) -> tuple[bool, list[Completion] | None]:
        """Whether ``n`` samples go in one request. With ``auto``, the first such call asks the server with its first
        input, whose samples come back too when the server obliges."""
        if params.n == 1 or self._n_supported is False:
            return False, None
        if self._n_supported:
            return True, None
        try:
            got = self._choices(self._post(path, {**self._payload(params, params.seed_of(0), params.n), **body}), key)
        except _Refused:
            got = []
        self._n_supported = len(got) == params.n
        return self._n_supported, (got if self._n_supported else None)

    def _run(
        self, path: str, key: str, bodies: Sequence[dict[str, Any]], params: SamplingParams, hook: ProgressHook
    ) -> list[list[Completion]]:
        if not bodies:
            return []
        grouped, probed = self._probe_n(path, key, bodies[0], params)
        # one request per input (n samples) or per sample; (input, first sample, samples, seed)
        requests = (
            [(k, 0, params.n, params.seed_of(k)) for k in range(1 if probed else 0, len(bodies))]
            if grouped
            else [
                (k, i, 1, None if (first := params.seed_of(k)) is None else first + i)
                for k in range(len(bodies))
                for i in range(params.n)
            ]
        )
        results: list[list[Completion | None]] = [[None] * params.n for _ in bodies]
        if probed:
            results[0] = list(probed)
            hook.advance(params.n)
            answered(hook, 0, list(probed))
        failures: dict[int, str] = {}
        lock = threading.Lock()

        def send(request: tuple[int, int, int, int | None]) -> None:
            k, first, n, seed = request
            with lock:
                if k in failures:
                    return  # one sample of this input failed for good: its other requests are not sent
            try:
                got = self._choices(self._post(path, {**self._payload(params, seed, n), **bodies[k]}), key)
                if len(got) < n:
                    raise LLMServerError(f"asked for {n} samples, the server answered {len(got)}")
            except LLMServerError as err:
                with lock:
                    failures.setdefault(k, str(err))
                return
            with lock:
                results[k][first : first + n] = got[:n]
                whole = all(c is not None for c in results[k])
            hook.advance(n)
            if whole:  # every sample of input k is in: a listening hook (a checkpoint) takes it now
                answered(hook, k, list(results[k]))

        # ``concurrency`` counts sequences a server decodes at once: a request of n samples is n of them
        per_request = params.n if grouped else 1
        workers = max(1, min(self.concurrency // per_request, len(requests)))
        if self._aborted.is_set():  # a call after a stop (a resume in the same process): a fresh window
            self._aborted.clear()
            self._window = _Window(self.concurrency)
        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            list(pool.map(send, requests))  # map re-raises anything unexpected
        except BaseException:  # Ctrl+C, SIGTERM: nothing more is sent, and the requests in flight are cut off
            pool.shutdown(wait=False, cancel_futures=True)
            self._abort()
            raise
        pool.shutdown(wait=True)
        if failures:
            completed = [None if k in failures else [c for c in row if c is not None] for k, row in enumerate(results)]
            raise LLMRequestsFailed(dict(sorted(failures.items())), completed)
        return [[c for c in row if c is not None] for row in results]

    def complete(
        self, prompts: Sequence[str], params: SamplingParams, *, progress: ProgressHook | None = None
    ) -> list[list[Completion]]:
        return self._run("/completions", "text", [{"prompt": p} for p in prompts], params, progress or NullProgress())

    def chat(
        self,
        conversations: Sequence[Sequence[Message]],
        params: SamplingParams,
        *,
        progress: ProgressHook | None = None,
    ) -> list[list[Completion]]:
        bodies = [{"messages": list(messages)} for messages in conversations]
        return self._run("/chat/completions", "message", bodies, params, progress or NullProgress())

    def answer_logprobs(
        self, conversations: Sequence[Sequence[Message]], answers: Sequence[str]
    ) -> list[list[float]] | None:
        """Per conversation, the log-probability that the reply starts with each of ``answers``, from the server's
        ``top_logprobs`` of the first token (an answer not among the top 20 gets -inf); None when the server gives
        no log-probabilities."""
        params = SamplingParams(n=1, temperature=0.0, max_tokens=1, seed=0)
        bodies = [{"messages": list(m), "logprobs": True, "top_logprobs": 20} for m in conversations]
        replies = self._run("/chat/completions", "message", bodies, params, NullProgress())
        out = []
        for reply in replies:
            top = reply[0].first_token_logprobs
            if not top:
                return None
            out.append([max((lp for tok, lp in top if tok.strip() == a), default=-math.inf) for a in answers])
        return out

    def greedy_traces(
        self, conversations: Sequence[Sequence[Message]], *, max_tokens: int, progress: ProgressHook | None = None
    ) -> list[tuple[Position, ...] | None] | None:
        """Each conversation's greedy answer token by token with its top alternatives (None for one whose request
        failed after its retries, or that came back without them); None when the server gives no log-probabilities.
        The first request finds how many alternatives the server allows (:data:`TOP_LOGPROBS`, then none: a 4xx to
        one cap is asked again with the next), and the rest ask that many."""
        if not conversations:
            return []
        params = SamplingParams(n=1, temperature=0.0, max_tokens=max_tokens, seed=0)
        first: tuple[Position, ...] = ()
        if self._top_logprobs is None:
            for cap in TOP_LOGPROBS:
                body = {"messages": list(conversations[0]), "logprobs": True, "top_logprobs": cap}
                try:
                    reply = self._choices(
                        self._post("/chat/completions", {**self._payload(params, 0, 1), **body}), "message"
                    )
                except _Refused:
                    continue
                first = reply[0].trace
                self._top_logprobs = cap if first else 0
                break
            else:
                self._top_logprobs = 0
        if not self._top_logprobs:
            return None
        hook = progress or NullProgress()
        rest = conversations[1:] if first else conversations
        bodies = [{"messages": list(m), "logprobs": True, "top_logprobs": self._top_logprobs} for m in rest]
        try:
            got: list[list[Completion] | None] = list(self._run("/chat/completions", "message", bodies, params, hook))
        except LLMRequestsFailed as err:
            got = list(err.completed)
        traces = [(row[0].trace or None) if row else None for row in got]
        return [first, *traces] if first else traces

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)  # a server does not share its tokenizer; ~4 characters per token

    def context_size(self) -> int:
        return self.context

    def info(self) -> JSONObject:
        return {
            "backend": "openai-http",
            "base_url": self.shown_url,
            "model": self.model,
            "n_per_request": self.n_per_request,
        }


__all__ = ["LLMRequestsFailed", "LLMServerError", "OpenAIHTTPLLM"]
