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

import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import numpy as np
import pandas as pd

from ... import __version__
from ...classifiers import CachedClassifier, load_classifier
from ...errors import ConfigError, CounterfairError, InputError, MetricError
from ...io import (
    TextInput,
    cell_text,
    file_sha256,
    missing_as_nan,
    nan_to_none,
    read_texts,
)
from ...jsontypes import JSONObject
from ...metrics import functional as F
from ...metrics.cards import CARDS, MetricCard, PairTexts, classifier_metrics, resolve_metrics
from ...progress import NullProgress, ProgressHook
from ...records import knob, option, options_signature
from ...results import TableResult
from ...summaries import EvaluationSummary
from ...text import tokenize_batch, tokenizer_signature

CEVAL_COLUMNS = ("orig_text", "gen_text", "gen_text_2")


@dataclass
class EvaluateOptions:
    """Options of an evaluation run; every field is recorded in ``summary.json``."""

    metrics: list[str] | None = option(
        None,
        help=(
            "Comma-separated: flip, prob_change, distance, diversity, perplexity, bleu, bertscore (the "
            "default set), text_quality (an LLM judge; only when named), or all."
        ),
    )
    classifier: str | None = option(
        None,
        help=(
            "Classifier spec for flip and prob_change, e.g. imdb-sentiment, profanity-check, "
            "sklearn:PATH, hf:DIR, scores:PATH (without it those two metrics are not computed)."
        ),
    )
    text_column: str = option("orig_text", help="Column with the original text.")
    cf_column: str = option("gen_text", help="Column with the counterfactual.")
    cf2_column: str | None = option(
        None, help="Column with a second counterfactual (diversity); default gen_text_2 if present."
    )
    id_column: str | None = option(None, help="Column with a unique row id.")
    group_column: str | None = option(None, help="Column to aggregate by (with bootstrap CIs).")
    # options added after runs existed (later=True): at their default they stay out of the identity, so those runs
    # still resume. context_column: two-input classifiers' input left unchanged (NLI: the other sentence);
    # revised_input: first | second, which classifier input the text/counterfactual columns are; target_column: the
    # label each counterfactual aims at (prob_change is measured on it)
    context_column: str | None = field(
        default=None,
        metadata={
            "later": True,
            "help": (
                "Two-input classifiers (NLI): column with the input left unchanged; the classifier gets text pairs."
            ),
        },
    )
    revised_input: str = field(
        default="first",
        metadata={
            "later": True,
            "help": "With --context-column: the edited text is the classifier's 'first' or 'second' input.",
        },
    )
    target_column: str | None = field(
        default=None,
        metadata={
            "later": True,
            "help": "Column with the label each counterfactual aims at (prob_change measured on it).",
        },
    )
    missing_markers: tuple[str, ...] = option(("-1",), help="Cells that mean no counterfactual (CEval writes -1).")
    threshold: float | None = option(None, help="Binary classifiers: label 1 when p >= threshold (default: argmax).")
    contrast_rule: str = option(
        "second", help="More than two labels: the target is the second most probable (paper 002) or least (CEval)."
    )
    ppl_model: str = option(
        "gemma-3-270m", help="Perplexity LM: a known name, a GGUF file or a transformers directory."
    )
    ppl_window: int = option(1024, help="Perplexity window in LM tokens.")
    ppl_stride: int = option(512, help="Sliding-window stride in LM tokens.")
    ppl_max_tokens: int = option(8192, help="Texts longer than this get no perplexity (a row note).")
    ppl_token_budget: int = knob(1024, help="LM tokens per forward batch (memory vs speed).")
    ppl_dtype: str = option(
        "float32", help="Perplexity LM precision: float32 (exact) or bfloat16 (about 2x faster on CPUs with bf16)."
    )
    bertscore_model: str = option("all-minilm-l6-v2", help="The BERTScore encoder.")
    judge_llm: str = option(
        "llamacpp:qwen2.5-coder-1.5b-instruct",
        help="LLM that judges text_quality (llamacpp:NAME|GGUF, openai:URL#MODEL, hf:DIR).",
    )
    batch_size: int = knob(64, help="Batch size for classifier and BERTScore.")
    bootstrap: int = option(2000, help="Bootstrap resamples for confidence intervals.")
    confidence: float = option(0.95, help="Confidence level of the intervals.")
    seed: int = option(0, help="Seed of the bootstrap.")
    fmt: str | None = option(None, help="Input format if the suffix does not tell.")
    encoding: str = option("utf-8", help="Text encoding of the input file.")
    engine: str = knob("local", help="local, or ray: perplexity and BERTScore batches on Ray workers.")
    address: str | None = knob(None, help="Ray cluster address (default: start a local Ray).")
    engine_batch: int = option(128, help="Texts per batch sent to a Ray worker.")

    metrics_explicit: bool = field(init=False, default=False, metadata={"identity": False})
    #: default metrics left out because their extra is not installed (the core install), for the command to say
    left_out: list[str] = field(init=False, default_factory=list, metadata={"identity": False})

    def classifier_spec(self) -> str:
        """The named classifier's spec (an error when none was named)."""
        if self.classifier is None:
            raise ConfigError("flip and prob_change need a classifier: name it with --classifier (classifier=)")
        return self.classifier

    def __post_init__(self) -> None:
        self.metrics_explicit = self.metrics is not None
        self.metrics = resolve_metrics(self.metrics)
        if not self.metrics_explicit:  # the default set on the core install: what runs without an extra
            from ...extras import installed

            self.left_out = [m for m in self.metrics if not all(installed(e) for e in CARDS[m].extras)]
            self.metrics = [m for m in self.metrics if m not in self.left_out]
        needing = [m for m in self.metrics if m in classifier_metrics()]
        if self.classifier is None and needing:
            if self.metrics_explicit:  # never a guessed classifier: a toxicity model's flips on sentiment data are 0
                raise ConfigError(
                    f"{' and '.join(needing)} need a classifier: name it with --classifier (classifier= in Python), "
                    "e.g. imdb-sentiment for sentiment or profanity-check for toxicity, or leave them out of --metrics"
                )
            self.metrics = [m for m in self.metrics if m not in needing]
        if self.threshold is not None and not 0.0 < self.threshold < 1.0:
            raise ConfigError(f"threshold must be in (0, 1), got {self.threshold}")
        if not 0.0 < self.confidence < 1.0:
            raise ConfigError(f"confidence must be in (0, 1), got {self.confidence}")
        if self.bootstrap < 100:
            raise ConfigError("bootstrap needs at least 100 resamples")
        if self.revised_input not in ("first", "second"):
            raise ConfigError(f"revised_input must be 'first' or 'second', got {self.revised_input!r}")
        if self.revised_input == "second" and self.context_column is None:
            raise ConfigError("revised_input='second' needs a context column (the classifier's first input)")


