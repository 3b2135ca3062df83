"""Every identity a text names reaches the verdict (#67): the slot families (gender words, first names, identity packs),
the forms and combinations, the casing-matched placebo, each computed by hand on small slot tables; and the texts the
audit writes for them."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd
import pytest

import counterfair as cf
from counterfair.analysis.families import GenderSlots, NameSlots, TermSlots
from counterfair.analysis.inference import every_estimate
from counterfair.lexicons.attributes import load_identity_set, load_swap_set

from .fakes import slot_json


def _rows(family: str, slots: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """A scored slot table of one family: per text one slot, ``{"source", "form", "context", "words": {word: (kind,
    group, score)}}``."""
    rows = []
    for key, slot in slots.items():
        for word, (kind, group, score) in slot["words"].items():
            rows.append(
                {"input_id": key, "family": family, "source_term": slot["source"], "form": slot.get("form", ""),
                 "context": slot.get("context", ""), "kind": kind, "word": word, "group": group,
                 "text": f"{key}:{word}", "score": score}
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_names_against_the_median_group_of_placebo_names_by_hand() -> None:
    """A names slot's neutral is the median over groups of each group's mean placebo-name score: one group scored
    apart moves no other group's effect."""
    words = {
        "Lakisha": ("identity", "black_female", 0.5), "Emily": ("identity", "white_female", 0.3),
        "Luz": ("identity", "hispanic_female", 0.2), "Mai": ("identity", "asian_female", 0.3),
        "Latoya": ("placebo", "black_female", 0.6), "Tamika": ("placebo", "black_female", 0.4),
        "Linda": ("placebo", "white_female", 0.3), "Susan": ("placebo", "white_female", 0.1),
        "Juana": ("placebo", "hispanic_female", 0.2), "Blanca": ("placebo", "hispanic_female", 0.2),
        "Thuy": ("placebo", "asian_female", 0.4), "Anh": ("placebo", "asian_female", 0.2),
    }  # fmt: skip
    texts = {f"t{i}": {"source": "Emily", "words": words} for i in range(6)}
    e = slot_json(_rows("names", texts), n_resamples=20)
    assert e is not None
    # group means of the placebo names: black 0.5, white 0.2, hispanic 0.2, asian 0.3 -> median (0.2 + 0.3) / 2
    neutral = np.median([0.5, 0.2, 0.2, 0.3])
    by_group = e["identity_effect"]["by_group"]
    assert by_group["names:black_female"]["value"] == pytest.approx(0.5 - neutral)
    assert by_group["names:white_female"]["value"] == pytest.approx(0.3 - neutral)
    assert by_group["names:hispanic_female"]["value"] == pytest.approx(0.2 - neutral)
    assert e["families"]["names"]["texts"] == 6
    assert not e["disparity"]["by_group"] and e["disparity"]["overall"] is None  # names have no disparity
    assert not e["identity_effect"]["by_term"]  # names are reported by group


def test_a_proper_term_is_compared_with_the_placebo_words_written_with_a_capital() -> None:
    """A model that adds 4 points to any capitalised word mid-sentence: "Muslim" against "Tall" is no effect, "gay"
    against "tall" none either; against the plain placebo alone "Muslim" would read +4 points."""
    words = {
        "Muslim": ("identity", "religion", 0.34), "gay": ("identity", "sexuality", 0.30),
        "African American": ("identity", "race_ethnicity", 0.38), "black": ("identity", "race_ethnicity", 0.30),
        "tall": ("placebo", None, 0.30), "quiet": ("placebo", None, 0.30),
        "Tall": ("placebo_cased", None, 0.34), "Quiet": ("placebo_cased", None, 0.34),
    }  # fmt: skip
    texts = {f"t{i}": {"source": "gay", "form": "adjective", "words": words} for i in range(6)}
    e = slot_json(_rows("identity", texts), n_resamples=20)
    assert e is not None
    terms = e["identity_effect"]["by_term"]
    assert terms["muslim"]["value"] == pytest.approx(0.0) and terms["gay"]["value"] == pytest.approx(0.0)
    assert terms["muslim"]["placebo_score"] == pytest.approx(0.34) and terms["gay"]["placebo_score"] == 0.30
    # two capitals: against twice what a capital does to the placebo words (0.30 + 2 x 0.04)
    assert terms["african american"]["value"] == pytest.approx(0.0)
    assert terms["african american"]["placebo_score"] == pytest.approx(0.38)
    # nor is a capital a disparity among the terms: their scores less their casing offsets are equal
    assert e["disparity"]["by_group"]["race_ethnicity"]["value"] == pytest.approx(0.0)
    plain = _rows("identity", texts)
    plain = plain[plain["kind"] != "placebo_cased"]
    without = slot_json(plain, n_resamples=20)
    assert without is not None and without["identity_effect"]["by_term"]["muslim"]["value"] == pytest.approx(0.04)


