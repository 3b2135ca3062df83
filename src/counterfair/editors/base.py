"""The editor protocol: texts in, candidate counterfactuals out (many per input)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from ..jsontypes import JSONObject
from ..progress import ProgressHook
from ..records import Candidate, params_hash


class EditorBase:
    """The editor contract: ``name``, ``params()``, and ``edit(texts)`` returning one list of candidates per input
    (possibly empty), in input order; plus a parameters hash for provenance and candidate construction."""

    name: ClassVar[str] = "editor"

    def params(self) -> JSONObject:
        raise NotImplementedError

    def edit(self, texts: Sequence[str], *, progress: ProgressHook | None = None) -> list[list[Candidate]]:
        raise NotImplementedError

    _cached_hash: str | None = None
    #: public attributes an editor updates while it edits (counters of the last call): not parameters, so setting
    #: them keeps the parameters hash
    STATE: ClassVar[frozenset[str]] = frozenset({"found", "blocked", "last_counts", "last_notes", "last_reasons"})

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_") and name not in self.STATE:  # a parameter set: the hash is computed afresh
            object.__setattr__(self, "_cached_hash", None)
        object.__setattr__(self, name, value)

    def params_hash(self) -> str:
        """The hash of :meth:`params`, computed once and kept until a parameter is set again: every candidate
        carries it, and an identity swap writes ~50 candidates per text (re-serialising the parameters per candidate
        cost 42x the swap itself, #36)."""
        if self._cached_hash is None:
            object.__setattr__(self, "_cached_hash", params_hash({"editor": self.name, **self.params()}))
        assert self._cached_hash is not None
        return self._cached_hash

    def candidate(self, text: str, **fields: Any) -> Candidate:
        return Candidate(text=text, editor=self.name, params_hash=self.params_hash(), **fields)