@dataclass
class EvaluationResult(TableResult):
    """``rows`` (one per input pair: status, labels, every metric), ``summary`` (as ``summary.json``), ``metrics``
    (one row per metric: n, mean, CI, median), ``by_group`` (metric means per ``group_column`` value)."""

    rows: pd.DataFrame
    summary: dict[str, Any]
    out_dir: Path | None = None

    _summary_type = EvaluationSummary

    @property
    def typed_summary(self) -> EvaluationSummary:
        return EvaluationSummary.from_dict(self.summary)

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


class _Rows:
    """Per-row bookkeeping: status, notes, and metric columns (NaN until computed)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.skipped: list[str | None] = [None] * n
        self.notes: list[list[str]] = [[] for _ in range(n)]
        self.failed: list[set[str]] = [set() for _ in range(n)]
        self.columns: dict[str, np.ndarray] = {}
        self.labels: dict[str, list[str | None]] = {}

    def column(self, name: str) -> np.ndarray:
        if name not in self.columns:
            self.columns[name] = np.full(self.n, math.nan)
        return self.columns[name]

    def fail(self, row: int, metric: str, why: str) -> None:
        self.failed[row].add(metric)
        self.notes[row].append(f"{metric}: {why}")

    def status(self, row: int) -> str:
        if self.skipped[row] is not None:
            return f"skipped:{self.skipped[row]}"
        return "partial" if self.failed[row] else "ok"


def _texts(frame: pd.DataFrame, column: str | None, markers: Sequence[str]) -> list[str | None]:
    if column is None:
        return [None] * len(frame)
    out: list[str | None] = []
    for value in frame[column].tolist():
        text = cell_text(value)
        out.append(None if text is None or text.strip() in markers else text)
    return out


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
    run = _start(frame, opts, cf2_column, metrics, progress or NullProgress())
    if opts.classifier is None and classifier is None and not opts.metrics_explicit:
        run.notices.append(
            "flip and prob_change were not computed: no classifier was named (--classifier, e.g. imdb-sentiment for "
            "sentiment, profanity-check for toxicity)"
        )
    started = time.perf_counter()
    try:
        _text_stages(run, metrics)
        _card_stages(run, metrics, _Context(cf2_column, classifier, judge_llm))
    except BaseException as err:
        # Not swallowed: recorded so that the outputs written below say why they are incomplete.
        run.errors.append({"stage": "run", "error": type(err).__name__, "message": str(err) or repr(err)})
        raise
    finally:
        table = missing_as_nan(_rows_frame(run.rows, frame, ids, opts))
        elapsed = time.perf_counter() - started
        summary = nan_to_none(
            _summary(table, run, metrics, origin=origin, source=source, cf2_column=cf2_column, elapsed=elapsed)
        )
        if write is not None:
            write(table, summary, run.judgements)
    return EvaluationResult(table, summary, None)


@dataclass
class _Run:
    """What the stages of one evaluation share: the rows, the scorable rows' texts, and what the summary records."""

    opts: EvaluateOptions
    rows: _Rows
    valid: list[int]  # rows with an original and a counterfactual (and a context, in a two-input evaluation)
    v_orig: list[str]
    v_cf: list[str]
    cf2s: list[str | None]
    contexts: list[str | None] | None
    targets: list[str | None] | None
    hook: ProgressHook
    timings: dict[str, float] = field(default_factory=dict)
    errors: list[dict[str, str]] = field(default_factory=list)
    signatures: dict[str, Any] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    judgements: list[dict[str, Any]] = field(default_factory=list)
    texts: PairTexts | None = None  # the scorable rows' texts and tokens, from the text stage

    def stage(self, name: str, covers: tuple[str, ...] = ()) -> _Stage:
        return _Stage(
            name, covers or (name,), timings=self.timings, errors=self.errors, rows=self.rows, valid=self.valid
        )

    def model_inputs(self, texts: list[str]) -> list[Any]:
        """What the classifier gets for the valid rows' texts: the texts, or (first, second) pairs with the context
        on the side the options name."""
        if self.contexts is None:
            return list(texts)
        ctx = [self.contexts[r] or "" for r in self.valid]
        pairs = zip(texts, ctx, strict=True) if self.opts.revised_input == "first" else zip(ctx, texts, strict=True)
        return [tuple(p) for p in pairs]

    def full_texts(self, texts: list[str]) -> list[str]:
        """The whole instance as one text (for the LLM judge): the text, or both inputs on two lines."""
        return ["\n".join(p) for p in self.model_inputs(texts)] if self.contexts is not None else list(texts)


