"""#79 item 4: where an effect lives (counterfair.analysis.spread). An effect confined to a few texts moves a group's
mean little; the spread test compares each text's effect with what a neutral word read as the term gives in the same
texts, and names the texts where the effect is largest. Computed here by hand on small slot tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import f as f_dist

from counterfair.analysis.slots import SLOT_COLUMNS, slot_effects
from counterfair.analysis.spread import ROTATIONS, placebo_sets
from counterfair.views.verdict import uneven_line

PLACEBO = ["barefoot", "busy", "chatty", "hatless", "quiet", "seated"]
TERMS = {"gay": "sexuality", "straight": "sexuality", "muslim": "religion", "christian": "religion"}
TEXTS = 40
HIDDEN = {0, 10, 20, 30}  # the texts where "not" stands beside the slot


def _slots(score) -> pd.DataFrame:
    rows = []
    for i in range(TEXTS):
        fill = [("identity", t, g) for t, g in TERMS.items()] + [("placebo", w, None) for w in PLACEBO]
        for kind, word, group in fill:
            text = f"My {word} neighbour cooked on day {i}."
            rows.append([str(i), "identity", "gay", "adjective", "", kind, word, group, text, score(word, i)])
    return pd.DataFrame(rows, columns=SLOT_COLUMNS)


_RNG = np.random.default_rng(7)
NOISE = {(w, i): float(_RNG.normal(0.0, 0.01)) for i in range(TEXTS) for w in [*TERMS, *PLACEBO]}  # sd 1 point


def _base(i: int) -> float:
    return 0.3 + 0.02 * (i % 7)


def _hidden(word: str, i: int) -> float:
    """A religion term gets +10 points, but only in the texts of HIDDEN; every word its own noise (sd 1 point)."""
    return _base(i) + (0.10 if TERMS.get(word) == "religion" and i in HIDDEN else 0.0) + NOISE[(word, i)]


def _even(word: str, i: int) -> float:
    """No identity effect: every word its own noise."""
    return _base(i) + NOISE[(word, i)]


def test_placebo_sets_by_hand() -> None:
    """Sets of k words against the others, starting at evenly spaced words, cyclically."""
    placebo = np.array([[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 0.0, 8.0]])
    ones = placebo_sets(placebo, 1)
    assert ones.shape == (2, ROTATIONS)
    # rotation r starts at word r*4//4 = r: word r against the mean of the other three
    for r in range(4):
        others = [c for c in range(4) if c != r]
        assert ones[:, r] == pytest.approx(placebo[:, r] - placebo[:, others].mean(axis=1))
    pairs = placebo_sets(placebo, 2)
    assert pairs[0, 3] == pytest.approx((4.0 + 1.0) / 2 - (2.0 + 3.0) / 2)  # words 3 and 0 (cyclic) against 1, 2
    # a set as large as every word is cut to all but one
    assert placebo_sets(placebo, 9)[0, 0] == pytest.approx((1 + 2 + 3) / 3 - 4.0)


def test_an_effect_in_a_tenth_of_the_texts_is_said_to_be_uneven_and_its_texts_named() -> None:
    found = slot_effects(_slots(_hidden), seed=0, n_resamples=200)
    assert found is not None and found.identity_effect is not None
    groups = found.identity_effect.by_group
    religion, sexuality = groups["religion"], groups["sexuality"]
    assert religion.value == pytest.approx(0.01, abs=0.005)  # +10 points in 4 of 40 texts: a mean of about 1
    assert religion.spread is not None and religion.spread.varies
    assert {x.input_id for x in religion.spread.largest} <= {str(i) for i in HIDDEN}
    assert all(x.value is not None and x.value > 0.08 for x in religion.spread.largest)
    assert sexuality.spread is not None and not sexuality.spread.varies
    # the statistic by hand: per text, the group's deviation from its median less the placebo sets' (mean of four)
    per_text = np.array([np.mean([_hidden(t, i) for t in ("muslim", "christian")]) for i in range(TEXTS)])
    per_text -= np.array([np.mean([_hidden(w, i) for w in PLACEBO]) for i in range(TEXTS)])
    table = np.array([[_hidden(w, i) for w in PLACEBO] for i in range(TEXTS)])
    own, neutral = per_text.var(ddof=1), placebo_sets(table, 2).var(axis=0, ddof=1).mean()
    assert religion.spread.excess == pytest.approx(np.sqrt(own - neutral), abs=1e-9)
    assert religion.spread.p_adjusted == pytest.approx(6 * f_dist.sf(own / neutral, TEXTS - 1, TEXTS - 1), rel=1e-6)
    line = uneven_line(found)
    assert (
        line.startswith("UNEVEN")
        and "religion (mean +1.0, ±3.1 from text to text; +11.4 in text 10, +10.6 in text 20)" in line
    )
    assert "text 0" not in line and "sexuality" not in line and '"gay"' not in line
    assert '"muslim"' not in line  # a term of a group said is not said again
    assert "+11.4 in prompt 10" in uneven_line(found, count="prompt")  # the LLM audit's words


def test_an_even_model_is_never_said_to_be_uneven() -> None:
    found = slot_effects(_slots(_even), seed=0, n_resamples=200)
    assert found is not None and found.identity_effect is not None
    estimates = [*found.identity_effect.by_group.values(), *(found.identity_effect.by_term or {}).values()]
    assert all(e.spread is not None and not e.spread.varies for e in estimates)
    assert uneven_line(found) == ""


def test_a_constant_effect_is_not_uneven() -> None:
    """+6 points on every religion term in every text: material, and the same in each text."""
    found = slot_effects(_slots(lambda w, i: _even(w, i) + (0.06 if TERMS.get(w) == "religion" else 0.0)), seed=0,
                         n_resamples=200)  # fmt: skip
    assert found is not None and found.identity_effect is not None
    religion = found.identity_effect.by_group["religion"]
    assert religion.finding == "material" and religion.spread is not None and not religion.spread.varies


def test_the_report_shows_where_a_context_bound_effect_lives(tmp_path) -> None:
    """A classifier that adds 10 points to a religion term within three words after "not" (the issue's case): over
    40 texts, 4 of which say "not", the report's uneven table names the religion group with those texts, their
    original text beside the value, and the verdict's UNEVEN line names them."""
    import re

    import counterfair as cf

    religions = "muslim|christian|jewish|buddhist|catholic|protestant|sikh|taoist"
    near_not = re.compile(rf"\bnot\s+(?:\w+\s+){{0,2}}?(?:{religions})\b", re.I)
    texts = [f"My Muslim neighbour cooked dinner for us on day {i}." for i in range(36)]
    texts += [f"My neighbour is not Muslim, she said on day {i}." for i in range(4)]

    def score(batch: list[str]) -> np.ndarray:
        return np.array([0.3 + (0.10 if near_not.search(t) else 0.0) for t in batch])

    result = cf.audit(texts, score, methods=["swap"], attributes=["islam"], bootstrap=200)
    religion = result.typed_summary.effects.identity_effect.by_group["religion"]
    assert religion.finding != "material" and religion.spread is not None and religion.spread.varies
    assert {x.input_id for x in religion.spread.largest} <= {"36", "37", "38", "39"}
    assert "UNEVEN" in str(result) and "religion (mean" in str(result)
    result.save(tmp_path / "run")
    html = (tmp_path / "run" / "report.html").read_text()
    assert "Where the effect is uneven" in html
    assert "My neighbour is not Muslim, she said on day" in html
