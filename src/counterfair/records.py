"""Records that flow through counterfair: candidate edits and counterfactuals.

A :class:`Counterfactual` carries its status and provenance so that nothing is dropped silently: a
filtered candidate keeps its reason, a failed one keeps the error.
"""

from __future__ import annotations

import dataclasses as _dc
import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

#: Version of every table and JSON document counterfair writes. Bump on incompatible changes.
SCHEMA_VERSION = "1"

STATUS_KINDS = ("ok", "unchanged", "partial", "filtered", "skipped", "failed")


def make_status(kind: str, reason: str | None = None) -> str:
    """Build a status string such as ``"ok"`` or ``"filtered:bleu_below_0.5"``."""
    if kind not in STATUS_KINDS:
        raise ValueError(f"unknown status kind {kind!r}; expected one of {', '.join(STATUS_KINDS)}")
    if reason is None:
        return kind
    reason = reason.strip().replace(" ", "_")
    if not reason:
        raise ValueError("a status reason must not be empty")
    return f"{kind}:{reason}"


def status_kind(status: str) -> str:
    """The kind part of a status string (``"filtered:x"`` -> ``"filtered"``); validates it."""
    kind = status.split(":", 1)[0]
    if kind not in STATUS_KINDS:
        raise ValueError(f"malformed status {status!r}")
    return kind


def params_hash(params: Mapping[str, Any]) -> str:
    """A short, stable hash of a parameter mapping (canonical JSON, sha256, 12 hex digits)."""
    blob = json.dumps(params, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]


def make_options(kind: Any, given: Mapping[str, Any]) -> Any:
    """``kind(**given)`` for an options dataclass, with an unknown option named in a ``ConfigError``."""
    from .errors import ConfigError

    known = set(kind.__dataclass_fields__)
    unknown = sorted(set(given) - known)
    if unknown:
        raise ConfigError(f"unknown option(s) {', '.join(unknown)}; the options are: {', '.join(sorted(known))}")
    return kind(**given)


@dataclass(frozen=True)
class Edit:
    """One replaced span: characters ``start:end`` of the source became ``new``."""

    start: int
    end: int
    old: str
    new: str


@dataclass(frozen=True)
class Candidate:
    """One output of an editor for one input, before filtering."""

    text: str
    editor: str
    params_hash: str
    edits: tuple[Edit, ...] = ()
    seed: int | None = None
    model_ids: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Counterfactual:
    """A counterfactual of ``source_text`` with its status (see :func:`make_status`) and provenance."""

    source_id: str
    source_text: str
    text: str
    editor: str
    params_hash: str
    status: str
    edits: tuple[Edit, ...] = ()
    scores: Mapping[str, float] = field(default_factory=dict)
    seed: int | None = None
    model_ids: tuple[str, ...] = ()
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        status_kind(self.status)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict including ``schema_version``."""
        out = asdict(self)
        out["schema_version"] = SCHEMA_VERSION
        return out


# ------------------------------------------------------------------------------------------------ run identity


def knob(default: Any = _dc.MISSING, **kwargs: Any) -> Any:
    """An options field that changes how fast a run goes, not what it makes: not part of the run's identity, so a
    rerun with another value resumes."""
    return _dc.field(default=default, metadata={"identity": False}, **kwargs)


def run_identity(options: Any) -> dict[str, Any]:
    """The fields of an options dataclass that identify a run, in field order (``asdict`` values). Left out: a
    :func:`knob`; a field whose metadata ``applies(options)`` is false; a field with metadata ``later=True`` (added
    after runs existed) while it has its default."""
    values = _dc.asdict(options)
    out: dict[str, Any] = {}
    for f in _dc.fields(options):
        applies = f.metadata.get("applies")
        if f.metadata.get("identity", True) is False or (applies is not None and not applies(options)):
            continue
        if f.metadata.get("later") and values[f.name] == _default(f):
            continue
        out[f.name] = values[f.name]
    return out


def _default(f: _dc.Field[Any]) -> Any:
    if f.default_factory is not _dc.MISSING:
        return f.default_factory()
    return f.default


def fingerprint(identifying: Mapping[str, Any], **more: Any) -> str:
    """The options fingerprint in ``run.json``: the identifying options' hash; with ``more`` (an editor and its
    parameters), the hash of the options beside them."""
    return params_hash({"options": dict(identifying), **more} if more else identifying)
