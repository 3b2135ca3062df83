"""Identity swaps with agreement, for the languages whose packs list each term's forms (French, German, Spanish).

The pack (``identity-fr``, ``identity-de``, ``identity-es`` or a user's file with ``language:`` and ``inflections``)
lists each term's forms. An occurrence is read as one form (gender and number, and in German case), narrowed by the
words around it; the swap writes the target's form of the same reading. How a language reads and rewrites an
occurrence is its entry's grammar (``languages/<code>/grammar.py``, a :class:`~counterfair.editors.grammar.Grammar`):
French articles, elision and adjectives by spaCy's parser; German declension tables; Spanish articles and endings.

Where the text does not decide the reading (a bare plural "Juden" may be dative or not, "die" feminine or plural and
the target's forms differ), or a gender change would leave a pronoun disagreeing ("il", "er", "él"), the variant is
left out with a status (``swap:ambiguous_case``, ``swap:ambiguous_gender``, ``swap:pronoun_agreement``,
``swap:gender_fixed``, ``needs_parser``), reported like the English editors' ``last_reasons``.
Ambiguous words (colours) are swapped only where the grammar says they name people.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from ..errors import ConfigError
from ..jsontypes import JSONObject
from ..language_registry import get_language
from ..lexicons.attributes import IdentitySet, TermInflection
from ..progress import NullProgress, ProgressHook
from ..records import Candidate
from ..text import TEXT_FOLDING, TermMatch, TermMatcher
from .base import EditorBase
from .grammar import Grammar
from .swap import splice, swap_variants


class InflectedSwapEditor(EditorBase):
    """Φ_A for an inflected language's identity set: one variant per other term, written with agreement."""

    name: ClassVar[str] = "swap"

    def __init__(self, identities: IdentitySet, *, targets: Sequence[str] | None = None) -> None:
        language = get_language(identities.language)
        if not language.inflected:
            raise ConfigError(f"{identities.name}: the inflected swap is for languages whose packs list each form")
        self.identities = identities
        self.language = language.code
        self.case_sensitive = language.case_sensitive
        self.grammar: Grammar = language.grammar_class()(self)
        self.targets = tuple(targets) if targets is not None else identities.terms
        self._inflections: dict[str, TermInflection] = {
            t.lower(): identities.inflections[t.lower()] for t in identities.terms
        }
        self._surfaces: dict[str, list[tuple[str, str]]] = {}
        for term in identities.terms:
            self._add_surfaces(term, self._inflections[term.lower()])
        self._matcher = TermMatcher(self._surfaces, case_sensitive=self.case_sensitive)
        self.found = 0
        self.blocked = 0
        self.last_reasons: list[str | None] = []
        self.last_counts: list[tuple[int, int]] = []
        self._parser: Any = None

    def _add_surfaces(self, term: str, inflection: TermInflection) -> None:
        def add(surface: str, slot: str) -> None:
            key = surface if self.case_sensitive else surface.lower()
            self._surfaces.setdefault(key, [])
            if (term, slot) not in self._surfaces[key]:
                self._surfaces[key].append((term, slot))

        for slot, form in inflection.forms.items():
            add(form, slot)
        if inflection.adjective:
            for ending in ("",) if inflection.invariable else self.grammar.adjective_endings:
                add(inflection.adjective + ending, f"adj:{ending}")
                add((inflection.adjective + ending).capitalize(), f"adj:{ending}")

    def params(self) -> JSONObject:
        return {
            "text_folding": TEXT_FOLDING,
            "identities": self.identities.name,
            "language": self.language,
            "terms": list(self.identities.terms),
            "targets": list(self.targets),
            "ambiguous": sorted(self.identities.ambiguous),
            "inflections": {
                t: dict(i.forms) | {"adjective": i.adjective} for t, i in sorted(self._inflections.items())
            },
        }

    # ------------------------------------------------------------------ reading the text

    def _slots(self, match: TermMatch) -> list[tuple[str, str]]:
        return self._surfaces[match.text if self.case_sensitive else match.text.lower()]

    def find(self, text: str) -> list[TermMatch]:
        """Occurrences of the set's forms under their term, without the person-noun rule for ambiguous terms."""
        out = []
        for match in self._matcher.find(text):
            term = self._slots(match)[0][0]
            out.append(TermMatch(match.start, match.end, match.text, term))
        return out

    def _about_people(self, text: str, match: TermMatch) -> bool:
        """An ambiguous term ("noir", "schwarz", "negro") counts where the language's rules say it names people."""
        return match.term.lower() not in self.identities.ambiguous or self.grammar.about_people(text, match)

    def occurrences(self, text: str, found: Sequence[TermMatch]) -> list[tuple[Any, ...]]:
        """Each occurrence with the form its grammar reads it in, as the English swap's plan gives them
        (``start, end, text, term, ("listed", form)``); none where the grammar does not say."""
        out = []
        for match in found:
            form = self.grammar.form(text, match)
            if form:
                out.append((match.start, match.end, match.text, match.term.lower(), ("listed", form)))
        return out

    def identity_matches(self, texts: Sequence[str]) -> list[list[TermMatch]]:
        out = []
        self.last_counts = []  # (found, blocked) per text of the last call, as IdentitySwapEditor's
        for text in texts:
            found = self.find(text)
            kept = [m for m in found if self._about_people(text, m)]
            self.last_counts.append((len(found), len(found) - len(kept)))
            self.found += len(found)
            self.blocked += len(found) - len(kept)
            out.append(kept)
        return out

    def token(self, text: str, match: TermMatch) -> Any:
        """The last token of ``match`` in the language parser's parse of ``text`` (raises ModelNotAvailable)."""
        doc = self._parse(text)
        span = doc.char_span(match.start, match.end, alignment_mode="expand")
        return span[-1] if span is not None and len(span) else None

    def _parse(self, text: str) -> Any:
        if self._parser is None:
            from ..models import spacy_language_pipeline

            self._parser = spacy_language_pipeline(self.language)
        return self._parser(text)

    # ------------------------------------------------------------------ the swap

    def swap(self, text: str, matches: Sequence[TermMatch], a: str, b: str) -> tuple[str, tuple[Any, ...]]:
        """Φ_{a,b} with agreement; raises :class:`SwapRefused` where an occurrence cannot be written."""
        a_low, b_low = a.lower(), b.lower()
        changes: list[tuple[int, int, str]] = []
        for match in matches:
            if match.term.lower() not in (a_low, b_low):
                continue
            target = b if match.term.lower() == a_low else a
            changes += self.grammar.changes(text, match, target)
        return splice(text, changes, articles=False)

    def swap_for(self, text: str, matches: Sequence[TermMatch]) -> Callable[[str, str, str, str], Any]:
        """:meth:`swap` for one text: ``(a, a_low, b, b_low) -> (new text, edits)``."""
        return lambda a, _a_low, b, _b_low: self.swap(text, matches, a, b)

    def edit(self, texts: Sequence[str], *, progress: ProgressHook | None = None) -> list[list[Candidate]]:
        hook = progress or NullProgress()
        hook.start("swap", len(texts))
        out: list[list[Candidate]] = []
        self.last_reasons = []
        split = {t.lower(): self.identities.split_of(t) for t in self.identities.terms}
        metas: dict[str, dict[str, dict[str, str]]] = {}
        for text, matches in zip(texts, self.identity_matches(texts), strict=True):
            refused: list[str] = []
            variants = swap_variants(self, text, matches, split, refused, metas)
            self.last_reasons.append(None if variants or not refused else refused[0])
            out.append(variants)
            hook.advance(1)
        return out
