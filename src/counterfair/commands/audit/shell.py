"""The audit's shell: ``counterfair audit`` into a run directory — the input read and the directory claimed before any
work, classifier scores checkpointed batch by batch (``scores.jsonl``), each attribute's generation a resumable
generate run, then ``pairs.csv``, ``summary.json`` and the report."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...analysis.gate import expand_rules
from ...analysis.slots import SLOT_COLUMNS
from ...checkpoint import ScoreCheckpoint
from ...classifiers import CachedClassifier, load_classifier
from ...classifiers.base import relabel
from ...io import input_sha256
from ...labels import checked_positive_index
from ...needs import require
from ...progress import NullProgress, ProgressHook
from ...records import fingerprint, run_identity
from ...runs import claim_run_dir, holds_run_dir, prepare_run_dir
from ...summaries import AuditInput
from ...writing import csv_writer, write_json
from ..generate.shell import run_generate
from .core import audit_core, compared, pair_columns
from .options import AuditOptions, in_language, plan_frame, read_input
from .result import AuditResult


class ScoreCache:
    """Classifier probabilities per distinct text, appended to ``scores.jsonl`` batch by batch (a
    :class:`ScoreCheckpoint`: a torn last line is cut off and redone, a full disk is a clear error; in memory a
    digest of each text, not the text, in an index on disk)."""

    def __init__(self, path: Path, classifier: CachedClassifier, *, batch: int | None = None) -> None:
        self.path = path
        self.classifier = classifier
        self.batch = batch or classifier.batch_size  # every finished classifier batch is on disk at once
        self._file = ScoreCheckpoint(path)
        self._bar = False

    def score(self, texts: list[str], progress: ProgressHook) -> dict[str, list[float]]:
        """The probabilities of ``texts`` (only these: a run's cache holds millions), scoring those not yet cached;
        one progress bar for every call (the audit scores a block of pairs at a time), its total grown per call."""
        unique = list(dict.fromkeys(texts))
        todo = self._file.missing(unique)
        grow = getattr(progress, "grow", None)
        if self._bar and grow is not None:
            grow(len(todo))
        else:
            progress.start(f"classifier ({self.classifier.spec})", len(todo))
            self._bar = True
        for start in range(0, len(todo), self.batch):
            chunk = todo[start : start + self.batch]
            proba = self.classifier.predict_proba(chunk)
            self._file.add([{"text": t, "p": [float(x) for x in p]} for t, p in zip(chunk, proba, strict=True)])
            progress.advance(len(chunk))
        return self._file.probabilities(unique)

    def close(self) -> None:
        self._file.close()


def unscored_texts(target: Path, clf: Any) -> Path | None:
    """With precomputed scores (``scores:FILE``), the distinct texts the file lacks, read from the run's
    ``scores.jsonl`` (a resumed run's too), written to ``to_score.csv`` for the user to score (the first step of the
    two); None (and no file) when every text has its score or the classifier is another."""
    import json

    import pandas as pd

    from ...classifiers.adapters import ScoresClassifier
    from ...writing import write_table

    if not isinstance(getattr(clf, "inner", None), ScoresClassifier) or not (target / "scores.jsonl").exists():
        return None
    lacking: dict[str, None] = {}
    with (target / "scores.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            try:
                row = json.loads(line)
            except ValueError:
                continue  # a torn last line: the checkpoint redoes it
            if isinstance(row, dict) and any(p != p for p in row.get("p", ())):  # NaN: not in the file
                lacking[str(row.get("text", ""))] = None
    (target / "to_score.csv").unlink(missing_ok=True)
    return write_table(pd.DataFrame({"text": list(lacking)}), target / "to_score.csv") if lacking else None


def _give_back_freed_memory() -> None:
    """Return the heap the statistics freed to the system (glibc's ``malloc_trim``), so that the report's peak starts
    from what the run still holds, not from the high-water mark of its statistics; nothing where there is no glibc."""
    import ctypes
    import ctypes.util

    with contextlib.suppress(OSError, AttributeError, TypeError):  # musl, macOS, Windows: no malloc_trim
        ctypes.CDLL(ctypes.util.find_library("c")).malloc_trim(0)


def _write_both(write_pairs: Any, pairs: Any, write_slots: Any, slots: Any) -> None:
    write_pairs(pairs)
    write_slots(slots)


@holds_run_dir
def run_audit(
    source: Any,
    out_dir: str | Path,
    options: AuditOptions | None = None,
    *,
    progress: ProgressHook | None = None,
    classifier: CachedClassifier | None = None,
    rules: list[str] | None = None,
    baseline: str | None = None,
    on_plan: Callable[[AuditInput], None] | None = None,
) -> AuditResult:
    """The shell: run the audit into ``out_dir`` (resumable) and build its report; returns the result, its tables
    read from ``out_dir`` when first asked for.

    ``rules`` (:mod:`counterfair.analysis.gate`) add the summary's ``gate``; ``baseline`` (another audit's run
    directory or pairs.csv, or a classifier spec that scores this audit's pairs) adds its ``comparison``
    (:mod:`counterfair.analysis.compare`). Neither is part of the run's identity: a rerun with other rules resumes.
    ``on_plan`` is given the plan (texts, attributes, the estimate) as soon as the input is read, once, before the
    classifier loads: the command line prints it."""
    expand_rules(rules or [])  # a bad rule is found before any work
    opts = options or AuditOptions()
    require(opts, classifier=classifier)  # a missing extra is named before any work
    hook = progress or NullProgress()
    started = time.perf_counter()
    frame, origin = read_input(source, opts)
    opts = in_language(opts, frame)  # --language auto: read from the texts
    require(opts, classifier=classifier)  # the language read may need its extra (fr, de)
    the_plan = plan_frame(frame, opts, origin)  # bad input or options are named before the run directory is made
    prepare_run_dir(out_dir)  # before any work: a bad --out is found now
    if on_plan is not None:
        on_plan(the_plan)
    target = Path(out_dir)
    texts = frame["text"].tolist()
    input_hash = input_sha256(source, texts)
    clf = classifier if classifier is not None else load_classifier(opts.classifier, batch_size=opts.batch_size)
    clf = relabel(clf, opts.labels)  # --labels: checked against the classifier's classes before any work
    from ...classifiers.remote import on_engine

    on_engine(clf, opts.engine, opts.address)
    checked_positive_index(clf, texts[0], opts.positive_label)  # 3 labels need --positive-label: said before any work
    identifying = run_identity(opts)
    run_id = {"options_fingerprint": fingerprint(identifying), "input_sha256": input_hash}
    extra = {"options": {**identifying, "classifier": clf.spec}, "input": origin}
    claim_run_dir(target, run_id, extra, what="audit", classifier=clf)
    cache = ScoreCache(target / "scores.jsonl", clf)
    with (
        contextlib.closing(cache),
        csv_writer(target / "pairs.csv", pair_columns(opts)) as write_pairs,
        csv_writer(target / "slots.csv", SLOT_COLUMNS) as write_slots,
    ):  # each block of pairs and slots written as it is made; the files appear whole when the last is
        audited = audit_core(
            frame,
            opts,
            clf,
            plan_=the_plan,
            origin=origin,
            generate=lambda name, subset, o: run_generate(subset, target / "generate" / name, o, progress=hook),
            score=lambda texts: cache.score(texts, hook),
            started=started,
            sink=lambda pairs, slots: _write_both(write_pairs, pairs, write_slots, slots),
            scratch_dir=target,
        )
    unscored_texts(target, clf)
    # the result's gate reads the metrics the audit tallied as its blocks went by (and the labelled data's)
    result = AuditResult(None, audited.summary, run_dir=target, tallied=(audited.gate_metrics, audited.unscored))
    if rules:
        result.check(rules)
    if baseline:  # the comparison matches pairs and slots by their texts: read back from the tables just written
        from ...analysis.compare import read_pairs
        from ...analysis.slots import read_slots

        pairs, slots = read_pairs(target), read_slots(target)
        result.summary["comparison"] = compared(pairs, opts, baseline=baseline, spec=clf.spec, slots=slots).to_dict()
        del pairs, slots
    del audited  # the statistics' tallies, before the report reads its own
    _give_back_freed_memory()
    write_json(result.summary, target / "summary.json")
    from .page import report_page

    result.report_page = report_page(target)[0]  # built once: the report's files and what the command line prints
    return result
