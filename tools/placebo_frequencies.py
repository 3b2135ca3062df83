"""Write ``src/counterfair/languages/{en,fr,de}/placebo.yaml``: the placebo words (adjectives that describe a person
and name no social group, neutral in tone, one word each) with their Zipf frequencies, and the Zipf frequencies of the
built-in identity terms of the language, so that an identity swap's placebo can be a word of similar frequency.

French and German words carry their inflections in the identity packs' format (French ``[m.sg, f.sg, m.pl, f.pl]``,
German the adjective stem that takes the endings), so the placebo swap writes them with agreement as the identity
swap writes its target ("un musulman pratiquant" -> "un curieux pratiquant", "einen Muslim" -> "einen neugierigen
Menschen"). A French or German word's frequency is that of its most frequent form, as is an identity term's (German
text writes "muslimische", "Muslime" far more often than the stem "muslimisch").

Needs ``wordfreq`` (not a counterfair dependency: the frequencies ship in the YAML):

    pip install --target /tmp/wordfreq wordfreq==3.1.1
    PYTHONPATH=/tmp/wordfreq python tools/placebo_frequencies.py
"""

from __future__ import annotations

from pathlib import Path

import yaml
from wordfreq import zipf_frequency

from counterfair.lexicons.attributes import load_identity_set

# English: no word that a bias inventory treats as a group of its own (HolisticBias v1.1's descriptors: tall, short,
# small, athletic; left-handed, bespectacled), none with a sentiment of its own (VADER 3.3.2's lexicon: calm, careful,
# curious, shy, bored, tired; and polite, tidy, punctual, which praise; "thirsty", slang for desperate, which
# profanity-check scored 4.1 points above the others): tests/test_control.py holds the list to that
WORDS = (
    "sunburned talkative sporty barefoot sleepy hungry musical quiet busy chatty seated hatless soaked yawning"
).split()

# French adjectives that also stand as nouns for a person ("un curieux", "les timides"), every form given
FRENCH = {
    "grand": ["grand", "grande", "grands", "grandes"],
    "petit": ["petit", "petite", "petits", "petites"],
    "timide": ["timide", "timide", "timides", "timides"],
    "curieux": ["curieux", "curieuse", "curieux", "curieuses"],
    "bavard": ["bavard", "bavarde", "bavards", "bavardes"],
    "sportif": ["sportif", "sportive", "sportifs", "sportives"],
    "gourmand": ["gourmand", "gourmande", "gourmands", "gourmandes"],
    "distrait": ["distrait", "distraite", "distraits", "distraites"],
    "ponctuel": ["ponctuel", "ponctuelle", "ponctuels", "ponctuelles"],
    "poli": ["poli", "polie", "polis", "polies"],
    "calme": ["calme", "calme", "calmes", "calmes"],
    "rêveur": ["rêveur", "rêveuse", "rêveurs", "rêveuses"],
    "gaucher": ["gaucher", "gauchère", "gauchers", "gauchères"],
    "myope": ["myope", "myope", "myopes", "myopes"],
    "prudent": ["prudent", "prudente", "prudents", "prudentes"],
    "discret": ["discret", "discrète", "discrets", "discrètes"],
    "fatigué": ["fatigué", "fatiguée", "fatigués", "fatiguées"],
    "pressé": ["pressé", "pressée", "pressés", "pressées"],
}
# German adjective stems that take the regular endings (none ends in -e, -el or -er, which drop a letter)
GERMAN = (
    "groß klein schüchtern neugierig sportlich gesprächig pünktlich höflich ruhig hungrig durstig vorsichtig fleißig "
    "musikalisch ordentlich verträumt kurzsichtig freundlich"
).split()
GERMAN_ENDINGS = ("", "e", "er", "es", "en", "em")
# Spanish adjectives that also stand as nouns for a person ("un curioso", "las tímidas"), every form given
SPANISH = {w: [w, w[:-1] + "a", w + "s", w[:-1] + "as"] for w in
           "alto tímido curioso educado tranquilo distraído discreto cansado zurdo despistado".split()}  # fmt: skip
