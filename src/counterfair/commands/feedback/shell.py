"""Feedback's shell: ``counterfair feedback`` into a run directory — each text's chain of edits checkpointed as soon
as it is done (``.work/done.jsonl``; a rerun resumes), then ``steps.csv`` and ``summary.json``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...checkpoint import JsonlCheckpoint
from ...classifiers import CachedClassifier, load_classifier
from ...editors.base import EditorBase
from ...io import input_sha256
from ...needs import require
from ...progress import ProgressHook
from ...records import fingerprint, run_identity
from ...runs import claim_run_dir, holds_run_dir, prepare_run_dir
from ...views.page import write_summary_page
from ...writing import write_json, write_table
from .core import (
    ChainRecord,
    FeedbackOptions,
    FeedbackResult,
    build_editor,
    feedback_core,
    read_input,
    summary_json,
)
from .page import feedback_figures, feedback_page


@holds_run_dir
def run_feedback(
    source: Any,
    out_dir: str | Path,
    options: FeedbackOptions | None = None,
    *,
    editor: EditorBase | None = None,
    classifier: CachedClassifier | None = None,
    progress: ProgressHook | None = None,
) -> FeedbackResult:
    """The shell: the loop of :func:`feedback_core`, resumable in ``out_dir`` (each text's chain is checkpointed as
    soon as it is done); writes ``steps.csv`` (one row per text and step) and ``summary.json``."""
    opts = options or FeedbackOptions()
    require(opts, classifier=classifier, editor=editor)  # a missing extra is named before any work
    prepare_run_dir(out_dir)  # before any work: a bad --out is found now
    origin, ids, texts = read_input(source, opts)
    clf = classifier if classifier is not None else load_classifier(opts.classifier)
    ed = editor if editor is not None else build_editor(opts, clf)
    target = Path(out_dir)
    identifying = run_identity(opts)
    options_fingerprint = fingerprint(identifying, editor=ed.name, editor_params=ed.params())
    run_id = {"options_fingerprint": options_fingerprint, "input_sha256": input_sha256(source, texts)}
    extra = {"options": {**identifying, "classifier": clf.spec}, "input": origin}
    claim_run_dir(target, run_id, extra, what="feedback run", classifier=clf)
    checkpoint: JsonlCheckpoint[ChainRecord, ChainRecord] = JsonlCheckpoint(
        target / ".work" / "done.jsonl", key=lambda r: int(r["text_id"])
    )
    table, summary = feedback_core(texts, ids, ed, clf, opts, sink=checkpoint, origin=origin, progress=progress)
    written = summary_json(summary)
    write_table(table, target / "steps.csv")
    write_json(written, target / "summary.json")
    write_summary_page(target, feedback_page, feedback_figures)  # report.html, report.md: the verdict first
    return FeedbackResult(table, written)