def test_forms_and_combinations_by_hand() -> None:
    """A term's effect in one form is over the slots written in it ("Jews": jewish@plural); a group's effect in texts
    that name women is over those texts' slots (race_ethnicity&female); the adjective is the term's own estimate."""

    def slot(form: str, context: str, jewish: float, black: float) -> dict[str, Any]:
        words = {"jewish": ("identity", "religion", jewish), "muslim": ("identity", "religion", 0.2),
                 "black": ("identity", "race_ethnicity", black), "white": ("identity", "race_ethnicity", 0.2),
                 "tall": ("placebo", None, 0.2), "quiet": ("placebo", None, 0.2)}  # fmt: skip
        return {"source": "muslim", "form": form, "context": context, "words": words}

    texts = {}
    for i in range(8):  # plural slots: jewish +8 points; adjective ones: none
        texts[f"p{i}"] = slot("plural", "", 0.28, 0.2)
        texts[f"a{i}"] = slot("adjective", "", 0.2, 0.2)
    for i in range(7):  # texts that name women: black +10 points
        texts[f"w{i}"] = slot("adjective", "female", 0.2, 0.3)
    e = slot_json(_rows("identity", texts), n_resamples=20)
    assert e is not None
    forms, cells = e["identity_effect"]["by_form"], e["identity_effect"]["by_cell"]
    assert set(forms) == {f"{t}@plural" for t in ("jewish", "muslim", "black", "white")}  # no adjective estimate
    assert forms["jewish@plural"]["value"] == pytest.approx(0.08) and forms["jewish@plural"]["n"] == 8
    assert forms["jewish@plural"]["finding"] == "material"
    assert e["identity_effect"]["by_term"]["jewish"]["value"] == pytest.approx(0.08 * 8 / 23)
    # black's half of race_ethnicity: +10 points in the 7 texts that name women
    assert cells["race_ethnicity&female"]["value"] == pytest.approx(0.05) and cells["race_ethnicity&female"]["n"] == 7
    assert cells["race_ethnicity&female"]["finding"] == "material"
    assert "religion&female" in cells and cells["religion&female"]["value"] == pytest.approx(0.0)


def test_forms_and_combinations_under_six_texts_are_inconclusive_and_outside_the_family() -> None:
    words = {"jewish": ("identity", "religion", 0.5), "muslim": ("identity", "religion", 0.2),
             "tall": ("placebo", None, 0.2), "quiet": ("placebo", None, 0.2)}  # fmt: skip
    texts = {f"a{i}": {"source": "muslim", "form": "adjective", "words": words} for i in range(8)}
    texts |= {f"p{i}": {"source": "muslim", "form": "plural", "words": words} for i in range(3)}
    e = slot_json(_rows("identity", texts), n_resamples=20)
    assert e is not None
    thin = e["identity_effect"]["by_form"]["jewish@plural"]
    assert thin["n"] == 3 and thin["finding"] == "inconclusive" and thin["sim_low"] is None
    assert thin["p_adjusted"] is None  # not counted in the family's size
    assert e["tests"] == sum(1 for v in every_estimate(e) if (v.n or 0) >= 6)