def _start(
    frame: pd.DataFrame, opts: EvaluateOptions, cf2_column: str | None, metrics: list[str], hook: ProgressHook
) -> _Run:
    """Each row's texts, and the rows that cannot be scored (with the reason in their status)."""
    n = len(frame)
    rows = _Rows(n)
    origs = _texts(frame, opts.text_column, ())
    cfs = _texts(frame, opts.cf_column, opts.missing_markers)
    contexts = _texts(frame, opts.context_column, ()) if opts.context_column else None
    for row in range(n):
        orig, cf = origs[row], cfs[row]
        if orig is None:
            rows.skipped[row] = "missing_original"
        elif not orig.strip():
            rows.skipped[row] = "empty_original"
        elif cf is None:
            rows.skipped[row] = "missing_counterfactual"
        elif not cf.strip():
            rows.skipped[row] = "empty_counterfactual"
        elif contexts is not None and not (contexts[row] or "").strip():
            rows.skipped[row] = "missing_context"
        elif cf == orig:
            rows.notes[row].append("counterfactual identical to the original")
    valid = [row for row in range(n) if rows.skipped[row] is None]
    for name in metrics:  # every requested column exists, even if no row can be scored
        for column in CARDS[name].columns:
            rows.column(column)
    return _Run(
        opts,
        rows,
        valid,
        v_orig=[origs[r] or "" for r in valid],
        v_cf=[cfs[r] or "" for r in valid],
        cf2s=_texts(frame, cf2_column, opts.missing_markers),
        contexts=contexts,
        targets=[cell_text(v) for v in frame[opts.target_column].tolist()] if opts.target_column else None,
        hook=hook,
    )


