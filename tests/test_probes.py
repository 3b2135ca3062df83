"""#79: probes where the texts are thin (counterfair.analysis.probes): a first name written beside a person the text
names, its own family (names_probe), computed here by hand on a small audit."""

from __future__ import annotations

import numpy as np
import pytest

import counterfair as cf
from counterfair.analysis.probes import NAMES_PROBE, probe_genders, probe_place, sibling_of
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
    assert sibling_of("religion") is None and sibling_of("gender_words:female") is None
    from counterfair.errors import ConfigError

    with pytest.raises(ConfigError, match="--probes 'sometimes'"):
        cf.audit(["My neighbour cooks."], lambda t: np.full(len(t), 0.2), methods=["swap"], probes="sometimes")