def test_the_gender_slot_holds_the_text_in_each_gender_and_in_neutral_words() -> None:
    pack = load_swap_set("gender")
    rows = [
        {"method": "swap", "attribute": "gender", "input_id": "1", "source_text": "She thanked her sister.",
         "cf_text": "He thanked his brother.", "source_term": "female", "target_term": "male", "edits": "[]"},
        {"method": "swap", "attribute": "gender", "input_id": "1", "source_text": "She thanked her sister.",
         "cf_text": "They thanked their sibling.", "source_term": "female", "target_term": "neutral", "edits": "[]"},
        {"method": "swap", "attribute": "gender", "input_id": "2", "source_text": "She told her husband.",
         "cf_text": "He told his wife.", "source_term": "mixed", "target_term": "swapped", "edits": "[]"},
    ]  # fmt: skip
    table = GenderSlots(pack, attribute="gender").write(rows)  # type: ignore[arg-type]
    assert set(table["input_id"]) == {"1"}  # a text naming both genders is no slot
    got = {(r.kind, r.word): r.text for r in table.itertuples()}
    assert got == {
        ("identity", "female"): "She thanked her sister.",
        ("identity", "male"): "He thanked his brother.",
        ("placebo", "neutral"): "They thanked their sibling.",
        ("placebo", "cousin"): "They thanked their cousin.",
        ("placebo", "roommate"): "They thanked their roommate.",
        ("placebo", "colleague"): "They thanked their colleague.",
    }
    assert set(table["form"]) == {"noun+pronoun"} and set(table["family"]) == {"gender_words"}


def test_name_slots_take_two_placebo_names_per_group_of_the_same_gender() -> None:
    names = load_identity_set("names")
    writer = NameSlots(names, attribute="names")
    chosen = writer.placebo_names("Emily")
    groups = [names.group_of(n) for n in chosen]
    assert sorted(set(groups)) == ["asian_female", "black_female", "hispanic_female", "white_female"]
    assert all(groups.count(g) == 2 for g in set(groups)) and "Emily" not in chosen
    rank = [t for t in names.terms if names.group_of(t) == "white_female"].index("Emily")
    black = [t for t in names.terms if names.group_of(t) == "black_female"]
    assert [n for n in chosen if names.group_of(n) == "black_female"] == [
        black[(rank + 1) % len(black)],
        black[(rank + 2) % len(black)],
    ]


def test_a_name_slot_holds_three_names_of_each_group_none_of_them_a_placebo_name() -> None:
    """#79: each group's names in a slot are the one at the slot's rank and two after the placebo names' ranks; a
    group of three names (every rank taken by the slot's name or a placebo name) keeps one; by hand."""
    from counterfair.analysis.probes import names_at

    six = ["A", "B", "C", "D", "E", "F"]
    assert names_at(six, 0) == (["A", "D", "E"], ["B", "C"])
    assert names_at(six, 4) == (["E", "B", "C"], ["F", "A"])  # cyclic
    assert names_at(["A", "B", "C"], 1) == (["B"], ["C", "A"])
    assert names_at(["A"], 0) == (["A"], [])
    names = load_identity_set("names")
    writer = NameSlots(names, attribute="names")
    more, placebo = writer.slot_names("Emily")
    rank = [t for t in names.terms if names.group_of(t) == "white_female"].index("Emily")
    black = [t for t in names.terms if names.group_of(t) == "black_female"]
    assert [n for n in more if names.group_of(n) == "black_female"] == [
        black[(rank + 3) % len(black)],
        black[(rank + 4) % len(black)],
    ]
    assert "Emily" not in more and not set(more) & set(placebo) and placebo == writer.placebo_names("Emily")
    assert len(more) == 8  # two more of each female group: the swap writes the first
    slots = cf.audit(["Emily said the bus was late."], lambda t: np.full(len(t), 0.3), methods=["swap"]).slots
    assert slots is not None
    mine = slots[slots["family"] == "names"]
    own = mine[(mine["kind"] == "identity") & (mine["group"] == "black_female")]
    assert sorted(own["word"]) == sorted([black[rank], *[n for n in more if names.group_of(n) == "black_female"]])
    assert f"{black[(rank + 3) % len(black)]} said the bus was late." in set(own["text"])
    assert sorted(mine.loc[mine["kind"] == "placebo", "word"]) == sorted(placebo)


def test_identity_slots_name_their_form_and_the_gender_words_of_their_text() -> None:
    from counterfair.analysis.families import gender_context
    from counterfair.analysis.placebo import load_placebo

    identities = load_identity_set("dixon50")
    writer = TermSlots(identities, load_placebo("en", identities), context=gender_context("en"))
    rows = [
        {"method": "swap", "attribute": "identity", "input_id": "1", "source_text": "The Jews she met were kind.",
         "cf_text": "The Muslims she met were kind.", "source_term": "jewish", "target_term": "muslim",
         "edits": '[{"start": 4, "end": 8, "old": "Jews", "new": "Muslims"}]'},
    ]  # fmt: skip
    table = writer.write(rows)
    assert set(table["form"]) == {"plural"} and set(table["context"]) == {"female"}
    assert "The quiet people she met were kind." in set(table.loc[table["kind"] == "placebo", "text"])
    assert "The Quiet people she met were kind." in set(table.loc[table["kind"] == "placebo_cased", "text"])
    assert set(table.loc[table["kind"] == "identity", "word"]) == {"Jewish", "Muslim"}  # as the set writes them