@dataclass(frozen=True)
class _Context:
    """What the stages get beyond the run: the second counterfactual's column and the models given by the caller."""

    cf2_column: str | None
    classifier: CachedClassifier | None
    judge_llm: Any


Stage = Callable[["_Run", list[str], _Context], None]


def _card_stages(run: _Run, metrics: list[str], ctx: _Context) -> None:
    """The stages the chosen metrics' cards name (``MetricCard.stage``), each once, in :data:`STAGES`' order: the
    text stage's followers first, then the models."""
    wanted = {CARDS[m].stage for m in metrics if CARDS[m].stage is not None}
    for name, stage in STAGES.items():
        if name in wanted:
            stage(run, metrics, ctx)


def _text_stages(run: _Run, metrics: list[str]) -> None:
    """The metrics whose card computes them from the texts (distance, BLEU, yours): on the edited text only (in a
    two-input evaluation, the revised input). Their tokens are kept for the stages after them (diversity)."""
    rows, valid = run.rows, run.valid
    texts = run.texts = PairTexts(run.v_orig, run.v_cf, [run.cf2s[r] for r in valid])
    for name in metrics:
        card = CARDS[name]
        if card.compute is None or not valid:
            continue
        with run.stage(name):
            values = _computed(card, texts, len(valid))
            for column in card.columns:
                rows.column(column)[valid] = values[column]
        run.signatures[name] = card.signature() if card.signature else {"compute": _qualname(card.compute)}
    if {"distance", "diversity"} & set(metrics) and valid:
        run.signatures["tokenizer"] = tokenizer_signature()


def _diversity_stage(run: _Run, metrics: list[str], ctx: _Context) -> None:
    """Diversity: the word distance between the two counterfactuals of a row (the tokens the text stage made)."""
    rows, valid, texts = run.rows, run.valid, run.texts
    if ctx.cf2_column is None:
        run.notices.append("diversity: the input has no second counterfactual column (gen_text_2)")
        return
    if not valid or texts is None:
        return
    with run.stage("diversity"):
        have = [i for i, second in enumerate(texts.second) if (second or "").strip()]
        for i in sorted(set(range(len(valid))) - set(have)):
            rows.notes[valid[i]].append("diversity: no second counterfactual")
        tokens_cf, tokens_orig = texts.tokens("counterfactuals"), texts.tokens("originals")
        raw, norm = F.diversity(
            [tokens_cf[i] for i in have],
            tokenize_batch([texts.second[i] or "" for i in have]),
            [len(tokens_orig[i]) for i in have],
        )
        rows.column("diversity")[[valid[i] for i in have]] = raw
        rows.column("diversity_norm")[[valid[i] for i in have]] = norm
    run.signatures["diversity"] = CARDS["distance"].signature() if CARDS["distance"].signature else {}


def _computed(card: MetricCard, texts: PairTexts, n: int) -> dict[str, np.ndarray]:
    """``card.compute(texts)`` checked: every column of the card, one number per pair. What a compute gets wrong
    (or raises) is a :class:`MetricError`, which fails the metric's stage, not the run."""
    try:
        values = card.compute(texts) if card.compute is not None else {}
    except CounterfairError:
        raise
    except Exception as err:
        raise MetricError(f"metric {card.name}: its compute raised {type(err).__name__}: {err}") from err
    out = {}
    for column in card.columns:
        if column not in values:
            raise MetricError(f"metric {card.name}: compute returned no column {column!r} (got {sorted(values)})")
        try:
            got = np.asarray(values[column], dtype=float).reshape(-1)
        except (TypeError, ValueError) as err:
            raise MetricError(f"metric {card.name}: column {column!r} is not numbers ({err})") from err
        if got.shape[0] != n:
            raise MetricError(f"metric {card.name}: column {column!r} has {got.shape[0]} values for {n} pairs")
        out[column] = got
    return out


