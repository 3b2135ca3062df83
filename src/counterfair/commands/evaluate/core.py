"""``counterfair evaluate``: score (original, counterfactual[, second counterfactual]) pairs.

Every input row appears in ``rows.csv``, in input order, with a ``status``:

* ``ok`` — every requested metric that applies to the row was computed;
* ``partial`` — some metric could not be computed for this row (``notes`` says which and why);
* ``skipped:<reason>`` — the row cannot be scored at all (missing or empty text).

Rows are never dropped, so denominators are explicit: aggregates say how many rows they cover. A stage
that fails as a whole (a classifier that raises, a model that is not installed) is recorded in
``summary.json`` under ``errors``, its columns stay empty, and everything else is still written.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from ... import __version__
from ...classifiers import CachedClassifier
from ...errors import ConfigError, InputError
from ...io import TextInput, cell_text, file_sha256, read_texts
from ...metrics import functional as F
from ...metrics.cards import CARDS
from ...progress import NullProgress, ProgressHook
from ...records import options_signature
from ...results import TableResult
from ...summaries import EvaluationCounts, EvaluationSummary, MeanEstimate, MetricAggregate, StageError
from ...writing import missing_as_nan, nan_to_none
from .options import EvaluateOptions
from .stages import (
    STAGE_COST,
    EvaluateRun,
    Rows,
    StageContext,
    card_stages,
    start_run,
    text_stages,
)


@dataclass
class EvaluationResult(TableResult[EvaluationSummary]):
    """``rows`` (one per input pair: status, labels, every metric), ``summary`` (as ``summary.json``), ``metrics``
    (one row per metric: n, mean, CI, median), ``by_group`` (metric means per ``group_column`` value)."""

    rows: pd.DataFrame
    summary: dict[str, Any]
    out_dir: Path | None = None

    _summary_type = EvaluationSummary

    @property
    def metrics(self) -> pd.DataFrame:
        table = {name: entry.all.to_dict() for name, entry in (self.typed_summary.metrics or {}).items()}
        return pd.DataFrame.from_dict(table, orient="index").rename_axis("metric")

    @property
    def by_group(self) -> pd.DataFrame:
        rows = [
            {"metric": name, "group": group, **values}
            for name, entry in (self.typed_summary.metrics or {}).items()
            for group, values in entry.groups.items()
        ]
        return pd.DataFrame(rows).set_index(["group", "metric"]) if rows else pd.DataFrame()

    _table_file = "rows.csv"

    def _console(self) -> Any:
        from ...views.page import to_console
        from .page import evaluation_summary_page

        return to_console(evaluation_summary_page(self.summary))

    def _table(self) -> pd.DataFrame:
        return self.rows

    def _repr_html_(self) -> str:
        """The notebook view: the report page's verdict and Table 2's row."""
        from ...views.page import to_notebook_html
        from .page import evaluation_summary_page

        return to_notebook_html(evaluation_summary_page(self.summary))


@options_signature(EvaluateOptions, skip=("metrics", "classifier"))
def evaluate(
    pairs: Any,
    metrics: Sequence[str] | None = None,
    *,
    classifier: Any = None,
    progress: ProgressHook | bool | None = None,
    **options: Any,
) -> EvaluationResult:
    """Measure counterfactuals in memory. ``pairs``: ``(original, counterfactual)`` or ``(original, cf, cf2)``
    tuples, :class:`~counterfair.records.Counterfactual` records, or a table (DataFrame, dict of columns,
    ``datasets.Dataset``) with CEval's columns (``orig_text``, ``gen_text``). ``classifier``: anything
    :func:`~counterfair.as_classifier` takes; ``options``: :class:`EvaluateOptions`'s fields."""
    from ...classifiers import as_classifier
    from ...needs import require_in_memory
    from ...records import make_options

    require_in_memory(
        EvaluateOptions, {"metrics": list(metrics) if metrics else None, **options}, classifier=classifier
    )
    frame = _pairs_frame(pairs)
    clf = as_classifier(classifier) if classifier is not None else None
    named = {"classifier": clf.spec} if clf is not None else {}
    opts = make_options(EvaluateOptions, {"metrics": list(metrics) if metrics else None, **named, **options})
    from ...progress import resolve_progress

    return evaluate_core(frame, opts, classifier=clf, progress=resolve_progress(progress))


