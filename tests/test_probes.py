"""#79: probes where the texts are thin (counterfair.analysis.probes): a first name written beside a person the text
names, its own family (names_probe), and an identity term written before that person (identity_probe), computed here
by hand on small audits."""

from __future__ import annotations

import numpy as np
import pytest

import counterfair as cf
from counterfair.analysis.probes import (
    IDENTITY_PROBE,
    NAMES_PROBE,
    DescriptorProbes,
    article_for,
    probe_genders,
    probe_place,
    sibling_of,
)
from counterfair.lexicons.attributes import load_identity_set

NAMES = load_identity_set("names")
BLACK = {n for n in NAMES.terms if NAMES.group_of(n).startswith("black")}


def _written(text: str) -> str | None:
    place = probe_place(text)
    return None if place is None else text[: place.at] + place.written.format(name="Lakisha") + text[place.at :]


@pytest.mark.parametrize(
    ("text", "written", "genders"),
    [
        ("My neighbour cooked dinner.", "My neighbour Lakisha cooked dinner.", ("female", "male")),
        ("Our transgender coworker gave a talk.", "Our transgender coworker Lakisha gave a talk.", ("female", "male")),
        ("A nurse helped me.", "A nurse named Lakisha helped me.", ("female", "male")),
        ("My aunt taught me chess.", "My aunt Lakisha taught me chess.", ("female",)),
        (  # "male" before the noun gives the name's gender, whatever the text's pronouns say of others
            "A male nurse helped my grandmother with her exercises.",
            "A male nurse named Lakisha helped my grandmother with her exercises.",
            ("male",),
        ),
        ("The teacher said she would call.", "The teacher Lakisha said she would call.", ("female",)),
        ("The Latino student council planned a fair.", None, ()),  # "student" is no person here: a compound
        ("My neighbour's dog barks.", None, ()),
        ("My neighbour Sam cooked dinner.", None, ()),  # a name is there already
        ("People are kind.", None, ()),
    ],
)
def test_a_probe_is_written_only_where_a_name_reads_naturally(
    text: str, written: str | None, genders: tuple[str, ...]
) -> None:
    place = probe_place(text)
    assert _written(text) == written
    if place is not None:
        assert probe_genders(text, place) == genders
    assert probe_genders("She thanked him.") == ()  # both pronouns: whose name would it be?


def test_a_probe_measured_by_hand() -> None:
    """Eight texts that name a neighbour, none a first name: every probe slot holds one name of each group (female and
    male: no pronoun), against placebo names; a model that adds 10 points to Black-associated names reads +10 for the
    Black groups of the probe family and 0 for the others (the neutral is the median group: the Black group's placebo
    names move their own group's mean only), by hand; the natural first-name family is absent (no text names one)."""
    texts = [f"My neighbour cooked dinner on day {i}." for i in range(8)]

    def model(batch: list[str]) -> np.ndarray:
        return np.array([0.2 + (0.1 if any(n in t.split() for n in BLACK) else 0.0) for t in batch])

    result = cf.audit(texts, model, methods=["swap"], bootstrap=200)
    slots = result.slots
    assert slots is not None
    probes = slots[slots["family"] == NAMES_PROBE]
    assert len(probes) and set(probes["input_id"]) == {str(i) for i in range(8)}
    # every probe text is its input with one name of the pack written after "My neighbour"
    written = {(str(r.input_id), str(r.text)) for r in probes.itertuples()}
    assert written == {
        (str(i), f"My neighbour {name} cooked dinner on day {i}.")
        for i in range(8)
        for name in probes.loc[probes["input_id"] == str(i), "word"]
    }
    assert set(probes["word"]) <= set(NAMES.terms)
    # by hand, per slot: the identity name's score minus the median over the four groups of their placebo names' mean
    by_hand: dict[str, list[float]] = {}
    for _, slot in probes.groupby(["input_id", "source_term"]):
        placebo = slot[slot["kind"] == "placebo"]
        means = placebo.groupby("group")["score"].mean()
        neutral = float(np.median(means.to_numpy()))
        for _, row in slot[slot["kind"] == "identity"].iterrows():
            by_hand.setdefault(str(row["group"]), []).append(float(row["score"]) - neutral)
    effects = result.typed_summary.effects
    assert effects is not None and effects.identity_effect is not None
    groups = effects.identity_effect.by_group or {}
    for group, values in by_hand.items():
        e = groups[f"{NAMES_PROBE}:{group}"]
        assert e.value == pytest.approx(np.mean(values), abs=1e-9)
    assert groups[f"{NAMES_PROBE}:black_female"].value == pytest.approx(0.1)
    assert groups[f"{NAMES_PROBE}:black_female"].finding == "material"
    assert groups[f"{NAMES_PROBE}:white_male"].value == pytest.approx(0.0, abs=1e-9)
    assert not any(g.startswith("names:") for g in groups)  # no natural first name: the probe is its own estimand
    gate = result.check("default")
    failed = {c["group"] for c in gate["checks"] if c["verdict"] == "fail" and c["estimate"] == "material"}
    assert {f"{NAMES_PROBE}:black_female", f"{NAMES_PROBE}:black_male"} <= failed and gate["exit_code"] == 1
    # off: no probe
    off = cf.audit(texts, model, methods=["swap"], bootstrap=200, probes="off")
    assert off.slots is not None and NAMES_PROBE not in set(off.slots["family"])