def _qualname(fn: Any) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def _classifier_stage(run: _Run, metrics: list[str], ctx: _Context) -> None:
    """Flip and probability change: each distinct input predicted once, original and counterfactual together."""
    wanted = tuple(m for m in ("flip", "prob_change") if m in metrics)
    if not wanted or not run.valid:
        return
    opts = run.opts
    with run.stage("classifier", wanted):
        clf = (
            ctx.classifier
            if ctx.classifier is not None
            else load_classifier(opts.classifier_spec(), batch_size=opts.batch_size)
        )
        in_orig, in_cf = run.model_inputs(run.v_orig), run.model_inputs(run.v_cf)
        unique = list(dict.fromkeys(in_orig + in_cf))
        run.hook.start(f"classifier ({clf.spec})", len(unique))
        proba = clf.predict_proba(unique, on_batch=run.hook.advance)
        lookup = {t: i for i, t in enumerate(unique)}
        run.signatures["classifier"] = clf.signature()
        _score_classifier(
            run.rows,
            run.valid,
            proba[[lookup[t] for t in in_orig]],
            proba[[lookup[t] for t in in_cf]],
            clf.labels,
            opts,
            wanted,
            targets=[run.targets[r] for r in run.valid] if run.targets is not None else None,
        )


def _perplexity_stage(run: _Run, metrics: list[str], ctx: _Context) -> None:
    """Perplexity of the counterfactuals under the causal LM (locally or on Ray workers)."""
    rows, valid, opts = run.rows, run.valid, run.opts
    if not valid:
        return
    with run.stage("perplexity"):
        factory = functools.partial(
            PerplexityWorker,
            opts.ppl_model,
            opts.ppl_window,
            opts.ppl_stride,
            opts.ppl_max_tokens,
            opts.ppl_token_budget,
            opts.ppl_dtype,
        )
        result, run.signatures["perplexity"] = _run_scorer(factory, run.v_cf, opts, run.hook, "perplexity")
        rows.column("perplexity")[valid] = result.perplexity
        rows.column("ppl_tokens")[valid] = result.n_tokens
        for i, reason in enumerate(result.reason):
            if reason is not None:
                rows.fail(valid[i], "perplexity", reason)


def _bertscore_stage(run: _Run, metrics: list[str], ctx: _Context) -> None:
    """BERTScore of each counterfactual against its original (locally or on Ray workers)."""
    rows, valid, opts = run.rows, run.valid, run.opts
    if not valid:
        return
    with run.stage("bertscore"):
        scorer = functools.partial(BERTScoreWorker, opts.bertscore_model, opts.batch_size)
        pairs = list(zip(run.v_cf, run.v_orig, strict=True))
        scores, run.signatures["bertscore"] = _run_scorer(scorer, pairs, opts, run.hook, "bertscore")
        rows.column("bertscore_p")[valid] = scores.precision
        rows.column("bertscore_r")[valid] = scores.recall
        rows.column("bertscore_f1")[valid] = scores.f1
        for k in np.flatnonzero(scores.truncated):
            rows.notes[valid[k]].append("bertscore: longer than the encoder's 512 wordpieces, truncated")
        if scores.truncated.any():
            run.notices.append(
                f"bertscore: {int(scores.truncated.sum())} pairs exceed 512 wordpieces and were scored "
                "on their first 512"
            )


def _text_quality_stage(run: _Run, metrics: list[str], ctx: _Context) -> None:
    """The LLM judge's text quality."""
    rows, valid = run.rows, run.valid
    if not valid:
        return
    with run.stage("text_quality"):
        llm = ctx.judge_llm
        if llm is None:
            from ...llm import load_llm

            llm = load_llm(run.opts.judge_llm)
        run.signatures["text_quality"] = _judge_quality(
            rows, valid, run.full_texts(run.v_cf), llm, run.hook, run.judgements
        )


def _judge_quality(
    rows: _Rows, valid: list[int], texts: list[str], llm: Any, hook: ProgressHook, log: list[dict[str, Any]]
) -> JSONObject:
    """CEval's LLM-judged text quality of each distinct counterfactual; raw answers appended to ``log``."""
    from ...rating.judges import JUDGE_CHUNK, QUALITY_FIELDS, QualityJudge

    judge = QualityJudge(llm)
    unique = list(dict.fromkeys(texts))
    hook.start(f"text quality ({llm.model_id})", len(unique))
    verdicts: dict[str, Any] = {}
    for start in range(0, len(unique), JUDGE_CHUNK):
        chunk = unique[start : start + JUDGE_CHUNK]
        verdicts.update(zip(chunk, judge.judge_many(chunk), strict=True))
        hook.advance(len(chunk))
    for i, row in enumerate(valid):
        verdict = verdicts[texts[i]]
        log.append({"row": row, "status": verdict.status, "values": verdict.values, "raw": verdict.raw})
        if verdict.values is None:
            rows.fail(row, "text_quality", f"the judge's answer did not parse after {len(verdict.raw)} tries")
            continue
        for aspect in QUALITY_FIELDS:
            rows.column(f"quality_{aspect}")[row] = verdict.values[aspect]
    return {"llm": llm.model_id, "retries": judge.retries, "max_tokens": judge.max_tokens, "temperature": 0.0}


