"""The placebo words: put in each identity slot beside the identity terms, in the same grammatical form, in the
audit's language; what the in-slot identity effect compares with. (One statistic, #70: the older |change| placebo
statistic and its pairs.csv columns are gone.)"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

import counterfair as cf
from counterfair.analysis.compare import RETIRED
from counterfair.analysis.placebo import load_placebo
from counterfair.errors import ConfigError
from counterfair.lexicons.attributes import load_identity_set

from .fakes import in_contexts

GROUP_TERMS = ["gay", "straight", "muslim", "christian", "jewish", "black", "white", "deaf", "mexican", "canadian"]
TEXTS = in_contexts(GROUP_TERMS)  # every group's terms, each context with two of them


def _any_change(texts: list[str]) -> np.ndarray:
    """Reacts to any edit alike: a score drawn from each text's hash."""
    return np.array([int(hashlib.sha256(t.encode()).hexdigest()[:8], 16) / 16**8 for t in texts])


def _gay_only(texts: list[str]) -> np.ndarray:
    return np.array([0.9 if "gay" in t.lower() else 0.1 for t in texts])


def test_builtin_words_name_no_group() -> None:
    placebo = load_placebo("en", load_identity_set())
    assert placebo is not None and "quiet" in placebo.words and "gay" not in placebo.words
    assert placebo.words["quiet"] is not None  # each word with its Zipf frequency (tools/placebo_frequencies.py)
    assert load_placebo(None) is None and load_placebo("none") is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("name: x\n", "needs a non-empty 'words:'"),
        ("words: {tall: high}\n", "frequency of 'tall' is not a number"),
        ("words: [tall, gay]\n", "gay is an identity term"),
    ],
)
def test_bad_placebo_files_are_named(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "placebo.yaml"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ConfigError, match=message):
        load_placebo(str(path), load_identity_set())


def _only_tall(tmp_path: Path) -> str:
    path = tmp_path / "tall.yaml"
    path.write_text("words: [tall]\n")
    return str(path)


def test_a_placebo_file_of_ones_own(tmp_path: Path) -> None:
    mine = load_placebo(_only_tall(tmp_path), load_identity_set())
    assert mine is not None and dict(mine.words) == {"tall": None}  # a plain list: no frequencies


@pytest.mark.parametrize(
    ("text", "placebo"),
    [
        ("Some people are gay.", "Some people are tall."),
        ("I met a Muslim yesterday.", "I met a tall person yesterday."),
        ("Muslims pray here.", "Tall people pray here."),
        ("She is an American teacher.", "She is a tall teacher."),
        ("MUSLIMS OUT", "TALL PEOPLE OUT"),
    ],
)
def test_placebo_words_are_written_into_the_slot_like_the_identity_terms(
    tmp_path: Path, text: str, placebo: str
) -> None:
    result = cf.audit([text], _gay_only, methods=["swap"], placebo=_only_tall(tmp_path), bootstrap=50)
    slots = result.slots
    mine = (slots["kind"] == "placebo") & (slots["family"] == "identity")  # (gender words have their own slots)
    assert slots.loc[mine, "text"].tolist() == [placebo]
    assert not set(RETIRED) & set(result.raw_pairs.columns)  # one statistic: no per-pair placebo text or score


def test_a_classifier_that_reacts_to_any_edit_has_no_identity_effect() -> None:
    result = cf.audit(TEXTS, _any_change, methods=["swap"], bootstrap=500)
    assert result.summary["ctf"]["ctf_gap"] > 0.25  # the raw gap is large: uniform scores differ by 1/3 on average
    effect = result.typed_summary.effects.identity_effect  # type: ignore[union-attr]
    assert not effect.overall.material and abs(effect.overall.value) < 0.05
    assert not [g for g, e in effect.by_group.items() if e.material]
    assert set(result.summary["placebo"]) == {"set"}  # the words used; no second statistic


def test_a_classifier_that_reacts_to_gay_shows_an_effect_for_sexuality_alone() -> None:
    result = cf.audit(TEXTS, _gay_only, methods=["swap"], bootstrap=500)
    effect = result.typed_summary.effects.identity_effect  # type: ignore[union-attr]
    assert effect.by_term["gay"].material and effect.by_term["gay"].value == pytest.approx(0.8)
    assert [g for g, e in effect.by_group.items() if e.detected] == ["sexuality"]
    slots = result.slots
    assert (
        not slots.loc[(slots["kind"] == "placebo") & (slots["family"] == "identity"), "text"]
        .str.contains("gay", case=False)
        .any()
    )


def test_the_placebo_can_be_turned_off() -> None:
    result = cf.audit(TEXTS[:4], _gay_only, methods=["swap"], placebo=None, bootstrap=200)
    assert "placebo" not in result.summary and not result.summary.get("effects")