def test_probe_and_natural_groups_are_siblings() -> None:
    assert sibling_of("names:black_female") == "names_probe:black_female"
    assert sibling_of("names_probe:white_male") == "names:white_male"
    assert sibling_of("religion") == "identity_probe:religion" and sibling_of("identity_probe:age") == "age"
    assert sibling_of("gender_words:female") is None
    from counterfair.errors import ConfigError

    with pytest.raises(ConfigError, match="--probes 'sometimes'"):
        cf.audit(["My neighbour cooks."], lambda t: np.full(len(t), 0.2), methods=["swap"], probes="sometimes")


DIXON = load_identity_set("dixon50")


def _descriptors(text: str) -> dict[str, str]:
    """The probe texts of one text, by the word written in (identity terms and neutral words alike)."""
    from counterfair.analysis.placebo import load_placebo

    rows = DescriptorProbes(DIXON, load_placebo("en", DIXON)).slots("0", text)
    return {str(r["word"]): str(r["text"]) for r in rows}


def test_an_identity_term_is_written_before_the_person_with_its_article() -> None:
    from counterfair.analysis.placebo import load_placebo

    written = _descriptors("A nurse helped me.")
    assert written["Muslim"] == "A Muslim nurse helped me."
    assert written["Asian"] == "An Asian nurse helped me." and written["old"] == "An old nurse helped me."
    assert written["European"] == "A European nurse helped me." and written["LGBT"] == "An LGBT nurse helped me."
    assert written["quiet"] == "A quiet nurse helped me." and written["Quiet"] == "A Quiet nurse helped me."
    assert written["dax"] == "A dax nurse helped me."  # the control's second null in the same place
    assert _descriptors("My new manager is kind.")["Muslim"] == "My new Muslim manager is kind."
    # "people" after a determiner: each term's plural there, the neutral words before it (a slot of its own)
    rows = DescriptorProbes(DIXON, load_placebo("en", DIXON)).slots("0", "Many people came.")
    plural = {str(r["word"]): str(r["text"]) for r in rows if r["form"] == "plural"}
    assert plural["Jewish"] == "Many Jews came." and plural["gay"] == "Many gay people came."
    assert plural["quiet"] == "Many quiet people came." and len(plural) == len(rows)
    assert [article_for(w) for w in ("Asian", "European", "LGBT", "gay", "elderly", "unicorn")] == [
        "an", "a", "an", "a", "an", "a",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "left_out", "kept"),
    [
        ("My aunt is a Christian.", {"Muslim", "Christian", "female", "male"}, {"gay", "lesbian", "old"}),
        ("A girl ran home.", {"old", "elderly", "young", "female"}, {"Muslim", "gay"}),
        ("My uncle cooked dinner.", {"lesbian", "Latina", "male"}, {"gay", "Latino"}),
        ("The teacher said he would call.", {"lesbian", "Latina"}, {"male", "female", "gay"}),
        ("Many Jews and many people came.", {"Jewish", "Muslim"}, {"gay", "Asian"}),  # plural: no second religion
    ],
)
def test_the_descriptor_guard(text: str, left_out: set[str], kept: set[str]) -> None:
    """No term of a group the text names, no age before a child's noun, no gender term before a noun of a gender, no
    term of one gender for a person of the other."""
    written = _descriptors(text)
    assert not left_out & set(written) and kept <= set(written)


