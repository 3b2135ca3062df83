"""Records that flow through counterfair: candidate edits and counterfactuals.

A :class:`Counterfactual` carries its status and provenance so that nothing is dropped silently: a
filtered candidate keeps its reason, a failed one keeps the error.
"""

from __future__ import annotations

import dataclasses as _dc
import gc
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from .jsontypes import JSONObject

F = TypeVar("F", bound=Callable[..., Any])

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
    """``kind(**given)`` for an options dataclass, with an unknown option named in a ``ConfigError`` and each value
    checked against its field's type (:func:`checked_value`): ``threshold="x"`` is a sentence, not a TypeError deep in
    a run; a comma-separated string stands for a list (``methods="ablation,swap"``)."""
    check_option_names(given, {f.name for f in _dc.fields(kind) if f.init})
    import typing

    hints = typing.get_type_hints(kind)
    return kind(**{name: checked_value(name, value, hints.get(name)) for name, value in given.items()})


def checked_value(name: str, value: Any, hint: Any) -> Any:
    """``value`` for an option of type ``hint`` (int, float, bool, str, list[str], optionally None), or a
    ``ConfigError`` naming the option; other types pass unchecked."""
    import numbers
    import os
    import types
    import typing

    import numpy as np

    from .errors import ConfigError

    args = typing.get_args(hint)
    optional = typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in args
    if optional:
        rest = [a for a in args if a is not type(None)]
        if value is None:
            return None
        hint = rest[0] if len(rest) == 1 else None
    kinds = {int: "a whole number", float: "a number", bool: "True or False", str: "a string"}
    if hint is str and isinstance(value, os.PathLike):
        return os.fspath(value)  # a file option given as a Path
    if hint is str and isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
        return ",".join(value)  # a list where the option reads a comma-separated string (identities=["gay", ...])
    if hint in kinds:
        number = {float: numbers.Real, int: numbers.Integral}.get(hint)  # numpy's numbers count too
        fits = (
            isinstance(value, number) and not isinstance(value, bool | np.bool_)
            if number is not None
            else isinstance(value, hint | np.bool_)
            if hint is bool
            else isinstance(value, hint)
        )
        if not fits:
            raise ConfigError(f"option {name}: expected {kinds[hint]}, got {value!r}")
        return float(value) if hint is float else int(value) if hint is int else bool(value) if hint is bool else value
    if typing.get_origin(hint) is list and typing.get_args(hint) == (str,):
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise ConfigError(
                f"option {name}: expected a list of strings (or one comma-separated string), got {value!r}"
            )
        return list(value)
    return value


def check_option_names(given: Mapping[str, Any], known: set[str]) -> None:
    """A ``ConfigError`` naming every option of ``given`` not in ``known``, each with a "did you mean"."""
    from difflib import get_close_matches

    from .errors import ConfigError

    unknown = sorted(set(given) - known)
    if unknown:
        named = []
        for name in unknown:
            close = get_close_matches(name, sorted(known), n=1)
            named.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise ConfigError(f"unknown option(s) {', '.join(named)}; the options are: {', '.join(sorted(known))}")


def options_signature(kind: Any, *, skip: tuple[str, ...] = ()) -> Callable[[F], F]:
    """Decorator for a verb that takes ``**options`` for the fields of the options dataclass ``kind``: its signature
    (``help()``, a notebook's signature help and completion) lists every field as a keyword-only parameter with its
    type and default instead of ``**options``; :func:`make_options` names an unknown one (with a "did you mean")."""
    import inspect

    def wrap(fn: F) -> F:
        signature = inspect.signature(fn)
        params = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        have = {p.name for p in params}
        for f in _dc.fields(kind):
            if not f.init or f.name in have or f.name in skip:
                continue
            if f.default is not _dc.MISSING:
                default = f.default
            elif f.default_factory is not _dc.MISSING:
                default = f.default_factory()
            else:
                default = inspect.Parameter.empty
            params.append(inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=f.type))
        fn.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        return fn

    return wrap


@dataclass(frozen=True, slots=True)
class Edit:
    """One replaced span: characters ``start:end`` of the source became ``new``."""

    start: int
    end: int
    old: str
    new: str

    @classmethod
    def of(cls, start: int, end: int, old: str, new: str) -> Edit:
        """The same edit as the constructor builds, without the frozen dataclass's ``object.__setattr__`` per field
        (one edit per variant on the identity swap's hot path, #50)."""
        made = object.__new__(cls)
        _EDIT_START(made, start)
        _EDIT_END(made, end)
        _EDIT_OLD(made, old)
        _EDIT_NEW(made, new)
        return made

    def as_dict(self) -> JSONObject:
        """``dataclasses.asdict`` of the edit, without its recursion (one per candidate on the swap's hot path)."""
        return {"start": self.start, "end": self.end, "old": self.old, "new": self.new}


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector paused while a block builds many small records that hold no reference cycles
    (an identity swap writes ~50 candidates per text): each collection would rescan every record built so far, 40 %
    of a token swap's time (#50). Reference counting still frees what is dropped; a collector already paused (by the
    caller, or an enclosing block) stays paused."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


_NO_META: Mapping[str, Any] = {}


