"""Spanish agreement rules of the identity swap, without a parser (no spaCy Spanish model installs beside the spaCy
counterfair uses): the words around a term decide its reading and what changes with it.

* A term after a determiner is a noun ("el musulmán", "unas judías"): the determiner tells gender and number. A term
  after another word that follows a determiner is an adjective of that noun ("un vecino musulmán", "la gente
  musulmana"): the determiner tells the noun's gender and number. A form that is one reading alone ("musulmanas")
  needs neither.
* The target is written in the same gender and number: "un vecino musulmán" -> "un vecino judío", "las musulmanas" ->
  "las budistas". Where the text leaves several readings and the target's forms differ, the swap says
  ``swap:ambiguous_gender``; a bare plural takes the generic masculine.
* A target without the source's gender ("lesbiana", the gender words "hombre", "mujer") changes the gender of the
  phrase: the determiner ("un" -> "una", "del" -> "de la"), an adjective before the noun ("buen" -> "buena"), the
  adjective right after it and one after a copula ("El musulmán es simpático." -> "La lesbiana es simpática."; an
  adjective the rules know, or a participle), and where the term is an adjective its person noun ("un vecino
  musulmán" -> "una vecina lesbiana"; a noun of one form, "estudiante", keeps its form). A person noun the rules do
  not list is not changed: the swap says ``swap:gender_fixed``. A pronoun of the old gender in the text ("él",
  "ella") leaves the variant out (``swap:pronoun_agreement``).
* Colours ("negro", "blanco") count only after a person noun ("un hombre negro", "las personas blancas").
"""

from __future__ import annotations

import re

from ...editors.agreement import Word, word_before
from ...editors.grammar import Change, Grammar, word_after
from ...editors.swap import SwapRefused
from ...text import TermMatch, match_case

_PL = frozenset({"m.pl", "f.pl"})
_SG = frozenset({"m.sg", "f.sg"})


def _table(words: str, reading: str) -> dict[str, frozenset[str]]:
    return {w: frozenset({reading}) for w in words.split()}


DETERMINERS: dict[str, frozenset[str]] = {
    **_table("el un este ese aquel otro algún ningún mucho nuestro vuestro cierto dicho del al tanto", "m.sg"),
    **_table("la una esta esa aquella otra alguna ninguna mucha nuestra vuestra cierta dicha tanta", "f.sg"),
    **_table("los unos estos esos aquellos otros algunos muchos nuestros vuestros varios ciertos dichos pocos", "m.pl"),
    **_table("las unas estas esas aquellas otras algunas muchas nuestras vuestras varias ciertas dichas pocas", "f.pl"),
    **{w: _SG for w in "mi tu su cada".split()},
    **{w: _PL for w in "mis tus sus".split()},
}
_PAIRS = """el la|un una|este esta|ese esa|aquel aquella|otro otra|algún alguna|ningún ninguna|mucho mucha
nuestro nuestra|vuestro vuestra|cierto cierta|dicho dicha|tanto tanta|los las|unos unas|estos estas|esos esas
aquellos aquellas
otros otras|algunos algunas|muchos muchas|nuestros nuestras|vuestros vuestras|varios varias|ciertos ciertas
dichos dichas|pocos pocas"""
_OTHER_DETERMINER = {m: f for m, f in (p.split() for p in _PAIRS.replace("\n", "|").split("|"))}
_OTHER_DETERMINER |= {f: m for m, f in list(_OTHER_DETERMINER.items())}
_OTHER_DETERMINER |= {"del": "de la", "al": "a la"}
PRONOUNS = {"m": ("él", "ellos"), "f": ("ella", "ellas")}

# person nouns by gender: the masculine and feminine of the same noun (singular; plurals are made by rule)
_PERSON_PAIRS_SG = """hombre mujer|chico chica|niño niña|muchacho muchacha|vecino vecina|amigo amiga|compañero compañera
hijo hija|hermano hermana|padre madre|abuelo abuela|tío tía|primo prima|novio novia|marido esposa|esposo esposa
alumno alumna|ciudadano ciudadana|profesor profesora|maestro maestra|médico médica|abogado abogada
empleado empleada|trabajador trabajadora|vendedor vendedora|jugador jugadora|señor señora|ingeniero ingeniera
enfermero enfermera|cocinero cocinera|conductor conductora|autor autora|escritor escritora|inquilino inquilina
candidato candidata|voluntario voluntaria|dueño dueña|jefe jefa|cliente clienta"""
# nouns of one form whose gender only the determiner shows ("el estudiante", "la estudiante")
_ONE_FORM = """estudiante estudiantes joven jóvenes paciente pacientes colega colegas periodista periodistas artista
artistas turista turistas cantante cantantes policía policías testigo testigos representante representantes""".split()
# adjectives that go before the noun, with their other gender ("un buen musulmán" -> "una buena lesbiana")
_PREPOSED = {"buen": "buena", "mal": "mala", "gran": "gran", "viejo": "vieja", "nuevo": "nueva", "joven": "joven",
             "pobre": "pobre", "primer": "primera", "último": "última", "querido": "querida", "viejos": "viejas",
             "nuevos": "nuevas", "queridos": "queridas", "buenos": "buenas", "malos": "malas"}  # fmt: skip
