"""French and German agreement for swaps: articles, elision and adjective endings.

**French.** A determiner tells gender and number ("un", "la", "ces"); before a vowel or a mute h, "le"/"la" become
"l'", "de" "d'", "ce" "cet", "ma" "mon", "du" "de l'" — so replacing a word may change the word before it ("le
musulman" -> "l'athée"). When a swap changes a noun's gender (the target has no form of the source's gender:
"lesbienne"), the determiner changes ("un" -> "une") and so do the adjectives that agree with the noun, found by
spaCy's French parser: its attributive adjectives and a predicative adjective whose subject it is ("Ce musulman est
pratiquant." -> "Cette lesbienne est pratiquante."). An adjective's other gender is built from its lemma (the
masculine singular) by the regular rules and a list of irregular adjectives.

**German.** Articles and adjectives decline by gender, number and case. A noun phrase is read from its determiner
(``der``-words such as "der", "dieser"; ``ein``-words such as "ein", "kein", "sein") and the lower-case words between
it and the noun (attributive adjectives: German capitalises nouns). The readings of the determiner and of the noun
form ("den" is masculine accusative or dative plural; "Juden" is a masculine oblique case or plural) are intersected;
where one case remains, articles and adjective endings are rewritten by the declension tables below; where several
remain and would be written differently, the swap gets a status instead of a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..text import match_case

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


# ----------------------------------------------------------------------------------------------------- French

FR_VOWELS = "aeiouyàâäéèêëîïôöùûüœæh"  # a mute h elides ("l'homosexuel", "l'hindou")
_PL = frozenset({"m.pl", "f.pl"})
_SG = frozenset({"m.sg", "f.sg"})
FR_DETERMINERS: dict[str, frozenset[str]] = {
    "un": frozenset({"m.sg"}),
    "une": frozenset({"f.sg"}),
    "le": frozenset({"m.sg"}),
    "la": frozenset({"f.sg"}),
    "l'": _SG,
    "les": _PL,
    "des": _PL,
    "du": frozenset({"m.sg"}),
    "au": frozenset({"m.sg"}),
    "aux": _PL,
    "ce": frozenset({"m.sg"}),
    "cet": frozenset({"m.sg"}),
    "cette": frozenset({"f.sg"}),
    "ces": _PL,
    "mon": _SG,  # "mon amie": a feminine noun after a vowel takes "mon"
    "ton": _SG,
    "son": _SG,
    "ma": frozenset({"f.sg"}),
    "ta": frozenset({"f.sg"}),
    "sa": frozenset({"f.sg"}),
    "mes": _PL,
    "tes": _PL,
    "ses": _PL,
    "nos": _PL,
    "vos": _PL,
    "leurs": _PL,
    "notre": _SG,
    "votre": _SG,
    "leur": _SG,
    "aucun": frozenset({"m.sg"}),
    "aucune": frozenset({"f.sg"}),
    "quel": frozenset({"m.sg"}),
    "quelle": frozenset({"f.sg"}),
    "quels": frozenset({"m.pl"}),
    "quelles": frozenset({"f.pl"}),
    "certains": frozenset({"m.pl"}),
    "certaines": frozenset({"f.pl"}),
    "plusieurs": _PL,
    "chaque": _SG,
    "tout": frozenset({"m.sg"}),
    "toute": frozenset({"f.sg"}),
    "tous": frozenset({"m.pl"}),
    "toutes": frozenset({"f.pl"}),
}
# the determiner of the other gender (plural determiners other than these do not show gender)
_FR_OTHER_GENDER = {
    "un": "une",
    "le": "la",
    "ce": "cette",
    "cet": "cette",
    "mon": "ma",
    "ton": "ta",
    "son": "sa",
    "aucun": "aucune",
    "quel": "quelle",
    "quels": "quelles",
    "certains": "certaines",
    "tout": "toute",
    "tous": "toutes",
    "du": "de la",
    "au": "à la",
}
_FR_OTHER_GENDER |= {f: m for m, f in _FR_OTHER_GENDER.items() if m not in ("cet",)}
FR_PRONOUNS = {"m": ("il", "ils"), "f": ("elle", "elles")}


def fr_vowel_initial(word: str) -> bool:
    return word[:1].lower() in FR_VOWELS


def fr_determiner_for(determiner: str, next_word: str, gender: str) -> str:
    """``determiner`` (lower-case, elided forms with "'") written before ``next_word`` of ``gender`` ("m"/"f"):
    elision and euphony ("le" -> "l'" before a vowel, "l'" -> "la" before a consonant, "ce" -> "cet", "ma" ->
    "mon", "du" -> "de l'")."""
    vowel = fr_vowel_initial(next_word)
    low = determiner.lower()
    if low in ("le", "la", "l'"):
        return "l'" if vowel else ("le" if gender == "m" else "la")
    if low in ("de", "d'"):
        return "d'" if vowel else "de"
    if low in ("que", "qu'"):
        return "qu'" if vowel else "que"
    if low in ("ce", "cet", "cette"):
        return "cette" if gender == "f" else ("cet" if vowel else "ce")
    for masc, fem in (("mon", "ma"), ("ton", "ta"), ("son", "sa")):
        if low in (masc, fem):
            return masc if gender == "m" or vowel else fem
    if low in ("du", "de la", "de l'"):
        return "de l'" if vowel else ("du" if gender == "m" else "de la")
    if low in ("au", "à la", "à l'"):
        return "à l'" if vowel else ("au" if gender == "m" else "à la")
    return determiner


def fr_rewrite_before(text: str, start: int, new_word: str, gender: str, current: str | None = None) -> Any:
    """The change ``(start, end, written)`` that makes the word before ``start`` (an article, "de", "que", ...) fit
    ``new_word`` of ``gender`` ("la mosquée" -> "l'église", "l'islam" -> "le christianisme"), or None. ``current``:
    the determiner to write instead of the one in the text (a gender change)."""
    before = word_before(text, start)
    if before is None:
        return None
    key = before.key
    if key in ("la", "l'"):  # "de la", "à l'": contracted with the preposition when the article changes
        prep = word_before(text, before.start)
        if prep is not None and prep.key in ("de", "à") and text[prep.end - 1 : prep.end].isspace():
            before = Word(prep.start, before.end, text[prep.start : before.start] + before.text)
            key = " ".join(before.key.split())
    written = fr_determiner_for(current or key, new_word, gender)
    if written == key:
        return None
    apostrophe = "\u2019" if "\u2019" in text else "'"
    written = match_case(before.text, written.replace("'", apostrophe))
    return before.start, before.end, written if written.endswith(apostrophe) else written + " "


def fr_other_gender_determiner(determiner: str) -> str:
    return _FR_OTHER_GENDER.get(determiner.lower(), determiner)


_FR_FEMININE_IRREGULAR = {
    "beau": "belle",
    "nouveau": "nouvelle",
    "vieux": "vieille",
    "fou": "folle",
    "mou": "molle",
    "long": "longue",
    "frais": "fraîche",
    "blanc": "blanche",
    "franc": "franche",
    "sec": "sèche",
    "public": "publique",
    "grec": "grecque",
    "turc": "turque",
    "gentil": "gentille",
    "gros": "grosse",
    "bas": "basse",
    "épais": "épaisse",
    "gras": "grasse",
    "faux": "fausse",
    "roux": "rousse",
    "doux": "douce",
    "favori": "favorite",
    "bon": "bonne",
    "muet": "muette",
    "net": "nette",
    "violet": "violette",
    "complet": "complète",
    "inquiet": "inquiète",
    "secret": "secrète",
    "discret": "discrète",
    "malin": "maligne",
    "bénin": "bénigne",
}
_FR_EUR_PLUS_E = frozenset(
    "meilleur supérieur inférieur extérieur intérieur majeur mineur antérieur postérieur ultérieur".split()
)
_FR_FEMININE_SUFFIXES: tuple[tuple[str, str], ...] = (("eux", "euse"), ("if", "ive"), ("er", "ère"))
_FR_FEMININE_SUFFIXES += (("ien", "ienne"), ("en", "enne"), ("on", "onne"), ("el", "elle"), ("eil", "eille"))
_FR_FEMININE_SUFFIXES += (("et", "ette"), ("ul", "ulle"))


def fr_feminine(masculine: str) -> str:
    """The feminine singular of a French adjective or participle from its masculine singular."""
    low = masculine.lower()
    if low in _FR_FEMININE_IRREGULAR:
        return _FR_FEMININE_IRREGULAR[low]
    if low.endswith("e"):
        return masculine
    if low.endswith("eur"):
        if low in _FR_EUR_PLUS_E:
            return masculine + "e"
        return masculine[:-3] + ("rice" if low.endswith("teur") else "euse")
    for suffix, replacement in _FR_FEMININE_SUFFIXES:
        if low.endswith(suffix):
            return masculine[: -len(suffix)] + replacement
    return masculine + "e"


def fr_plural(word: str, gender: str) -> str:
    low = word.lower()
    if low.endswith(("s", "x", "z")):
        return word
    if gender == "m" and low.endswith("al") and low not in ("banal", "fatal", "final", "natal", "naval"):
        return word[:-2] + "aux"
    if low.endswith("eau"):
        return word + "x"
    return word + "s"


def fr_singular(word: str) -> str:
    low = word.lower()
    if low.endswith("eaux"):
        return word[:-1]
    if low.endswith("aux") and len(low) > 4:
        return word[:-3] + "al"
    if low.endswith("s") and not low.endswith(("ss", "is", "us")):
        return word[:-1]
    return word


_FR_MASCULINE_IRREGULAR = {f: m for m, f in _FR_FEMININE_IRREGULAR.items()}


def fr_masculine(feminine: str, lemma: str | None = None) -> str:
    """The masculine singular of a French adjective or participle from its feminine singular; ``lemma`` (spaCy's,
    for an adjective) is used when it is a form of the same word."""
    low = feminine.lower()
    if low in _FR_MASCULINE_IRREGULAR:
        return _FR_MASCULINE_IRREGULAR[low]
    if lemma and lemma[:3].lower() == low[:3] and fr_feminine(lemma).lower() == low:
        return lemma
    for masc, fem in (("eux", "euse"), ("if", "ive"), ("er", "ère"), ("en", "enne"), ("on", "onne")):
        if low.endswith(fem):
            return feminine[: -len(fem)] + masc
    if low.endswith(("elle", "ette")):
        return feminine[:-2]
    if low.endswith("e") and not (lemma and lemma.lower() == low):
        return feminine[:-1]  # "pratiquante" -> "pratiquant", "convertie" -> "converti"; "jeune" has lemma "jeune"
    return feminine


def fr_regender(word: str, lemma: str | None, gender: str, number: str) -> str:
    """``word`` (an adjective or participle agreeing with a noun of the other gender) for a noun of ``gender`` and
    ``number``."""
    singular = fr_singular(word) if number == "pl" else word
    new = fr_feminine(singular) if gender == "f" else fr_masculine(singular, lemma)
    return fr_plural(new, gender) if number == "pl" else new


# ----------------------------------------------------------------------------------------------------- German

CASES = ("nom", "acc", "dat", "gen")
GENDERS = ("m", "f", "n", "pl")
_DEFINITE = {"m": ("der", "den", "dem", "des"), "f": ("die", "die", "der", "der"), "n": ("das", "das", "dem", "des")}
_DEFINITE["pl"] = ("die", "die", "den", "der")
_DER_ENDINGS = {"m": ("er", "en", "em", "es"), "f": ("e", "e", "er", "er"), "n": ("es", "es", "em", "es")}
_DER_ENDINGS["pl"] = ("e", "e", "en", "er")
_EIN_ENDINGS = {"m": ("", "en", "em", "es"), "f": ("e", "e", "er", "er"), "n": ("", "", "em", "es")}
_EIN_ENDINGS["pl"] = ("e", "e", "en", "er")
_DER_STEMS = ("dies", "jen", "jed", "welch", "manch", "solch")
_EIN_STEMS = ("ein", "kein", "mein", "dein", "sein", "ihr", "unser", "eur")
# adjective endings by declension (after a der-word: weak; after an ein-word: mixed; no determiner: strong)
ADJECTIVE_ENDINGS = {
    "weak": {"m": ("e", "en", "en", "en"), "f": ("e", "e", "en", "en"), "n": ("e", "e", "en", "en")},
    "mixed": {"m": ("er", "en", "en", "en"), "f": ("e", "e", "en", "en"), "n": ("es", "es", "en", "en")},
    "strong": {"m": ("er", "en", "em", "en"), "f": ("e", "e", "er", "er"), "n": ("es", "es", "em", "en")},
}
ADJECTIVE_ENDINGS["weak"]["pl"] = ("en",) * 4
ADJECTIVE_ENDINGS["mixed"]["pl"] = ("en",) * 4
ADJECTIVE_ENDINGS["strong"]["pl"] = ("e", "e", "en", "er")
DE_ADJECTIVE_ENDINGS = ("", "e", "er", "en", "em", "es")
DE_PRONOUNS = {"m": ("er", "ihn", "ihm"), "f": ("sie",), "pl": ()}
# readings are (gender, case); a determiner reading adds its declension: (declension, gender, case)
Reading = tuple[str, str]


def _determiner_table() -> dict[str, set[tuple[str, str, str]]]:
    table: dict[str, set[tuple[str, str, str]]] = {}
    for gender in GENDERS:
        for k, case in enumerate(CASES):
            table.setdefault(_DEFINITE[gender][k], set()).add(("weak", gender, case))
            for stem in _DER_STEMS:
                table.setdefault(stem + _DER_ENDINGS[gender][k], set()).add(("weak", gender, case))
            for stem in _EIN_STEMS:
                if stem == "ein" and gender == "pl":
                    continue  # the indefinite article has no plural
                ending = _EIN_ENDINGS[gender][k]
                word = ("euer" if stem == "eur" else stem) if not ending else stem + ending
                # an ein-word in the plural (keine, meine) is followed by weak endings, like a der-word
                table.setdefault(word, set()).add(("weak" if gender == "pl" else "mixed", gender, case))
    return table


DE_DETERMINERS = _determiner_table()


def de_determiner(word: str, gender: str, case: str) -> str:
    """The determiner of the same family as ``word`` in another ``gender`` and ``case`` ("ein" -> "eine")."""
    low = word.lower()
    k = CASES.index(case)
    if low in {w for forms in _DEFINITE.values() for w in forms}:
        new = _DEFINITE[gender][k]
    else:
        stem = next((s for s in _DER_STEMS if low.startswith(s)), None)
        if stem is not None:
            new = stem + _DER_ENDINGS[gender][k]
        else:
            stem = next(s for s in sorted(_EIN_STEMS, key=len, reverse=True) if low.startswith(s))
            ending = _EIN_ENDINGS[gender][k]
            new = ("euer" if stem == "eur" else stem) if not ending else stem + ending
    return new[:1].upper() + new[1:] if word[:1].isupper() else new


def de_is_determiner(word: str) -> bool:
    return word.lower() in DE_DETERMINERS


def de_adjective_ending(declension: str, gender: str, case: str) -> str:
    return ADJECTIVE_ENDINGS[declension][gender][CASES.index(case)]


_DE_ATTRIBUTIVE = re.compile(r"^[a-zäöüß]+(?:e|er|en|em|es)$")


def de_attributive(word: str) -> bool:
    """A lower-case word with an adjective ending: between a determiner and its noun, an attributive adjective."""
    return bool(_DE_ATTRIBUTIVE.match(word))


# prepositions that govern one case: the case of the noun phrase after them
_DE_DATIVE = frozenset("mit von zu bei aus nach seit gegenüber zum zur vom beim".split())
_DE_ACCUSATIVE = frozenset("für gegen ohne durch um".split())


def de_preposition_case(word: object) -> str | None:
    """``dat`` or ``acc`` for a preposition that governs one case ("mit den Juden"), else None."""
    text = getattr(word, "text", None)
    if not isinstance(text, str):
        return None
    low = text.lower()
    return "dat" if low in _DE_DATIVE else "acc" if low in _DE_ACCUSATIVE else None
