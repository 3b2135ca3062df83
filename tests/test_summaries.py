"""Typed summaries (counterfair.summaries): each command's summary reads into its record and writes back as the same
JSON, key for key and in order; the attributes hold the values the JSON keys held; older and newer files are read
or refused clearly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import counterfair as cf
from counterfair.commands.audit.options import demo_path
from counterfair.commands.audit.page import audit_page
from counterfair.commands.ctf.page import ctf_page
from counterfair.errors import InputError
from counterfair.summaries import (
    AuditSummary,
    CTFSummary,
    Estimate,
    EvaluationSummary,
    FeedbackSummary,
    GapReport,
    MeanEstimate,
    read_summary,
)
from counterfair.views.page import to_console


def _toxic_if_gay(texts: list[str]) -> np.ndarray:
    return np.array([0.8 if "gay" in t.lower() else 0.1 + len(t) / 1000 for t in texts])


@pytest.fixture(scope="module")
def audited() -> Any:
    texts = pd.read_csv(demo_path())["text"].head(24).tolist()
    return cf.audit(texts, cf.as_classifier(_toxic_if_gay), methods=["ablation", "swap"], bootstrap=200)


def _same_json(record: Any, summary: dict[str, Any]) -> None:
    assert json.dumps(record.to_dict()) == json.dumps(summary)  # same keys, same order, same values


def test_an_audit_summary_round_trips_and_reads_by_attribute(audited: Any) -> None:
    summary = audited.summary
    s = audited.typed_summary
    assert isinstance(s, AuditSummary)
    _same_json(s, summary)
    first = summary["groups"][0]
    assert (s.groups[0].method, s.groups[0].attribute) == (first["method"], first["attribute"])
    assert s.groups[0].score_change.value == first["score_change"]["mean"]
    assert s.groups[0].score_change.ci_low == first["score_change"]["ci_low"]
    assert s.ctf is not None and s.ctf.value == summary["ctf"]["ctf_gap"] == audited.ctf_gap
    assert s.ctf.texts == summary["ctf"]["texts"] > 0
    gay = s.ctf.by_group["sexuality"] if s.ctf.by_group and "sexuality" in s.ctf.by_group else None
    assert gay is None or gay.value == summary["ctf"]["by_group"]["sexuality"]["ctf_gap"]
    assert s.placebo is not None and dict(s.placebo.set["words"]) == summary["placebo"]["set"]["words"]
    overall = s.effects.identity_effect.overall if s.effects is not None else None
    assert overall is not None and overall.value == summary["effects"]["identity_effect"]["overall"]["value"]
    assert s.classifier.spec == summary["classifier"]["spec"]
    gate = audited.check(["ctf_gap > 0.9", "flip_rate[*] > 0.5"])
    verdict = audited.typed_summary.gate
    assert verdict is not None and verdict.verdict == gate["verdict"] and verdict.exit_code == gate["exit_code"]
    assert [c.message for c in verdict.checks] == [c["message"] for c in gate["checks"]]
    _same_json(audited.typed_summary, audited.summary)


def test_a_saved_audit_reads_back_as_its_record(audited: Any, tmp_path: Path) -> None:
    audited.save(tmp_path / "run")
    record = read_summary(tmp_path / "run", expect="audit")
    assert isinstance(record, AuditSummary)
    _same_json(record, json.loads((tmp_path / "run" / "summary.json").read_text()))
    with pytest.raises(InputError, match="written by 'audit', not by counterfair ctf"):
        read_summary(tmp_path / "run", expect="ctf")


def test_ctf_evaluate_and_feedback_summaries_round_trip(tmp_path: Path) -> None:
    texts = ["Some people are gay.", "Some people are straight.", "My Muslim friend cooks.", "Rain again."]
    ctf = cf.ctf(texts, cf.as_classifier(_toxic_if_gay), guard=None, n_resamples=200)
    s = ctf.typed_summary
    assert isinstance(s, CTFSummary)
    _same_json(s, ctf.summary)
    assert s.value == ctf.summary["ctf_gap"] == ctf.ctf_gap and s.pairs == len(ctf.pairs)
    assert s.by_split is not None and set(s.by_split) == set(ctf.summary["by_split"])

    pairs = [("a good film", "a bad film"), ("good food", "bad food"), ("nice day", "nice day")]
    ev = cf.evaluate(pairs, ["distance", "bleu"])
    e = ev.typed_summary
    assert isinstance(e, EvaluationSummary)
    _same_json(e, ev.summary)
    assert e.metrics is not None and e.metrics["distance"].all.value == ev.summary["metrics"]["distance"]["all"]["mean"]
    assert e.counts.rows == 3

    edits = tmp_path / "edits.csv"
    pd.DataFrame({"orig_text": ["a good film"], "gen_text": ["a bad film"]}).to_csv(edits, index=False)
    fb = cf.feedback(["a good film"], f"external:{edits}", _toxic_if_gay, steps=1, ppl_model=None)
    f = fb.typed_summary
    assert isinstance(f, FeedbackSummary)
    _same_json(f, fb.summary)
    assert f.steps is not None and f.steps["1"].texts == fb.summary["steps"]["1"]["texts"] == 1
    assert f.editor.name == "external"


def test_records_made_in_code_write_their_json_keys() -> None:
    assert Estimate(value=0.1, ci_low=0.0, ci_high=0.2, n=5).to_dict() == {
        "value": 0.1,
        "ci_low": 0.0,
        "ci_high": 0.2,
        "n": 5,
    }
    made = MeanEstimate(value=0.3, n=2).to_dict()  # every field, missing values as null, as summary.json writes them
    assert made == {"mean": 0.3, "ci_low": None, "ci_high": None, "n": 2, "median": None}
    gap = GapReport.from_dict({"ctf_gap": 0.5, "texts": 2, "by_group": {"x": {"ctf_gap": 0.25}}, "note": "kept"})
    assert gap.value == 0.5 and gap.by_group is not None and gap.by_group["x"].value == 0.25
    assert gap.extra == {"note": "kept"} and gap.to_dict()["note"] == "kept"
    assert not GapReport.from_dict({}) and GapReport()  # an empty JSON object is falsy, as the dict was


def test_absent_fields_parts_set_later_and_declared_keys_kept_out_of_extra() -> None:
    from dataclasses import replace

    from counterfair.commands.feedback.page import feedback_page
    from counterfair.commands.generate.page import generate_page
    from counterfair.summaries import BiasSummary, GateVerdict, GenerateSummary, SuiteSummary

    metrics = BiasSummary(overall_auc=Estimate(value=0.9, n=4), groups={}, generalized_mean_power=-5)
    written = metrics.to_dict()  # a suite's bias section: the metrics alone, no run facts, no gate
    assert list(written)[:2] == ["overall_auc", "final_metric"] and "command" not in written and "gate" not in written
    labelled = replace(metrics, label_column="toxic", threshold=0.5).to_dict()  # an audit's: these two first
    assert list(labelled)[:3] == ["label_column", "threshold", "overall_auc"]
    assert metrics.has("overall_auc") and not metrics.has("gate") and replace(metrics, gate=GateVerdict()).has("gate")
    read = BiasSummary.from_dict(written)
    later = replace(read, command="bias").to_dict()  # a field set on a record read: after the keys it was read with
    assert list(later)[: len(written)] == list(written) and list(later)[-1] == "command"
    suite = SuiteSummary.from_dict({"input": {"cases": 3}, "counterfair_version": "9.9", "note": 1})
    assert suite.input == {"cases": 3} and suite.extra["note"] == 1
    with pytest.raises(KeyError, match="'input' is a field of SuiteSummary: read the attribute"):
        suite.extra.get("input")  # a declared key asked of extra: an error, not the default
    from counterfair.summaries import AuditSummary, PlaceboWords

    bare = AuditSummary(command="audit").to_dict()  # the sections a run adds later: left out until set
    assert not {"validity", "placebo", "effects", "coverage", "bias", "timing_s", "comparison", "gate"} & set(bare)
    placed = AuditSummary(command="audit", placebo=PlaceboWords(set={"name": "x"})).to_dict()
    assert placed["effects"] is None and list(placed)[-2:] == ["placebo", "effects"]  # with a placebo: null, written
    # the pages read the version and the input from the fields (read from extra they said "counterfair –")
    fed = feedback_page(FeedbackSummary.from_dict({"counterfair_version": "9.9", "command": "feedback"}))
    assert any("counterfair 9.9." in line for line in fed.meta)
    made = generate_page(GenerateSummary(counterfair_version="9.9", input="texts.csv", methods={}))
    assert any("Input texts.csv; counterfair 9.9." in line for line in made.meta)


def test_an_older_summary_reads_with_its_sections_missing(tmp_path: Path) -> None:
    old = {"schema_version": "1", "command": "audit", "classifier": {"spec": "x"}, "groups": []}
    (tmp_path / "summary.json").write_text(json.dumps(old))
    s = read_summary(tmp_path)
    assert isinstance(s, AuditSummary) and s.placebo is None and s.ctf is None and s.coverage is None
    assert not s.has("placebo") and s.has("groups")
    from rich.console import Console

    console = Console(record=True, width=100)
    console.print(to_console(audit_page(s)))  # a view of an older run: no placebo table, no CTF line, no crash
    shown = console.export_text()
    assert shown.startswith("Verdict: no text got an identity swap") and "Score change" not in shown  # no groups
    ctf_like = {"command": "ctf", "ctf_gap": None, "by_label": {}, "by_split": {}, "identities": {}}
    older = {**ctf_like, "identities": {"overlapping_terms": []}, "classifier": {"spec": "y"}}
    console.print(to_console(ctf_page(older)))  # its page in the console: no tables, the verdict says what is missing
    shown = console.export_text()
    assert "Verdict: CTF gap – over 0 texts" in shown and "Classifier y " in shown


def test_a_newer_or_broken_summary_is_refused(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text(json.dumps({"schema_version": "9", "command": "audit"}))
    with pytest.raises(InputError, match="written with schema_version '9', this counterfair reads '1'"):
        read_summary(tmp_path)
    with pytest.raises(InputError, match="AuditSummary: expected a JSON object, got list"):
        AuditSummary.from_dict([])  # type: ignore[arg-type]
