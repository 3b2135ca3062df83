"""The bias shell: ``counterfair bias`` into a run directory (``rows.csv``, ``summary.json``, ``report.md``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...classifiers import CachedClassifier
from ...io import input_sha256
from ...needs import require
from ...progress import NullProgress, ProgressHook
from ...records import fingerprint, run_identity
from ...runs import claim_run_dir, holds_run_dir, prepare_run_dir
from .core import (
    BiasOptions,
    bias_core,
    bias_rows,
    bias_summary,
    memberships,
    read_labelled,
    score_texts,
)
from .result import BiasResult


@holds_run_dir
def run_bias(
    source: Any,
    out_dir: str | Path,
    options: BiasOptions | None = None,
    *,
    classifier: CachedClassifier | None = None,
    progress: ProgressHook | None = None,
    rules: list[str] | None = None,
) -> BiasResult:
    """The shell: ``counterfair bias`` into ``out_dir`` (``rows.csv`` with each text's label, score and groups,
    ``summary.json``, ``report.md``)."""
    from ...analysis.gate import parse_rule
    from ...classifiers import load_classifier

    parsed = [parse_rule(r) for r in rules or []]  # a bad rule is found before any work
    opts = options or BiasOptions()
    require(opts, classifier=classifier)  # a missing extra is named before any work
    prepare_run_dir(out_dir)  # before any work
    read, gold = read_labelled(source, opts)
    texts = read.every_text("bias")
    clf = classifier if classifier is not None else load_classifier(opts.classifier, batch_size=opts.batch_size)
    from ...classifiers.remote import on_engine

    on_engine(clf, opts.engine, opts.address)
    identifying = run_identity(opts)
    run_id = {"options_fingerprint": fingerprint(identifying), "input_sha256": input_sha256(source, texts)}
    claim_run_dir(
        Path(out_dir), run_id, {"options": identifying, "input": read.origin}, what="bias run", classifier=clf
    )
    hook = progress or NullProgress()
    members = memberships(read.frame, texts, opts, read.origin, hook)
    scores = score_texts(clf, texts, opts, hook)
    summary = bias_summary(bias_core(gold, scores, members, opts, hook), opts, clf, read.origin, len(texts))
    result = BiasResult(bias_rows(read.ids, gold, scores, members), summary)
    if parsed:
        result.check(parsed)  # the gate asks the result for its metrics; the verdicts go into its summary
    result.save(out_dir)
    return result