def _pairs_frame(pairs: Any) -> pd.DataFrame:
    from ...io import as_frame
    from ...records import Counterfactual

    if isinstance(pairs, list | tuple) and pairs and all(isinstance(p, Counterfactual) for p in pairs):
        return pd.DataFrame(
            {
                "id": [f"{p.source_id}:{p.editor}:{i}" for i, p in enumerate(pairs)],
                "orig_text": [p.source_text for p in pairs],
                "gen_text": [p.text if p.status.startswith("ok") else None for p in pairs],
                "editor": [p.editor for p in pairs],
            }
        )
    if isinstance(pairs, list | tuple) and pairs and all(isinstance(p, tuple | list) for p in pairs):
        widths = {len(p) for p in pairs}
        if not widths <= {2, 3}:
            raise InputError(f"pairs: tuples must be (original, counterfactual[, second counterfactual]), got {widths}")
        columns = ["orig_text", "gen_text", "gen_text_2"][: max(widths)]
        return pd.DataFrame([list(p) + [None] * (max(widths) - len(p)) for p in pairs], columns=columns)
    return as_frame(pairs, text_column="orig_text", what="pairs")


def read_pairs(source: Any, opts: EvaluateOptions) -> tuple[TextInput, str | None]:
    """The pairs (:func:`~counterfair.io.read_texts`, every column an option names checked) and the second
    counterfactual's column (``--cf2-column``, else ``gen_text_2`` when the table has it)."""
    columns = {opts.cf_column: "--cf-column"}
    for extra, flag in (
        (opts.group_column, "--group-column"),
        (opts.context_column, "--context-column"),
        (opts.target_column, "--target-column"),
        (opts.cf2_column, "--cf2-column"),
    ):
        if extra is not None:
            columns[extra] = flag
    read = read_texts(
        source, text_column=opts.text_column, id_column=opts.id_column, columns=columns, encoding=opts.encoding,
        fmt=opts.fmt,
    )  # fmt: skip
    if opts.cf2_column is not None:
        return read, opts.cf2_column
    return read, "gen_text_2" if "gen_text_2" in read.frame.columns else None


#: what a shell does around an evaluation: ``claim(frame, origin, metrics)`` before any work, ``write(table, summary,
#: judgements)`` when it ends (also when a stage raised: what finished is kept, the error listed in the summary)
Claim = Callable[[pd.DataFrame, str, list[str]], None]
Write = Callable[[pd.DataFrame, dict[str, Any], list[dict[str, Any]]], None]


def evaluate_core(
    source: str | Path | pd.DataFrame,
    options: EvaluateOptions | None = None,
    *,
    classifier: CachedClassifier | None = None,
    judge_llm: Any = None,
    progress: ProgressHook | None = None,
    claim: Claim | None = None,
    write: Write | None = None,
) -> EvaluationResult:
    """Evaluate a pair table (path or DataFrame) in memory; ``claim`` and ``write`` are the shell's
    (:func:`counterfair.commands.evaluate.shell.evaluate_pairs`). ``classifier``: an already built (and cached)
    classifier to reuse; ``judge_llm``: an already loaded LLM for ``text_quality``. An unexpected error is recorded in
    the summary, ``write`` still gets what finished, and the error propagates."""
    opts = options or EvaluateOptions()
    metrics = list(opts.metrics or [])
    read, cf2_column = read_pairs(source, opts)
    frame, origin = read.frame, read.origin
    if "diversity" in metrics and cf2_column is None and opts.metrics_explicit:
        raise ConfigError(f"{origin}: diversity needs a second counterfactual column (gen_text_2, or set --cf2-column)")
    ids = read.ids if opts.id_column else None
    if claim is not None:
        claim(frame, origin, metrics)
    run = start_run(frame, opts, cf2_column, metrics, progress or NullProgress())
    if opts.classifier is None and classifier is None and not opts.metrics_explicit:
        run.notices.append(
            "flip and prob_change were not computed: no classifier was named (--classifier, e.g. imdb-sentiment for "
            "sentiment, profanity-check for toxicity)"
        )
    started = time.perf_counter()
    try:
        text_stages(run, metrics)
        card_stages(run, metrics, StageContext(cf2_column, classifier, judge_llm))
    except BaseException as err:
        # Not swallowed: recorded so that the outputs written below say why they are incomplete.
        run.errors.append({"stage": "run", "error": type(err).__name__, "message": str(err) or repr(err)})
        raise
    finally:
        table = missing_as_nan(_rows_frame(run.rows, frame, ids, opts))
        elapsed = time.perf_counter() - started
        summary = nan_to_none(
            _summary(
                table, run, metrics, origin=origin, source=source, cf2_column=cf2_column, elapsed=elapsed
            ).to_dict()
        )
        if write is not None:
            write(table, summary, run.judgements)
    return EvaluationResult(table, summary, None)