SPANISH |= {w: [w, w, w + "s", w + "s"] for w in ("deportista", "prudente", "miope")}
SPANISH |= {w: [w, w + "a", w + "es", w + "as"] for w in ("hablador", "soñador", "madrugador")}
SPANISH["puntual"] = ["puntual", "puntual", "puntuales", "puntuales"]

HEADER = (
    "# Placebo words for the audit's placebo control: each identity swap gets a matched swap to one of these\n"
    "# words (same position, same grammatical form, similar frequency). Replace with --placebo FILE: a mapping\n"
    "# `words: {word: zipf}` (or a plain list), and optionally `term_frequencies` for your identity terms.\n"
)
FORMS_NOTE = {
    "fr": "# French and German words also give `inflections`, in the identity packs' format, so that the swap writes\n"
    "# them with agreement: French [masculine singular, feminine singular, masculine plural, feminine plural].\n",
    "de": "# French and German words also give `inflections`, in the identity packs' format, so that the swap writes\n"
    "# them with agreement: German the adjective stem that takes the endings ('einen neugierigen Menschen').\n",
    "es": "# Spanish words also give `inflections`, in the identity packs' format, so that the swap writes them with\n"
    "# agreement: [masculine singular, feminine singular, masculine plural, feminine plural].\n",
}


def _forms(language: str, term: str, identities: object) -> list[str]:
    """Every written form of a term of the language's identity set (French: its four; German: nouns and adjective
    with its endings)."""
    inflection = identities.inflections[term.lower()]  # type: ignore[attr-defined]
    forms = list(inflection.forms.values())
    if inflection.adjective:
        forms += [inflection.adjective + e for e in (("",) if inflection.invariable else GERMAN_ENDINGS)]
    return forms or [term]


def _zipf(forms: list[str], language: str) -> float:
    return round(max(zipf_frequency(f, language) for f in forms), 2)


def build(language: str) -> dict[str, object]:
    from importlib.metadata import version

    identities = load_identity_set(None if language == "en" else f"identity-{language}")
    words = {"en": WORDS, "fr": list(FRENCH), "de": GERMAN, "es": list(SPANISH)}[language]
    overlap = {w.lower() for w in words} & {t.lower() for t in identities.terms}
    if overlap:
        raise SystemExit(f"placebo words that are identity terms: {sorted(overlap)}")
    name = {"en": "English", "fr": "French", "de": "German", "es": "Spanish"}[language]
    data: dict[str, object] = {
        "name": f"placebo-{language}",
        "version": 1,
        "language": language,
        "source": (
            f"Zipf frequencies (log10 of occurrences per billion words) from wordfreq {version('wordfreq')}, "
            f"{name}{'' if language == 'en' else ', of the most frequent form'}; written by "
            "tools/placebo_frequencies.py"
        ),
    }
    if language == "en":
        data["words"] = {w: round(zipf_frequency(w, "en"), 2) for w in WORDS}
        data["term_frequencies"] = {t: round(zipf_frequency(t, "en"), 2) for t in identities.terms}
        return data
    if language in ("fr", "es"):
        table = FRENCH if language == "fr" else SPANISH
        data["words"] = {w: _zipf(forms, language) for w, forms in table.items()}
        data["inflections"] = dict(table)
    else:
        data["words"] = {w: _zipf([w + e for e in GERMAN_ENDINGS], "de") for w in GERMAN}
        data["inflections"] = {w: {"adjective": w} for w in GERMAN}
    data["term_frequencies"] = {t: _zipf(_forms(language, t, identities), language) for t in identities.terms}
    return data


def main() -> None:
    import sys

    folder = Path(__file__).resolve().parents[1] / "src" / "counterfair" / "languages"
    for language in sys.argv[1:] or ("en", "fr", "de", "es"):
        target = folder / language / "placebo.yaml"
        # French and German: each word's forms on its line; English as it always was
        flow = {} if language == "en" else {"default_flow_style": None, "width": 120}
        body = yaml.safe_dump(build(language), sort_keys=False, allow_unicode=True, **flow)
        target.write_text(HEADER + FORMS_NOTE.get(language, "") + body, encoding="utf-8")
        print(f"wrote {target}")


if __name__ == "__main__":
    main()
