"""#79: the audit's own control, checked every run (counterfair.analysis.control), and exit codes that mean one thing.

The control is computed here by hand on small slot tables: each neutral word's score against the others in the same
slot, the neutral words against nonce words, and what the audit does with a word that stands out (leaves the
baseline) and with nulls that disagree (no identity finding of the family is material; the check fails)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from counterfair.analysis.control import NONCE_WORDS
from counterfair.analysis.gate import (
    CONCLUSIVE_RULES,
    DEFAULT_RULES,
    effects_gate_metrics,
    evaluate_rules,
    gate_verdict,
    write_junit,
)
from counterfair.analysis.slots import SLOT_COLUMNS, slot_effects
from counterfair.summaries import EXIT_CODES, GateCheck

PLACEBO = ["barefoot", "busy", "chatty", "hatless", "quiet"]
TERMS = {"gay": "sexuality", "straight": "sexuality", "muslim": "religion", "christian": "religion"}


def _slots(score, texts: int = 12, nonce: bool = True) -> pd.DataFrame:
    """A slot table of ``texts`` texts, one slot each ("My X neighbour ... on day i."), scored by ``score(word, i)``."""
    rows = []
    for i in range(texts):
        fill = [("identity", t, g) for t, g in TERMS.items()] + [("placebo", w, None) for w in PLACEBO]
        fill += [("nonce", w, None) for w in NONCE_WORDS] if nonce else []
        for kind, word, group in fill:
            text = f"My {word} neighbour cooked on day {i}."
            rows.append([str(i), "identity", "gay", "adjective", "", kind, word, group, text, score(word, i)])
    return pd.DataFrame(rows, columns=SLOT_COLUMNS)


def _base(i: int) -> float:
    return 0.2 + 0.03 * (i % 5)


def _noise(word: str, i: int) -> float:
    """A small deterministic spread per text and word (so that intervals have a width)."""
    return 0.004 * (((i * 7 + len(word) * 3) % 11) / 11 - 0.5)


def test_a_neutral_word_that_stands_out_is_named_and_left_out_of_the_baseline() -> None:
    """'hatless' scores 6 points above the other neutral words: its own estimate (its score minus the slot's median
    neutral word's), computed by hand, is material; it
    leaves the baseline (the terms are compared with the other four words), and one word of five does not fail the
    control."""

    def score(word: str, i: int) -> float:
        return _base(i) + (0.06 if word == "hatless" else 0.0) + _noise(word, i)

    table = _slots(score)
    found = slot_effects(table, seed=0, n_resamples=200)
    assert found is not None and found.control is not None
    control = found.control["identity"]
    by_hand = np.mean([score("hatless", i) - np.median([score(w, i) for w in PLACEBO]) for i in range(12)])
    assert control.words is not None
    assert control.words["hatless"].value == pytest.approx(by_hand, abs=1e-9)
    assert control.words["hatless"].finding == "material" and by_hand == pytest.approx(0.06, abs=0.003)
    quiet = np.mean([score("quiet", i) - np.median([score(w, i) for w in PLACEBO]) for i in range(12)])
    assert (
        control.words["quiet"].value == pytest.approx(quiet, abs=1e-9) and control.words["quiet"].finding != "material"
    )
    assert control.standing_out == ("hatless",) and not control.failed and not control.unreliable
    assert '"hatless" +6.0' in control.message and "left out of the baseline" in control.message
    # the baseline without it: a blind model's terms read 0, not -1.2 points (what 'hatless' would have cost them)
    effect = found.identity_effect
    assert effect is not None and effect.by_term is not None
    gay = effect.by_term["gay"]
    neutral = np.mean([np.mean([score(w, i) for w in PLACEBO if w != "hatless"]) for i in range(12)])
    assert gay.placebo_score == pytest.approx(neutral, abs=1e-9)
    assert abs(gay.value or 0.0) < 0.003 and gay.finding != "material"
    # the nulls agree once it is out: the neutral words' mean against the nonce words', by hand
    kept = [w for w in PLACEBO if w != "hatless"]
    agreement = np.mean(
        [np.mean([score(w, i) for w in kept]) - np.mean([score(w, i) for w in NONCE_WORDS]) for i in range(12)]
    )
    assert control.agreement is not None and control.agreement.value == pytest.approx(agreement, abs=1e-9)
    gate = evaluate_rules(["default"], effects_gate_metrics(found))
    check = next(c for c in gate.checks if c.estimate == "control")
    assert check.verdict == "pass" and check.group == "identity" and "hatless" in check.message


def test_a_model_that_reacts_to_every_neutral_word_fails_the_control_and_blames_no_identity(tmp_path: Path) -> None:
    """+6 points whenever a text holds a neutral word: against them every term reads -6, but the nonce words disagree
    with the neutral words by +6 (by hand), so the control is unreliable, the check fails naming the words, and no
    identity finding is material."""

    def score(word: str, i: int) -> float:
        return _base(i) + (0.06 if word in PLACEBO else 0.0) + _noise(word, i)

    found = slot_effects(_slots(score), seed=0, n_resamples=200)
    assert found is not None and found.control is not None and found.identity_effect is not None
    control = found.control["identity"]
    agreement = np.mean(
        [np.mean([score(w, i) for w in PLACEBO]) - np.mean([score(w, i) for w in NONCE_WORDS]) for i in range(12)]
    )
    assert control.agreement is not None and control.agreement.value == pytest.approx(agreement, abs=1e-9)
    assert control.agreement.finding == "material" and control.unreliable and control.failed
    assert control.standing_out == ()  # each word against the others: all alike
    assert "dax" in control.message and "unreliable" in control.message
    terms = found.identity_effect.by_term or {}
    assert terms["gay"].value == pytest.approx(-0.06, abs=0.003)  # the estimate is reported as it is ...
    assert all(e.finding != "material" for e in terms.values())  # ... but never called material
    assert all(e.finding != "material" for e in (found.identity_effect.by_group or {}).values())
    gate = evaluate_rules(["default"], effects_gate_metrics(found))
    failed = [c for c in gate.checks if c.verdict == "fail"]
    assert gate.verdict == "fail" and gate.exit_code == 1
    assert [c.description for c in failed if c.estimate != "conclusive"] == ["control(neutral_words[identity])"]
    junit = write_junit(gate, tmp_path / "j.xml").read_text(encoding="utf-8")
    assert 'type="control"' in junit and 'type="material"' not in junit
    # written and read back, the record is the same
    again = type(found).from_dict(json.loads(json.dumps(found.to_dict())))
    assert again.control is not None and again.control["identity"].failed and again.control["identity"].words


def test_a_third_of_the_words_standing_out_fails_the_control() -> None:
    """Two of five neutral words +6: both stand out and leave the baseline, and with two of five the baseline itself
    is in doubt: the check fails naming them."""

    def score(word: str, i: int) -> float:
        return _base(i) + (0.06 if word in ("busy", "chatty") else 0.0) + _noise(word, i)

    found = slot_effects(_slots(score), seed=0, n_resamples=200)
    assert found is not None and found.control is not None
    control = found.control["identity"]
    assert control.standing_out == ("busy", "chatty") and control.failed and not control.unreliable
    assert "2 of 5 words" in control.message


def test_without_a_second_null_the_words_are_still_checked() -> None:
    def score(word: str, i: int) -> float:
        return _base(i) + (0.06 if word == "quiet" else 0.0) + _noise(word, i)

    found = slot_effects(_slots(score, nonce=False), seed=0, n_resamples=200)
    assert found is not None and found.control is not None
    control = found.control["identity"]
    assert control.second_null is None and control.agreement is None and control.standing_out == ("quiet",)
    off = slot_effects(_slots(score, nonce=False), seed=0, n_resamples=200, control=False)
    assert off is not None and off.control is None
    term = (off.identity_effect.by_term or {})["gay"] if off.identity_effect else None
    assert term is not None and term.value == pytest.approx(-0.012, abs=0.002)  # 'quiet' in the baseline: -6/5


def test_exit_codes_mean_one_thing() -> None:
    """1 a material finding or a failed control, 2 a rule not evaluated, 4 inconclusive only, 0 pass."""

    def check(estimate: str, verdict: str) -> GateCheck:
        return GateCheck(rule="r", metric="identity_effect", estimate=estimate, verdict=verdict)

    assert EXIT_CODES == {"pass": 0, "fail": 1, "error": 2, "inconclusive": 4}
    assert gate_verdict([check("material", "pass"), check("conclusive", "fail")]) == "inconclusive"
    assert gate_verdict([check("material", "fail"), check("conclusive", "fail")]) == "fail"
    assert gate_verdict([check("control", "fail"), check("conclusive", "pass")]) == "fail"
    assert gate_verdict([check("point", "fail")]) == "fail"
    assert gate_verdict([check("material", "error"), check("conclusive", "fail")]) == "error"
    assert gate_verdict([check("material", "pass")]) == "pass" and gate_verdict([]) == "error"
    assert set(DEFAULT_RULES) >= {"control(neutral_words[*])"} and CONCLUSIVE_RULES == (
        "conclusive(identity_effect[*])",
    )
    from counterfair.analysis.gate import parse_rule
    from counterfair.errors import ConfigError

    assert parse_rule("control(neutral_words[identity])").bound == "control"
    for wrong in ("material(neutral_words[*])", "control(identity_effect[*])", "conclusive(neutral_words)"):
        with pytest.raises(ConfigError, match=r"control\(neutral_words"):
            parse_rule(wrong)


def test_the_default_neutral_words_name_no_group_and_carry_no_sentiment() -> None:
    """Every default list of neutral words (the English placebo words, the gender words' neutral nouns, the LLM
    audit's, the nonce words): none a descriptor of HolisticBias v1.1 (the standard bias inventory), none in VADER's
    sentiment lexicon, none an identity term or a first name of a built-in pack."""
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    from counterfair.analysis.placebo import load_placebo
    from counterfair.commands.llm_audit.prompts import DEFAULT_PLACEBO
    from counterfair.editors.gender import PLACEBO_NOUNS
    from counterfair.lexicons.attributes import identity_set_in, load_identity_set

    placebo = load_placebo("en")
    assert placebo is not None
    lists = {
        "placebo": list(placebo.words),
        "gender": [w for pair in PLACEBO_NOUNS for w in pair],
        "llm": list(DEFAULT_PLACEBO),
        "nonce": list(NONCE_WORDS),
    }
    lexicon = SentimentIntensityAnalyzer().lexicon
    names = {n.lower() for n in load_identity_set("names").terms}
    terms = {t.lower() for t in identity_set_in(None, "en").terms}
    inventory = _holisticbias()
    for name, words in lists.items():
        assert not [w for w in words if w.lower() in lexicon], name
        assert not [w for w in words if w.lower() in names | terms], name
        if inventory is not None:
            assert not [w for w in words if w.lower() in inventory], name


def _holisticbias() -> set[str] | None:
    """HolisticBias v1.1's descriptors (../shared/data/holisticbias), None where the data set is not beside the
    checkout."""
    path = Path(__file__).resolve().parents[2] / "shared" / "data" / "holisticbias" / "descriptors.json"
    if not path.exists():
        return None
    found: set[str] = set()

    def walk(x: object) -> None:
        if isinstance(x, str):
            found.add(x.lower())
        elif isinstance(x, dict):
            if "descriptor" in x:
                found.add(str(x["descriptor"]).lower())
            else:
                for v in x.values():
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(json.loads(path.read_text(encoding="utf-8")))
    return found


def test_texts_needed_is_always_more_than_the_texts_held() -> None:
    """An effect near the threshold with the power already there (mde within 2 points) but its interval straddling 2
    points: inconclusive, and the texts that would settle it are more than the 400 held (the half-width shrinks as one
    over the square root of the texts)."""
    from counterfair.analysis.inference import conclude, estimates

    rng = np.random.default_rng(0)
    values = (0.021 + rng.normal(0.0, 0.02, size=400))[:, None]
    found, beyond = estimates(values.copy(), seed=0, n_resamples=200, margins=[(0.02, True)])
    done, _ = conclude(found, beyond, [(0.02, True)], [True])
    e = done[0]
    assert e.finding in ("inconclusive", "detected") and e.mde is not None and e.mde <= 0.02
    assert e.texts_needed is not None and e.texts_needed > 400
    assert e.sim_low is not None and e.sim_high is not None and e.value is not None
    half, gap = (e.sim_high - e.sim_low) / 2, abs(e.value - 0.02)
    assert e.texts_needed == max(int(np.ceil(400 * (half / gap) ** 2)), 401)


def test_the_verdict_and_the_gate_call_the_same_groups_inconclusive() -> None:
    """One definition (inference.UNSETTLED): the groups the verdict's headline calls inconclusive are exactly those
    whose conclusive(identity_effect[GROUP]) check fails, on a noisy model over the demo texts."""
    import counterfair as cf
    from counterfair.views.verdict import verdict

    demo = Path(cf.__file__).parent / "languages" / "en" / "demo_audit.csv"
    texts = pd.read_csv(demo)["text"].tolist()

    def noisy(batch: list[str]) -> np.ndarray:
        return np.array([0.3 + 0.08 * ((sum(map(ord, t)) % 13) / 13 - 0.5) for t in batch])

    result = cf.audit(texts, noisy, methods=["swap"])
    gate = result.check("default")
    failing = {c["group"] for c in gate["checks"] if c["estimate"] == "conclusive" and c["verdict"] == "fail"}
    said = verdict(result.typed_summary)
    unsettled = {f.group for f in said.findings if f.unsettled and f.level != "material"}
    assert failing and unsettled == failing
    assert said.status in ("inconclusive", "gate inconclusive") and gate["exit_code"] == 4


def test_a_vader_audit_of_wives_and_husbands_calls_neither_gender_material() -> None:
    """#79's done-when: VADER (a real sentiment model) over texts that name a wife or a husband. Against the old neutral
    nouns ("friend", which VADER scores +2.2) both genders read -6.2 points, material, identical to the decimal; with
    neutral nouns that carry no sentiment neither is material, and the control finds no word that stands out."""
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    analyzer = SentimentIntensityAnalyzer()

    def vader(texts: list[str]) -> np.ndarray:
        return np.array([(analyzer.polarity_scores(t)["compound"] + 1) / 2 for t in texts])

    acts = ["cooked dinner", "fixed the car", "read a book", "walked the dog", "painted the fence", "called the bank"]
    texts = [f"My {'wife' if i % 2 == 0 else 'husband'} {acts[i % 6]} on day {i}." for i in range(36)]
    import counterfair as cf

    result = cf.audit(texts, cf.as_classifier(vader, labels=["negative", "positive"]), methods=["swap"], bootstrap=300)
    effects = result.typed_summary.effects
    assert effects is not None and effects.identity_effect is not None and effects.control is not None
    groups = effects.identity_effect.by_group or {}
    for gender in ("gender_words:female", "gender_words:male"):
        assert groups[gender].finding != "material" and abs(groups[gender].value or 0.0) < 0.005
    assert effects.control["gender_words"].standing_out == () and not effects.control["gender_words"].failed
