"""French agreement rules of the identity swap: "une musulmane pratiquante" -> "une chrétienne pratiquante"; "le
musulman" -> "l'athée" (elision); a target without the source's gender changes the noun's gender with its determiner and
adjectives ("un musulman pratiquant" -> "une lesbienne pratiquante"), only where the term is a noun (after a
determiner) and spaCy's French parser is installed; a term used as an adjective ("un homme musulman") keeps the noun's
gender and cannot take a target without it (``swap:gender_fixed``)."""

from __future__ import annotations

import re
from typing import Any

from ...editors.agreement import Word, word_before
from ...editors.grammar import Change, Grammar
from ...editors.swap import SwapRefused, at_sentence_start
from ...errors import ModelNotAvailable
from ...text import TermMatch, match_case
from . import agreement as ag

PERSON_NOUNS = frozenset(
    """homme hommes femme femmes personne personnes gens enfant enfants fille filles garçon garçons ami amis amie
    amies famille familles communauté communautés population populations citoyen citoyens citoyenne citoyennes élève
    élèves étudiant étudiants étudiante étudiantes voisin voisins voisine voisines collègue collègues individu
    individus peuple peuples jeune jeunes adulte adultes père mère fils frère frères sœur sœurs mari époux épouse
    couple couples patient patients patiente patientes client clients cliente clientes joueur joueurs joueuse
    joueuses électeur électeurs électrice électrices travailleur travailleurs travailleuse travailleuses""".split()
)


class FrenchGrammar(Grammar):
    """French: articles and elision before the term, adjectives agreeing by spaCy's French parse."""

    def about_people(self, text: str, match: TermMatch) -> bool:
        """An ambiguous term ("noir") counts after a person noun, or as a noun with a capital ("les Noirs")."""
        before = word_before(text, match.start)
        return (before is not None and before.key in PERSON_NOUNS) or (
            match.text[:1].isupper() and not at_sentence_start(text, match.start)
        )

    @staticmethod
    def rewrite_before(text: str, start: int, new_word: str, gender: str, current: str | None = None) -> Any:
        return ag.fr_rewrite_before(text, start, new_word, gender, current)

    @staticmethod
    def _determiner(text: str, start: int) -> Word | None:
        word = word_before(text, start)
        return word if word is not None and word.key in {*ag.FR_DETERMINERS, "de", "d'", "à"} else None

    def _reading(self, text: str, match: TermMatch, det: Word | None) -> str:
        readings = {slot for term, slot in self.editor._slots(match)}
        if det is not None:
            narrowed = readings & ag.FR_DETERMINERS.get(det.key, frozenset(readings))
            readings = narrowed or readings
        if len(readings) > 1:
            try:
                token = self.editor.token(text, match)
            except ModelNotAvailable:
                token = None
            if token is not None:
                gender = {"Masc": "m", "Fem": "f"}.get((token.morph.get("Gender") or [""])[0])
                if not {r[0] for r in readings} - {"m", "f"} and len({r[0] for r in readings}) > 1:
                    # the words that agree with it decide ("l'athée est arrivée")
                    genders = {(w.morph.get("Gender") or [""])[0] for w in self._agreeing(token)} - {""}
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

    def changes(self, text: str, match: TermMatch, target: str) -> list[Change]:
        det = self._determiner(text, match.start)
        slot = self._reading(text, match, det)
        gender, number = slot.split(".")
        forms = self.editor._inflections[target.lower()].forms
        changes: list[Change] = []
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
            changes += self._agreement(text, match, gender, new_gender, number)
        changes.append((match.start, match.end, self._case(text, match, new, target, noun=det is not None)))
        if det is not None:
            current = None if new_gender == gender else ag.fr_other_gender_determiner(det.key)
            rewrite = ag.fr_rewrite_before(text, match.start, new, new_gender, current)
            changes += [rewrite] if rewrite is not None else []
        return changes

    def _case(self, text: str, match: TermMatch, new: str, target: str, *, noun: bool) -> str:
        """All capitals as the source, a capital at a sentence's start or on a noun for people of a nationality or
        ethnicity ("un Mexicain"), else lower-case ("un musulman", "un restaurant mexicain")."""
        letters = [c for c in match.text if c.isalpha()]
        if len(letters) > 1 and all(c.isupper() for c in letters):
            return new.upper()
        if at_sentence_start(text, match.start) or (noun and self.editor._inflections[target.lower()].proper_noun):
            return new[:1].upper() + new[1:]
        return new

    def _agreement(self, text: str, match: TermMatch, gender: str, new_gender: str, number: str) -> list[Any]:
        """The adjectives agreeing with the noun at ``match`` rewritten for ``new_gender`` (by the parser)."""
        pronouns = ag.FR_PRONOUNS[gender]
        if any(w.lower() in pronouns for w in re.findall(r"[^\W\d_]+", text)):
            raise SwapRefused("swap:pronoun_agreement")
        try:
            token = self.editor.token(text, match)
        except ModelNotAvailable:
            raise SwapRefused("needs_parser") from None
        if token is None:
            raise SwapRefused("needs_parser")
        changes = {}
        for word in self._agreeing(token):
            word_gender = (word.morph.get("Gender") or [""])[0]
            if word_gender and word_gender != {"m": "Masc", "f": "Fem"}[gender]:
                continue
            new = ag.fr_regender(word.text, word.lemma_ if word.pos_ == "ADJ" else None, new_gender, number)
            if new.lower() != word.text.lower():
                changes[word.i] = (word.idx, word.idx + len(word.text), match_case(word.text, new))
        return list(changes.values())

    @staticmethod
    def _agreeing(token: Any) -> list[Any]:
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
