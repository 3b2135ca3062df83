"""The placebo control: matched non-identity swaps, and the identity effect = identity gap - placebo gap."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import counterfair as cf
from counterfair.analysis.placebo import PlaceboSet, load_placebo, placebo_texts
from counterfair.editors.swap import IdentitySwapEditor
from counterfair.errors import ConfigError
from counterfair.lexicons.attributes import load_identity_set

GROUP_TERMS = ["gay", "straight", "muslim", "christian", "jewish", "black", "white", "deaf", "mexican", "canadian"]
TEXTS = [f"Some people are {t}." for t in GROUP_TERMS] + [
    f"My {t} neighbour waved at me." for t in GROUP_TERMS
]  # every group's terms appear; the swaps reach every term of the built-in set


def _any_change(texts: list[str]) -> np.ndarray:
    """Reacts to any edit alike: a score drawn from each text's hash."""
    return np.array([int(hashlib.sha256(t.encode()).hexdigest()[:8], 16) / 16**8 for t in texts])


def _gay_only(texts: list[str]) -> np.ndarray:
    return np.array([0.9 if "gay" in t.lower() else 0.1 for t in texts])


def test_builtin_words_are_matched_by_frequency() -> None:
    placebo = load_placebo("en", load_identity_set())
    assert placebo is not None and "tall" in placebo.words and "gay" not in placebo.words
    # gay's Zipf frequency is 4.90; the three nearest placebo words are busy 4.75, tired 4.71, lucky..., by the file
    nearest = placebo.candidates("gay")
    distances = sorted(abs(f - placebo.term_frequencies["gay"]) for f in placebo.words.values() if f is not None)
    assert [abs(placebo.words[w] - placebo.term_frequencies["gay"]) for w in nearest] == distances[:3]
    assert placebo.pick("gay", "t1") == placebo.pick("gay", "t1")  # seeded: reruns agree
    assert {placebo.pick("gay", f"t{i}") for i in range(40)} == set(nearest)
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


def test_a_placebo_file_of_ones_own(tmp_path: Path) -> None:
    good = tmp_path / "mine.yaml"
    good.write_text("words: [tall]\n")
    mine = load_placebo(str(good), load_identity_set())
    assert mine is not None and mine.candidates("gay") == ["tall"]  # no frequencies: every word is a candidate


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
def test_placebo_swaps_are_written_like_the_identity_swaps(text: str, placebo: str) -> None:
    identities = load_identity_set()
    editor = IdentitySwapEditor(identities, guard=None, targets=["christian"])
    (candidate,) = editor.edit([text])[0]
    row = {
        "method": "swap",
        "input_id": "t",
        "source_text": text,
        "source_term": candidate.meta["source_term"],
        "target_term": "christian",
        "edits": json.dumps([e.as_dict() for e in candidate.edits]),
    }
    only_tall = PlaceboSet("test", {"tall": None}, {})
    assert placebo_texts([row], identities, only_tall) == [("tall", placebo)]
    assert placebo_texts([{**row, "method": "ablation"}], identities, only_tall) == [None]


def test_a_classifier_that_reacts_to_any_edit_has_no_identity_effect() -> None:
    result = cf.audit(TEXTS, _any_change, methods=["swap"], bootstrap=500)
    effect = result.summary["placebo"]
    assert result.summary["ctf"]["ctf_gap"] > 0.25  # the raw gap is large: uniform scores differ by 1/3 on average
    assert abs(effect["identity_effect"]) < 0.05
    assert effect["ci_low"] < 0 and not effect["exceeds_placebo"]
    assert effect["identity_gap"] == pytest.approx(result.summary["ctf"]["ctf_gap"])
    assert effect["groups_exceeding_placebo"] == []


def test_a_classifier_that_reacts_to_gay_shows_an_effect_for_sexuality_alone() -> None:
    result = cf.audit(TEXTS, _gay_only, methods=["swap"], bootstrap=500)
    effect = result.summary["placebo"]
    assert effect["groups_exceeding_placebo"] == ["sexuality"]
    sexuality = effect["by_group"]["sexuality"]
    # only the pairs that put "gay" in differ from their placebo (by 0.8); the texts that lost "gay" lost it in both
    assert sexuality["identity_effect"] > 0.05 and sexuality["identity_gap"] > sexuality["placebo_gap"]
    for group, entry in effect["by_group"].items():
        if group != "sexuality":
            assert entry["identity_effect"] == pytest.approx(0.0), group
    pairs = result.pairs
    swaps = pairs[pairs["method"] == "swap"]
    assert swaps["placebo_text"].notna().all()
    assert not swaps["placebo_text"].str.contains("gay", case=False).any()


def test_the_placebo_can_be_turned_off() -> None:
    result = cf.audit(TEXTS[:4], _gay_only, methods=["swap"], placebo=None, bootstrap=200)
    assert "placebo" not in result.summary and result.pairs["placebo_text"].isna().all()


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
    swaps = pairs[pairs["method"] == "swap"]
    for text, (pattern, slot) in expected.items():
        rows = swaps[swaps["source_text"] == text]
        assert len(rows) > 5, text
        for placebo_term, placebo_text in zip(rows["placebo_term"], rows["placebo_text"], strict=True):
            found = re.match(pattern, placebo_text)
            assert found is not None, (text, placebo_text)
            word = forms[placebo_term]
            assert found.group(1) == (word.adjective if slot == "adjective" else word.forms[slot]), placebo_text
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
        cf.audit(FRENCH, _any_change, identities="identity-fr", methods=["swap"])
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