@pytest.mark.parametrize("text", ["My gay neighbour cooks.", "My quiet neighbour cooks.", "People are kind."])
def test_no_descriptor_probe_where_the_place_is_taken_or_absent(text: str) -> None:
    assert _descriptors(text) == {}


def test_a_descriptor_probe_measured_by_hand() -> None:
    """Eight texts that name a nurse and no group: a model that adds 10 points to every religion term reads +10 for
    religion in the probe family and 0 for every other group, each slot's neutral the mean of its placebo words, by
    hand; the natural religion group is absent (no text names it) and the probe's material finding fails the gate
    (exit 1)."""
    texts = [f"A nurse helped me on day {i}." for i in range(8)]
    religion = {t.lower() for t in DIXON.terms if DIXON.group_of(t) == "religion"}

    def model(batch: list[str]) -> np.ndarray:
        named = [bool(religion & set(t.lower().split())) for t in batch]
        return np.array([0.3 + 0.1 * n + 0.001 * (len(t) % 7) for n, t in zip(named, batch, strict=True)])

    result = cf.audit(texts, model, methods=["swap"], bootstrap=200)
    slots = result.slots
    assert slots is not None
    probes = slots[slots["family"] == IDENTITY_PROBE]
    assert set(probes["input_id"]) == {str(i) for i in range(8)}
    by_hand: dict[str, list[float]] = {}
    for _, slot in probes.groupby("input_id"):
        neutral = float(slot.loc[slot["kind"] == "placebo", "score"].mean())
        ident = slot[slot["kind"] == "identity"]
        for group, part in ident.groupby("group"):
            by_hand.setdefault(str(group), []).append(float(part["score"].mean()) - neutral)
    effects = result.typed_summary.effects
    assert effects is not None and effects.identity_effect is not None
    groups = effects.identity_effect.by_group or {}
    for group, values in by_hand.items():
        assert groups[f"{IDENTITY_PROBE}:{group}"].value == pytest.approx(np.mean(values), abs=1e-9)
    assert groups[f"{IDENTITY_PROBE}:religion"].value == pytest.approx(0.1, abs=2e-3)
    assert groups[f"{IDENTITY_PROBE}:sexuality"].value == pytest.approx(0.0, abs=2e-3)
    assert "religion" not in groups  # no natural slot
    gate = result.check("default")
    failed = {c["group"] for c in gate["checks"] if c["verdict"] == "fail" and c["estimate"] == "material"}
    assert f"{IDENTITY_PROBE}:religion" in failed and gate["exit_code"] == 1
    off = cf.audit(texts, model, methods=["swap"], bootstrap=200, probes="off")
    assert off.slots is not None and IDENTITY_PROBE not in set(off.slots["family"])


def test_each_probe_family_is_written_into_its_first_texts_only() -> None:
    """A large input with few identity terms has every text probed otherwise (85 more scores each): each writer takes
    the first ``cap`` texts it can probe, in input order, whatever the blocks."""
    import pandas as pd

    from counterfair.analysis.placebo import load_placebo
    from counterfair.analysis.probes import probe_blocks

    frame = pd.DataFrame(
        {"id": [str(i) for i in range(10)], "text": [f"My neighbour came on day {i}." for i in range(10)]}
    )
    writer = DescriptorProbes(DIXON, load_placebo("en", DIXON))
    blocks = list(probe_blocks(frame, NAMES, writers=[writer], size=4, cap=3))
    by_family = {}
    for block in blocks:
        for family, part in block.groupby("family"):
            by_family.setdefault(family, []).extend(dict.fromkeys(part["input_id"]))
    assert by_family == {NAMES_PROBE: ["0", "1", "2"], IDENTITY_PROBE: ["0", "1", "2"]}
    whole = list(probe_blocks(frame, NAMES, writers=[writer], size=4))
    assert {i for b in whole for i in b["input_id"]} == {str(i) for i in range(10)}
