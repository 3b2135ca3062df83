"""Wordlist editors of paper 000 (App. B.1-B.2): ablation removes attribute terms, substitution swaps each term
for its counterpart in another group. Both are whole-word and case-aware, and handle multi-word terms."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from ..jsontypes import JSONObject
from ..language_registry import get_language
from ..lexicons.attributes import Attribute, load_attribute
from ..progress import NullProgress, ProgressHook
from ..records import Candidate, Edit
from ..text import TEXT_FOLDING, match_case
from .base import EditorBase

_HYPHEN_PREFIX = re.compile(r"(?<![\w-])(?:\w+-)+$")  # "anti-", "pro-anti-" right before a term
_ELIDED = re.compile(r"(?<!\w)(?:l|d|qu|j|m|t|s|n|c)['\u2019]$", re.IGNORECASE)  # French "l'", "d'" before a term


class AblationEditor(EditorBase):
    """Remove every attribute term (with one neighbouring space, so no double spaces are left behind)."""

    name: ClassVar[str] = "ablation"

    def __init__(self, attribute: Attribute | str = "islam") -> None:
        self.attribute = load_attribute(attribute) if isinstance(attribute, str) else attribute
        self._matcher = self.attribute.matcher()
        self._elision = get_language(self.attribute.language).elision  # "l'islam": the article goes with it

    def params(self) -> JSONObject:
        return {"attribute": self.attribute.name, "terms": sorted(self.attribute.terms), "text_folding": TEXT_FOLDING}

    def ablate(self, text: str) -> tuple[str, tuple[Edit, ...]]:
        pieces: list[str] = []
        edits: list[Edit] = []
        cursor = 0
        for match in self._matcher.find(text):
            start, end = match.start, match.end
            if start < cursor:
                continue  # inside a hyphenated word already removed
            # a hyphenated word whose head is a term goes whole ("anti-Semitism", not "anti-"); a term that modifies
            # through a hyphen takes the hyphen with it ("Muslim-majority" -> "majority")
            near = max(cursor, start - 64)  # a bounded look back (whole prefixes made long texts quadratic)
            prefix = _HYPHEN_PREFIX.search(text, near, start)
            if prefix is not None and prefix.end() == start and prefix.start() >= cursor:
                start = prefix.start()
            elided = _ELIDED.search(text, near, start) if self._elision else None
            if elided is not None and elided.end() == start and elided.start() >= cursor:
                start = elided.start()  # "l'islam" goes whole, not "l'"
            if text[end : end + 1] == "-" and text[end + 1 : end + 2].isalnum():
                end += 1  # the hyphen goes, the spaces around stay
            elif end < len(text) and text[end] == " ":
                end += 1
            elif start > cursor and text[start - 1] == " ":
                start -= 1
            pieces.append(text[cursor:start])
            edits.append(Edit(start, end, text[start:end], ""))
            cursor = end
        pieces.append(text[cursor:])
        return "".join(pieces), tuple(edits)

    def edit(self, texts: Sequence[str], *, progress: ProgressHook | None = None) -> list[list[Candidate]]:
        hook = progress or NullProgress()
        hook.start("ablation", len(texts))
        out: list[list[Candidate]] = []
        for text in texts:
            new, edits = self.ablate(text)
            out.append([self.candidate(new, edits=edits)] if edits else [])
            hook.advance(1)
        return out


class SubstitutionEditor(EditorBase):
    """Replace each attribute term by its listed substitute, keeping case; terms without one stay."""

    name: ClassVar[str] = "substitution"

    def __init__(self, attribute: Attribute | str = "islam") -> None:
        self.attribute = load_attribute(attribute) if isinstance(attribute, str) else attribute
        self._matcher = self.attribute.matcher()
        self._elision = get_language(self.attribute.language).elision  # "l'islam": the article goes with it
        table = {k.lower(): v for k, v in self.attribute.substitution.items()}  # once, not once per text
        self._substitute = lambda match: table.get(match.term.lower())

    def params(self) -> JSONObject:
        return {
            "attribute": self.attribute.name,
            "substitution": dict(sorted(self.attribute.substitution.items())),
            "text_folding": TEXT_FOLDING,
        }

    def edit(self, texts: Sequence[str], *, progress: ProgressHook | None = None) -> list[list[Candidate]]:
        hook = progress or NullProgress()
        hook.start("substitution", len(texts))
        out: list[list[Candidate]] = []
        for text in texts:
            if self._elision:
                new, edits = self._substitute_elided(text)
            else:
                new, edits = self._matcher.replace(text, self._substitute)
            out.append([self.candidate(new, edits=edits)] if edits else [])
            hook.advance(1)
        return out

    def _substitute_elided(self, text: str) -> tuple[str, tuple[Edit, ...]]:
        """A language with elision (French): the word before a substitute follows its elision ("la mosquée" ->
        "l'église", "l'islam" -> "le christianisme"; the gender of a substitute after "l'" comes from the pack's
        ``genders``, else masculine)."""
        from .swap import splice

        rewrite_before = get_language(self.attribute.language).grammar_class().rewrite_before

        changes = []
        for match in self._matcher.find(text):
            substitute = self.attribute.substitution.get(match.term.lower())
            if substitute is None:
                continue
            new = match_case(match.text, substitute)
            changes.append((match.start, match.end, new))
            rewrite = rewrite_before(text, match.start, new, self.attribute.genders.get(new.lower(), "m"))
            changes += [rewrite] if rewrite is not None else []
        return splice(text, changes, articles=False)