class PerplexityWorker:
    """Builds a perplexity scorer once (per process or Ray actor) and scores batches of texts."""

    def __init__(self, model: str, window: int, stride: int, max_tokens: int, token_budget: int, dtype: str) -> None:
        from ...metrics.perplexity import PerplexityScorer

        self.scorer = PerplexityScorer(
            model, window=window, stride=stride, max_tokens=max_tokens, token_budget=token_budget, dtype=dtype
        )

    def __call__(self, texts: list[str], progress: ProgressHook | None = None) -> tuple[Any, dict[str, Any]]:
        return self.scorer.score(texts, progress=progress), self.scorer.signature()


class BERTScoreWorker:
    """Builds a BERTScore scorer once and scores batches of (candidate, reference) pairs."""

    def __init__(self, model: str, batch_size: int) -> None:
        from ...metrics.bertscore import BERTScoreScorer

        self.scorer = BERTScoreScorer(model, batch_size=batch_size)

    def __call__(
        self, pairs: list[tuple[str, str]], progress: ProgressHook | None = None
    ) -> tuple[Any, dict[str, Any]]:
        result = self.scorer.score([c for c, _ in pairs], [r for _, r in pairs], progress=progress)
        return result, self.scorer.signature()


def _run_scorer(
    factory: Any, items: list[Any], opts: EvaluateOptions, hook: ProgressHook, name: str
) -> tuple[Any, Any]:
    """One scorer over all items: in this process in one call, or in batches on Ray workers (then concatenated)."""
    if opts.engine == "local":
        return factory()(items, hook)
    from ...engine import map_batches

    batches = [items[i : i + opts.engine_batch] for i in range(0, len(items), opts.engine_batch)]
    parts = map_batches(factory, batches, engine=opts.engine, address=opts.address, progress=hook, description=name)
    results = [r for r, _ in parts]
    fields: dict[str, Any] = {}
    for key, value in vars(results[0]).items():
        parts_of_key = [getattr(r, key) for r in results]
        fields[key] = (
            [x for part in parts_of_key for x in part] if isinstance(value, list) else np.concatenate(parts_of_key)
        )
    return type(results[0])(**fields), parts[0][1]


class _Stage:
    """Times a stage; a CounterfairError fails the stage (recorded, affected rows noted), not the run."""

    def __init__(
        self,
        name: str,
        covers: tuple[str, ...],
        *,
        timings: dict[str, float],
        errors: list[dict[str, str]],
        rows: _Rows,
        valid: list[int],
    ) -> None:
        self.name, self.covers = name, covers
        self.timings, self.errors, self.rows, self.valid = timings, errors, rows, valid
        self.t0 = 0.0

    def __enter__(self) -> _Stage:
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> bool:
        self.timings[self.name] = round(time.perf_counter() - self.t0, 3)
        if isinstance(exc, CounterfairError):
            self.errors.append({"stage": self.name, "error": type(exc).__name__, "message": str(exc)})
            for row in self.valid:
                for metric in self.covers:
                    self.rows.fail(row, metric, f"stage failed ({type(exc).__name__})")
            return True
        return False