FRENCH = [
    "Un musulman pratiquant prie.",
    "Ma voisine est lesbienne et très gentille.",
    "Les juifs de la ville ont ouvert une école.",
    "Un homme musulman est arrivé hier.",
    "La montée de l'islam inquiète certains.",
]
GERMAN = [
    "Ich habe einen Muslim getroffen.",
    "Die muslimische Frau arbeitet im Krankenhaus.",
    "Mein Kollege ist schwul.",
    "Wir sprechen mit den Juden.",
    "Der Islam ist eine Religion.",
]


@pytest.mark.parametrize(
    ("language", "texts", "expected"),
    [
        (
            "fr",
            FRENCH,
            {  # the placebo word takes the gender and number the identity term had, as the identity swap's target
                "Un musulman pratiquant prie.": (r"^Un (\w+) pratiquant prie\.$", "m.sg"),
                "Ma voisine est lesbienne et très gentille.": (r"^Ma voisine est (\w+) et très gentille\.$", "f.sg"),
                "Les juifs de la ville ont ouvert une école.": (
                    r"^Les (\w+) de la ville ont ouvert une école\.$",
                    "m.pl",
                ),
                "Un homme musulman est arrivé hier.": (r"^Un homme (\w+) est arrivé hier\.$", "m.sg"),
            },
        ),
        (
            "de",
            GERMAN,
            {  # a noun becomes adjective + Mensch / Menschen with the case's ending; an adjective keeps its ending
                "Ich habe einen Muslim getroffen.": (r"^Ich habe einen (\w+)en Menschen getroffen\.$", "adjective"),
                "Die muslimische Frau arbeitet im Krankenhaus.": (
                    r"^Die (\w+)e Frau arbeitet im Krankenhaus\.$",
                    "adjective",
                ),
                "Mein Kollege ist schwul.": (r"^Mein Kollege ist (\w+)\.$", "adjective"),
                "Wir sprechen mit den Juden.": (r"^Wir sprechen mit den (\w+)en Menschen\.$", "adjective"),
            },
        ),
    ],
)
def test_a_french_or_german_audit_uses_its_language_throughout(
    language: str, texts: list[str], expected: dict[str, tuple[str, str]]
) -> None:
    import re

    result = cf.audit(texts, _any_change, language=language, bootstrap=200)
    pairs, summary = result.pairs, result.summary
    assert summary["options"]["identities"] == f"identity-{language}"
    assert summary["placebo"]["set"]["name"] == f"placebo-{language}"
    forms = load_placebo(language).inflections  # type: ignore[union-attr]
    slots = result.slots
    placebo = slots[(slots["kind"] == "placebo") & (slots["family"] == "identity")]
    for text, (pattern, slot) in expected.items():
        rows = placebo[placebo["input_id"].astype(str) == str(texts.index(text))]
        assert len(rows) > 5, text
        for word, written in zip(rows["word"], rows["text"], strict=True):
            found = re.match(pattern, written)
            assert found is not None, (text, written)
            forms_of = forms[word.lower()]
            assert found.group(1) == (forms_of.adjective if slot == "adjective" else forms_of.forms[slot]), written
    # the word lists are the language's: the substitution writes French or German, never an English word
    substitution = pairs[pairs["method"] == "substitution"]
    written = dict(zip(substitution["source_text"], substitution["cf_text"], strict=True))
    assert (
        written[texts[-1]]
        == {
            "fr": "La montée du christianisme inquiète certains.",
            "de": "Der Katholizismus ist eine Religion.",
        }[language]
    )


def test_a_set_in_another_language_than_the_audit_is_refused_before_any_work() -> None:
    with pytest.raises(ConfigError, match="identity-fr is in French but the run is in English: pass --language fr"):
        cf.audit(FRENCH, _any_change, identities="identity-fr", methods=["swap"], language="en")
    # without a language, the French texts are read as French and the French set is theirs
    assert (
        cf.audit(FRENCH, _any_change, identities="identity-fr", methods=["swap"]).summary["options"]["language"] == "fr"
    )
    with pytest.raises(ConfigError, match="in 'en' but the identity set identity-de is in 'de'"):
        load_placebo("en", load_identity_set("identity-de"))
    assert load_placebo("default", load_identity_set("identity-de")).name == "placebo-de"  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match="use --placebo fr"):  # English placebo words asked for in a French audit
        cf.audit(FRENCH, _any_change, language="fr", placebo="en", methods=["swap"])


def test_a_french_placebo_file_needs_the_forms(tmp_path: Path) -> None:
    path = tmp_path / "mots.yaml"
    path.write_text("language: fr\nwords: [curieux]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="need 'inflections'"):
        load_placebo(str(path), load_identity_set("identity-fr"))
    path.write_text(
        "language: fr\nwords: [curieux]\ninflections:\n  curieux: [curieux, curieuse, curieux, curieuses]\n",
        encoding="utf-8",
    )
    mine = load_placebo(str(path), load_identity_set("identity-fr"))
    assert mine is not None and mine.language == "fr" and mine.inflections["curieux"].forms["f.sg"] == "curieuse"