@dataclass(frozen=True, slots=True)
class Candidate:
    """One output of an editor for one input, before filtering."""

    text: str
    editor: str
    params_hash: str
    edits: tuple[Edit, ...] = ()
    seed: int | None = None
    model_ids: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(
        cls, text: str, editor: str, params_hash: str, edits: tuple[Edit, ...] = (), meta: Mapping[str, Any] = _NO_META
    ) -> Candidate:
        """The same candidate as the constructor builds, without the frozen dataclass's one ``object.__setattr__``
        per field (a third of the time an identity swap spends per variant, #50)."""
        made = object.__new__(cls)
        _CANDIDATE_TEXT(made, text)
        _CANDIDATE_EDITOR(made, editor)
        _CANDIDATE_HASH(made, params_hash)
        _CANDIDATE_EDITS(made, edits)
        _CANDIDATE_SEED(made, None)
        _CANDIDATE_MODELS(made, ())
        _CANDIDATE_META(made, {} if meta is _NO_META else meta)
        return made


# the slots' setters, for the builders that skip the frozen dataclasses' checks (Edit.of, Candidate.of)
_EDIT_START, _EDIT_END, _EDIT_OLD, _EDIT_NEW = (getattr(Edit, n).__set__ for n in ("start", "end", "old", "new"))
(_CANDIDATE_TEXT, _CANDIDATE_EDITOR, _CANDIDATE_HASH, _CANDIDATE_EDITS, _CANDIDATE_SEED, _CANDIDATE_MODELS,
 _CANDIDATE_META) = (getattr(Candidate, n).__set__ for n in ("text", "editor", "params_hash", "edits", "seed",
                                                          "model_ids", "meta"))  # fmt: skip


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

    def to_dict(self) -> JSONObject:
        """A JSON-ready dict including ``schema_version``."""
        out = asdict(self)
        out["schema_version"] = SCHEMA_VERSION
        return out


class Counterfactuals(list[Counterfactual]):
    """What :func:`counterfair.generate` returns: a list of :class:`Counterfactual` that shows as a table in a notebook
    and a console, and turns into a DataFrame (``to_frame``) with plain columns."""

    def to_frame(self) -> Any:
        """One row per counterfactual: ids, texts, editor, status, the edits as ``removed``/``added`` text columns
        and ``n_edits``, each score as a column, and the swap's terms where given."""
        import pandas as pd

        rows = []
        for c in self:
            row: dict[str, Any] = {"source_id": c.source_id, "source_text": c.source_text, "text": c.text,
                                   "editor": c.editor, "status": c.status, "n_edits": len(c.edits),
                                   "removed": " | ".join(e.old for e in c.edits),
                                   "added": " | ".join(e.new for e in c.edits)}  # fmt: skip
            row |= dict(c.scores)
            row |= {k: v for k, v in c.provenance.items() if isinstance(v, str | int | float)}
            rows.append(row)
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        if not self:
            return "Counterfactuals([])"
        shown = self.to_frame()[["source_id", "editor", "status", "source_text", "text"]].head(10)
        more = f"\n... {len(self) - 10} more" if len(self) > 10 else ""
        return f"Counterfactuals: {len(self)}\n{shown.to_string(max_colwidth=50)}{more}"

    def _repr_html_(self) -> str:
        frame = self.to_frame()
        head = f"<p><b>{len(self)} counterfactuals</b> (<code>.to_frame()</code> for the table)</p>"
        if frame.empty:
            return head
        return head + frame.head(20).to_html(index=False, na_rep="—")


# ------------------------------------------------------------------------------------------------ run identity


def knob(default: Any = _dc.MISSING, *, help: str | None = None, **kwargs: Any) -> Any:
    """An options field that changes how fast a run goes, not what it makes: not part of the run's identity, so a
    rerun with another value resumes. ``help``: as :func:`option`."""
    return _dc.field(default=default, metadata={"identity": False, **({"help": help} if help else {})}, **kwargs)


def option(default: Any = _dc.MISSING, *, help: str, **kwargs: Any) -> Any:
    """An options field with its help text, said once: the command line's ``--help`` shows it (``command_line.flag``
    builds the typer option from the field) and :func:`option_help` gives it to Python and the docs."""
    return _dc.field(default=default, metadata={"help": help}, **kwargs)


def option_help(options: Any) -> dict[str, str]:
    """The help text of each field of an options dataclass (class or instance) that has one, in field order."""
    return {f.name: f.metadata["help"] for f in _dc.fields(options) if "help" in f.metadata}


def run_identity(options: Any) -> JSONObject:
    """The fields of an options dataclass that identify a run, in field order (``asdict`` values). Left out: a
    :func:`knob`; a field whose metadata ``applies(options)`` is false; a field with metadata ``later=True`` (added
    after runs existed) while it has its default; a field with metadata ``before=VALUE`` (added with a new default,
    where runs made before it behaved as ``VALUE``) while it has that value, so those runs resume when it is named."""
    values = _dc.asdict(options)
    out: dict[str, Any] = {}
    for f in _dc.fields(options):
        applies = f.metadata.get("applies")
        if f.metadata.get("identity", True) is False or (applies is not None and not applies(options)):
            continue
        if f.metadata.get("later") and values[f.name] == _default(f):
            continue
        if "before" in f.metadata and values[f.name] == f.metadata["before"]:
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
