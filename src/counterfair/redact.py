"""Secrets never written: a URL's credentials (``http://user:SECRET@host/v1``) are shown as ``user:***@``, a bare token
in a URL's user part (``http://TOKEN@host``) as ``***@``, in every JSON and report page counterfair writes and in the
messages of the clients that talk to servers. The clients themselves keep the URL as given (httpx sends its user part
as Basic authentication); only what is shown or written is redacted. ``OPENAI_API_KEY`` is read from the environment
and never recorded."""

from __future__ import annotations

import re
from typing import Any

_CREDENTIALS = re.compile(r"(?P<scheme>\b[a-zA-Z][\w+.-]*://)(?P<user>[^\s/@:?#]*)(?P<secret>:[^\s/@?#]*)?@")


def redact(text: str) -> str:
    """``text`` with the credentials of every URL in it replaced: ``user:***@``, or ``***@`` for a bare token."""
    if "@" not in text or "://" not in text:
        return text
    return _CREDENTIALS.sub(lambda m: f"{m['scheme']}{m['user']}:***@" if m["secret"] else f"{m['scheme']}***@", text)


def redacted(value: Any) -> Any:
    """A JSON-like value with every string :func:`redact`-ed (mappings, lists and tuples walked)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redacted(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redacted(v) for v in value]
    return value
