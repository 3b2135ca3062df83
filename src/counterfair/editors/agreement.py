"""What the agreeing swaps of every inflected language share: the word before a position. Each language's own rules
(articles, elision, adjective endings) are in its entry, ``counterfair/languages/<code>/agreement.py``."""

from __future__ import annotations

import re
from dataclasses import dataclass

_WORD_BEFORE = re.compile(r"([^\W\d_]+)(['\u2019]|\s+)$")


@dataclass(frozen=True)
class Word:
    """A word before a position: ``text`` as written (an elided word with its apostrophe, "l'"), ``end`` where what
    follows it starts (after its space or apostrophe)."""

    start: int
    end: int
    text: str

    @property
    def key(self) -> str:
        return self.text.lower().replace("\u2019", "'")


def word_before(text: str, start: int) -> Word | None:
    """The word right before ``start`` (across spaces, or glued by an apostrophe), or None."""
    window = max(0, start - 200)  # bounded: a long text's occurrences do not each scan its whole prefix
    found = _WORD_BEFORE.search(text[window:start])
    if found is None:
        return None
    apostrophe = found.group(2) if found.group(2) in ("'", "\u2019") else ""
    return Word(window + found.start(), start, found.group(1) + apostrophe)