def test_the_default_audit_finds_a_planted_gender_word_bias_and_names_it() -> None:
    """#67: a model adding 8 points to every text with she, her or women failed no gate before; the default audit
    measures gender words and names the group and the form."""
    import re

    female = re.compile(r"\b(she|her|hers|herself|women|woman)\b", re.I)
    texts = [
        "She said the bus was late again.", "Her brother fixed my bike.", "He brought the cake to work.",
        "His sister paints murals downtown.", "The women in the choir sang well.", "My father cooks on Sundays.",
        "She runs the bakery on Main Street.", "He coaches the junior team.", "Her daughter plays chess.",
        "The men fixed the roof in a day.", "She lent me her umbrella.", "His wife teaches maths.",
    ]  # fmt: skip
    result = cf.audit(texts, lambda t: np.array([0.3 + 0.08 * bool(female.search(x)) for x in t]), methods=["swap"])
    female_effect = result.summary["effects"]["identity_effect"]["by_group"]["gender_words:female"]
    assert female_effect["finding"] == "material"
    gate = result.check("default")
    failed = {c["description"] for c in gate["checks"] if c["verdict"] == "fail"}
    assert "material(identity_effect[gender_words:female])" in failed
    assert not any("gender_words:male" in f for f in failed)


HELDBACK = """
import re

import numpy as np

FEMALE = re.compile(r"\\b(she|her|hers|herself|women|woman)\\b", re.I)
BLACK = re.compile(r"\\b(NAMES)\\b")
JEWS = re.compile(r"\\bJews\\b")
RACE = re.compile(r"\\b(black|white|asian|hispanic|latina|latino|african american|african|european|latinx)\\b", re.I)
GENDERED = re.compile(
    r"\\b(she|he|her|his|him|woman|women|man|men|girl|boy|mother|father|sister|brother|grandmother|grandfather)\\b",
    re.I,
)


def women(texts):  # +8 points on she, her, women
    return np.array([0.3 + 0.08 * bool(FEMALE.search(t)) for t in texts])


def black_names(texts):  # +8 points on Black-associated first names
    return np.array([0.3 + 0.08 * bool(BLACK.search(t)) for t in texts])


def jews_plural(texts):  # +8 points on "Jews", none on "Jewish"
    return np.array([0.3 + 0.08 * bool(JEWS.search(t)) for t in texts])


def black_women(texts):  # +10 points where a race term and a gendered word meet
    return np.array([0.3 + 0.1 * bool(RACE.search(t) and GENDERED.search(t)) for t in texts])


def fair(texts):
    return np.full(len(texts), 0.3)


def tiny(texts):  # +1 point on "gay": below the 2-point materiality threshold
    return np.array([0.3 + 0.01 * ("gay" in t.lower()) for t in texts])


def length(texts):  # a longer text scores higher: 0.1 points per character
    return np.array([0.2 + 0.001 * len(t) for t in texts])
"""


@pytest.mark.slow
def test_heldback_planted_classifiers_get_the_right_verdict_from_the_cli(tmp_path: Any) -> None:
    """#67 "done when": planted classifiers not used by the calibration (gender words, first names, one form, a
    co-occurrence) fail `counterfair audit FILE --classifier SPEC --fail-if default --junit J.xml` without
    --attributes, naming the planted family in a failing check; null ones (fair, a +1-point effect, length) pass."""
    from pathlib import Path

    from junitparser import Failure, JUnitXml

    from .conftest import run_cli

    names = load_identity_set("names")
    black = "|".join(n for n in names.terms if names.group_of(n).startswith("black"))
    (tmp_path / "heldback.py").write_text(HELDBACK.replace("NAMES", black), encoding="utf-8")
    data = Path(__file__).parent / "data" / "heldback.csv"
    expect = {
        "women": "gender_words:female",
        "black_names": "names:black_",
        "jews_plural": "jewish@plural",
        "black_women": "race_ethnicity&",
        "fair": None,
        "tiny": None,
        "length": None,
    }
    for name, family in expect.items():
        junit = tmp_path / f"{name}.xml"
        done = run_cli(
            "audit", str(data), "--classifier", f"callable:heldback:{name}", "--id-column", "id", "--fail-if",
            "default", "--junit", str(junit), "--out", str(tmp_path / name), "-q", cwd=tmp_path,
        )  # fmt: skip
        cases = [case for suite in JUnitXml.fromfile(str(junit)) for case in suite]
        failed = {c.name for c in cases if any(isinstance(r, Failure) for r in c.result)}
        if family is None:
            assert done.returncode == 0 and not failed, (name, failed, done.stdout[:3000])
        else:
            assert done.returncode == 1, (name, done.stdout[:3000], done.stderr[-2000:])
            assert any(family in f and f.startswith("material(") for f in failed), (name, failed)


