"""Functional test suites (counterfair.commands.suite.core, counterfair suite): the template suite expands with correct
grammar and labels, accuracies and Wilson intervals equal hand computation and scipy, cells are ordered worst first, the
bias AUCs use the targets as groups, the gate reads the suite's metrics, and the command and assert_fair work end to
end."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

import counterfair as cf
from counterfair.commands.bias.core import BiasOptions, bias_core
from counterfair.commands.suite.core import indefinite, template_suite
from counterfair.lexicons.attributes import load_identity_set, resource_mapping
from counterfair.summaries import SuiteSummary, read_summary
from counterfair.testing import FairnessGateFailed, assert_fair

from .conftest import run_cli

# HateCheck's layout; the classifier below calls a case hateful when it holds "hate" or "vermin"
CASES = pd.DataFrame(
    [
        ("I hate Muslims.", "hateful", "expressed hatred", "Muslims"),
        ("I hate women.", "hateful", "expressed hatred", "women"),
        ("Muslims are vermin.", "hateful", "dehumanisation", "Muslims"),
        ("Women are a plague.", "hateful", "dehumanisation", "women"),  # missed
        ("I do not hate women.", "non-hateful", "negated hate", "women"),  # flagged: wrong
        ("I do not hate Muslims.", "non-hateful", "negated hate", "Muslims"),  # flagged: wrong
        ("The weather is nice.", "non-hateful", "neutral", None),  # no target
    ],
    columns=["test_case", "label_gold", "functionality", "target_ident"],
)


def keyword_classifier(texts: list[str]) -> np.ndarray:
    hateful = np.array([("hate" in t or "vermin" in t) for t in texts], dtype=float)
    return np.column_stack([1 - (0.1 + 0.8 * hateful), 0.1 + 0.8 * hateful])


def test_the_template_suite_expands_with_grammar_and_labels() -> None:
    spec = resource_mapping("suites", "templates")
    ids = load_identity_set("dixon50")
    frame = template_suite()
    per_term = 0
    for entry in spec["functionalities"].values():
        for template in entry["templates"]:
            lists = [w for w in ("positive", "negative") if w in template]
            per_term += sum(len(spec["words"][w]) for w in lists) or 1
    assert len(frame) == per_term * len(ids.terms) == 2150
    assert frame["case_id"].is_unique and frame["target_ident"].notna().all()
    assert set(frame["label_gold"]) == {"hateful", "non-hateful"}
    assert (frame.groupby("functionality")["label_gold"].nunique() == 1).all()  # one label per functionality
    cases = set(frame["test_case"])
    assert {
        "I am Muslim.",
        "As an LGBT person, I have an opinion on this.",
        "As a European, I have an opinion on this.",
    } <= cases
    assert {"You are an evil Jewish person.", "Gay people are not evil.", "Jews are vermin."} <= cases
    assert not any("{" in c or " a evil" in c or " a LGBT" in c for c in cases)
    assert all(c[0].isupper() for c in cases)  # a sentence-initial placeholder is capitalised
    assert [indefinite(w) for w in ("LGBTQ person", "Asian", "European", "Muslim", "hour")] == [
        "an LGBTQ person", "an Asian", "a European", "a Muslim", "an hour",
    ]  # fmt: skip


def test_accuracies_and_wilson_intervals_by_hand_worst_first() -> None:
    result = cf.suite(CASES, keyword_classifier, bootstrap=0)
    s = result.typed_summary
    assert isinstance(s, SuiteSummary) and s.accuracy.value == pytest.approx(4 / 7)
    low, high = binomtest(4, 7).proportion_ci(method="wilson")
    assert (s.accuracy.ci_low, s.accuracy.ci_high) == (pytest.approx(low), pytest.approx(high))
    functionalities = s.functionalities or {}
    assert list(functionalities) == ["negated hate", "dehumanisation", "expressed hatred", "neutral"]  # worst first
    assert [c.accuracy.value for c in functionalities.values()] == [0.0, 0.5, 1.0, 1.0]
    assert functionalities["negated hate"].n == 2 and functionalities["negated hate"].n_positive == 0
    assert all(c.few for c in functionalities.values())  # fewer than 10 cases each
    targets = s.targets or {}
    assert set(targets) == {"Muslims", "women"}  # the row without a target is in no group
    assert targets["women"].accuracy.value == pytest.approx(1 / 3) and targets[
        "Muslims"
    ].accuracy.value == pytest.approx(2 / 3)
    assert s.cells is not None and [(c.functionality, c.target, c.accuracy.value) for c in s.cells[:3]] == [
        ("dehumanisation", "women", 0.0), ("negated hate", "Muslims", 0.0), ("negated hate", "women", 0.0),
    ]  # fmt: skip
    assert list(result.by_functionality.index) == list(functionalities)
    assert result.rows["correct"].tolist() == [1, 1, 1, 0, 0, 0, 1]


def test_the_bias_aucs_use_the_targets_as_groups() -> None:
    result = cf.suite(CASES, keyword_classifier, bootstrap=0)
    y = np.array([1, 1, 1, 1, 0, 0, 0], dtype=float)
    scores = keyword_classifier(CASES["test_case"].tolist())[:, 1]
    target = CASES["target_ident"]
    members = {t: (target == t).to_numpy() for t in ("Muslims", "women")}
    expected = bias_core(y, scores, members, BiasOptions(bootstrap=0))
    assert expected.groups is not None
    assert result.summary["bias"]["groups"]["women"] == expected.groups["women"].to_dict()
    assert result.summary["bias"]["overall_auc"] == expected.overall_auc.to_dict()
    bias = result.bias
    assert bias is not None and list(bias.by_group.index) == ["Muslims", "women"]


def test_a_suite_without_targets_and_bad_input() -> None:
    result = cf.suite(CASES.drop(columns="target_ident"), keyword_classifier, target_column=None, bootstrap=0)
    s = result.typed_summary
    assert s.targets is None and s.bias is None and s.accuracy.value == pytest.approx(4 / 7)
    with pytest.raises(
        cf.InputError, match="missing column 'target_ident' \\(set with --target-column, or target_column= in Python\\)"
    ):
        cf.suite(CASES.drop(columns="target_ident"), keyword_classifier)
    bad = CASES.assign(label_gold=["hateful"] * 6 + ["maybe"])
    with pytest.raises(cf.InputError, match="row 6: label 'maybe'"):
        cf.suite(bad, keyword_classifier)
    with pytest.raises(cf.InputError, match="row 1 has no functionality"):
        cf.suite(CASES.assign(functionality=["a", None, "b", "c", "d", "e", "f"]), keyword_classifier)


def test_the_gate_and_assert_fair_on_suite_and_bias_metrics() -> None:
    with pytest.raises(FairnessGateFailed) as failed:
        assert_fair(keyword_classifier, cases=CASES, rules=["accuracy[*] < 0.5"], bootstrap=0)
    gate = failed.value.gate
    assert [c["group"] for c in gate["checks"] if c["verdict"] == "fail"] == ["negated hate"]
    assert assert_fair(keyword_classifier, cases=CASES, rules=["accuracy < 0.5", "target_accuracy[Muslims] < 0.6"],
                       bootstrap=0)["verdict"] == "pass"  # fmt: skip
    texts, labels = CASES["test_case"].tolist(), [1, 1, 1, 1, 0, 0, 0]
    with pytest.raises(FairnessGateFailed, match="overall_auc"):
        assert_fair(keyword_classifier, texts, labels=labels, rules=["overall_auc < 0.9"], bootstrap=0,
                    identities="dixon50")  # fmt: skip
    gate = assert_fair(keyword_classifier, texts, labels=labels, rules=["overall_auc < 0.5"], bootstrap=0)
    # 4 positives (0.9, 0.9, 0.9, 0.1) × 3 negatives (0.9, 0.9, 0.1): 3 + 0.5 won of 4 + ... = 6.5 of 12 pairs
    assert gate["checks"][0]["value"] == pytest.approx(6.5 / 12)
    with pytest.raises(cf.ConfigError, match="'treshold' \\(did you mean 'threshold'\\?\\)"):
        assert_fair(keyword_classifier, texts, labels=labels, rules=["overall_auc < 0.5"], treshold=0.4)
    with pytest.raises(ValueError, match="labels go with texts"):
        assert_fair(keyword_classifier, labels=labels, rules=["overall_auc < 0.5"])


@pytest.mark.slow
def test_the_command_end_to_end_with_the_built_in_suite(tmp_path: Path) -> None:
    out = tmp_path / "suite"
    done = run_cli(
        "suite", "run", "--out", str(out), "--bootstrap", "50", "-q",
        "--fail-if", "lower(accuracy[*]) < 0.3", "--junit", str(tmp_path / "gate.xml"),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]  # profanity-check misses dehumanisation: the gate fails
    s = read_summary(out, expect="suite")
    assert isinstance(s, SuiteSummary) and s.input["cases"] == 2150
    assert s.gate is not None and s.gate.verdict == "fail"
    failed = [c.group for c in s.gate.checks if c.verdict == "fail"]
    assert "dehumanisation" in failed
    rows = pd.read_csv(out / "rows.csv")
    assert len(rows) == 2150 and rows["correct"].mean() == pytest.approx(s.accuracy.value)
    suite = ET.parse(tmp_path / "gate.xml").getroot().find("testsuite")
    assert suite is not None and int(suite.get("failures", 0)) == len(failed)
    html = (out / "report.html").read_text()
    assert html.index('id="verdict"') < html.index("<table") and "Fairness gate: <b" in html
    assert "Verdict: accuracy" in (out / "report.md").read_text()
    assert done.stdout.index("Verdict: accuracy") < done.stdout.index("┏")  # the verdict before the first table
    (out / "report.html").unlink()
    again = run_cli("report", str(out))
    assert again.returncode == 0 and (out / "report.html").read_text() == html


def test_export_writes_the_template_suite(tmp_path: Path) -> None:
    done = run_cli("suite", "export", str(tmp_path / "suite.csv"))
    assert done.returncode == 0, done.stderr[-2000:]
    exported = pd.read_csv(tmp_path / "suite.csv")
    assert len(exported) == 2150 and {"test_case", "label_gold", "functionality", "target_ident"} <= set(exported)


def test_names_from_the_data_are_inert_in_report_md(tmp_path: Path) -> None:
    hostile = CASES.assign(functionality=["<script>alert(1)</script>"] * 2 + list(CASES["functionality"][2:]))
    result = cf.suite(hostile, keyword_classifier, bootstrap=0)
    result.save(tmp_path / "suite")
    report = (tmp_path / "suite" / "report.md").read_text(encoding="utf-8")
    assert "<script>" not in report and "&lt;script>alert(1)&lt;/script>" in report
    html = (tmp_path / "suite" / "report.html").read_text(encoding="utf-8")
    assert "<script>alert(1)" not in html


def test_hatechecks_ids_are_kept_the_background_is_said_and_a_functionality_below_the_overall_is_listed() -> None:
    """#49 item 10: rows.csv's case_id held the row number beside HateCheck's own ids; the report did not say that
    cases without a target are background in the AUCs; a functionality whose whole interval lay below the overall
    accuracy was not listed unless it also lay below the overall interval."""
    from counterfair.commands.bias.page import below
    from counterfair.commands.suite.page import suite_page
    from counterfair.summaries import Estimate

    cases = CASES.assign(case_id=[f"hc-{i * 7}" for i in range(len(CASES))])
    result = cf.suite(cases, keyword_classifier, bootstrap=0)
    assert result.rows["case_id"].tolist() == cases["case_id"].tolist()
    assert result.summary["input"]["id_column"] == "case_id" and result.summary["input"]["without_target"] == 1
    assert "(1 cases without a target are background in every group's AUCs)" in "\n".join(
        suite_page(result.summary).lines()
    )
    assert cf.suite(CASES, keyword_classifier, bootstrap=0).rows["case_id"].tolist()[:2] == ["0", "1"]  # no column
    overall = Estimate(value=0.436, ci_low=0.42, ci_high=0.45, n=3728)
    spell = Estimate(value=0.345, ci_low=0.269, ci_high=0.425, n=140)
    assert below({"spell_char_del_h": spell}, overall) == ["spell_char_del_h"]
