"""Identity swaps in French and German, with agreement (:mod:`counterfair.editors.agreement`).

The pack (``identity-fr``, ``identity-de`` or a user's file with ``language: fr|de`` and ``inflections``) lists each
term's forms. An occurrence is read as one form (gender and number, and in German case), narrowed by its determiner;
the swap writes the target's form of the same reading:

* French: "une musulmane pratiquante" -> "une chrétienne pratiquante"; "le musulman" -> "l'athée" (elision); a target
  without the source's gender changes the noun's gender with its determiner and adjectives ("un musulman
  pratiquant" -> "une lesbienne pratiquante"), only where the term is a noun (after a determiner) and spaCy's French
  parser is installed; a term used as an adjective ("un homme musulman") keeps the noun's gender and cannot take a
  target without it (``swap:gender_fixed``).
* German: adjectives keep their ending ("muslimischer" -> "jüdischer"); nouns take the target's noun of the same
  gender, number and case ("den Muslim" -> "den Christen"), or a target without a noun becomes adjective + "Mensch",
  "Person", "Menschen" ("ein Muslim" -> "ein schwuler Mensch"); a target noun of the other gender ("Lesbe") rewrites
  the determiner and adjective endings ("ein gläubiger Muslim" -> "eine gläubige Lesbe").

Where the text does not decide the reading (a bare plural "Juden" may be dative or not, "die" feminine or plural and
the target's forms differ), or a gender change would leave a pronoun disagreeing ("il", "er"), the variant is left
out with a status (``swap:ambiguous_case``, ``swap:ambiguous_gender``, ``swap:pronoun_agreement``,
``swap:gender_fixed``, ``needs_parser``), reported like the English editors' ``last_reasons``.
Ambiguous words (colours) are swapped only next to a person noun or written as a noun with a capital ("les Noirs").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from ..errors import ConfigError, ModelNotAvailable
from ..jsontypes import JSONObject
from ..lexicons.attributes import IdentitySet, TermInflection
from ..progress import NullProgress, ProgressHook
from ..records import Candidate
from ..text import TEXT_FOLDING, TermMatch, TermMatcher, match_case
from . import agreement as ag
from .agreement import Word, word_before
from .base import EditorBase
from .swap import SwapRefused, at_sentence_start, splice, swap_variants

FR_PERSON_NOUNS = frozenset(
    """homme hommes femme femmes personne personnes gens enfant enfants fille filles garçon garçons ami amis amie
    amies famille familles communauté communautés population populations citoyen citoyens citoyenne citoyennes élève
    élèves étudiant étudiants étudiante étudiantes voisin voisins voisine voisines collègue collègues individu
    individus peuple peuples jeune jeunes adulte adultes père mère fils frère frères sœur sœurs mari époux épouse
    couple couples patient patients patiente patientes client clients cliente clientes joueur joueurs joueuse
    joueuses électeur électeurs électrice électrices travailleur travailleurs travailleuse travailleuses""".split()
)
DE_PERSON_NOUNS = frozenset(
    """Mann Männer Männern Mannes Frau Frauen Mensch Menschen Person Personen Leute Leuten Kind Kinder Kindern Junge
    Jungen Mädchen Familie Familien Gemeinde Gemeinden Bevölkerung Bürger Bürgern Bürgerin Bürgerinnen Nachbar Nachbarn
    Nachbarin Freund Freunde Freunden Freundin Freundinnen Kollege Kollegen Kollegin Kolleginnen Student Studenten
    Studentin Studentinnen Schüler Schülern Schülerin Schülerinnen Gemeinschaft Eltern Vater Mutter Sohn Söhne Tochter
    Töchter Bruder Brüder Schwester Schwestern Jugendliche Jugendlichen Arbeiter Arbeitern Arbeiterin Spieler
    Spielerin Patient Patienten Patientin Wähler Wählerin""".split()
)
_WORD_AFTER = re.compile(r"\s*([^\W\d_]+)")
_DE_HEAD = {"m": ("Mensch", "Menschen", "Menschen", "Menschen"), "f": ("Person",) * 4, "pl": ("Menschen",) * 4}


def _word_after(text: str, end: int) -> str:
    found = _WORD_AFTER.match(text, end)
    return found.group(1) if found else ""


class InflectedSwapEditor(EditorBase):
    """Φ_A for a French or German identity set: one variant per other term, written with agreement."""

    name: ClassVar[str] = "swap"

    def __init__(self, identities: IdentitySet, *, targets: Sequence[str] | None = None) -> None:
        if identities.language not in ("fr", "de"):
            raise ConfigError(f"{identities.name}: the inflected swap is for French and German sets")
        self.identities = identities
        self.language = identities.language
        self.targets = tuple(targets) if targets is not None else identities.terms
        self._inflections: dict[str, TermInflection] = {
            t.lower(): identities.inflections[t.lower()] for t in identities.terms
        }
        self._surfaces: dict[str, list[tuple[str, str]]] = {}
        for term in identities.terms:
            self._add_surfaces(term, self._inflections[term.lower()])
        self._matcher = TermMatcher(self._surfaces, case_sensitive=self.language == "de")
        self.found = 0
        self.blocked = 0
        self.last_reasons: list[str | None] = []
        self.last_counts: list[tuple[int, int]] = []
        self._parser: Any = None

    def _add_surfaces(self, term: str, inflection: TermInflection) -> None:
        def add(surface: str, slot: str) -> None:
            key = surface if self.language == "de" else surface.lower()
            self._surfaces.setdefault(key, [])
            if (term, slot) not in self._surfaces[key]:
                self._surfaces[key].append((term, slot))

        for slot, form in inflection.forms.items():
            add(form, slot)
        if inflection.adjective:
            for ending in ("",) if inflection.invariable else ag.DE_ADJECTIVE_ENDINGS:
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
        return self._surfaces[match.text if self.language == "de" else match.text.lower()]

    def find(self, text: str) -> list[TermMatch]:
        """Occurrences of the set's forms under their term, without the person-noun rule for ambiguous terms."""
        out = []
        for match in self._matcher.find(text):
            term = self._slots(match)[0][0]
            out.append(TermMatch(match.start, match.end, match.text, term))
        return out

    def _about_people(self, text: str, match: TermMatch) -> bool:
        """An ambiguous term ("noir", "schwarz") counts next to a person noun, or as a noun with a capital."""
        if match.term.lower() not in self.identities.ambiguous:
            return True
        if self.language == "fr":
            before = word_before(text, match.start)
            return (before is not None and before.key in FR_PERSON_NOUNS) or (
                match.text[:1].isupper() and not at_sentence_start(text, match.start)
            )
        return _word_after(text, match.end) in DE_PERSON_NOUNS

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

    def _parse(self, text: str) -> Any:
        if self._parser is None:
            from ..models import spacy_language_pipeline

            self._parser = spacy_language_pipeline(self.language)
        return self._parser(text)

    # ------------------------------------------------------------------ French

    @staticmethod
    def _fr_determiner(text: str, start: int) -> Word | None:
        word = word_before(text, start)
        return word if word is not None and word.key in {*ag.FR_DETERMINERS, "de", "d'", "à"} else None

    def _fr_reading(self, text: str, match: TermMatch, det: Word | None) -> str:
        readings = {slot for term, slot in self._slots(match)}
        if det is not None:
            narrowed = readings & ag.FR_DETERMINERS.get(det.key, frozenset(readings))
            readings = narrowed or readings
        if len(readings) > 1:
            try:
                token = self._token(text, match)
            except ModelNotAvailable:
                token = None
            if token is not None:
                gender = {"Masc": "m", "Fem": "f"}.get((token.morph.get("Gender") or [""])[0])
                if not {r[0] for r in readings} - {"m", "f"} and len({r[0] for r in readings}) > 1:
                    # the words that agree with it decide ("l'athée est arrivée")
                    genders = {(w.morph.get("Gender") or [""])[0] for w in self._fr_agreeing(token)} - {""}
                    gender = {"Masc": "m", "Fem": "f"}.get(genders.pop()) if len(genders) == 1 else gender
                number = {"Sing": "sg", "Plur": "pl"}.get((token.morph.get("Number") or [""])[0])
                narrowed = {r for r in readings if (gender is None or r[0] == gender)}
                narrowed = {r for r in narrowed if (number is None or r.endswith(number))} or narrowed
                readings = narrowed or readings
        if len(readings) > 1 and all(r.endswith(".pl") for r in readings):
            readings = {r for r in readings if r.startswith("m.")} or readings  # the generic masculine plural
        if len(readings) > 1:
            raise SwapRefused("swap:ambiguous_gender")
        return next(iter(readings))

    def _token(self, text: str, match: TermMatch) -> Any:
        doc = self._parse(text)
        span = doc.char_span(match.start, match.end, alignment_mode="expand")
        return span[-1] if span is not None and len(span) else None

    def _fr_changes(self, text: str, match: TermMatch, target: str) -> list[tuple[int, int, str]]:
        det = self._fr_determiner(text, match.start)
        slot = self._fr_reading(text, match, det)
        gender, number = slot.split(".")
        forms = self._inflections[target.lower()].forms
        changes: list[tuple[int, int, str]] = []
        if slot in forms:
            new = forms[slot]
            new_gender = gender
        else:
            new_gender = "f" if gender == "m" else "m"
            if f"{new_gender}.{number}" not in forms:
                raise SwapRefused(f"swap:no_form:{target}")
            if det is None or det.key in ("de", "d'", "à"):
                raise SwapRefused("swap:gender_fixed")  # an adjective or a predicate: the noun keeps its gender
            new = forms[f"{new_gender}.{number}"]
            changes += self._fr_agreement(text, match, gender, new_gender, number)
        changes.append((match.start, match.end, self._fr_case(text, match, new, target, noun=det is not None)))
        if det is not None:
            current = None if new_gender == gender else ag.fr_other_gender_determiner(det.key)
            rewrite = ag.fr_rewrite_before(text, match.start, new, new_gender, current)
            changes += [rewrite] if rewrite is not None else []
        return changes

    def _fr_case(self, text: str, match: TermMatch, new: str, target: str, *, noun: bool) -> str:
        """All capitals as the source, a capital at a sentence's start or on a noun for people of a nationality or
        ethnicity ("un Mexicain"), else lower-case ("un musulman", "un restaurant mexicain")."""
        letters = [c for c in match.text if c.isalpha()]
        if len(letters) > 1 and all(c.isupper() for c in letters):
            return new.upper()
        if at_sentence_start(text, match.start) or (noun and self._inflections[target.lower()].proper_noun):
            return new[:1].upper() + new[1:]
        return new

    def _fr_agreement(self, text: str, match: TermMatch, gender: str, new_gender: str, number: str) -> list[Any]:
        """The adjectives agreeing with the noun at ``match`` rewritten for ``new_gender`` (by the parser)."""
        pronouns = ag.FR_PRONOUNS[gender]
        if any(w.lower() in pronouns for w in re.findall(r"[^\W\d_]+", text)):
            raise SwapRefused("swap:pronoun_agreement")
        try:
            token = self._token(text, match)
        except ModelNotAvailable:
            raise SwapRefused("needs_parser") from None
        if token is None:
            raise SwapRefused("needs_parser")
        changes = {}
        for word in self._fr_agreeing(token):
            word_gender = (word.morph.get("Gender") or [""])[0]
            if word_gender and word_gender != {"m": "Masc", "f": "Fem"}[gender]:
                continue
            new = ag.fr_regender(word.text, word.lemma_ if word.pos_ == "ADJ" else None, new_gender, number)
            if new.lower() != word.text.lower():
                changes[word.i] = (word.idx, word.idx + len(word.text), match_case(word.text, new))
        return list(changes.values())

    @staticmethod
    def _fr_agreeing(token: Any) -> list[Any]:
        """The adjectives and participles that agree with the noun ``token`` by the parse: its attributes, the word
        right after it (whatever the small parser attached it to), a predicate whose subject it is ("ce musulman est
        pratiquant", "la musulmane est convertie") and their conjuncts."""
        doc = token.doc
        agreeing = [c for c in token.children if c.dep_ in ("amod", "acl")]
        if token.i + 1 < len(doc):
            agreeing.append(doc[token.i + 1])
        if token.dep_.startswith("nsubj") and any(c.lemma_ == "être" for c in token.head.children):
            agreeing.append(token.head)
        agreeing += [c for a in list(agreeing) for c in a.children if c.dep_ == "conj" and c.pos_ == a.pos_]
        return [
            w for w in agreeing if w.pos_ == "ADJ" or (w.pos_ in ("VERB", "AUX") and "Part" in w.morph.get("VerbForm"))
        ]

    # ------------------------------------------------------------------ German

    def _de_phrase(self, text: str, start: int) -> tuple[Word | None, list[Word]]:
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

    def _de_changes(self, text: str, match: TermMatch, target: str) -> list[tuple[int, int, str]]:
        slots = [slot for _, slot in self._slots(match)]
        inflection = self._inflections[target.lower()]
        if slots[0].startswith("adj:"):
            return [(match.start, match.end, self._de_adjective(text, match, slots[0][4:], target, inflection))]
        det, adjectives = self._de_phrase(text, match.start)
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
            phrases = {self._de_periphrasis(inflection, g, c, declension[(g, c)]) for g, c in readings}
            if len(phrases) > 1 or not inflection.adjective:
                raise SwapRefused("swap:ambiguous_case")
        gender, case = next(iter(readings))
        other = next((g for g in ("m", "f") if g != gender and f"{g}.{case}" in forms), None)
        if gender != "pl" and other is not None and len(readings) == 1:
            return self._de_regender(
                text, match, det, adjectives, (gender, case), other, declension[(gender, case)], forms
            )
        if not inflection.adjective:
            raise SwapRefused(f"swap:no_form:{target}")
        phrase = self._de_periphrasis(inflection, gender, case, declension[(gender, case)])
        return [(match.start, match.end, self._sentence_case(text, match.start, phrase))]

    def _de_regender(
        self,
        text: str,
        match: TermMatch,
        det: Word | None,
        adjectives: list[Word],
        reading: tuple[str, str],
        new_gender: str,
        declension: str,
        forms: Any,
    ) -> list[tuple[int, int, str]]:
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
    def _de_periphrasis(inflection: TermInflection, gender: str, case: str, declension: str) -> str:
        """A term without a noun: adjective + "Mensch" (masculine), "Person" (feminine), "Menschen" (plural)."""
        ending = "" if inflection.invariable else ag.de_adjective_ending(declension, gender, case)
        return f"{inflection.adjective}{ending} {_DE_HEAD[gender][ag.CASES.index(case)]}"

    def _de_adjective(self, text: str, match: TermMatch, ending: str, target: str, inflection: TermInflection) -> str:
        if match.text[:1].isupper() and not at_sentence_start(text, match.start):
            raise SwapRefused("swap:nominalised_adjective")  # "die Schwulen": not a form the pack lists
        if not inflection.adjective:
            raise SwapRefused(f"swap:no_form:{target}")
        if inflection.invariable:
            new = inflection.adjective
        elif ending or not _word_after(text, match.end)[:1].isupper():
            new = inflection.adjective + ending  # "ist schwul" stays without an ending
        else:  # an invariable source before its noun ("eine trans Frau"): the ending comes from the determiner
            det, _ = self._de_phrase(text, match.start)
            readings = ag.DE_DETERMINERS.get(det.text.lower(), set()) if det is not None else set()
            endings = {ag.de_adjective_ending(d, g, c) for d, g, c in readings}
            if len(endings) != 1:
                raise SwapRefused("swap:ambiguous_case")
            new = inflection.adjective + endings.pop()
        return match_case(match.text, new) if match.text[:1].isupper() else new

    @staticmethod
    def _sentence_case(text: str, start: int, phrase: str) -> str:
        return phrase[:1].upper() + phrase[1:] if at_sentence_start(text, start) else phrase

    # ------------------------------------------------------------------ the swap

    def swap(self, text: str, matches: Sequence[TermMatch], a: str, b: str) -> tuple[str, tuple[Any, ...]]:
        """Φ_{a,b} with agreement; raises :class:`SwapRefused` where an occurrence cannot be written."""
        a_low, b_low = a.lower(), b.lower()
        changes: list[tuple[int, int, str]] = []
        for match in matches:
            if match.term.lower() not in (a_low, b_low):
                continue
            target = b if match.term.lower() == a_low else a
            if self.language == "fr":
                changes += self._fr_changes(text, match, target)
            else:
                changes += self._de_changes(text, match, target)
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