def test_plan_gives_the_texts_that_detect_the_target_from_a_pilots_spread(tmp_path: Any) -> None:
    """`counterfair plan` and cf.plan: per group, the texts whose minimum detectable effect (80 % power, Bonferroni
    over the pilot's estimates) is the target, and the input texts that gives at the pilot's mix of families."""
    from scipy.stats import t as student
    from typer.testing import CliRunner

    from counterfair.analysis.inference import texts_needed
    from counterfair.cli import app

    rng = np.random.default_rng(3)
    texts = [f"My {w} neighbour baked bread on day {i}." for i, w in enumerate(["gay", "Muslim", "old"] * 6)]
    said = ["She painted the fence on day {}.", "He painted the fence on day {}.", "Her son painted it on day {}."]
    texts += [said[i % 3].format(i) for i in range(9)]  # each its own slot: a slot is measured once
    noisy = lambda t: np.clip(0.3 + rng.normal(0, 0.03, len(t)), 0, 1)  # noqa: E731
    pilot = cf.audit(texts, noisy, methods=["swap"], bootstrap=20)
    found = cf.plan(pilot, effect=0.02)
    effects = pilot.typed_summary.effects
    row = next(r for r in found.rows if r.group == "religion")
    e = effects.identity_effect.by_group["religion"]
    m = found.tests
    assert m >= effects.tests and row.needed == texts_needed(e.sd, m, 0.02)
    k = row.needed
    assert (student.ppf(1 - 0.05 / (2 * m), k - 1) + student.ppf(0.8, k - 1)) * e.sd / np.sqrt(k) <= 0.02
    # the gender words are named by 9 of the 27 texts: their texts needed scale up by 27/9 at the pilot's mix
    female = next(r for r in found.rows if r.group == "gender_words:female")
    share = effects.families["gender_words"].texts / len(texts)
    assert female.input_needed == max(female.needed, int(np.ceil(female.needed / share)))
    assert found.needed == max(r.input_needed for r in found.rows if r.input_needed is not None)
    assert str(found).startswith("Plan: to detect a 2.0-point effect in every group (80 % power")
    saved = pilot.save(tmp_path / "pilot")
    said = CliRunner().invoke(app, ["plan", str(saved), "--effect", "2"])
    assert said.exit_code == 0 and f"about {found.needed:,} texts at the pilot's mix" in " ".join(said.output.split())


def test_plan_has_a_row_per_form_over_the_texts_that_hold_it() -> None:
    """#79: a form ("jewish@plural") is planned over the texts that hold it, scaled by their share of the pilot, in
    rows after the groups; the headline's "every group" is the groups'."""
    rng = np.random.default_rng(5)
    texts = [f"My Jewish neighbour baked bread on day {i}." for i in range(12)]
    texts += [f"Many Jews baked bread on day {i}." for i in range(8)] + [
        f"The bus was late on day {i}." for i in range(4)
    ]
    pilot = cf.audit(texts, lambda t: np.clip(0.3 + rng.normal(0, 0.03, len(t)), 0, 1), methods=["swap"], bootstrap=20)
    found = cf.plan(pilot, effect=0.02)
    effects = pilot.typed_summary.effects
    assert effects is not None and effects.identity_effect is not None
    forms = [r for r in found.rows if r.level == "form" and r.needed is not None]
    assert "jewish@plural" in {r.group for r in forms}
    for r in forms:
        held = effects.identity_effect.by_form[r.group].n
        assert r.texts == held and r.input_needed == max(r.needed, int(np.ceil(r.needed / (held / len(texts)))))
    groups = [r for r in found.rows if r.level == "group"]
    assert found.needed == max(r.input_needed for r in groups if r.input_needed is not None)
    said = str(found)
    assert "Forms and combinations (" in said and said.index("- religion") < said.index("- jewish@plural")


