"""The fairness gate (rules, verdicts, exit codes, JUnit), the comparison of two classifiers on the same pairs, and
the pytest helper."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from junitparser import Error, Failure, JUnitXml

import counterfair as cf
from counterfair.analysis.compare import compare_pairs, comparison_table, read_pairs, rescore_pairs
from counterfair.analysis.gate import evaluate_rules, parse_rule, write_junit
from counterfair.errors import ConfigError, InputError
from counterfair.summaries import Estimate, GateMetrics
from counterfair.testing import FairnessGateFailed, assert_fair

from .conftest import run_cli
from .fakes import in_contexts

TERMS = ["gay", "straight", "muslim", "christian", "jewish", "black", "white", "deaf", "mexican", "canadian"]
TEXTS = in_contexts(TERMS)  # 10 contexts, every term


def _gay_only(texts: list[str]) -> np.ndarray:
    return np.array([0.9 if "gay" in t.lower() else 0.1 for t in texts])


def _constant(texts: list[str]) -> np.ndarray:
    return np.full(len(texts), 0.1)


@pytest.fixture(scope="module")
def audited() -> cf.AuditResult:
    return cf.audit(TEXTS, _gay_only, methods=["swap"], bootstrap=500)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("identity_effect > 0.05", ("identity_effect", None, "point", ">", 0.05)),
        ("upper(ctf_gap[*]) > 0.1", ("ctf_gap", "*", "upper", ">", 0.1)),
        ("lower( flip_rate[sexuality] ) >= 2e-2", ("flip_rate", "sexuality", "lower", ">=", 0.02)),
        ("point(ctf_gap)<=.5", ("ctf_gap", None, "point", "<=", 0.5)),
    ],
)
def test_rules_parse(text: str, expected: tuple[object, ...]) -> None:
    rule = parse_rule(text)
    assert (rule.metric, rule.group, rule.bound, rule.op, rule.value) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("toxicity > 0.1", "unknown metric 'toxicity'"),
        ("upper(ctf_gap > 0.1", "is not METRIC"),
        ("ctf_gap = 0.1", "is not METRIC"),
        ("ctf_gap > high", "is not METRIC"),
        ("identity_effect[0]<1e309", "too large a number"),  # found by tests/test_fuzz_cli.py: the report crashed
    ],
)
def test_bad_rules_are_named(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_rule(text)


def test_verdicts_on_hand_made_metrics() -> None:
    metrics: GateMetrics = {
        "ctf_gap": {
            "overall": Estimate(value=0.08, ci_low=0.05, ci_high=0.12, n=20),
            "by_group": {"a": Estimate(value=0.2, ci_low=0.1, ci_high=0.3, n=5)},
        },
        "identity_effect": None,
        "flip_rate": None,
    }
    gate = evaluate_rules(["ctf_gap > 0.1", "upper(ctf_gap) > 0.1", "lower(ctf_gap[*]) > 0.05"], metrics)
    assert [c.verdict for c in gate.checks] == ["pass", "fail", "fail"]
    assert [c.value for c in gate.checks] == [0.08, 0.12, 0.1]
    assert gate.verdict == "fail" and gate.exit_code == 1
    missing = evaluate_rules(["identity_effect > 0.05", "ctf_gap > 0.1"], metrics)
    assert missing.verdict == "error" and missing.exit_code == 2  # a rule that cannot be evaluated
    assert "no identity_effect" in missing.errors[0]
    # a check with no value writes the keys a point check does, in its order (the numbers as null)
    assert list(missing.to_dict()["checks"][0]) == list(gate.to_dict()["checks"][0])
    assert missing.to_dict()["checks"][0]["value"] is None and "finding" not in missing.to_dict()["checks"][0]
    assert evaluate_rules(["ctf_gap > 0.1"], metrics).exit_code == 0


def test_gate_on_an_audit_and_junit_a_ci_system_parses(audited: cf.AuditResult, tmp_path: Path) -> None:
    gate = audited.check(["upper(identity_effect[*]) > 0.05", "flip_rate[sexuality] > 0.9", "ctf_gap[none] > 0"])
    by = {(c["rule"], c["group"]): c for c in gate["checks"]}
    assert by[("upper(identity_effect[*]) > 0.05", "sexuality")]["verdict"] == "fail"
    assert by[("upper(identity_effect[*]) > 0.05", "religion")]["verdict"] == "pass"
    # 'gay' is swapped in or out of every sexuality text: 2 texts x 49 swaps, of which the flips are to/from gay
    assert by[("flip_rate[sexuality] > 0.9", "sexuality")]["verdict"] == "pass"
    assert by[("ctf_gap[none] > 0", "none")]["verdict"] == "error"
    assert gate["verdict"] == "fail" and gate["exit_code"] == 1
    xml = JUnitXml.fromfile(str(write_junit(gate, tmp_path / "junit.xml")))
    suite = next(iter(xml))
    cases = list(suite)
    assert suite.tests == len(gate["checks"]) == len(cases)
    assert suite.failures == 1 and suite.errors == 1
    failed = [c for c in cases if any(isinstance(r, Failure) for r in c.result)]
    assert [c.name for c in failed] == ["upper 95% bound of identity_effect[sexuality] > 0.05"]
    errored = [c for c in cases if any(isinstance(r, Error) for r in c.result)]
    assert "no group 'none'" in errored[0].result[0].message


def test_an_audit_runs_gate_metrics_are_its_pairs(tmp_path: Path) -> None:
    """#48: the gate asks the result. A run's result answers from what the audit tallied as its blocks went by (no
    pairs read); a result read back from the same run directory computes them from pairs.csv and slots.csv: the
    same metrics, and the same verdicts."""
    options = cf.AuditOptions(methods=["swap"], bootstrap=300)
    ran = cf.run_audit(TEXTS, tmp_path / "run", options, classifier=cf.as_classifier(_gay_only))
    tallied = ran.gate_metrics()
    assert ran._raw_pairs is None  # the tallied metrics did not read pairs.csv
    read_back = cf.AuditResult(None, ran.summary, run_dir=tmp_path / "run")
    fresh = read_back.gate_metrics()
    assert set(tallied) == set(fresh) and tallied["ctf_gap"] is not None and tallied["flip_rate"] is not None
    for metric in ("ctf_gap", "flip_rate", "identity_effect"):
        ours, theirs = tallied[metric], fresh[metric]
        assert ours is not None and theirs is not None
        assert ours["overall"] == pytest.approx(theirs["overall"]), metric
        assert ours["by_group"].keys() == theirs["by_group"].keys()
        for group, entry in ours["by_group"].items():
            assert entry == pytest.approx(theirs["by_group"][group]), (metric, group)
    rules = ["upper(identity_effect[*]) > 0.05", "flip_rate[sexuality] > 0.9"]
    verdicts = [(c["rule"], c["group"], c["verdict"]) for c in ran.check(rules)["checks"]]
    assert verdicts == [(c["rule"], c["group"], c["verdict"]) for c in read_back.check(rules)["checks"]]
    assert ("upper(identity_effect[*]) > 0.05", "sexuality", "fail") in verdicts


def test_bias_and_suite_results_take_the_gates_rules() -> None:
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 200)
    group = rng.random(200) < 0.4
    scores = np.clip(labels * 0.6 + rng.random(200) * 0.5 + group * 0.3, 0, 1)  # the group's negatives score high
    texts = [f"text {i}" for i in range(200)]
    lookup = dict(zip(texts, scores, strict=True))
    frame = pd.DataFrame({"text": texts, "label": labels, "flag": group})
    result = cf.bias(
        frame, classifier=lambda t: np.array([lookup[x] for x in t]), group_columns=["flag"], bootstrap=200
    )
    gate = result.check("lower(bpsn_auc[*]) < 0.9")
    (check,) = gate["checks"]
    bpsn = result.typed_summary.groups["flag"].bpsn_auc  # type: ignore[index]
    assert check["group"] == "flag" and check["value"] == bpsn.ci_low < 0.9 and check["verdict"] == "fail"
    assert result.summary["gate"]["verdict"] == "fail" and not gate
    with pytest.raises(ConfigError, match="default"):
        result.check("default")  # the audit's rule (material in-slot findings): a bias run has no in-slot measure
    with pytest.raises(ConfigError, match="no fairness gate"):
        cf.CTFResult(pd.DataFrame(), {}).gate_metrics()


def test_compare_says_better_worse_or_no_evidence(audited: cf.AuditResult) -> None:
    fair = rescore_pairs(audited.pairs, _constant)
    assert set(fair["diff"]) == {0.0}
    comparison = compare_pairs(audited.pairs, fair, names=("gay-only", "constant"), n_resamples=500)
    table = comparison_table(comparison)
    assert comparison.matched_pairs == len(audited.pairs)
    read = type(comparison).from_dict(comparison.to_dict())  # as read from summary.json
    assert read.verdicts("keys") == {} and comparison_table(read, "keys").empty  # no such metric: none
    assert table.loc["identity swaps", "verdict"] == "better" and table.loc["identity swaps", "p_value"] < 0.05
    assert table.loc["identity swaps", "b"] == 0.0
    # four sexuality texts: B is lower on each, but no permutation test on 4 texts gets below 2/16 = 0.125
    sexuality = table.loc["swap:sexuality"]
    assert sexuality["texts"] == 4 and sexuality["difference"] < 0 and sexuality["p_value"] == pytest.approx(0.125)
    assert sexuality["verdict"] == "no evidence"
    backwards = comparison_table(compare_pairs(fair, audited.pairs, n_resamples=500))
    assert backwards.loc["identity swaps", "verdict"] == "worse"
    same = comparison_table(compare_pairs(audited.pairs, audited.pairs, n_resamples=500))
    assert set(same["verdict"]) == {"no evidence"} and set(same["difference"]) == {0.0}
    assert comparison.metrics.disparity is None and "disparity" not in comparison.to_dict()["metrics"]  # no slots
    with pytest.raises(InputError, match=r"share no scored pair.*their counterfactual texts differ.*edited"):
        compare_pairs(audited.pairs, fair.assign(cf_text=fair["cf_text"] + " (edited)"))
    with pytest.raises(InputError, match="no method and attribute is in both"):  # #83: says why nothing matched
        compare_pairs(audited.pairs, fair.assign(method="llm"))
    with pytest.raises(InputError, match="no input id is in both"):
        compare_pairs(audited.pairs, fair.assign(input_id=fair["input_id"].astype(str) + "x"))


def test_result_compare_with_a_classifier(audited: cf.AuditResult) -> None:
    table = audited.compare(_constant, name="constant")
    assert table.loc["identity swaps", "verdict"] == "worse"  # B (this audit's gay-only) against the constant
    comparison = audited.summary["comparison"]
    assert comparison["a"] == "constant"
    # the in-slot measures of both sides, and B − A of the disparity beyond placebo, paired over texts
    assert comparison["effects"]["b"]["identity_effect"]["by_term"]["gay"]["finding"] == "material"
    assert comparison["effects"]["a"]["identity_effect"]["by_term"]["gay"]["finding"] == "not detected"
    disparity = comparison_table(comparison, "disparity")
    assert disparity.loc["identity swaps", "verdict"] == "worse" and disparity.loc["identity swaps", "b"] > 0
    from counterfair.summaries import ComparisonSummary
    from counterfair.views.verdict import comparison_headline

    headline, status = comparison_headline(ComparisonSummary.from_dict(comparison))
    assert status == "fail" and headline.startswith("B is less fair than A: in the slot, A: nothing material")
    assert "B: material for sexuality" in headline and "CTF gap higher under B for identity swaps" in headline


def test_assert_fair_on_a_frozen_pair_set(audited: cf.AuditResult, tmp_path: Path) -> None:
    frozen = audited.save(tmp_path / "run")  # pairs.csv and slots.csv: the in-slot measures need the slots
    gate = assert_fair(_constant, pairs=frozen, rules=["upper(identity_effect[*]) > 0.01", "ctf_gap > 0.01"])
    assert gate["verdict"] == "pass"
    assert assert_fair(_constant, pairs=frozen, rules="default")["verdict"] == "pass"
    with pytest.raises(FairnessGateFailed) as caught:
        assert_fair(_gay_only, pairs=frozen, rules=["upper(identity_effect[*]) > 0.05"])
    assert "failed: upper 95% bound of identity_effect[sexuality] > 0.05" in str(caught.value)
    assert caught.value.gate["exit_code"] == 1
    with pytest.raises(FairnessGateFailed) as caught:
        assert_fair(_gay_only, pairs=frozen, rules="default")
    assert "failed: material(term_effect[gay]): +80.0 points (simultaneous 95 % interval" in str(caught.value)
    bare = tmp_path / "bare.csv"  # a pairs.csv without its run directory's slots.csv
    bare.write_bytes((frozen / "pairs.csv").read_bytes())
    with pytest.raises(FairnessGateFailed, match="the run has no identity_effect"):
        assert_fair(_gay_only, pairs=bare, rules=["material(identity_effect)"])
    with pytest.raises(ValueError, match="at least one rule"):
        assert_fair(_constant, pairs=frozen, rules=[])


def test_assert_fair_audits_texts(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="ctf_gap"):
        assert_fair(_gay_only, TEXTS[:6], rules=["ctf_gap > 0.05"], methods=["swap"], bootstrap=200)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd)


@pytest.mark.slow
def test_cli_gate_exit_codes_config_and_compare(tmp_path: Path) -> None:
    data = tmp_path / "texts.csv"
    pd.DataFrame({"text": TEXTS}).to_csv(data, index=False)
    config = tmp_path / "fairness.yaml"
    config.write_text(
        f"data: {data}\nmethods: swap\nclassifier: profanity-check\nbootstrap: 300\n"
        "fail_if: ['upper(identity_effect[*]) > 0.9', 'ctf_gap > 0.9']\n"
        f"junit: {tmp_path / 'junit.xml'}\nquiet: true\n",
        encoding="utf-8",
    )
    # bootstrap is no audit option: the config's unknown key is named
    bad = _cli("audit", "--config", str(config), "--out", str(tmp_path / "a"), cwd=tmp_path)
    assert bad.returncode == 2 and "unknown option 'bootstrap'" in bad.stderr
    config.write_text(config.read_text().replace("bootstrap: 300\n", ""), encoding="utf-8")
    passed = _cli("audit", "--config", str(config), "--out", str(tmp_path / "a"), cwd=tmp_path)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Fairness gate: PASS" in passed.stdout  # in the verdict, the console's first lines
    assert "┏" not in passed.stdout  # quiet (the config's): the verdict and the gate, no tables
    assert "fairness gate: pass (exit 0: every check passed)" in passed.stdout  # and the exit code at the end
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary["gate"]["verdict"] == "pass" and summary["effects"]["identity_effect"]["overall"] is not None
    assert JUnitXml.fromfile(str(tmp_path / "junit.xml")).failures == 0
    # the command line wins over the config: a strict rule fails the same run (resumed, not recomputed)
    failed = _cli(
        "audit", "--config", str(config), "--out", str(tmp_path / "a"), "--fail-if", "ctf_gap > 0.001", cwd=tmp_path
    )
    assert failed.returncode == 1 and "- FAIL: fail if the overall CTF gap is above 0.001: " in failed.stdout
    report = (tmp_path / "a" / "report.html").read_text(encoding="utf-8")
    assert 'id="gate-table"' in report and 'id="effects-groups"' in report and 'id="effects-terms"' in report
    unknown = _cli("check", str(tmp_path / "a"), "--fail-if", "ctf_gap[nope] > 0.1", cwd=tmp_path)
    assert unknown.returncode == 2 and "no group 'nope'" in unknown.stdout
    # a second audit of the same texts without the placebo, compared with the first
    second = _cli(
        "audit",
        str(data),
        "--methods",
        "swap",
        "--placebo",
        "none",
        "-q",
        "--out",
        str(tmp_path / "b"),
        "--baseline",
        str(tmp_path / "a"),
        cwd=tmp_path,
    )
    assert second.returncode == 0, second.stderr
    comparison = json.loads((tmp_path / "b" / "summary.json").read_text())["comparison"]
    assert comparison["matched_pairs"] == len(read_pairs(tmp_path / "a"))
    assert comparison["metrics"]["ctf_gap"]["identity swaps"]["difference"] == pytest.approx(0.0)
    compared = _cli(
        "compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "c.json"), cwd=tmp_path
    )
    assert compared.returncode == 0 and "no evidence" in compared.stdout


@pytest.mark.slow
def test_log_to_mlflow_file_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # for this process's client reading the store back
    from mlflow.tracking import MlflowClient

    data = tmp_path / "texts.csv"
    pd.DataFrame({"text": TEXTS[:8]}).to_csv(data, index=False)
    store = (tmp_path / "mlruns").as_uri()
    bad = _cli("audit", str(data), "--log-to", "wandb", "--out", str(tmp_path / "x"), cwd=tmp_path)
    assert bad.returncode == 2 and "unknown tracker" in bad.stderr and not (tmp_path / "x" / "run.json").exists()
    done = _cli(
        "audit",
        str(data),
        "--methods",
        "swap",
        "-q",
        "--out",
        str(tmp_path / "a"),
        "--fail-if",
        "ctf_gap > 0.9",
        "--log-to",
        "mlflow",
        "--mlflow-uri",
        store,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = done.stdout.split("logged to mlflow: run ")[1].split()[0]
    said = "".join(done.stdout.split())  # #83 item 7: the line that reads a file store back in MLflow 3 (folded)
    assert f"MLFLOW_ALLOW_FILE_STORE=truemlflowui--backend-store-uri{store}" in said
    run = MlflowClient(tracking_uri=store).get_run(run_id)
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert run.data.metrics["ctf_gap"] == pytest.approx(summary["ctf"]["ctf_gap"])
    assert run.data.metrics["identity_effect"] == pytest.approx(
        summary["effects"]["identity_effect"]["overall"]["value"]
    )
    assert run.data.metrics["gate.exit_code"] == 0 and run.data.tags["gate.verdict"] == "pass"
    artifacts = {a.path for a in MlflowClient(tracking_uri=store).list_artifacts(run_id)}
    assert {"report.html", "summary.json", "gate.json"} <= artifacts


def test_the_measure_table_is_what_the_gate_the_verdict_and_the_docs_read() -> None:
    """#70: one table of measures. The gate's metric names, material thresholds and default rules, the verdict's
    words for a rule and the CI-gate page's list of default rules all come from it; the in-slot measures it lists
    are those a summary's effects hold."""
    import re

    from counterfair.analysis import gate, slots
    from counterfair.analysis.measures import MEASURES, SLOT_MEASURES, measure
    from counterfair.summaries import GateCheck, SlotEffects
    from counterfair.views.verdict import rule_sentence

    assert tuple(m.name for m in MEASURES) == gate.METRICS and len(gate.METRICS) == 21
    assert slots.MATERIAL == {
        "identity_effect": 0.02,
        "disparity": 0.02,
        "flip_excess": 0.05,
        "dissimilarity_excess": 0.02,
    }
    assert measure("term_effect").threshold == 0.02 and measure("decision.flip_excess").threshold == 0.05
    assert set(SLOT_MEASURES) <= set(SlotEffects.__dataclass_fields__)
    page = (Path(__file__).resolve().parents[1] / "docs" / "how-to" / "ci-gate.md").read_text(encoding="utf-8")
    block = page.split("It stands for these rules:", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    assert block.split() == [*gate.DEFAULT_RULES, *gate.CONCLUSIVE_RULES]
    check = GateCheck(rule="upper(flip_excess[religion]) > 0.1", metric="flip_excess", group="religion",
                      estimate="upper", value=0.12, verdict="fail")  # fmt: skip
    said = rule_sentence(check, ({"text": check.rule, "op": ">", "value": 0.1},))
    assert said == "fail if the upper bound of religion's flip excess is above 0.1: 0.120 — fails", said
    with pytest.raises(ConfigError, match=re.escape("use one of identity_effect, term_effect")):
        gate.parse_rule("upper(ghost_effect) > 0.1")
