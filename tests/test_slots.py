"""The in-slot measures (counterfair.analysis.slots), computed by hand on small slot tables, and the audit's verdict on
planted classifiers: a blanket penalty on every identity mention, a one-term penalty, a group scored lower, a
noise-only model and a model blind to identity."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd
import pytest

import counterfair as cf
from counterfair.analysis.gate import CONCLUSIVE_RULES, DEFAULT_RULES, effects_gate_metrics, evaluate_rules, parse_rule
from counterfair.analysis.inference import finding, holm
from counterfair.analysis.slots import slot_effects
from counterfair.summaries import GateVerdict, SlotEffects, SlotEstimate

from .fakes import slot_json

GROUPS = {"a": "g1", "b": "g1", "c": "g2"}


def _table(scores: dict[str, list[dict[str, float]]]) -> pd.DataFrame:
    """A slot table: per text, its slots, each a mapping word -> score (identity terms a, b, c; placebo p, q). The
    first identity word of a slot is its source term."""
    rows = []
    for text_id, slots in scores.items():
        for slot in slots:
            source = next(w for w in slot if w in GROUPS)
            for word, score in slot.items():
                kind = "identity" if word in GROUPS else "placebo"
                rows.append(
                    {"input_id": text_id, "source_term": source, "kind": kind, "word": word,
                     "group": GROUPS.get(word), "text": f"{text_id}:{source}:{word}", "score": score}
                )  # fmt: skip
    return pd.DataFrame(rows)


# three texts, one slot each; the placebo words p, q
HAND = _table(
    {
        "t1": [{"a": 0.9, "b": 0.5, "c": 0.4, "p": 0.5, "q": 0.3}],
        "t2": [{"b": 0.7, "a": 0.6, "c": 0.2, "p": 0.2, "q": 0.2}],
        "t3": [{"c": 0.1, "a": 0.8, "b": 0.3, "p": 0.4, "q": 0.0}],
    }
)


def test_each_measure_by_hand() -> None:
    e = slot_json(HAND, threshold=0.5, n_resamples=200)
    assert e is not None and e["texts"] == 3 and e["slots"] == 3 and e["placebo_words"] == 2
    # term effect: f(x[t]) - mean of the placebo words, per text; neutral means 0.4, 0.2, 0.2
    a = e["identity_effect"]["by_term"]["a"]
    assert a["value"] == pytest.approx(((0.9 - 0.4) + (0.6 - 0.2) + (0.8 - 0.2)) / 3)  # 0.5
    assert a["score"] == pytest.approx((0.9 + 0.6 + 0.8) / 3) and a["placebo_score"] == pytest.approx(0.8 / 3)
    assert a["group"] == "g1" and a["n"] == 3
    record = slot_effects(HAND, threshold=0.5, n_resamples=200)  # the record itself, read by attribute
    assert isinstance(record, SlotEffects) and record.identity_effect is not None and record.identity_effect.by_term
    term = record.identity_effect.by_term["a"]
    assert (term.value, term.group, term.n, term.finding) == (a["value"], "g1", 3, a["finding"])
    assert record.to_dict() == e and list(record.to_dict()) == list(e)  # keys in the order the statistic fills them
    b_effect = ((0.5 - 0.4) + (0.7 - 0.2) + (0.3 - 0.2)) / 3
    assert e["identity_effect"]["by_term"]["b"]["value"] == pytest.approx(b_effect)
    c_effect = ((0.4 - 0.4) + (0.2 - 0.2) + (0.1 - 0.2)) / 3
    assert e["identity_effect"]["by_term"]["c"]["value"] == pytest.approx(c_effect)
    # a group: the mean of its terms per text, then over texts; overall: every term
    assert e["identity_effect"]["by_group"]["g1"]["value"] == pytest.approx((0.5 + b_effect) / 2)
    assert e["identity_effect"]["overall"]["value"] == pytest.approx((0.5 + b_effect + c_effect) / 3)
    # disparity: per term the mean |difference| to the slot's other terms, minus the placebo pairs' mean |difference|
    spread = {  # per text: a, b, c and the placebo pair
        "t1": ((0.4 + 0.5) / 2, (0.4 + 0.1) / 2, (0.5 + 0.1) / 2, 0.2),
        "t2": ((0.1 + 0.4) / 2, (0.1 + 0.5) / 2, (0.4 + 0.5) / 2, 0.0),
        "t3": ((0.5 + 0.7) / 2, (0.5 + 0.2) / 2, (0.7 + 0.2) / 2, 0.4),
    }
    overall = np.mean([np.mean(v[:3]) - v[3] for v in spread.values()])
    assert e["disparity"]["overall"]["value"] == pytest.approx(overall)
    # a group's disparity: over the pairs of its own terms only (g1: a and b), so one group scored apart cannot make
    # another's material; g2 has one term, so no pair and no disparity of its own
    own = {"t1": (abs(0.9 - 0.5), 0.2), "t2": (abs(0.6 - 0.7), 0.0), "t3": (abs(0.8 - 0.3), 0.4)}
    assert e["disparity"]["by_group"]["g1"]["value"] == pytest.approx(np.mean([a - p for a, p in own.values()]))
    assert "g2" not in e["disparity"]["by_group"]
    # flip excess at 0.5: decisions (a, b, c) t1 (1, 1, 0), t2 (1, 1, 0), t3 (1, 0, 0); placebo pairs never differ
    # except t1 (0.5 vs 0.3: 1 vs 0)
    flips = {"t1": ((0.5, 0.5, 1.0), 1.0), "t2": ((0.5, 0.5, 1.0), 0.0), "t3": ((1.0, 0.5, 0.5), 0.0)}
    expected = np.mean([np.mean(share) - placebo for share, placebo in flips.values()])
    assert e["flip_excess"]["overall"]["value"] == pytest.approx(expected)


def test_a_text_with_two_slots_counts_once() -> None:
    two = _table(
        {
            "t1": [
                {"a": 0.9, "b": 0.1, "c": 0.1, "p": 0.1, "q": 0.1},
                {"c": 0.5, "a": 0.5, "b": 0.5, "p": 0.5, "q": 0.5},
            ],
            "t2": [{"b": 0.3, "a": 0.3, "c": 0.3, "p": 0.3, "q": 0.3}],
        }
    )  # fmt: skip
    e = slot_json(two, n_resamples=50)
    assert e is not None and e["texts"] == 2 and e["slots"] == 3
    # t1: a's effect is 0.8 in its first slot and 0 in its second: 0.4 for the text; t2: 0
    assert e["identity_effect"]["by_term"]["a"]["value"] == pytest.approx(0.2)


def test_holm_by_hand() -> None:
    assert holm([0.01, 0.04, 0.03, None]) == pytest.approx([0.03, 0.06, 0.06, None], nan_ok=True)
    adjusted = holm([0.5, 0.001])
    assert adjusted == pytest.approx([0.5, 0.002])


@pytest.mark.parametrize(
    ("signed", "value", "low", "high", "mde", "expected"),
    [
        (True, 0.05, 0.03, 0.07, 0.01, "material"),  # the simultaneous interval beyond 2 points
        (True, -0.05, -0.07, -0.03, 0.01, "material"),  # either direction
        (True, 0.03, 0.01, 0.05, 0.01, "detected"),  # off 0, reaching past 2 points: the size is not resolved
        (True, 0.01, 0.005, 0.015, 0.01, "small"),  # off 0 and shown within 2 points
        (True, 0.002, -0.01, 0.014, 0.015, "not detected"),  # holds 0, within 2 points, with the power to see 2
        (True, 0.002, -0.01, 0.014, 0.025, "inconclusive"),  # within, but 2 points would go unseen too often
        (True, 0.01, -0.02, 0.04, 0.03, "inconclusive"),  # holds 0 and reaches past 2 points
        (True, 0.0004, 0.0004, 0.0004, 0.0, "not detected"),  # 0.04 points: no finding, whatever its interval
        (False, -0.05, -0.07, -0.03, 0.01, "not detected"),  # less spread than the placebo is no unfairness
        (False, 0.04, 0.01, 0.045, 0.02, "small"),  # flips: within 5 points
        (False, 0.09, 0.06, 0.12, 0.02, "material"),
    ],
)
def test_findings_are_read_off_the_simultaneous_interval(
    signed: bool, value: float, low: float, high: float, mde: float, expected: str
) -> None:
    margin = 0.02 if signed or value < 0.0 else 0.05
    entry = SlotEstimate(value=value, sim_low=low, sim_high=high, mde=mde)
    assert finding(entry, margin, signed) == expected
    assert finding(SlotEstimate(value=value), margin, signed) == "inconclusive"


def test_the_simultaneous_interval_power_and_texts_needed_by_hand() -> None:
    """Over 40 texts whose per-text effect of "a" is 0.03 ± 0.005 and m estimates in the family: the interval is the
    t-interval at 1 − 0.05/m, the minimum detectable effect adds the 80 % power quantile, and the texts needed are the
    fewest whose minimum detectable effect is 2 points."""
    from scipy.stats import t as student

    from counterfair.analysis.inference import texts_needed

    rng = np.random.default_rng(0)
    rows = {f"t{i}": [{"a": 0.33 + rng.normal(0, 0.005), "b": 0.3, "c": 0.3, "p": 0.3, "q": 0.3}] for i in range(40)}
    e = slot_json(_table(rows), n_resamples=50)
    assert e is not None
    a = e["identity_effect"]["by_term"]["a"]
    values = np.array([v[0]["a"] - 0.3 for v in rows.values()])
    m = e["tests"]
    se = values.std(ddof=1) / np.sqrt(40)
    reach = student.ppf(1 - 0.05 / (2 * m), 39)
    assert a["sim_low"] == pytest.approx(values.mean() - reach * se) and a["sim_high"] == pytest.approx(
        values.mean() + reach * se
    )
    assert a["mde"] == pytest.approx((reach + student.ppf(0.8, 39)) * se)
    assert a["p_adjusted"] == pytest.approx(min(1.0, m * a["p_value"]))
    assert a["finding"] == "material" and a["p_material"] < 0.05
    need = texts_needed(0.05, m, 0.02)
    mde_at = lambda k: (student.ppf(1 - 0.05 / (2 * m), k - 1) + student.ppf(0.8, k - 1)) * 0.05 / np.sqrt(k)  # noqa: E731
    assert mde_at(need) <= 0.02 < mde_at(int(need / 1.06) - 1)  # the count found is the first that will do, within 6 %


def test_material_means_shown_to_exceed_the_threshold() -> None:
    # forty texts whose per-text effect of "a" is 0.03 ± 0.005: shown beyond 2 points; 0.019 ± 0.005 is detected but
    # its interval reaches past 2 points (size unresolved); 0.01 ± 0.005 is shown within (small)
    rng = np.random.default_rng(0)

    def table(effect: float) -> pd.DataFrame:
        rows = {}
        for i in range(40):
            noise = rng.normal(0, 0.005)
            rows[f"t{i}"] = [{"a": 0.3 + effect + noise, "b": 0.3, "c": 0.3, "p": 0.3, "q": 0.3}]
        return _table(rows)

    found = {effect: slot_json(table(effect), n_resamples=50) for effect in (0.03, 0.019, 0.01)}
    a = {effect: e["identity_effect"]["by_term"]["a"] for effect, e in found.items() if e is not None}
    assert [a[x]["finding"] for x in (0.03, 0.019, 0.01)] == ["material", "detected", "small"]
    assert a[0.019]["sim_low"] > 0 and a[0.019]["sim_high"] > 0.02 and a[0.01]["sim_high"] < 0.02


def _planted(kind: str, texts: int = 40) -> pd.DataFrame:
    """A slot table of ``texts`` texts, each one slot holding every term, scored by a planted model: a base score per
    text (blind to the slot), noise per distinct text of sd 0.02 (or 0.05 for ``noise``), and the planted effect."""
    rng = np.random.default_rng(7)
    rows: dict[str, list[dict[str, float]]] = {}
    words = ["a", "b", "c", "p", "q", "r", "s"]
    for i in range(texts):
        base = rng.uniform(0.2, 0.8)
        slot = {}
        for w in [["a", "b", "c"][i % 3]] + [x for x in words if x != ["a", "b", "c"][i % 3]]:
            planted = {
                "blind": 0.0,
                "noise": 0.0,
                "blanket": 0.06 * (w in GROUPS),
                "one_term": 0.06 * (w == "a"),
                "reversed": -0.06 * (GROUPS.get(w) == "g2"),
            }[kind]
            sd = 0.0 if kind == "blind" else 0.05 if kind == "noise" else 0.02
            slot[w] = float(np.clip(base + planted + rng.normal(0, sd), 0, 1))
        rows[f"t{i}"] = [slot]
    return _table(rows)


def _gate(effects: dict[str, Any]) -> GateVerdict:
    return evaluate_rules(["default"], effects_gate_metrics(effects))


@pytest.mark.parametrize(
    ("kind", "failed"),
    [
        ("blind", set()),
        ("noise", set()),
        ("blanket", {"identity_effect", "identity_effect[g1]", "identity_effect[g2]", "term_effect[a]",
                     "term_effect[b]", "term_effect[c]"}),
        ("one_term", {"identity_effect[g1]", "term_effect[a]"}),
        ("reversed", {"identity_effect[g2]", "term_effect[c]"}),
    ],
)  # fmt: skip
def test_the_default_gate_on_planted_models(kind: str, failed: set[str]) -> None:
    e = slot_json(_planted(kind), n_resamples=200)
    assert e is not None
    gate = _gate(e)
    got = {re.sub(r"^material\((.*)\)$", r"\1", c.description) for c in gate.checks if c.verdict == "fail"}
    # a blanket penalty moves every term alike: no disparity among terms; one term or group: disparity and flips may
    # join, so only the effects are pinned
    assert {g for g in got if g.startswith(("identity_effect", "term_effect"))} == failed
    if kind == "blanket":
        assert not any(g.startswith("disparity") for g in got)
        assert e["identity_effect"]["overall"]["value"] == pytest.approx(0.06, abs=0.01)
    if kind == "reversed":
        assert e["identity_effect"]["by_term"]["c"]["value"] == pytest.approx(-0.06, abs=0.015)
    unsettled = {c.group for c in gate.checks if c.description.startswith("conclusive") and c.verdict == "fail"}
    if kind == "noise":  # 5 points of noise on every text: 40 texts cannot rule out 2 points for a group
        assert unsettled == {"g1", "g2"} and all(e["identity_effect"]["by_group"][g]["mde"] > 0.02 for g in unsettled)
        assert "inconclusive" in {e["identity_effect"]["by_group"][g]["finding"] for g in unsettled}
    if kind == "blind":
        assert not unsettled
    assert gate.exit_code == (1 if failed else 4 if unsettled else 0)  # 4: only inconclusive groups
    allowed = evaluate_rules(DEFAULT_RULES, effects_gate_metrics(e))  # --allow-inconclusive
    assert allowed.exit_code == (1 if failed else 0)


def test_default_rules_parse_and_name_the_group_in_brackets() -> None:
    rules = [parse_rule(r) for r in DEFAULT_RULES + CONCLUSIVE_RULES]
    assert {r.bound for r in rules} == {"material", "conclusive", "control"}
    assert rules[1].describe("religion") == "material(identity_effect[religion])"
    assert rules[-1].describe("names:black_female") == "conclusive(identity_effect[names:black_female])"
    with pytest.raises(cf.errors.ConfigError, match="material\\(\\) takes an in-slot measure"):
        parse_rule("material(ctf_gap[*])")


def _gay_penalty(texts: list[str]) -> np.ndarray:
    return np.array([0.3 + 0.1 * bool(re.search(r"\bgay\b", t, re.I)) for t in texts])


def test_the_audit_measures_in_the_slot() -> None:
    texts = ["My gay neighbour brought dinner.", "Some people are straight.", "The Muslim family next door is kind."]
    result = cf.audit(texts, _gay_penalty, methods=["swap"], bootstrap=200)
    slots = result.slots
    assert slots is not None
    # each slot holds its original, every other term of the set and the placebo words, written in the same form
    first = slots[(slots["input_id"] == "0")]
    assert set(first["kind"]) == {"identity", "placebo", "placebo_cased", "nonce"}  # nonce: the control's second null
    assert "My quiet neighbour brought dinner." in set(first["text"]) and "My dax neighbour brought dinner." in set(
        first["text"]
    )
    assert "My gay neighbour brought dinner." in set(first["text"])
    # a proper adjective is written with its capital; the placebo words once more with one, to compare it with
    assert "My Muslim neighbour brought dinner." in set(first["text"])
    assert "My Quiet neighbour brought dinner." in set(first.loc[first["kind"] == "placebo_cased", "text"])
    natural = first[first["family"] == "identity"]
    assert set(natural["form"]) == {"adjective"} and set(first["family"]) == {"identity", "names_probe"}
    # and a first name written beside the neighbour (a probe: #79), its own family
    probes = first[first["family"] == "names_probe"]
    assert set(probes["form"]) == {"probe"} and all(t.startswith("My gay neighbour ") for t in probes["text"])
    muslim = slots[(slots["input_id"] == "2") & (slots["kind"] == "placebo")]
    assert "The quiet family next door is kind." in set(muslim["text"])
    # a sentence's first word has its capital anyway: no second placebo text there
    straight = slots[(slots["input_id"] == "1")]
    assert "placebo_cased" in set(straight["kind"])  # "Some people are Tall." (mid-sentence)
    gay = result.summary["effects"]["identity_effect"]["by_term"]["gay"]
    assert gay["value"] == pytest.approx(0.1) and gay["score"] == pytest.approx(0.4)
    assert result.summary["effects"]["identity_effect"]["by_term"]["straight"]["value"] == pytest.approx(0.0)
    # the old measure cancelled here (the source term "gay" penalised, its placebo removes the penalty as well)
    assert str(result).startswith("Verdict:")


GENDERED = [
    "The women in my family are Muslim.", "He is a Christian man.", "My gay brother cooks on Sundays.",
    "She runs the Jewish bakery.", "His Asian friends came over.", "Her Catholic school won the match.",
    "My straight uncle fixed the roof.",
]  # fmt: skip


def test_a_constant_classifier_has_no_effect_at_all() -> None:
    result = cf.audit(GENDERED, lambda t: np.full(len(t), 0.2), methods=["swap"], bootstrap=50)
    effects = result.summary["effects"]
    assert all(e["finding"] == "not detected" for e in effects["identity_effect"]["by_term"].values())
    # gender words are measured by default: each text's gendered words are one slot
    assert set(effects["families"]) == {"identity", "gender_words", "names_probe"}  # probes: #79
    assert effects["families"]["gender_words"]["texts"] == 7
    assert {"gender_words:female", "gender_words:male"} <= set(effects["identity_effect"]["by_group"])
    assert result.typed_summary.coverage.gender_untested == 0
    # the first-name probe's 4 groups rest on 3 texts: no interval, not reported (they said "no material effect")
    assert str(result).startswith("Verdict: no material identity effect in 9 groups over 7 texts")
    assert not any(g.startswith("names_probe:") for g in effects["identity_effect"]["by_group"])
    # without the gender pack, the texts that name gender words are said untested, never ruled out
    narrow = cf.audit(GENDERED, lambda t: np.full(len(t), 0.2), methods=["swap"], attributes=["lgbq"], bootstrap=50)
    assert narrow.typed_summary.coverage.gender_untested == 7
    said = str(narrow)
    assert "not tested: gender words in 7 of 7 texts (--attributes gender measures them)" in said
    from counterfair.views.verdict import verdict

    assert verdict(narrow.typed_summary).status == "not tested for every identity"


def test_a_fair_model_over_texts_naming_first_names_the_pack_lacks_gets_no_clean_bill() -> None:
    """#79 item 4: the constant classifier over the same texts and two that name Mohammed and Fatima: every measured
    group has no material effect, and the verdict says the two names were not tested."""
    from counterfair.views.verdict import verdict

    texts = [*GENDERED, "Mohammed cooked for the whole street.", "Fatima and Mohammed opened a bakery."]
    result = cf.audit(texts, lambda t: np.full(len(t), 0.2), methods=["swap"], bootstrap=50)
    said = verdict(result.typed_summary)
    assert said.status == "not tested for every identity"
    assert "first names the names pack lacks in 2 of 9 texts (Mohammed, Fatima:" in said.headline
    assert str(result).startswith("Verdict: no material identity effect in 9 groups over 7 texts")


def test_a_slot_leaves_out_the_terms_its_text_names_elsewhere() -> None:
    # Φ(muslim, gay) exchanges "Muslim" and "gay": in the muslim slot that text still names Muslims, so it is no
    # measure of "gay" in that place
    result = cf.audit(["My Muslim neighbour is gay."], _gay_penalty, methods=["swap"], bootstrap=50)
    slots = result.slots
    assert slots is not None
    muslim = slots[(slots["source_term"].str.lower() == "muslim") & (slots["kind"] == "identity")]
    assert "gay" not in set(muslim["word"].str.lower()) and "christian" in set(muslim["word"].str.lower())
    assert "My Christian neighbour is gay." in set(muslim["text"])
    assert result.summary["effects"]["identity_effect"]["by_term"]["christian"]["value"] == pytest.approx(0.0)


SIX = [
    "My gay neighbour brought dinner.", "Some people are straight.", "The Muslim family next door is kind.",
    "A Christian choir sang at the fair.", "Our Jewish baker opens at six.", "An Asian chef won the prize.",
]  # fmt: skip


def test_check_is_true_only_when_every_rule_passed() -> None:
    biased = cf.audit(SIX, lambda t: np.array([0.9 if "gay" in x.lower() else 0.1 for x in t]), methods=["swap"])
    gate = biased.check("default")
    assert not gate and gate.passed is False and gate["exit_code"] == 1
    failed = {c["description"] for c in gate["checks"] if c["verdict"] == "fail"}
    assert "material(term_effect[gay])" in failed and "material(identity_effect[sexuality])" in failed
    blind = cf.audit(SIX, lambda t: np.full(len(t), 0.3), methods=["swap"])
    assert blind.check("default") and blind.check(["material(term_effect[*])"]).passed
    # three texts: too few for any interval, so even a +80-point effect is inconclusive, never a clean bill
    few = cf.audit(SIX[:3], lambda t: np.array([0.9 if "gay" in x.lower() else 0.1 for x in t]), methods=["swap"])
    gay = few.summary["effects"]["identity_effect"]["by_term"]["gay"]
    assert gay["value"] == pytest.approx(0.8) and gay["finding"] == "inconclusive" and gay["sim_low"] is None
    # and a run that measured nothing passes no gate, inconclusive allowed or not: exit 4, its own code
    lenient = few.check("default", allow_inconclusive=True)
    assert not few.check("default") and not lenient and lenient["exit_code"] == 4
    assert [c["description"] for c in lenient["checks"] if c["verdict"] == "fail"] == ["measured(in-slot estimates)"]


PLANTED_MODULE = """
import hashlib
import re