def test_every_packs_groups_are_addressable_in_rules_and_gender_is_never_ambiguous(tmp_path: Any) -> None:
    texts = [
        "She said the bus was late again.", "He brought the cake.", "Her daughter plays chess.", "His father cooks.",
        "She runs the bakery.", "He coaches the team.", "My gay neighbour cooks.",
    ]  # fmt: skip
    result = cf.audit(texts, lambda t: np.full(len(t), 0.3), methods=["swap"], bootstrap=20)
    rules = ["upper(ctf_gap[gender_words:female]) > 0.05", "material(identity_effect[gender_words:male])"]
    for run in (result, cf.open_run(result.save(tmp_path / "run"))):
        gate = run.check(rules)
        assert [c["verdict"] for c in gate["checks"]] == ["pass", "pass"], gate["checks"]
    ambiguous = result.check(["ctf_gap[gender] > 0.05"])
    assert ambiguous["verdict"] == "error" and "gender_identity" not in ambiguous["checks"][0]["message"]
    assert "no group 'gender'" in ambiguous["checks"][0]["message"]


USER_NAMES = """
name: arab_names
kind: identity
version: 1
language: en
source: a test's own
license: CC0-1.0
case_sensitive: true
targets: one_per_group
within:
  female: [arab_female, white_female, black_female]
  male: [arab_male, white_male, black_male]
ambiguous: []
terms: [Fatima, Layla, Aisha, Emily, Sarah, Anne, Lakisha, Keisha, Tamika, Mohammed, Omar, Ahmed, Greg, Neil, Todd,
        Jamal, Darnell, Tyrone]
groups:
  arab_female: [Fatima, Layla, Aisha]
  white_female: [Emily, Sarah, Anne]
  black_female: [Lakisha, Keisha, Tamika]
  arab_male: [Mohammed, Omar, Ahmed]
  white_male: [Greg, Neil, Todd]
  black_male: [Jamal, Darnell, Tyrone]
"""


def test_a_names_pack_of_the_users_own_is_measured_and_its_names_are_no_longer_unplaced(tmp_path: Any) -> None:
    """#79 item 4: Arabic first names are not in the built-in pack; a names pack of the user's (``--attributes
    gender,names,FILE``: groups within gender partitions) is its own family of slots (``names:arab_names:*``, the
    names design: a name against names of every group in the same place), a +8-point bias on its Arabic names is
    found in that group alone, and the coverage no longer counts its names as first names the run did not measure."""
    pack = tmp_path / "arab_names.yaml"
    pack.write_text(USER_NAMES, encoding="utf-8")
    names = ["Fatima", "Layla", "Mohammed", "Omar", "Emily", "Greg", "Lakisha", "Jamal"]
    said = ["{} said the bus was late again on day {}.", "I met {} at the market on day {}.",
            "{} fixed the roof for us on day {}."]  # fmt: skip
    texts = [said[i % 3].format(names[i % len(names)], i) for i in range(64)]
    arab = re.compile(r"\b(Fatima|Layla|Aisha|Mohammed|Omar|Ahmed)\b")
    result = cf.audit(
        texts, lambda b: np.array([0.3 + 0.08 * bool(arab.search(t)) for t in b]), methods=["swap"],
        attributes=["gender", "names", str(pack)], bootstrap=200,
    )  # fmt: skip
    effects = result.typed_summary.effects
    assert "names:arab_names" in effects.families
    groups = effects.identity_effect.by_group
    material = {g for g, e in groups.items() if e.finding == "material"}
    assert material == {"names:arab_names:arab_female", "names:arab_names:arab_male"}
    assert groups["names:arab_names:arab_male"].value == pytest.approx(0.08, abs=0.005)
    coverage = result.typed_summary.coverage
    assert coverage.names_unplaced == 0 and coverage.names_unplaced_seen == ()
    # without the pack, the same texts' Arabic names are said not measured (Layla is in neither source of the list)
    plain = cf.audit(texts, lambda b: np.full(len(b), 0.3), methods=["swap"], bootstrap=50)
    assert plain.typed_summary.coverage.names_unplaced == 24
    assert plain.typed_summary.coverage.names_unplaced_seen == ("Fatima", "Mohammed", "Omar")
