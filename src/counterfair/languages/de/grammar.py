"""German agreement rules of the identity swap: adjectives keep their ending ("muslimischer" -> "jüdischer"); nouns take
the target's noun of the same gender, number and case ("den Muslim" -> "den Christen"), or a target without a noun
becomes adjective + "Mensch", "Person", "Menschen" ("ein Muslim" -> "ein schwuler Mensch"); a target noun of the other
gender ("Lesbe") rewrites the determiner and adjective endings ("ein gläubiger Muslim" -> "eine gläubige Lesbe")."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from ...editors.agreement import Word, word_before
from ...editors.grammar import Change, Grammar, word_after
from ...editors.swap import SwapRefused, at_sentence_start
from ...lexicons.attributes import TermInflection
from ...text import TermMatch, match_case
from . import agreement as ag

PERSON_NOUNS = frozenset(
    """Mann Männer Männern Mannes Frau Frauen Mensch Menschen Person Personen Leute Leuten Kind Kinder Kindern Junge
    Jungen Mädchen Familie Familien Gemeinde Gemeinden Bevölkerung Bürger Bürgern Bürgerin Bürgerinnen Nachbar Nachbarn
    Nachbarin Freund Freunde Freunden Freundin Freundinnen Kollege Kollegen Kollegin Kolleginnen Student Studenten
    Studentin Studentinnen Schüler Schülern Schülerin Schülerinnen Gemeinschaft Eltern Vater Mutter Sohn Söhne Tochter
    Töchter Bruder Brüder Schwester Schwestern Jugendliche Jugendlichen Arbeiter Arbeitern Arbeiterin Spieler
    Spielerin Patient Patienten Patientin Wähler Wählerin""".split()
)
_HEAD = {"m": ("Mensch", "Menschen", "Menschen", "Menschen"), "f": ("Person",) * 4, "pl": ("Menschen",) * 4}


class GermanGrammar(Grammar):
    """German: determiners and attributive adjectives read and rewritten by the declension tables, no parser."""

    adjective_endings: ClassVar[tuple[str, ...]] = ag.DE_ADJECTIVE_ENDINGS

    def about_people(self, text: str, match: TermMatch) -> bool:
        """An ambiguous term ("schwarz") counts before a person noun ("schwarze Frauen")."""
        return word_after(text, match.end) in PERSON_NOUNS

    def _phrase(self, text: str, start: int) -> tuple[Word | None, list[Word]]:
        """The determiner and the attributive adjectives before a noun starting at ``start``."""
        adjectives: list[Word] = []
        cursor = start
        while True:
            word = word_before(text, cursor)
            if word is None or word.text.endswith(("'", "\u2019")):
                return None, adjectives
            if ag.de_is_determiner(word.text) and (word.text.islower() or at_sentence_start(text, word.start)):
                return word, adjectives
            if not ag.de_attributive(word.text):
                return None, adjectives
            adjectives.insert(0, word)
            cursor = word.start

    def changes(self, text: str, match: TermMatch, target: str) -> list[Change]:
        slots = [slot for _, slot in self.editor._slots(match)]
        inflection = self.editor._inflections[target.lower()]
        if slots[0].startswith("adj:"):
            return [(match.start, match.end, self._adjective(text, match, slots[0][4:], target, inflection))]
        det, adjectives = self._phrase(text, match.start)
        readings: set[tuple[str, str]] = {(s.split(".")[0], s.split(".")[1]) for s in slots}
        declension = {r: "strong" for r in readings}
        if det is not None:
            found = {(g, c): d for d, g, c in ag.DE_DETERMINERS[det.text.lower()] if (g, c) in readings}
            if found:
                readings, declension = set(found), found
        first = det or (adjectives[0] if adjectives else None)
        governed = ag.de_preposition_case(word_before(text, first.start if first else match.start))
        if governed is not None and any(c == governed for _, c in readings):
            readings = {r for r in readings if r[1] == governed}
        forms = inflection.forms
        if all(f"{g}.{c}" in forms for g, c in readings):
            written = {forms[f"{g}.{c}"] for g, c in readings}
            if len(written) > 1:
                raise SwapRefused("swap:ambiguous_case")
            return [(match.start, match.end, written.pop())]
        if len(readings) > 1:
            phrases = {self._periphrasis(inflection, g, c, declension[(g, c)]) for g, c in readings}
            if len(phrases) > 1 or not inflection.adjective:
                raise SwapRefused("swap:ambiguous_case")
        gender, case = next(iter(readings))
        other = next((g for g in ("m", "f") if g != gender and f"{g}.{case}" in forms), None)
        if gender != "pl" and other is not None and len(readings) == 1:
            return self._regender(
                text, match, det, adjectives, (gender, case), other, declension[(gender, case)], forms
            )
        if not inflection.adjective:
            raise SwapRefused(f"swap:no_form:{target}")
        phrase = self._periphrasis(inflection, gender, case, declension[(gender, case)])
        return [(match.start, match.end, self._sentence_case(text, match.start, phrase))]

    def _regender(
        self,
        text: str,
        match: TermMatch,
        det: Word | None,
        adjectives: list[Word],
        reading: tuple[str, str],
        new_gender: str,
        declension: str,
        forms: Any,
    ) -> list[Change]:
        gender, case = reading
        words = {w.lower() for w in re.findall(r"[^\W\d_]+", text)}
        if words & set(ag.DE_PRONOUNS[gender]):
            raise SwapRefused("swap:pronoun_agreement")
        changes = [(match.start, match.end, forms[f"{new_gender}.{case}"])]
        if det is not None:
            new_det = ag.de_determiner(det.text, new_gender, case)
            if new_det != det.text:
                changes.append((det.start, det.start + len(det.text), new_det))
        old_ending = ag.de_adjective_ending(declension, gender, case)
        new_ending = ag.de_adjective_ending(declension, new_gender, case)
        for word in adjectives:
            if not word.text.endswith(old_ending):
                raise SwapRefused("swap:ambiguous_case")
            stem = word.text[: len(word.text) - len(old_ending)]
            changes.append((word.start, word.start + len(word.text), stem + new_ending))
        return changes

    @staticmethod
    def _periphrasis(inflection: TermInflection, gender: str, case: str, declension: str) -> str:
        """A term without a noun: adjective + "Mensch" (masculine), "Person" (feminine), "Menschen" (plural)."""
        ending = "" if inflection.invariable else ag.de_adjective_ending(declension, gender, case)
        return f"{inflection.adjective}{ending} {_HEAD[gender][ag.CASES.index(case)]}"

    def _adjective(self, text: str, match: TermMatch, ending: str, target: str, inflection: TermInflection) -> str:
        if match.text[:1].isupper() and not at_sentence_start(text, match.start):
            raise SwapRefused("swap:nominalised_adjective")  # "die Schwulen": not a form the pack lists
        if not inflection.adjective:
            raise SwapRefused(f"swap:no_form:{target}")
        if inflection.invariable:
            new = inflection.adjective
        elif ending or not word_after(text, match.end)[:1].isupper():
            new = inflection.adjective + ending  # "ist schwul" stays without an ending
        else:  # an invariable source before its noun ("eine trans Frau"): the ending comes from the determiner
            det, _ = self._phrase(text, match.start)
            readings = ag.DE_DETERMINERS.get(det.text.lower(), set()) if det is not None else set()
            endings = {ag.de_adjective_ending(d, g, c) for d, g, c in readings}
            if len(endings) != 1:
                raise SwapRefused("swap:ambiguous_case")
            new = inflection.adjective + endings.pop()
        return match_case(match.text, new) if match.text[:1].isupper() else new

    @staticmethod
    def _sentence_case(text: str, start: int, phrase: str) -> str:
        return phrase[:1].upper() + phrase[1:] if at_sentence_start(text, start) else phrase
