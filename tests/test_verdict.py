"""The answer first (counterfair.views.verdict): an audit's verdict in plain words at the top of report.html and
report.md, in the last lines of the console and at the head of the notebook view; gate rules as sentences."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import counterfair as cf
from counterfair.core.audit import demo_path
from counterfair.summaries import GateCheck
from counterfair.views.report import markdown
from counterfair.views.verdict import rule_sentence, verdict

from .conftest import run_cli


def _toxic_if_gay(texts: list[str]) -> np.ndarray:
    return np.array([0.9 if "gay" in t.lower() else 0.05 for t in texts])


def _effect(value: float, low: float, high: float, exceeds: bool) -> dict[str, Any]:
    return {"identity_effect": value, "ci_low": low, "ci_high": high, "texts": 20, "exceeds_placebo": exceeds}


def _summary(**sections: Any) -> dict[str, Any]:
    return {"command": "audit", "classifier": {"spec": "x"}, "groups": [], **sections}


def test_the_verdict_names_the_groups_above_the_placebo_largest_first() -> None:
    placebo = {
        **_effect(0.02, 0.01, 0.03, True),
        "by_group": {
            "religion": _effect(0.001, -0.01, 0.012, False),
            "age": _effect(0.02, 0.005, 0.04, True),
            "sexuality": _effect(0.09, 0.05, 0.13, True),
        },
    }
    v = verdict(_summary(placebo=placebo))
    assert v.status == "unfair"
    assert v.headline.endswith("for sexuality, age (2 of 3 groups).")
    assert [f.group for f in v.findings] == ["sexuality", "age", "religion"]
    assert (
        v.findings[0].sentence() == "sexuality: identity effect +0.090 [0.050, 0.130] over 20 texts — above the placebo"
    )
    assert "not shown to exceed the placebo" in v.findings[2].sentence()
    none_above = {**placebo, "by_group": {"religion": _effect(0.001, -0.01, 0.012, False)}}
    assert verdict(_summary(placebo=none_above)).status == "no evidence of unfairness"
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
    assert "Verdict: the classifier&#39;s scores change with the identity mentioned" in block and "sexuality" in block
    report_md = (target / "report.md").read_text().splitlines()
    assert report_md[2].startswith("Verdict: the classifier's scores change") and "Fairness gate: FAIL" in report_md
    assert report_md.index("Fairness gate: FAIL") < report_md.index(
        "| method | attribute | with counterfactual | mean change [95% CI] | mean abs change | flips |"
    )
    assert result._repr_html_().index("Verdict:") < result._repr_html_().index("<table")  # the notebook view
    assert markdown(result.summary).splitlines()[2] == report_md[2]


def test_the_console_ends_with_the_verdict(tmp_path: Path) -> None:
    done = run_cli("audit", "--demo", "--out", str(tmp_path / "run"), "--fail-if", "upper(identity_effect[*]) > 0.05")
    assert done.returncode == 1, done.stderr[-2000:]
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    verdict_at = max(i for i, line in enumerate(lines) if line.startswith("Verdict:"))
    assert verdict_at > max(i for i, line in enumerate(lines) if line.startswith(("PASS", "FAIL", "done in")))
    assert any(line.startswith("Fairness gate: FAIL (exit 1)") for line in lines[verdict_at:])


def test_piped_console_tables_keep_every_name(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    done = subprocess.run(
        [sys.executable, "-m", "counterfair.cli", "audit", "--demo", "--out", str(tmp_path / "run"), "-q"],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "…" not in done.stdout  # rich truncated names at 80 columns in a pipe ("race_ethni…")
    assert re.search(r"│ race_ethnicity +│", done.stdout)