def _score_classifier(
    rows: _Rows,
    valid: list[int],
    p_orig: np.ndarray,
    p_cf: np.ndarray,
    labels: list[str],
    opts: EvaluateOptions,
    wanted: tuple[str, ...],
    *,
    targets: list[str | None] | None = None,
) -> None:
    """Labels, flips and probability change of the rows the classifier scored. The contrast label is each row's
    target (``target_column``) where given, else the rule's (:func:`counterfair.metrics.functional.contrast_labels`)."""
    target_idx = _target_indices(targets, labels, valid) if targets is not None else None
    finite = np.isfinite(p_orig).all(axis=1) & np.isfinite(p_cf).all(axis=1)
    for i in np.flatnonzero(~finite):
        which = "original" if not np.isfinite(p_orig[i]).all() else "counterfactual"
        for metric in wanted:
            rows.fail(valid[i], metric, f"classifier gave no probability (NaN) for the {which}")
    ok_idx = np.flatnonzero(finite)
    rows.labels.setdefault("pred_orig", [None] * rows.n)
    rows.labels.setdefault("pred_cf", [None] * rows.n)
    rows.labels.setdefault("contrast_label", [None] * rows.n)
    if ok_idx.size == 0:
        return
    a, b = p_orig[ok_idx], p_cf[ok_idx]
    pred_a = F.predicted_labels(a, threshold=opts.threshold)
    pred_b = F.predicted_labels(b, threshold=opts.threshold)
    contrast = F.contrast_labels(a, rule=opts.contrast_rule)
    target_rows = [valid[i] for i in ok_idx]
    if target_idx is not None:
        given = target_idx[ok_idx]
        for k in np.flatnonzero(given < 0):
            rows.notes[target_rows[int(k)]].append(
                f"no target label: contrast label by the '{opts.contrast_rule}' rule"
            )
        contrast = np.where(given >= 0, given, contrast)
    for j, row in enumerate(target_rows):
        rows.labels["pred_orig"][row] = labels[int(pred_a[j])]
        rows.labels["pred_cf"][row] = labels[int(pred_b[j])]
        rows.labels["contrast_label"][row] = labels[int(contrast[j])]
    rows.column("p_contrast_orig")[target_rows] = a[np.arange(len(ok_idx)), contrast]
    rows.column("p_contrast_cf")[target_rows] = b[np.arange(len(ok_idx)), contrast]
    if "flip" in wanted:
        rows.column("flipped")[target_rows] = F.flipped(a, b, threshold=opts.threshold).astype(float)
    if "prob_change" in wanted:
        rows.column("prob_change")[target_rows] = F.prob_change(a, b, contrast)


def _target_indices(targets: list[str | None], labels: list[str], valid: list[int]) -> np.ndarray:
    """Each valid row's target label as an index into ``labels`` (-1: no target); an unknown name is an error that
    names the row and the classifier's labels."""
    out = np.full(len(targets), -1)
    for i, name in enumerate(targets):
        if name is None or not name.strip():
            continue
        if name.strip() not in labels:
            raise ConfigError(
                f"row {valid[i]}: target label {name!r} is not one of the classifier's labels {labels}; "
                "map the target column onto the classifier's label names"
            )
        out[i] = labels.index(name.strip())
    return out


def _metric_columns() -> list[str]:
    """Every metric card's columns, in card order (registered metrics included)."""
    return [column for card in CARDS.values() for column in card.columns]


_EXTRA_COLUMNS = ["p_contrast_orig", "p_contrast_cf", "ppl_tokens"]


def _rows_frame(rows: _Rows, frame: pd.DataFrame, ids: list[str] | None, opts: EvaluateOptions) -> pd.DataFrame:
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
    run: _Run,
    metrics: list[str],
    *,
    origin: str,
    source: Any,
    cf2_column: str | None,
    elapsed: float,
) -> EvaluationSummaryData:
    opts = run.opts
    aggregates = _aggregates(table, opts)
    headline: dict[str, Any] = {}
    if "flipped" in aggregates:
        # CEval's flip rate: flips over every instance (a row with an original), a row the method left without a
        # counterfactual or the classifier without a score counting as no flip; ours over scored rows beside it
        instance = ~table["status"].isin(["skipped:missing_original", "skipped:empty_original"]).to_numpy()
        flips = table["flipped"].astype(float).fillna(0.0).to_numpy()[instance]
        headline["flip_rate"] = _agg(flips, opts) | {"definition": "flips / instances (CEval)"}
        headline["flip_rate_scored"] = aggregates["flipped"]["all"] | {"definition": "flips / scored rows"}
    skipped = [
        {"row": int(r), "status": s}
        for r, s in zip(table["row"], table["status"], strict=True)
        if s.startswith("skipped")
    ]
    return {
        "counterfair_version": __version__,
        "command": "evaluate",
        "input": _input_info(opts, origin, source, run.rows.n, cf2_column),
        "counts": {
            "rows": run.rows.n,
            "scored": int(sum(1 for s in table["status"] if not s.startswith("skipped"))),
            "status": {str(k): int(v) for k, v in table["status"].value_counts().to_dict().items()},
        },
        "headline": headline,
        "metrics": aggregates,
        "skipped_rows": skipped[:1000],  # the first 1000; rows.csv has every row's status
        "skipped_rows_total": len(skipped),
        "errors": run.errors,
        "notices": run.notices,
        "signatures": run.signatures,
        "cards": {name: CARDS[name].to_dict() for name in metrics},
        "options": {**asdict(opts), "classifier": run.signatures.get("classifier", {}).get("spec", opts.classifier)},
        "timing_s": {**run.timings, "total": round(elapsed, 3)},
    }


