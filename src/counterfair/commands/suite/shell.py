"""The suite shell: ``counterfair suite run`` into a run directory (``rows.csv``, ``summary.json``, ``report.html``,
``report.md``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...classifiers import CachedClassifier
from ...io import input_sha256
from ...needs import require
from ...progress import NullProgress, ProgressHook
from ...records import fingerprint, run_identity
from ...runs import claim_run_dir, holds_run_dir, prepare_run_dir
from .core import SuiteOptions, read_suite, score_cases, suite_core, suite_rows, suite_summary
from .result import SuiteResult


@holds_run_dir
def run_suite(
    source: Any,
    out_dir: str | Path,
    options: SuiteOptions | None = None,
    *,
    classifier: CachedClassifier | None = None,
    progress: ProgressHook | None = None,
    rules: list[str] | None = None,
) -> SuiteResult:
    """``counterfair suite run`` into ``out_dir``: ``source`` a file of cases, or None for the built-in template
    suite."""
    from ...analysis.gate import parse_rule
    from ...classifiers import load_classifier

    parsed = [parse_rule(r) for r in rules or []]  # a bad rule is found before any work
    opts = options or SuiteOptions()
    require(opts, classifier=classifier)  # a missing extra is named before any work
    prepare_run_dir(out_dir)
    cases = read_suite(source, opts)
    clf = classifier if classifier is not None else load_classifier(opts.classifier, batch_size=opts.batch_size)
    from ...classifiers.remote import on_engine

    on_engine(clf, opts.engine, opts.address)
    identifying = run_identity(opts)
    run_id = {"options_fingerprint": fingerprint(identifying), "input_sha256": input_sha256(source, cases.texts)}
    claim_run_dir(
        Path(out_dir), run_id, {"options": identifying, "input": cases.origin}, what="suite run", classifier=clf
    )
    scores = score_cases(clf, cases.texts, opts, progress or NullProgress())
    summary = suite_summary(suite_core(cases.gold, scores, cases.functionality, cases.target, opts), opts, clf, cases)
    result = SuiteResult(suite_rows(cases, scores, opts), summary)
    if parsed:
        result.check(parsed)  # the gate asks the result for its metrics; the verdicts go into its summary
    result.save(out_dir)
    return result
