"""The editor protocol: texts in, candidate counterfactuals out (many per input)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from ..progress import ProgressHook
from ..records import Candidate, params_hash


class EditorBase:
    """The editor contract: ``name``, ``params()``, and ``edit(texts)`` returning one list of candidates per input
    (possibly empty), in input order; plus a parameters hash for provenance and candidate construction."""

    name: ClassVar[str] = "editor"

    def params(self) -> dict[str, Any]:
        raise NotImplementedError

    def edit(self, texts: Sequence[str], *, progress: ProgressHook | None = None) -> list[list[Candidate]]:
        raise NotImplementedError

    def params_hash(self) -> str:
        return params_hash({"editor": self.name, **self.params()})

    def candidate(self, text: str, **fields: Any) -> Candidate:
        return Candidate(text=text, editor=self.name, params_hash=self.params_hash(), **fields)
