"""The agreement rules an inflected language gives the identity swap (:class:`~counterfair.editors.inflected.
InflectedSwapEditor`): how an occurrence of a term is read and rewritten for a target term. Each language entry names
its own subclass (``grammar:`` in ``languages/<code>/language.yaml``); the editor keeps what every language shares
(the pack's forms, the matching, the splice of the changes)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from ..text import TermMatch

Change = tuple[int, int, str]
_WORD_AFTER = re.compile(r"\s*([^\W\d_]+)")


def word_after(text: str, end: int) -> str:
    """The word right after ``end`` (across spaces), or ""."""
    found = _WORD_AFTER.match(text, end)
    return found.group(1) if found else ""


class Grammar:
    """One language's agreement rules, bound to the editor whose pack they read (``editor.forms_of``,
    ``editor.readings``, ``editor.token``)."""

    #: endings a pack's adjective stem takes (German); a language whose packs list every form has only ""
    adjective_endings: ClassVar[tuple[str, ...]] = ("",)

    def __init__(self, editor: Any) -> None:  # the InflectedSwapEditor (which imports this module)
        self.editor = editor

    def about_people(self, text: str, match: TermMatch) -> bool:
        """Whether an ambiguous term (a colour) is used of people here."""
        raise NotImplementedError

    def changes(self, text: str, match: TermMatch, target: str) -> list[Change]:
        """The ``(start, end, written)`` changes that write ``target`` at ``match``; raises
        :class:`~counterfair.editors.swap.SwapRefused` where the text does not decide how."""
        raise NotImplementedError

    def form(self, text: str, match: TermMatch) -> str:
        """The form an occurrence is written in (``noun``, ``adjective``, ``plural``: the slots' per-form estimates),
        or "" where the rules do not say."""
        return ""

    @staticmethod
    def rewrite_before(text: str, start: int, new_word: str, gender: str, current: str | None = None) -> Any:
        """The change that makes the word before ``start`` fit ``new_word`` (an elided article), or None."""
        return None
