"""Unintended bias on labelled data (counterfair.commands.bias.core, counterfair bias): the AUCs equal scikit-learn's on
the same subsets, a perfect, an inverted and a one-class group give what hand computation says, the generalized mean,
the final metric and the equality differences are the published formulas, and the command writes them end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

import counterfair as cf
from counterfair.commands.bias.core import BiasOptions, bias_core
from counterfair.metrics import fairness as FM
from counterfair.summaries import BiasSummary, read_summary

from .conftest import run_cli

# 12 texts: background rows 0-5, group "perfect" 6-8 (ranked right), group "inverted" 9-11 (ranked backwards)
LABELS = np.array([1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0], dtype=float)
SCORES = np.array([0.9, 0.8, 0.4, 0.6, 0.2, 0.1, 0.95, 0.05, 0.15, 0.05, 0.9, 0.85])
PERFECT = np.arange(12) >= 6
PERFECT &= np.arange(12) < 9
INVERTED = np.arange(12) >= 9
ONLY_POSITIVE = np.isin(np.arange(12), [0, 1])


def test_the_aucs_are_scikit_learns_on_the_same_subsets() -> None:
    rng = np.random.default_rng(3)
    y, s = rng.integers(0, 2, 400).astype(bool), np.round(rng.random(400), 2)  # ties included
    member = rng.random(400) < 0.3
    for metric, rows in FM.bias_subsets(y, member).items():
        assert FM.auc(y[rows], s[rows]) == pytest.approx(roc_auc_score(y[rows], s[rows]), abs=1e-9), metric
    y_bpsn = np.concatenate([y[~member & y], y[member & ~y]])
    s_bpsn = np.concatenate([s[~member & y], s[member & ~y]])
    assert FM.auc(y, s) is not None and FM.auc(y_bpsn, s_bpsn) == pytest.approx(
        FM.auc(y[FM.bias_subsets(y, member)["bpsn_auc"]], s[FM.bias_subsets(y, member)["bpsn_auc"]])
    )


def test_a_perfect_an_inverted_and_a_one_class_group_by_hand() -> None:
    opts = BiasOptions(bootstrap=0)
    members = {"perfect": PERFECT, "inverted": INVERTED, "only_positive": ONLY_POSITIVE}
    out = bias_core(LABELS, SCORES, members, opts)
    assert out.groups is not None
    perfect, inverted, one_class = (out.groups[g] for g in members)
    assert perfect.subgroup_auc.value == 1.0  # 0.95 above 0.05 and 0.15
    assert inverted.subgroup_auc.value == 0.0  # 0.05 below 0.9 and 0.85
    # BPSN of "inverted": background positives 0.9, 0.8, 0.4, 0.95 against its negatives 0.9, 0.85:
    # pairs won 0.5 (0.9 vs 0.9) + 0 + 1 (0.95 > 0.9) ... = (0.5+1 + 0+0 + 0+0 + 1+1) / 8
    assert inverted.bpsn_auc.value == pytest.approx(3.5 / 8)
    assert one_class.subgroup_auc.value is None and one_class.bpsn_auc.value is None
    assert one_class.notes == ("no negative (non-toxic) text mentions the group: subgroup and BPSN AUC undefined",)
    assert out.groups_without_values == ("only_positive",)
    for name, member in members.items():
        for metric, rows in FM.bias_subsets(LABELS.astype(bool), member).items():
            expected = roc_auc_score(LABELS[rows], SCORES[rows]) if len(set(LABELS[rows])) == 2 else None
            assert getattr(out.groups[name], metric).value == (
                pytest.approx(expected, abs=1e-9) if expected is not None else None
            )
    assert out.overall_auc.value == pytest.approx(roc_auc_score(LABELS, SCORES), abs=1e-9)


def test_generalized_mean_final_metric_and_equality_differences_by_hand() -> None:
    assert FM.power_mean([0.9, 0.6]) == pytest.approx(((0.9**-5 + 0.6**-5) / 2) ** (-1 / 5))
    assert FM.power_mean([0.8, None]) == pytest.approx(0.8) and FM.power_mean([None]) is None
    assert FM.final_metric(0.9, [0.8, 0.7, 0.6]) == pytest.approx(0.25 * 0.9 + 0.75 * 0.7)
    predicted = SCORES >= 0.5
    # overall FPR: negatives 3,4,5,7,8,10,11 -> predicted positive 3 (0.6), 10, 11: 3/7; FNR: positives 0,1,2,6,9 ->
    # missed 2 (0.4), 9 (0.05): 2/5. Group "inverted": FPR 2/2, FNR 1/1; "perfect": FPR 0/2, FNR 0/1.
    fped, fned = FM.equality_differences(LABELS.astype(bool), predicted, {"p": PERFECT, "i": INVERTED})
    assert fped == pytest.approx(abs(3 / 7 - 0) + abs(3 / 7 - 1))
    assert fned == pytest.approx(abs(2 / 5 - 0) + abs(2 / 5 - 1))


def test_the_api_with_group_columns_intervals_and_the_typed_summary() -> None:
    rng = np.random.default_rng(0)
    n = 300
    labels = rng.integers(0, 2, n)
    group = rng.random(n) < 0.4
    scores = np.clip(labels * 0.6 + rng.random(n) * 0.5 + group * 0.3, 0, 1)  # the group scores higher: low BPSN
    texts = [f"text {i}" for i in range(n)]
    lookup = dict(zip(texts, scores, strict=True))
    frame = pd.DataFrame({"text": texts, "label": labels, "women": np.where(group, 0.8, 0.1), "flag": group})
    result = cf.bias(
        frame,
        classifier=cf.as_classifier(lambda t: np.array([lookup[x] for x in t])),
        group_columns=["women", "flag"],
        bootstrap=200,
    )
    s = result.typed_summary
    assert isinstance(s, BiasSummary) and json.dumps(s.to_dict()) == json.dumps(result.summary)
    women = s.groups["women"] if s.groups else None
    assert women is not None and women.n == int(group.sum())
    assert women.bpsn_auc.value is not None and women.bnsp_auc.value is not None
    assert women.bpsn_auc.value < women.bnsp_auc.value  # the group's negatives score like positives
    assert women.bpsn_auc.ci_low is not None and women.bpsn_auc.ci_low <= women.bpsn_auc.value <= women.bpsn_auc.ci_high
    flag = s.groups["flag"] if s.groups else None  # a 0.5 cut on the scores = the booleans
    assert flag is not None and (flag.n, flag.n_positive) == (women.n, women.n_positive)
    assert [flag.subgroup_auc.value, flag.bpsn_auc.value] == [women.subgroup_auc.value, women.bpsn_auc.value]
    assert result.overall["final_metric"] == pytest.approx(
        0.25 * s.overall_auc.value
        + 0.75 * np.mean([s.generalized_mean[m].value for m in ("subgroup_auc", "bpsn_auc", "bnsp_auc")])
    )
    assert list(result.by_group.index) == ["women", "flag"]


@pytest.mark.slow
def test_the_command_end_to_end_with_identity_terms(tmp_path: Path) -> None:
    data = tmp_path / "labelled.csv"
    rows = [("I am a gay man.", 0), ("Gay people are awful and stupid.", 1), ("I am a Muslim woman.", 0)]
    rows += [("Muslims are disgusting idiots.", 1), ("The weather is nice.", 0), ("You are a stupid idiot.", 1)]
    pd.DataFrame(rows, columns=["comment", "toxic"]).to_csv(data, index=False)
    done = run_cli(
        "bias", str(data), "--label-column", "toxic", "--text-column", "comment", "--bootstrap", "100",
        "--out", str(tmp_path / "run"), "-q",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    summary = read_summary(tmp_path / "run", expect="bias")
    assert isinstance(summary, BiasSummary) and summary.groups is not None
    assert summary.groups["sexuality"].n == 2 and summary.groups["religion"].n == 2
    assert summary.groups["age"].n == 0 and "age" in summary.groups_without_values  # named, not dropped
    assert "Verdict: overall AUC" in (tmp_path / "run" / "report.md").read_text()
    html = (tmp_path / "run" / "report.html").read_text()  # the verdict before the first table
    assert html.index("Verdict: overall AUC") < html.index("<table") and "age (no text mentions the group)" in html
    assert {"input_id", "label", "score", "group:sexuality"} <= set(pd.read_csv(tmp_path / "run" / "rows.csv").columns)
    missing = run_cli(
        "bias", str(data), "--label-column", "nope", "--text-column", "comment", "--out", str(tmp_path / "x")
    )
    assert (
        missing.returncode == 2
        and "missing column 'nope' (set with --label-column, or label_column= in Python)" in missing.stderr
    )


def test_gate_rules_on_the_bias_metrics(tmp_path: Path) -> None:
    from counterfair.analysis.gate import bias_gate_metrics, evaluate_rules

    out = bias_core(LABELS, SCORES, {"perfect": PERFECT, "inverted": INVERTED}, BiasOptions(bootstrap=0))
    gate = evaluate_rules(
        ["subgroup_auc[*] < 0.5", "final_metric < 0.1", "bpsn_auc[nope] < 0.5"], bias_gate_metrics(out)
    )
    verdicts = {(c.rule, c.group): c.verdict for c in gate.checks}
    assert verdicts[("subgroup_auc[*] < 0.5", "inverted")] == "fail"  # AUC 0 for the inverted group
    assert verdicts[("subgroup_auc[*] < 0.5", "perfect")] == "pass"
    assert verdicts[("final_metric < 0.1", None)] == "pass"
    assert verdicts[("bpsn_auc[nope] < 0.5", "nope")] == "error" and gate.verdict == "fail"
    no_bias = evaluate_rules(["bpsn_auc[*] < 0.8"], {"identity_effect": None})  # an audit's metrics
    message = no_bias.checks[0].message
    assert "the run has no bpsn_auc (labelled data: counterfair bias, audit --label-column" in message


def test_an_audit_with_a_label_column_carries_the_same_bias_metrics(tmp_path: Path) -> None:
    texts = ["I am a gay man.", "Gay people are awful.", "I am a Muslim woman.", "Muslims are disgusting."]
    texts += ["Some people are straight.", "Straight people are idiots.", "I am a Christian.", "Christians are stupid."]
    frame = pd.DataFrame({"text": texts, "toxic": [0, 1, 0, 1, 0, 1, 0, 1]})
    clf = cf.as_classifier(lambda t: np.array([0.9 if ("gay" in x.lower() or "awful" in x) else 0.2 for x in t]))
    audited = cf.audit(frame, clf, methods=["swap"], label_column="toxic", bootstrap=200, placebo=None)
    labelled = cf.bias(frame, classifier=clf, label_column="toxic", bootstrap=200)
    in_audit, alone = audited.typed_summary.bias, labelled.typed_summary
    assert in_audit is not None and in_audit.groups is not None and alone.groups is not None
    assert set(in_audit.groups) == set(alone.groups)
    for group, entry in alone.groups.items():  # the same scores, groups and labels: the same values
        for metric in ("subgroup_auc", "bpsn_auc", "bnsp_auc"):
            assert getattr(in_audit.groups[group], metric).value == getattr(entry, metric).value
    # BPSN for sexuality: the other groups' toxic texts (0.2, 0.2) against its non-toxic ones ("I am a gay man." 0.9,
    # "Some people are straight." 0.2): (0 + 0.5 + 0 + 0.5) / 4; a rule on it fails
    assert in_audit.groups["sexuality"].bpsn_auc.value == pytest.approx(
        roc_auc_score([1, 1, 0, 0], [0.2, 0.2, 0.9, 0.2])
    )
    assert in_audit.groups["sexuality"].bpsn_auc.value == pytest.approx(0.25)
    gate = audited.check(["bpsn_auc[sexuality] < 0.9"])
    assert gate["verdict"] == "fail"
    shown = "\n".join(markdown_lines(audited))
    assert "Labelled data (toxic):" in shown and "- overall AUC" in shown  # the labelled verdict, under its heading


def markdown_lines(result: object) -> list[str]:
    from counterfair.commands.audit.page import markdown

    return markdown(result.summary).splitlines()  # type: ignore[attr-defined]


def test_final_metric_and_generalized_means_have_joint_bootstrap_intervals() -> None:
    """Recomputed independently: the same resamples (the summary's own stream), scikit-learn's AUC per subset, the
    power mean and the final metric written out."""
    import zlib

    rng = np.random.default_rng(5)
    n = 120
    y = rng.integers(0, 2, n).astype(bool)
    s = np.round(rng.random(n), 3)
    members = {"a": rng.random(n) < 0.4, "b": rng.random(n) < 0.3}
    out = bias_core(y.astype(float), s, members, BiasOptions(bootstrap=30, seed=7))
    draws = np.random.default_rng([7, zlib.crc32(b"summary")])
    finals, bpsn_means = [], []
    for _ in range(30):
        pick = draws.integers(0, n, n)
        yy, ss = y[pick], s[pick]
        per: dict[str, list[float]] = {"subgroup_auc": [], "bpsn_auc": [], "bnsp_auc": []}
        for member in members.values():
            m = member[pick]
            for metric, rows in {"subgroup_auc": m, "bpsn_auc": (~m & yy) | (m & ~yy),
                                 "bnsp_auc": (~m & ~yy) | (m & yy)}.items():  # fmt: skip
                per[metric].append(roc_auc_score(yy[rows], ss[rows]))
        means = {k: np.mean(np.array(v) ** -5) ** (-1 / 5) for k, v in per.items()}
        bpsn_means.append(means["bpsn_auc"])
        finals.append(0.25 * roc_auc_score(yy, ss) + 0.75 * np.mean(list(means.values())))
    final = out.final_metric
    assert (final.ci_low, final.ci_high) == pytest.approx(tuple(np.percentile(finals, [2.5, 97.5])), abs=1e-9)
    assert out.generalized_mean is not None
    bpsn = out.generalized_mean["bpsn_auc"]
    assert (bpsn.ci_low, bpsn.ci_high) == pytest.approx(tuple(np.percentile(bpsn_means, [2.5, 97.5])), abs=1e-9)
    assert final.ci_low <= final.value <= final.ci_high and out.generalized_mean_power == -5  # type: ignore[operator]
    from counterfair.analysis.gate import bias_gate_metrics, evaluate_rules

    gate = evaluate_rules(["lower(final_metric) > 0.99", "generalized_mean[bpsn_auc] < 0.01"], bias_gate_metrics(out))
    values = {c.rule: (c.value, c.verdict) for c in gate.checks}
    assert values["lower(final_metric) > 0.99"] == (pytest.approx(final.ci_low), "pass")
    assert values["generalized_mean[bpsn_auc] < 0.01"] == (pytest.approx(bpsn.value), "pass")
