"""German agreement for swaps: articles and adjective endings.

Articles and adjectives decline by gender, number and case. A noun phrase is read from its determiner
(``der``-words such as "der", "dieser"; ``ein``-words such as "ein", "kein", "sein") and the lower-case words between
it and the noun (attributive adjectives: German capitalises nouns). The readings of the determiner and of the noun
form ("den" is masculine accusative or dative plural; "Juden" is a masculine oblique case or plural) are intersected;
where one case remains, articles and adjective endings are rewritten by the declension tables below; where several
remain and would be written differently, the swap gets a status instead of a guess.
"""

from __future__ import annotations

import re

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