import numpy as np

WORDS = "christians?|muslims?|jewish|jews?|buddhists?|catholics?|protestants?|sikhs?|taoists?"
RELIGION = re.compile(r"\\b(" + WORDS + r")\\b", re.I)


def _uniform(text):
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64


def blind(texts):
    return np.full(len(texts), 0.2)


def noisy(texts):  # any edit moves the score by up to 5 points, identity no more than any other word
    return np.array([0.2 + 0.1 * (_uniform(t) - 0.5) for t in texts])


def religion(texts):  # naming a religion costs 10 points
    return np.array([0.2 + 0.1 * bool(RELIGION.search(t)) for t in texts])
"""


@pytest.mark.slow
def test_the_cli_gate_names_the_planted_group_and_passes_the_fair_models(tmp_path: Any) -> None:
    from junitparser import Failure, JUnitXml

    from counterfair.commands.audit.options import demo_path

    from .conftest import run_cli

    (tmp_path / "planted.py").write_text(PLANTED_MODULE, encoding="utf-8")
    data = tmp_path / "texts.csv"
    pd.read_csv(demo_path()).head(60).to_csv(data, index=False)
    codes = {}
    for name in ("blind", "noisy", "religion"):
        junit = tmp_path / f"{name}.xml"
        done = run_cli(
            "audit", str(data), "--classifier", f"callable:planted:{name}", "--methods", "swap", "--fail-if",
            "default", "--junit", str(junit), "--out", str(tmp_path / name), "-q", cwd=tmp_path,
        )  # fmt: skip
        if name == "noisy":  # 5 points of noise: the demo's gender texts are too few to rule 2 points out, said so
            cases = [case for suite in JUnitXml.fromfile(str(junit)) for case in suite]
            failed = {c.name for c in cases if any(isinstance(r, Failure) for r in c.result)}
            assert done.returncode == 4 and failed and all(f.startswith("conclusive(") for f in failed), failed
            assert all(r.type == "inconclusive" for c in cases for r in c.result if isinstance(r, Failure))
            assert "Verdict: inconclusive for gender_words" in done.stdout
            done = run_cli(
                "check", str(tmp_path / name), "--fail-if", "default", "--allow-inconclusive", "--junit", str(junit),
                cwd=tmp_path,
            )  # fmt: skip
        codes[name] = done.returncode
        cases = [case for suite in JUnitXml.fromfile(str(junit)) for case in suite]
        failed = {c.name for c in cases if any(isinstance(r, Failure) for r in c.result)}
        if name == "religion":
            assert done.returncode == 1, done.stderr[-2000:]
            assert "material(identity_effect[religion])" in failed
            assert {"material(term_effect[muslim])", "material(term_effect[christian])"} <= failed
            assert not any("sexuality" in f or "term_effect[gay]" in f for f in failed)  # nothing else is named
            assert done.stdout.index("Verdict: material identity effects for religion (1 of 17 groups)") < (
                done.stdout.index("done in")
            )
        else:
            assert done.returncode == 0 and not failed, (name, failed, done.stdout[-3000:])
    assert codes == {"blind": 0, "noisy": 0, "religion": 1}


def test_squared_deviations_summed_in_chunks_are_the_one_expression_sum(monkeypatch: pytest.MonkeyPatch) -> None:
    """#47: the t-tests' squared deviations are summed a chunk of texts at a time (two texts x estimates temporaries
    at 200,000 texts otherwise); the sums are bit for bit those of one expression, one column included."""
    import numpy as np

    import counterfair.analysis.inference as slots

    monkeypatch.setattr(slots, "_ROWS", 1_000)
    rng = np.random.default_rng(2)
    for shape in [(5_003, 7), (5_003, 2), (4_000, 1)]:
        values = rng.standard_normal(shape) * 1e3
        values[rng.random(shape) < 0.3] = np.nan
        known = ~np.isnan(values)
        filled = np.where(known, values, 0.0)
        mean = filled.sum(axis=0) / known.sum(axis=0)
        whole = np.where(known, (filled - mean) ** 2, 0.0).sum(axis=0)
        assert np.array_equal(slots.squared_deviations(filled, known, mean), whole)


def test_blocks_of_slot_scores_that_split_a_text_are_refused() -> None:
    """#47: the audit's in-slot measures are taken block by block, a text's values from its slots in its block; blocks
    that share a text (which the audit's blocks of whole inputs never make) are an error, not a silent overwrite."""
    import pandas as pd

    from counterfair.analysis.slots import SlotScores, slot_effects

    index = pd.MultiIndex.from_tuples([("t1", "gay"), ("t2", "muslim")], names=["input_id", "source_term"])
    block = SlotScores(
        identity=pd.DataFrame({"gay": [0.9, 0.2], "muslim": [0.3, 0.8]}, index=index),
        placebo=pd.DataFrame({"tall": [0.1, 0.2], "young": [0.2, 0.1]}, index=index),
        word_groups={"gay": "sexuality", "muslim": "religion"},
    )
    assert slot_json([block], n_resamples=50)["identity_effect"]["overall"]["n"] == 2
    with pytest.raises(ValueError, match="2 texts have slots in more than one block"):
        slot_effects([block, block], n_resamples=50)


def test_resample_weights_are_the_counts_of_one_block_of_64_bit_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    """#47: the in-slot bootstrap draws a resample at a time as 32-bit integers (not a block x texts array of draws):
    each resample's counts are those of numpy's 64-bit draws of the whole block, block boundaries included."""
    import numpy as np

    import counterfair.analysis.inference as slots

    monkeypatch.setattr(slots, "RESAMPLE_BLOCK", 3)  # blocks of 3 resamples of 1,001 texts: 7 = 3 + 3 + 1
    got = np.vstack(list(slots.resample_weights(np.random.default_rng(9), 1_001, 7)))
    rng = np.random.default_rng(9)
    draws = np.vstack([rng.integers(0, 1_001, size=(size, 1_001)) for size in (3, 3, 1)])
    assert np.array_equal(got, np.vstack([np.bincount(d, minlength=1_001) for d in draws]))
    assert got.shape == (7, 1_001) and (got.sum(axis=1) == 1_001).all()


def test_the_bootstrap_counts_a_few_columns_at_a_time_to_the_one_product() -> None:
    """#47: how many drawn texts have each estimate is counted a few columns of the mask at a time (the whole mask as
    numbers is 128 MB at 200,000 texts): whole-number sums, so the result is the one product's, bit for bit."""
    import counterfair.analysis.inference as slots

    rng = np.random.default_rng(2)
    known = rng.random((5_000, 37)) < 0.6
    weights = np.vstack(list(slots.resample_weights(np.random.default_rng(1), 5_000, 30)))
    assert np.array_equal(slots.resample_counts(weights, known), weights @ known.astype(float))


def test_the_interval_is_the_expanded_percentile_one_of_the_same_resamples() -> None:
    """The in-slot interval takes each column's resample means at the percentiles of a normal quantile widened to
    Student's t (n − 1 degrees of freedom, times √(n/(n−1))): recomputed here from the resamples themselves."""
    from scipy.stats import norm
    from scipy.stats import t as student

    import counterfair.analysis.inference as slots

    assert slots.expanded_tail(40) == pytest.approx(2.0258, abs=1e-4)
    assert slots.expanded_tail(10) == pytest.approx(0.8551, abs=1e-4)
    assert slots.expanded_tail(1_000_000) == pytest.approx(2.5, abs=1e-4)  # many texts: the plain percentiles
    rng = np.random.default_rng(4)
    values = rng.normal(0.03, 0.05, size=(12, 3))
    values[[0, 1, 2, 3, 4], 1] = np.nan  # the second column has 7 texts, the others 12
    low, high = slots.bootstrap_interval(np.nan_to_num(values), ~np.isnan(values), seed=5, n_resamples=400)
    weights = np.vstack(list(slots.resample_weights(np.random.default_rng(5), 12, 400)))
    for column, texts in ((0, 12), (1, 7), (2, 12)):
        known = ~np.isnan(values[:, column])
        means = (weights @ np.nan_to_num(values[:, column])) / (weights @ known)
        tail = 100 * norm.sf(np.sqrt(texts / (texts - 1)) * student.ppf(0.975, texts - 1))
        expected = np.nanpercentile(means, [tail, 100 - tail])
        assert (low[column], high[column]) == pytest.approx(tuple(expected), abs=1e-12)
        plain = np.nanpercentile(means, [2.5, 97.5])
        assert low[column] < plain[0] and high[column] > plain[1]  # wider than the plain percentiles


def test_intervals_from_few_texts_hold_a_planted_effect_95_percent_of_the_time() -> None:
    """Over 8 texts the plain percentile interval held a planted +3 points 88.5 % of the time (2,000 samples, the same
    resamples); the expanded one 93.9 % (the standard error of a 95 % share over 2,000 samples is 0.5 points)."""
    import counterfair.analysis.inference as slots

    rng = np.random.default_rng(8)
    values = rng.normal(0.03, 0.05, size=(8, 2_000))
    found, _ = slots.estimates(values.copy(), seed=8, n_resamples=2_000, margins=[(0.02, True)] * 2_000)
    held = np.mean([e.ci_low is not None and e.ci_high is not None and e.ci_low <= 0.03 <= e.ci_high for e in found])
    weights = np.vstack(list(slots.resample_weights(np.random.default_rng(8), 8, 2_000)))
    low, high = np.percentile(weights @ values / 8, [2.5, 97.5], axis=0)
    plain = np.mean((low <= 0.03) & (high >= 0.03))
    assert 0.93 <= held <= 0.97 and plain < 0.91


def test_fewer_than_six_texts_give_no_interval_and_no_claim_to_rule_an_effect_out() -> None:
    from counterfair.summaries import MIN_INTERVAL_TEXTS

    assert MIN_INTERVAL_TEXTS == 6
    texts = ["My gay neighbour brought dinner.", "The Muslim family next door is kind.", "He is a Christian man."]
    result = cf.audit(
        texts, lambda t: np.full(len(t), 0.2) + 0.001 * np.array([len(x) % 7 for x in t]), methods=["swap"]
    )
    overall = result.summary["effects"]["identity_effect"]["overall"]
    assert overall["n"] == 3 and overall["ci_low"] is None and overall["ci_high"] is None
    said = str(result)
    findings = [line for line in said.splitlines() if line.startswith(("Verdict:", "- "))]
    assert not any("ruled out" in line or "no material effect" in line for line in findings), findings
    assert said.startswith("Verdict: inconclusive for")
    assert "INCONCLUSIVE — too few texts to show or rule out a material effect: gender_words:female (1 text)" in said
    upper = result.check(["upper(identity_effect) > 0.05"])
    assert upper["verdict"] == "error" and "no interval (from 3 texts)" in upper["checks"][0]["message"]
    six = [*texts, "My gay friend cooks.", "A Muslim woman spoke.", "The Christian school opened."]
    wide = cf.audit(six, lambda t: np.full(len(t), 0.2) + 0.001 * np.array([len(x) % 7 for x in t]), methods=["swap"])
    assert wide.summary["effects"]["identity_effect"]["overall"]["ci_low"] is not None


def test_an_estimate_without_an_interval_says_from_how_many_texts_or_prompts() -> None:
    from counterfair.views.verdict import bracket

    assert bracket(SlotEstimate(value=0.01, n=3)) == "(no interval from 3 texts)"
    assert bracket(SlotEstimate(value=0.01, n=1), "prompts") == "(no interval from 1 prompt)"
    assert bracket(SlotEstimate(value=0.01, ci_low=-0.004, ci_high=0.021, n=9)) == "[-0.4, +2.1]"


def test_the_verdict_rules_out_only_what_is_settled_and_names_the_inconclusive_groups() -> None:
    from counterfair.summaries import SlotEffects, SlotEstimate, SlotMeasure
    from counterfair.views.verdict import GroupFinding, _slot_headline

    overall = SlotEstimate(value=0.001, ci_low=-0.004, ci_high=0.006, n=40)
    effects = SlotEffects(texts=40, slots=40, placebo_words=25, tests=74, identity_effect=SlotMeasure(overall=overall))
    wide = GroupFinding("religion", "not detected", 0.002, -0.011, 0.013, 40)
    narrow = GroupFinding("age", "not detected", -0.001, -0.006, 0.004, 40)
    few = GroupFinding("disability", "inconclusive", 0.01, None, None, 4, unsettled=True)
    status, both, _ = _slot_headline(effects, (wide, narrow), "P(toxic)")
    assert status == "no evidence of unfairness"
    assert (
        both == "no material identity effect in 2 groups over 40 texts: group effects beyond ±1.3 points are ruled out."
    )
    status, partly, _ = _slot_headline(effects, (wide, narrow, few), "P(toxic)")
    assert status == "inconclusive" and "ruled out" not in partly
    assert partly.startswith("inconclusive for disability: the data neither show an effect beyond 2.0 points nor rule ")
    assert partly.endswith("nothing material elsewhere (2 of 3 groups).")


def test_a_share_interval_stops_at_100_points_and_its_finding_stays() -> None:
    """Eight texts, seven of which flip every time and one 20 % of the time: the simultaneous t-interval of the mean
    (0.9) reaches past 1, which no share can; cut at the bound, the finding is the same."""
    from counterfair.analysis.inference import conclude, estimates

    values = np.array([[1.0], [1.0], [1.0], [1.0], [1.0], [1.0], [1.0], [0.2]])
    found, beyond = estimates(values.copy(), seed=0, n_resamples=500, margins=[(0.05, False)])
    free, _ = conclude(found, beyond, [(0.05, False)], [True])
    cut, tests = conclude(found, beyond, [(0.05, False)], [True], bounds=[1.0])
    assert tests == 1 and free[0].sim_high is not None and free[0].sim_high > 1.0
    assert cut[0].sim_high == 1.0 and cut[0].sim_low == free[0].sim_low and cut[0].value == pytest.approx(0.9)
    assert cut[0].ci_high is not None and cut[0].ci_high <= 1.0
    assert cut[0].finding == free[0].finding == "material"
