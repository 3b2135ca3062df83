"""Evaluate's shell: ``counterfair evaluate`` into a run directory — checked before any work, the run's identity
claimed once the pairs are read (a rerun that differs is refused), ``rows.csv``, ``summary.json`` and the judge's raw
answers written when the evaluation ends (also when a stage raised: what finished is kept)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ...classifiers import CachedClassifier, load_classifier
from ...errors import CounterfairError
from ...io import input_sha256, row_strings
from ...needs import require
from ...progress import ProgressHook
from ...records import fingerprint, run_identity
from ...runs import claim_run_dir, holds_run_dir, prepare_run_dir
from ...writing import write_json, write_table
from .core import EvaluationResult, evaluate_core
from .options import EvaluateOptions


def claim_evaluation(
    target: Path,
    source: Any,
    frame: pd.DataFrame,
    opts: EvaluateOptions,
    classifier: CachedClassifier | None,
    origin: str,
    metrics: list[str],
) -> None:
    """The run directory's identity: options (not the performance knobs), input, and the classifier's identity when a
    metric uses it; a rerun that differs is refused, naming what differs (the rule of every command)."""
    identifying = run_identity(opts)
    rows = row_strings(frame)
    run_id: dict[str, Any] = {
        "options_fingerprint": fingerprint(identifying),
        "input_sha256": input_sha256(source, rows),
    }
    extra: dict[str, Any] = {"options": identifying, "input": origin}
    clf = None
    if {"flip", "prob_change"} & set(metrics):
        try:
            clf = classifier or load_classifier(opts.classifier_spec(), batch_size=opts.batch_size)
        except CounterfairError:
            clf = None  # reported by the classifier stage; the spec in the options identifies it meanwhile
    claim_run_dir(target, run_id, extra, what="evaluation", classifier=clf)


@holds_run_dir
def evaluate_pairs(
    source: str | Path | pd.DataFrame,
    options: EvaluateOptions | None = None,
    *,
    out_dir: str | Path | None = None,
    classifier: CachedClassifier | None = None,
    judge_llm: Any = None,
    progress: ProgressHook | None = None,
) -> EvaluationResult:
    """Evaluate a pair table (path or DataFrame); with ``out_dir``, write ``rows.csv`` and ``summary.json``.

    Pass ``classifier`` to reuse an already built (and cached) classifier, ``judge_llm`` an already loaded LLM
    for ``text_quality``. If an unexpected error stops the run, what finished is still written to ``out_dir`` (the
    error is listed in the summary) and the error propagates."""
    opts = options or EvaluateOptions()
    require(opts, classifier=classifier, llm=judge_llm)  # a missing extra is named before any work
    if out_dir is None:
        return evaluate_core(source, opts, classifier=classifier, judge_llm=judge_llm, progress=progress)
    target = prepare_run_dir(out_dir)  # before any work: a bad --out is found now, not after the metrics

    def claim(frame: pd.DataFrame, origin: str, metrics: list[str]) -> None:
        claim_evaluation(target, source, frame, opts, classifier, origin, metrics)

    def write(table: pd.DataFrame, summary: dict[str, Any], judgements: list[dict[str, Any]]) -> None:
        write_table(table, target / "rows.csv")
        write_json(summary, target / "summary.json")
        if judgements:
            write_table(pd.DataFrame(judgements), target / "text_quality.jsonl")

    result = evaluate_core(
        source, opts, classifier=classifier, judge_llm=judge_llm, progress=progress, claim=claim, write=write
    )
    result.out_dir = target
    return result
