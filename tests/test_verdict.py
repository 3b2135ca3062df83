"""The answer first (counterfair.views.verdict): an audit's verdict in plain words at the top of report.html and
report.md, in the first lines of the console and at the head of the notebook view; gate rules as sentences."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import counterfair as cf
from counterfair.commands.audit.options import demo_path
from counterfair.commands.audit.page import markdown
from counterfair.summaries import GateCheck
from counterfair.views.verdict import rule_sentence, verdict

from .conftest import run_cli


def _toxic_if_gay(texts: list[str]) -> np.ndarray:
    return np.array([0.9 if "gay" in t.lower() else 0.05 for t in texts])


def _estimate(value: float, low: float, high: float, finding: str, **more: Any) -> dict[str, Any]:
    """An in-slot estimate whose 95 % and simultaneous intervals are both ``low`` to ``high``."""
    p = 0.001 if finding != "not detected" else 0.4
    return {"value": value, "ci_low": low, "ci_high": high, "sim_low": low, "sim_high": high, "mde": 0.015, "n": 20,
            "texts_needed": 14, "p_adjusted": p, "finding": finding, **more}  # fmt: skip


def _summary(**sections: Any) -> dict[str, Any]:
    return {"command": "audit", "classifier": {"spec": "x"}, "positive_label": "toxic", "groups": [], **sections}


def _effects(groups: dict[str, Any], terms: dict[str, Any]) -> dict[str, Any]:
    quiet = _estimate(0.0, -0.01, 0.01, "not detected")
    return {
        "alpha": 0.05, "correction": "bonferroni", "tests": 12, "texts": 20, "slots": 22, "placebo_words": 25,
        "material": {"identity_effect": 0.03, "disparity": 0.03, "flip_excess": 0.05},
        "identity_effect": {"overall": _estimate(0.01, 0.0, 0.02, "small"), "by_group": groups, "by_term": terms},
        "disparity": {"overall": quiet, "by_group": {g: quiet for g in groups}},
        "flip_excess": {"overall": quiet, "by_group": {g: quiet for g in groups}},
    }  # fmt: skip


def test_the_verdict_names_material_groups_first_with_the_terms_that_drive_them() -> None:
    groups = {
        "religion": _estimate(0.001, -0.01, 0.012, "not detected"),
        "age": _estimate(0.02, 0.005, 0.04, "small"),
        "sexuality": _estimate(0.09, 0.05, 0.13, "material"),
        "race_ethnicity": _estimate(-0.004, -0.01, 0.002, "not detected"),
    }
    terms = {
        "gay": _estimate(0.5, 0.4, 0.6, "material", group="sexuality"),
        "straight": _estimate(0.0, -0.01, 0.01, "not detected", group="sexuality"),
        "old": _estimate(0.02, 0.01, 0.03, "small", group="age"),
        "black": _estimate(-0.06, -0.08, -0.04, "material", group="race_ethnicity"),
    }
    v = verdict(_summary(effects=_effects(groups, terms)))
    assert v.status == "unfair"
    # a group is material when one of its terms is: race_ethnicity's average is near 0, "black" is scored lower
    assert v.headline.startswith("material identity effects for sexuality, race_ethnicity (2 of 4 groups)")
    assert [f.group for f in v.findings] == ["sexuality", "race_ethnicity", "age", "religion"]
    assert [f.level for f in v.findings] == ["material", "material", "small", "not detected"]
    assert v.findings[0].sentence() == (
        'sexuality — MATERIAL: naming "gay" raises P(toxic) by 50.0 points (simultaneous 95 % interval +40.0 to '
        "+60.0) compared with a neutral word in the same place; its 2 terms on average +9.0 (+5.0 to +13.0)."
    )
    # the direction, and the interval the label was read off
    assert 'naming "black" lowers P(toxic) by 6.0 points (simultaneous 95 % interval -8.0 to -4.0)' in (
        v.findings[1].sentence()
    )
    two = verdict(_summary(effects=_effects(groups, {**terms, "lesbian": _estimate(0.3, 0.2, 0.4, "material",
                                                                                 group="sexuality")})))  # fmt: skip
    assert '+60.0), "lesbian" +30.0 (+20.0 to +40.0) compared with a neutral word' in two.findings[0].sentence()
    assert "its 1 term on average -0.4 (-1.0 to +0.2)" in v.findings[1].sentence()
    assert v.findings[2].sentence().startswith("age — detectable but small: naming")
    assert "over the 12 estimates (Bonferroni)" in v.basis and "25 neutral words" in v.basis
    # the groups with nothing to say are one line
    assert [f.group for f in v.shown_findings] == ["sexuality", "race_ethnicity", "age"]
    assert v.grouped_lines() == [
        "no material effect — religion: each shown within ±1.2 points (simultaneous 95 % intervals), with the power "
        "to see 2 points."
    ]
    small = verdict(_summary(effects=_effects({"age": groups["age"]}, {"old": terms["old"]})))
    assert small.status == "small effects" and small.headline.startswith(
        "detectable but small identity effects for age"
    )
    none = verdict(_summary(effects=_effects({"religion": groups["religion"]}, {})))
    assert none.status == "no evidence of unfairness"
    assert none.headline == (
        "no material identity effect in 1 group over 20 texts: group effects beyond ±1.2 points are ruled out."
    )
    unsure = {"religion": _estimate(0.001, -0.03, 0.032, "inconclusive")}
    open_question = verdict(_summary(effects=_effects(unsure, {})))
    assert open_question.status == "inconclusive" and "ruled out" not in open_question.headline
    assert "about 14 texts would" in open_question.findings[0].sentence()
    assert open_question.grouped_lines()[0] == (
        "INCONCLUSIVE — too few texts to show or rule out a material effect: religion (20 texts, about 14 needed)."
    )
    ctf_only = verdict(_summary(ctf={"ctf_gap": 0.2, "ci_low": 0.1, "ci_high": 0.3, "texts": 9}))
    assert ctf_only.status == "no placebo" and ctf_only.headline.startswith("CTF gap 0.200 [0.100, 0.300]")
    assert verdict(_summary()).status == "no identity swaps"


def test_gate_rules_read_as_sentences() -> None:
    rules = ({"text": "upper(identity_effect[sexuality]) > 0.05", "op": ">", "value": 0.05},)
    check = GateCheck(
        rule=rules[0]["text"],
        metric="identity_effect",
        group="sexuality",
        estimate="upper",
        verdict="fail",
        value=0.093,
    )
    assert rule_sentence(check, rules) == (
        "fail if the upper bound of sexuality's identity effect is above 0.05: 0.093 — fails"
    )
    overall = GateCheck(rule="ctf_gap <= 0.1", metric="ctf_gap", estimate="point", verdict="error", message="no swap")
    assert rule_sentence(overall, ({"text": "ctf_gap <= 0.1", "op": "<=", "value": 0.1},)) == (
        "fail if the overall CTF gap is at or below 0.1: could not be evaluated (no swap)"
    )
    # an LLM audit's rule names its outcome (two outcomes' "religion's identity effect" read the same before)
    for metric, group, said in (
        ("decision.identity_effect", "religion", "fail if religion's identity effect on the decision is material"),
        ("rating.term_effect", "Black", 'fail if "Black" effect on the rating is material'),
        ("cosine.dissimilarity_excess", "age", "fail if age's dissimilarity excess in cosine similarity is material"),
    ):
        text = f"material({metric}[{group}])"
        llm = GateCheck(rule=text, metric=metric, group=group, estimate="material", verdict="error", message="none")
        assert rule_sentence(llm, ({"text": text},)) == f"{said}: could not be evaluated (none)"


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    texts = pd.read_csv(demo_path())["text"].head(30).tolist()
    result = cf.audit(texts, cf.as_classifier(_toxic_if_gay), methods=["swap"], bootstrap=200)
    result.check(["upper(identity_effect[*]) > 0.05"])
    return result, result.save(tmp_path_factory.mktemp("run") / "audit")


def test_the_report_opens_with_the_verdict_and_states_a_failed_gate(gated: tuple[Any, Path]) -> None:
    result, target = gated
    assert result.summary["gate"]["verdict"] == "fail"  # "gay" texts score 0.9: sexuality's effect is large
    page = (target / "report.html").read_text()
    block = page[page.index('<section id="verdict"') : page.index("</section>")]
    assert page.index('<section id="verdict"') < page.index("<table")  # before the first table
    assert "Fairness gate: <b" in block and ">FAIL</b>" in block
    assert re.search(
        r"FAIL: fail if the upper bound of sexuality&#39;s identity effect is above 0\.05: 0\.\d+ — fails", block
    )
    assert "Verdict: material identity effects for sexuality" in block
    assert "naming &#34;gay&#34; raises P(1) by 85.0 points" in block  # the term that drives it, with its direction
    # #83 item 9: a forest plot of the groups' effects right after the headline, before the findings
    assert block.index("Verdict:") < block.index('<figure id="fig-forest">') < block.index('<ul class="findings">')
    assert 'alt="A forest plot of identity effects' in block and (target / "plots" / "forest.svg").exists()
    assert page.count('id="fig-forest"') == 1
    report_md = (target / "report.md").read_text().splitlines()
    assert (
        report_md[2].startswith("Verdict: material identity effects for sexuality")
        and "Fairness gate: FAIL" in report_md
    )
    assert report_md.index("Fairness gate: FAIL") < min(
        i for i, line in enumerate(report_md) if line.startswith("## Score change by method and attribute")
    )
    # one name for the per-group CTF gap, defined where it is shown (#49 item 8)
    heading = report_md.index("| group of the original word | texts | swaps | CTF gap [95% CI] |")
    above = report_md[heading - 6 : heading]
    assert any(line.startswith("Per group: the CTF gap of the swaps whose") for line in above)
    assert '<th class="l">group of the original word</th>' in page and "Per group: the CTF gap of the swaps" in page
    assert result._repr_html_().index("Verdict:") < result._repr_html_().index("<table")  # the notebook view
    assert markdown(result.summary).splitlines()[2] == report_md[2]


@pytest.mark.slow
def test_the_console_opens_with_the_verdict(tmp_path: Path) -> None:
    done = run_cli("audit", "--demo", "--out", str(tmp_path / "run"), "--fail-if", "default", "-q")
    assert done.returncode == 1, done.stderr[-2000:]  # profanity-check reacts to "queer", "gay", "homosexual"
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    verdict_at = min(i for i, line in enumerate(lines) if line.startswith("Verdict:"))
    assert verdict_at < min(i for i, line in enumerate(lines) if line.startswith(("┏", "done in")))
    assert lines[verdict_at].startswith("Verdict: material identity effects for sexuality")
    # at 80 columns: the findings (natural groups, then those written in by probe), the inconclusive, probe,
    # no-effect and UNEVEN lines, then the gate
    assert any(line.startswith("Fairness gate: FAIL") for line in lines[verdict_at : verdict_at + 110])
    assert (
        "fairness gate: fail (exit 1: a material finding or a failed control)" in lines[-4:]
    )  # the exit code at the end, before "done in"
    assert 'naming "queer" raises P(toxic)' in " ".join(lines[verdict_at : verdict_at + 30])  # it drives sexuality


@pytest.mark.slow
def test_piped_console_tables_keep_every_name(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    done = subprocess.run(
        [sys.executable, "-m", "counterfair.cli", "audit", "--demo", "--out", str(tmp_path / "run")],  # tables
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "…" not in done.stdout  # rich truncated names at 80 columns in a pipe ("race_ethni…")
    assert re.search(r"│ race_ethnicity +│", done.stdout)


def test_the_first_line_says_when_the_built_in_classifier_was_audited_on_the_users_data() -> None:
    """#49 item 5: without --classifier, an audit of the user's data audited profanity-check with one console line."""
    effects = _effects({"sexuality": _estimate(0.09, 0.05, 0.13, "material")}, {})
    builtin = {"classifier": {"spec": "profanity-check"}, "effects": effects}
    mine = verdict(_summary(**builtin, input={"source": "comments.csv"}))
    assert mine.lines()[0].startswith(
        "Verdict: for the built-in profanity-check classifier (a bag-of-words toxicity model; to audit your own, "
        "name it with --classifier, classifier= in Python): material identity effects for sexuality"
    )
    demo = verdict(_summary(**builtin, input={"source": str(demo_path())}))
    assert demo.lines()[0].startswith("Verdict: material identity effects for sexuality")
    own = verdict(_summary(effects=effects, input={"source": "comments.csv"}))  # classifier "x": the user's own
    assert own.lines()[0].startswith("Verdict: material identity effects for sexuality")


def test_a_gate_message_counts_prompts_in_an_llm_audit_and_texts_in_a_classifier_audit() -> None:
    from counterfair.analysis.gate import points_message

    check = GateCheck(value=-0.009, sim_low=-0.176, sim_high=0.158, finding="inconclusive", mde=0.201, n=20)
    llm = points_message(replace(check, metric="decision.identity_effect", texts_needed=1568))
    assert llm == (
        "-0.9 points (simultaneous 95 % interval -17.6 to +15.8; smallest detectable 20.1 points over 20 prompts, "
        "about 1,568 would settle it)"
    )
    assert "over 20 texts" in points_message(replace(check, metric="identity_effect"))
    one = GateCheck(value=0.05, n=1, metric="identity_effect")
    assert points_message(one) == "+5.0 points (no interval from 1 text)"