def _metric_columns() -> list[str]:
    """Every metric card's columns, in card order (registered metrics included)."""
    return [column for card in CARDS.values() for column in card.columns]


_EXTRA_COLUMNS = ["p_contrast_orig", "p_contrast_cf", "ppl_tokens"]


def _rows_frame(rows: Rows, frame: pd.DataFrame, ids: list[str] | None, opts: EvaluateOptions) -> pd.DataFrame:
    out: dict[str, Any] = {"row": np.arange(rows.n)}
    if ids is not None:
        out["input_id"] = ids  # the audit's and ctf's name for the input row's id
    if opts.group_column is not None:
        out["group"] = [cell_text(v) for v in frame[opts.group_column].tolist()]
    out["status"] = [rows.status(r) for r in range(rows.n)]
    for name in ("pred_orig", "pred_cf", "contrast_label"):
        if name in rows.labels:
            out[name] = rows.labels[name]
    for name in _metric_columns() + _EXTRA_COLUMNS:
        if name in rows.columns:
            out[name] = rows.columns[name]
    out["notes"] = ["; ".join(notes) for notes in rows.notes]
    table = pd.DataFrame(out)
    if "flipped" in table:
        table["flipped"] = table["flipped"].astype("Int64")
    if "ppl_tokens" in table:
        table["ppl_tokens"] = table["ppl_tokens"].astype("Int64")
    return table


def _summary(
    table: pd.DataFrame,
    run: EvaluateRun,
    metrics: list[str],
    *,
    origin: str,
    source: Any,
    cf2_column: str | None,
    elapsed: float,
) -> EvaluationSummary:
    opts = run.opts
    aggregates = _aggregates(table, opts)
    headline: dict[str, MeanEstimate] = {}
    if "flipped" in aggregates:
        # CEval's flip rate: flips over every instance (a row with an original), a row the method left without a
        # counterfactual or the classifier without a score counting as no flip; ours over scored rows beside it
        instance = ~table["status"].isin(["skipped:missing_original", "skipped:empty_original"]).to_numpy()
        flips = table["flipped"].astype(float).fillna(0.0).to_numpy()[instance]
        headline["flip_rate"] = _agg(flips, opts, definition="flips / instances (CEval)")
        scored = aggregates["flipped"].all.to_dict()
        headline["flip_rate_scored"] = MeanEstimate.from_dict(scored | {"definition": "flips / scored rows"})
    skipped = [
        {"row": int(r), "status": s}
        for r, s in zip(table["row"], table["status"], strict=True)
        if s.startswith("skipped")
    ]
    return EvaluationSummary(
        counterfair_version=__version__,
        command="evaluate",
        input=_input_info(opts, origin, source, run.rows.n, cf2_column),
        counts=EvaluationCounts(
            rows=run.rows.n,
            scored=int(sum(1 for s in table["status"] if not s.startswith("skipped"))),
            status={str(k): int(v) for k, v in table["status"].value_counts().to_dict().items()},
        ),
        headline=headline,
        metrics=aggregates,
        skipped_rows=tuple(skipped[:1000]),  # the first 1000; rows.csv has every row's status
        skipped_rows_total=len(skipped),
        errors=tuple(StageError.from_dict(e) for e in run.errors),  # stage, error, message
        notices=tuple(run.notices),
        signatures=run.signatures,
        cards={name: CARDS[name].to_dict() for name in metrics},
        options={**asdict(opts), "classifier": run.signatures.get("classifier", {}).get("spec", opts.classifier)},
        timing_s={**run.timings, "total": round(elapsed, 3)},
    )


