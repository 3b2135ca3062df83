"""Secrets never written: a URL's credentials (``http://user:SECRET@host/v1``, a password holding "@" included) are
shown as ``user:***@``, a bare token in a URL's user part (``http://TOKEN@host``) as ``***@``, a key in its query
(``?api_key=SECRET``) as ``api_key=***``, in every JSON and report page counterfair writes, in the experiment tracker's
parameters, run names and tags, in error messages, warnings and crash logs, and in the messages of the clients that
talk to servers. The clients themselves keep the URL as given (httpx sends its user part
as Basic authentication); only what is shown or written is redacted. ``OPENAI_API_KEY`` is read from the environment
and never recorded."""

from __future__ import annotations

import re
from typing import Any

#: a URL's user information: everything before the last "@" of its authority (a password may hold "@" or ":")
_CREDENTIALS = re.compile(r"(?P<scheme>\b[a-zA-Z][\w+.-]*://)(?P<userinfo>[^\s/?#]*)@")
#: query parameters that carry a secret (``?api_key=...``, ``&token=...``, ``&sig=...``)
KEY_PARAMETERS = (
    "api_key apikey api-key key token access_token access-token auth auth_token secret client_secret password passwd "
    "pwd sig signature code session sessionid x-api-key"
).split()
_QUERY_SECRET = re.compile(
    r"(?P<name>[?&;](?:" + "|".join(re.escape(k) for k in KEY_PARAMETERS) + r")=)(?P<value>[^&#\s\"'<>]+)",
    re.IGNORECASE,
)


def _userinfo(match: re.Match[str]) -> str:
    user, colon, _ = match["userinfo"].partition(":")
    return f"{match['scheme']}{user}:***@" if colon else f"{match['scheme']}***@"


def redact(text: str) -> str:
    """``text`` with the secrets of every URL in it replaced: its user information to the last "@" of the authority
    (``user:***@``, or ``***@`` for a bare token) and the values of key-like query parameters
    (:data:`KEY_PARAMETERS`: ``?api_key=***``)."""
    if "@" in text and "://" in text:
        text = _CREDENTIALS.sub(_userinfo, text)
    if "=" in text:
        text = _QUERY_SECRET.sub(lambda m: f"{m['name']}***", text)
    return text


def redacted(value: Any) -> Any:
    """A JSON-like value with every string :func:`redact`-ed (mappings, lists and tuples walked)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redacted(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redacted(v) for v in value]
    return value