class EvaluationInput(TypedDict, total=False):
    """The input of an evaluation: where it came from, its rows, its digest (a file), the columns read, and for
    SNLI-style context whether the counterfactual revises the premise or the hypothesis."""

    source: str
    n_rows: int
    sha256: str
    columns: dict[str, str | None]
    revised_input: str


class MetricAggregate(TypedDict):
    """A metric column's summary (:func:`~counterfair.metrics.functional.summarize`) over all rows, over the flipped
    and not flipped rows (where there is a flip), and per group (with a group column)."""

    all: Summarized
    flipped: NotRequired[Summarized]
    not_flipped: NotRequired[Summarized]
    groups: NotRequired[dict[str, Summarized]]


class EvaluationSummaryData(TypedDict):
    """evaluate's summary.json (:class:`~counterfair.summaries.EvaluationSummary` reads it)."""

    counterfair_version: str
    command: str
    input: EvaluationInput
    counts: dict[str, Any]
    headline: dict[str, dict[str, Any]]
    metrics: dict[str, MetricAggregate]
    skipped_rows: list[dict[str, Any]]
    skipped_rows_total: int
    errors: list[dict[str, str]]
    notices: list[str]
    signatures: dict[str, Any]
    cards: dict[str, JSONObject]
    options: dict[str, Any]
    timing_s: dict[str, float]


Summarized = dict[str, float | int]  # metrics.functional.summarize: n, mean, std, median, min, max, ci_low, ci_high


def _agg(values: Any, opts: EvaluateOptions) -> Summarized:
    return F.summarize(values, confidence=opts.confidence, n_resamples=opts.bootstrap, seed=opts.seed)


def _aggregates(table: pd.DataFrame, opts: EvaluateOptions) -> dict[str, MetricAggregate]:
    """Each metric column: over all rows, over flipped and not flipped rows, and per group (bootstrap CIs)."""
    aggregates: dict[str, MetricAggregate] = {}
    flipped_mask = table["flipped"].fillna(0).astype(bool).to_numpy() if "flipped" in table else None
    for name in _metric_columns():
        if name not in table:
            continue
        values = table[name].astype(float).to_numpy()
        entry: MetricAggregate = {"all": _agg(values, opts)}
        if flipped_mask is not None and name != "flipped":
            entry["flipped"] = _agg(values[flipped_mask], opts)
            entry["not_flipped"] = _agg(values[~flipped_mask & table["flipped"].notna().to_numpy()], opts)
        if opts.group_column is not None:
            entry["groups"] = F.grouped_summary(
                values,
                table["group"].fillna("(none)").tolist(),
                confidence=opts.confidence,
                n_resamples=opts.bootstrap,
                seed=opts.seed,
            )
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


#: the evaluate stages that compute the model-backed (and second-counterfactual) metrics, in the order they run; a
#: metric's card names its stage (MetricCard.stage), so evaluate loops over the chosen cards, not over metric names
STAGES: dict[str, Stage] = {
    "diversity": _diversity_stage,
    "classifier": _classifier_stage,
    "perplexity": _perplexity_stage,
    "bertscore": _bertscore_stage,
    "text_quality": _text_quality_stage,
}

#: a stage's cost on 2 CPU cores: (seconds to load its model, seconds per word of the texts it reads), measured in
#: benchmarks/evaluate_speed.py (perplexity 175 tokens/s, BERTScore 0.125 s per IMDB pair) and llm_judge.py (3 s per
#: 41-word text); a rough guide, said before the work starts
STAGE_COST: dict[str, tuple[float, float]] = {
    "classifier": (2.0, 0.0001),
    "perplexity": (15.0, 0.0078),
    "bertscore": (5.0, 0.0004),
    "text_quality": (15.0, 0.07),
}


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
