"""One bounded JSON POST for the clients that talk to servers counterfair does not control (the ``http:`` classifier,
the ``openai:`` LLM client): the answer's body is capped after decompression (a 1 MB gzip bomb took 4.6 GB), each
request has a total deadline (a server that drips one byte at a time never ended), and JSON too deep to parse is an
answer error, not a ``RecursionError``. Every failure is a :class:`BadAnswer` or an ``httpx`` error the caller
already reports per input."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from .redact import redact

MAX_BODY_BYTES = 32 * 1024 * 1024  # decompressed; a classifier's scores or an LLM's samples are far smaller


class BadAnswer(Exception):
    """The server answered, but not with something usable: too large, too slow, or not JSON."""


@dataclass(frozen=True)
class Answer:
    status: int
    data: Any  # the parsed JSON, or None when the status is an error or the body is not JSON
    text: str  # the body's start, for messages
    location: str = ""  # where a redirect (3xx) points; counterfair's clients do not follow redirects
    retry_after: float | None = None  # seconds a 429 or 503 asks the client to wait (Retry-After in seconds)


def post_json(
    client: Any, url: str, payload: Any, *, deadline: float, max_bytes: int = MAX_BODY_BYTES, **kwargs: Any
) -> Answer:
    """POST ``payload`` as JSON with ``client`` (an ``httpx.Client``, or the ``httpx`` module); read at most
    ``max_bytes`` of the decompressed body within ``deadline`` seconds in all."""
    started = time.monotonic()
    chunks: list[bytes] = []
    size = 0
    with client.stream("POST", url, json=payload, **kwargs) as response:
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > max_bytes:
                raise BadAnswer(f"{redact(url)} answered more than {max_bytes // (1024 * 1024)} MB; refused")
            chunks.append(chunk)
            if time.monotonic() - started > deadline:
                raise BadAnswer(f"{redact(url)} did not finish its answer within {deadline:.0f} s")
        status = response.status_code
        encoding = _text_encoding(response.encoding)
        location = response.headers.get("location", "")
        retry_after = _seconds(response.headers.get("retry-after", ""))
    body = b"".join(chunks)
    text = body[:300].decode(encoding, errors="replace")
    if status >= 300:
        return Answer(status, None, text, location, retry_after)
    try:
        data = json.loads(body.decode(encoding, errors="replace"))
    except RecursionError:
        raise BadAnswer(f"{redact(url)} answered JSON nested too deeply to read") from None
    except ValueError:
        return Answer(status, None, text)
    return Answer(status, data, text)


def _text_encoding(name: str | None) -> str:
    """The charset a server named, where Python decodes bytes with it; else UTF-8 (an unknown name, or one that is not
    a text encoding: ``charset=rot13`` is a codec of str to str, and decoding with it raised LookupError)."""
    if not name:
        return "utf-8"
    try:
        b"{}".decode(name)
    except (LookupError, ValueError, TypeError):
        return "utf-8"
    return name


def _seconds(value: str) -> float | None:
    """A Retry-After header's delay in seconds (None: absent, a date, or not a number)."""
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None