_PREPOSED |= {f: m for m, f in list(_PREPOSED.items()) if f != m}
_PREPOSED |= {"buena": "buen", "mala": "mal", "primera": "primer"}
# adjectives of two genders (masculine singular) that the rules rewrite after a term or a copula; a word ending in
# -ado/-ido (a participle: "detenido", "casada") is rewritten too; a verb ("trabaja", "llega") never is
ADJECTIVES = frozenset(
    """simpático alto bajo guapo contento cansado ocupado orgulloso religioso viejo nuevo bueno malo generoso honesto
    famoso conocido casado soltero divorciado enfermo sano rico tranquilo nervioso preocupado enfadado listo tímido
    curioso educado distraído discreto zurdo despistado devoto moderno estricto abierto gracioso serio sincero
    pequeño mayor activo callado famoso honrado justo ocupado perfecto precioso querido raro solo tonto trabajador
    hablador soñador madrugador friolero practicante creyente""".split()
)
# words ending like a participle that are nouns
_STOP = frozenset("comida vida salida bebida llegada entrada partida nada cada todo toda lado nido ruido".split())
_COPULAS = frozenset("es está era estaba fue parece parecía son están eran estaban fueron parecen parecían".split())


def _plural(noun: str) -> str:
    return noun + ("s" if noun[-1] in "aeiouáéó" else "es")


def _person_pairs() -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in _PERSON_PAIRS_SG.replace("\n", "|").split("|"):
        m, f = pair.split()
        out.setdefault(m, f)
        out.setdefault(f, m)
        out.setdefault(_plural(m), _plural(f))
        out.setdefault(_plural(f), _plural(m))
    return out


PERSON_PAIRS = _person_pairs()
PERSON_NOUNS = frozenset(PERSON_PAIRS) | frozenset(_ONE_FORM) | frozenset("persona personas gente".split())
_PERSON_GENDER = {noun: ("f" if i % 2 else "m") for pair in _PERSON_PAIRS_SG.replace("\n", "|").split("|")
                  for i, noun in enumerate(pair.split())}  # fmt: skip
_PERSON_GENDER |= {_plural(noun): gender for noun, gender in list(_PERSON_GENDER.items())}
_PERSON_GENDER |= {"persona": "f", "personas": "f", "gente": "f"}


def _masculine_singular(low: str) -> str:
    for old, new in (("oras", "or"), ("ores", "or"), ("ora", "or"), ("os", "o"), ("as", "o"), ("a", "o")):
        if low.endswith(old):
            return low[: len(low) - len(old)] + new
    return low


def regender_adjective(word: str, gender: str) -> str | None:
    """``word`` in ``gender`` where it is an adjective the rules know (:data:`ADJECTIVES`, or a participle in
    -ado/-ido), else None."""
    low = word.lower()
    known = _masculine_singular(low) in ADJECTIVES or re.fullmatch(r"\w{2,}[ai]d[oa]s?", low) is not None
    if low in _STOP or not known:
        return None
    to_f = gender == "f"
    rules = (("os", "as"), ("o", "a"), ("ores", "oras"), ("or", "ora")) if to_f else (
        ("as", "os"), ("oras", "ores"), ("ora", "or"), ("a", "o"))  # fmt: skip
    for old, new in rules:
        if low.endswith(old):
            return match_case(word, low[: len(low) - len(old)] + new)
    return None


