"""French agreement for swaps: articles, elision and adjective endings.

A determiner tells gender and number ("un", "la", "ces"); before a vowel or a mute h, "le"/"la" become "l'", "de"
"d'", "ce" "cet", "ma" "mon", "du" "de l'" — so replacing a word may change the word before it ("le
musulman" -> "l'athée"). When a swap changes a noun's gender (the target has no form of the source's gender:
"lesbienne"), the determiner changes ("un" -> "une") and so do the adjectives that agree with the noun, found by
spaCy's French parser: its attributive adjectives and a predicative adjective whose subject it is ("Ce musulman est
pratiquant." -> "Cette lesbienne est pratiquante."). An adjective's other gender is built from its lemma (the
masculine singular) by the regular rules and a list of irregular adjectives.
"""

from __future__ import annotations

from typing import Any

from ...editors.agreement import Word, word_before
from ...text import match_case

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