class EvaluationInput(TypedDict, total=False):
    """The input of an evaluation: where it came from, its rows, its digest (a file), the columns read, and for
    SNLI-style context whether the counterfactual revises the premise or the hypothesis."""

    source: str
    n_rows: int
    sha256: str
    columns: dict[str, str | None]
    revised_input: str


def _agg(values: Any, opts: EvaluateOptions, **more: str) -> MeanEstimate:
    """The values' summary (:func:`~counterfair.metrics.functional.summarize`: its keys in its order), and ``more``."""
    found = F.summarize(values, confidence=opts.confidence, n_resamples=opts.bootstrap, seed=opts.seed)
    return MeanEstimate.from_dict(found | more)


def _aggregates(table: pd.DataFrame, opts: EvaluateOptions) -> dict[str, MetricAggregate]:
    """Each metric column: over all rows, over flipped and not flipped rows, and per group (bootstrap CIs)."""
    aggregates: dict[str, MetricAggregate] = {}
    flipped_mask = table["flipped"].fillna(0).astype(bool).to_numpy() if "flipped" in table else None
    for name in _metric_columns():
        if name not in table:
            continue
        values = table[name].astype(float).to_numpy()
        entry = MetricAggregate(all=_agg(values, opts))
        if flipped_mask is not None and name != "flipped":
            entry = replace(
                entry,
                flipped=_agg(values[flipped_mask], opts),
                not_flipped=_agg(values[~flipped_mask & table["flipped"].notna().to_numpy()], opts),
            )
        if opts.group_column is not None:
            entry = replace(entry, groups=F.grouped_summary(
                values,
                table["group"].fillna("(none)").tolist(),
                confidence=opts.confidence,
                n_resamples=opts.bootstrap,
                seed=opts.seed,
            ))  # fmt: skip
        aggregates[name] = entry
    return aggregates


def _input_info(
    opts: EvaluateOptions, origin: str, source: Any, n_rows: int, cf2_column: str | None
) -> EvaluationInput:
    info: EvaluationInput = {"source": origin, "n_rows": n_rows}
    if isinstance(source, str | Path) and Path(source).is_file():
        info["sha256"] = file_sha256(source)
    info["columns"] = {
        "text": opts.text_column,
        "counterfactual": opts.cf_column,
        "second_counterfactual": cf2_column,
        "id": opts.id_column,
        "group": opts.group_column,
        "context": opts.context_column,
        "target": opts.target_column,
    }
    if opts.context_column is not None:
        info["revised_input"] = opts.revised_input
    return info


def estimate(source: Any, opts: EvaluateOptions) -> dict[str, float]:
    """Seconds each model-backed stage should take on 2 CPU cores for ``source`` (and ``total``); reads the pairs,
    runs no model."""
    read, _ = read_pairs(source, opts)
    frame = read.frame
    words = {
        column: float(sum(len(str(text).split()) for text in frame[column]))
        for column in (opts.text_column, opts.cf_column)
    }
    reads = {
        "classifier": words[opts.text_column] + words[opts.cf_column],
        "perplexity": words[opts.cf_column],
        "bertscore": words[opts.text_column] + words[opts.cf_column],
        "text_quality": words[opts.cf_column],
    }
    stages = {CARDS[m].stage for m in opts.metrics or [] if CARDS[m].stage in STAGE_COST}
    out = {s: STAGE_COST[s][0] + STAGE_COST[s][1] * reads[s] for s in STAGE_COST if s in stages}
    out["total"] = sum(out.values()) + 0.001 * len(frame)
    return out
