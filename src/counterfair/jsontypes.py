"""JSON data as a type: what provenance records (an editor's parameters, a model's identity, a detector's
description) and run metadata are, so mypy checks that only JSON values go into them (no ``Path``, numpy number or
object that would fail, or change, when written to ``run.json``).

These records are written, hashed and shown, never computed with: the values a layer hands another to compute with are
typed records (``summaries``, ``results``), not these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JSONScalar: TypeAlias = str | int | float | bool | None
#: read-only containers, so a ``list[str]`` or ``dict[str, float]`` is JSON as it is (lists and dicts are invariant)
JSONValue: TypeAlias = JSONScalar | Sequence["JSONValue"] | Mapping[str, "JSONValue"]
#: a JSON object: the return type of every ``params()``, ``info()`` and ``signature()``
JSONObject: TypeAlias = dict[str, JSONValue]