class SpanishGrammar(Grammar):
    """Spanish: determiners, person nouns and adjective endings read and rewritten by the rules above, no parser."""

    def about_people(self, text: str, match: TermMatch) -> bool:
        before = word_before(text, match.start)
        return before is not None and before.key in PERSON_NOUNS

    def form(self, text: str, match: TermMatch) -> str:
        """``plural``, ``noun`` (after a determiner) or ``adjective`` (describing a noun, or a predicate)."""
        det, _, head = self._phrase(text, match)
        if all(r.endswith(".pl") for r in self._readings(match, det, head)):
            return "plural"
        return "noun" if det is not None and head is None else "adjective"

    def _phrase(self, text: str, match: TermMatch) -> tuple[Word | None, Word | None, Word | None]:
        """(determiner, preposed adjective, head noun) around the term: a determiner right before it (or before a
        preposed adjective) makes it a noun; a word between a determiner and the term is the noun it describes."""
        before = word_before(text, match.start)
        if before is None:
            return None, None, None
        if before.key in DETERMINERS:
            return before, None, None
        earlier = word_before(text, before.start)
        if before.key in _PREPOSED and earlier is not None and earlier.key in DETERMINERS:
            return earlier, before, None
        if earlier is not None and earlier.key in DETERMINERS:
            return earlier, None, before
        return None, None, before if before.key in PERSON_NOUNS else None

    def _readings(self, match: TermMatch, det: Word | None, head: Word | None) -> set[str]:
        """The readings (``m.sg`` ...) of the occurrence's form that its determiner and person noun leave."""
        readings = {slot for _, slot in self.editor._slots(match)}
        if det is not None:
            readings = (readings & DETERMINERS[det.key]) or readings
        if head is not None and head.key in _PERSON_GENDER:
            readings = {r for r in readings if r[0] == _PERSON_GENDER[head.key]} or readings
        if head is not None and len(readings) > 1:
            number = "pl" if head.key.endswith("s") else "sg"
            readings = {r for r in readings if r.endswith(number)} or readings
        return readings

    def _reading(self, match: TermMatch, target: str, det: Word | None, head: Word | None) -> str:
        readings = self._readings(match, det, head)
        if len(readings) > 1:
            forms = self.editor._inflections[target.lower()].forms
            if len({forms.get(r) for r in readings}) == 1 and None not in {forms.get(r) for r in readings}:
                return sorted(readings)[0]  # the target is written the same in every reading
            if all(r.endswith(".pl") for r in readings):
                readings = {r for r in readings if r.startswith("m.")} or readings  # the generic masculine plural
        if len(readings) > 1:
            raise SwapRefused("swap:ambiguous_gender")
        return next(iter(readings))

    def changes(self, text: str, match: TermMatch, target: str) -> list[Change]:
        det, preposed, head = self._phrase(text, match)
        slot = self._reading(match, target, det, head)
        gender, number = slot.split(".")
        forms = self.editor._inflections[target.lower()].forms
        if slot in forms:
            return [(match.start, match.end, match_case(match.text, forms[slot]))]
        new_gender = "f" if gender == "m" else "m"
        new_slot = f"{new_gender}.{number}"
        if new_slot not in forms:
            raise SwapRefused(f"swap:no_form:{target}")
        words = {w.lower() for w in re.findall(r"[^\W\d_]+", text)}
        if words & set(PRONOUNS[gender]):
            raise SwapRefused("swap:pronoun_agreement")
        changes: list[Change] = [(match.start, match.end, match_case(match.text, forms[new_slot]))]
        if head is not None:  # the term describes a person noun: the noun changes gender with it
            if head.key in PERSON_PAIRS:
                changes.append((head.start, head.start + len(head.text), match_case(head.text, PERSON_PAIRS[head.key])))
            elif head.key not in _ONE_FORM:
                raise SwapRefused("swap:gender_fixed")
        elif det is None:
            raise SwapRefused("swap:gender_fixed")  # no determiner shows the gender: a predicate or a bare plural
        if det is not None:
            changes += self._determiner(text, det, new_gender)
        if preposed is not None:
            other = _PREPOSED[preposed.key]
            changes.append((preposed.start, preposed.start + len(preposed.text), match_case(preposed.text, other)))
        return changes + self._after(text, match.end, new_gender)

    @staticmethod
    def _determiner(text: str, det: Word, gender: str) -> list[Change]:
        other = _OTHER_DETERMINER.get(det.key)
        if other is None:
            return []  # "mi", "su", "cada": one form for both genders
        if det.key == "la" and gender == "m":  # "de la" -> "del", "a la" -> "al"
            prep = word_before(text, det.start)
            if prep is not None and prep.key in ("de", "a") and text[prep.end - 1 : prep.end].isspace():
                merged = "del" if prep.key == "de" else "al"
                return [(prep.start, det.start + len(det.text), match_case(prep.text, merged))]
        return [(det.start, det.start + len(det.text), match_case(det.text, other))]

    @staticmethod
    def _after(text: str, end: int, gender: str) -> list[Change]:
        """The adjective right after the phrase, or the one after a copula ("es simpático"), in the new gender."""
        out: list[Change] = []
        word = word_after(text, end)
        start = text.find(word, end) if word else -1
        if word.lower() in _COPULAS:
            end = start + len(word)
            word = word_after(text, end)
            start = text.find(word, end) if word else -1
        new = regender_adjective(word, gender) if word else None
        if new is not None and start >= 0:
            out.append((start, start + len(word), new))
        return out
