"""The record: a frozen dataclass read from and written to a JSON object key for key and in order (``from_dict`` /
``to_dict``), what every typed summary (:mod:`counterfair.summaries`) and result section is made of."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar

from .errors import InputError
from .jsontypes import JSONObject

R = TypeVar("R", bound="Record")


def record_field(
    name: str | None = None, of: Any = None, default: Any = None, *, absent: bool | str = False, factory: Any = None
) -> Any:
    """A record field stored under JSON key ``name`` (the attribute's name by default); ``of``: a record class, or
    ``[Class]`` for a list of records, ``{Class}`` for a dict of records (by name); a class may be named by a string
    (a record that holds records of its own kind). ``absent``: a record made in code leaves the key out while the field
    holds its default (a section a run adds when it reaches it, a part one command's summary has and another's
    lacks); ``absent="other"``: left out while the field ``other`` is (a section written, even as null, whenever
    another is); ``factory``: the default made per record (``dict``)."""
    metadata = {"key": name, "of": of, "absent": absent}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


#: every record class by name: a field's ``of`` may name a class defined after it (or itself)
_RECORDS: dict[str, type] = {}


def _cls(of: Any) -> Any:
    return _RECORDS[of] if isinstance(of, str) else of


def _load(of: Any, value: Any) -> Any:
    if value is None:
        return None
    if of is None:
        return tuple(value) if isinstance(value, list) else value
    if isinstance(of, list):
        return tuple(_read(_cls(of[0]), v) for v in value)
    if isinstance(of, set):
        (cls,) = of
        return {k: None if v is None else _read(_cls(cls), v) for k, v in value.items()}  # None: not measured
    return _read(_cls(of), value)


def _read(cls: Any, value: Any) -> Any:
    """A record of ``cls`` from its JSON object, or the record itself where code built it (a part filled in before the
    whole is read: the in-slot estimates of ``slot_effects``)."""
    return value if isinstance(value, cls) else cls.from_dict(value)


_FIELDS: dict[type, dict[str, dataclasses.Field[Any]]] = {}


class _Extra(dict[str, Any]):
    """A record's keys it does not model; asked for a key the record declares (read the attribute instead: the
    value is there, never here), it raises instead of answering with the default."""

    def __init__(self, owner: type, data: Mapping[str, Any]) -> None:
        super().__init__(data)
        self._owner = owner

    def _declared(self, key: object) -> None:
        if isinstance(key, str) and key in _by_key(self._owner):
            raise KeyError(f"{key!r} is a field of {self._owner.__name__}: read the attribute, not extra")

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        self._declared(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self._declared(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self._declared(key)
        return super().__contains__(key)


def _by_key(cls: type) -> dict[str, dataclasses.Field[Any]]:
    """A record class's fields by the JSON key they are stored under (computed once per class)."""
    if cls not in _FIELDS:
        _FIELDS[cls] = {f.metadata.get("key") or f.name: f for f in fields(cls) if f.name not in ("extra", "keys")}
    return _FIELDS[cls]


def _dump(value: Any) -> Any:
    """A field's value as JSON holds it: every record in it written as its object, wherever it sits (a mapping whose
    first value is None and a later one a record — an LLM audit's outcome no response gave a value — included)."""
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, tuple | list):
        return [_dump(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _dump(v) for k, v in value.items()}
    return value


@dataclass(frozen=True, kw_only=True)
class Record:
    """A part of a summary; ``extra`` holds the keys the record does not model, ``keys`` the order it was read in."""

    extra: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    keys: tuple[str, ...] | None = field(default=None, repr=False, compare=False)  # None: made in code, not read
    #: the JSON keys a record made in code writes first (a summary's run facts before the fields it inherits)
    LEAD: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _RECORDS.setdefault(cls.__name__, cls)  # the first of a name: a later class elsewhere does not replace it

    @classmethod
    def from_dict(cls: type[R], data: Mapping[str, Any]) -> R:
        if not isinstance(data, Mapping):
            raise InputError(f"{cls.__name__}: expected a JSON object, got {type(data).__name__}")
        known = _by_key(cls)
        values = {known[k].name: _load(known[k].metadata.get("of"), v) for k, v in data.items() if k in known}
        extra = _Extra(cls, {k: v for k, v in data.items() if k not in known})
        return cls(**values, extra=extra, keys=tuple(data))

    def to_dict(self) -> JSONObject:
        """The JSON object: the keys it was read with, in their order (a new record: every field in declaration
        order, missing values as null, but an ``absent`` field that holds its default left out; then ``extra``)."""
        known = _by_key(type(self))
        if self.keys is None:
            declared = (*self.LEAD, *(k for k in known if k not in self.LEAD))
            order: tuple[str, ...] = (*(k for k in declared if not self._left_out(known[k])), *self.extra)
        else:  # a field set since the record was read (``dataclasses.replace``) follows the keys it was read with
            order = (*self.keys, *(k for k in known if k not in self.keys and not self._at_default(known[k])))
        return {k: _dump(getattr(self, known[k].name) if k in known else self.extra[k]) for k in order}

    def _at_default(self, f: dataclasses.Field[Any]) -> bool:
        value = getattr(self, f.name)
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        return bool(value is None or value == default)

    def _left_out(self, f: dataclasses.Field[Any]) -> bool:
        absent = f.metadata.get("absent")
        if isinstance(absent, str):  # left out with another field
            return self._left_out(_by_key(type(self))[absent])
        return bool(absent) and self._at_default(f)

    def has(self, key: str) -> bool:
        """Whether the summary holds ``key`` (a section an older run lacks, one a run had not reached)."""
        known = _by_key(type(self))
        if key not in known:
            return dict.__contains__(self.extra, key)
        if self.keys is not None and key in self.keys:
            return True
        return not (self._left_out(known[key]) if self.keys is None else self._at_default(known[key]))

    def __bool__(self) -> bool:
        """False for a record read from an empty JSON object (as the dict would be)."""
        return self.keys is None or bool(self.keys)
