"""The stages of ``counterfair evaluate`` that run a model over the pairs (the classifier, perplexity, BERTScore, the
LLM judge, diversity): each fills its metrics' columns of :class:`Rows`, in process or on Ray workers; a metric's
card names its stage. A metric a model scores pair by pair (perplexity, BERTScore) is its card's
:class:`~counterfair.metrics.cards.ModelScoring`, run by the one :func:`_model_stage`; the others are
:data:`STAGES`. :data:`STAGE_COST` is what the estimate says before the work."""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...classifiers import CachedClassifier, load_classifier
from ...errors import ConfigError, CounterfairError, MetricError
from ...io import cell_text
from ...jsontypes import JSONObject
from ...metrics import functional as F
from ...metrics.cards import CARDS, MetricCard, PairTexts
from ...progress import ProgressHook
from ...text import tokenize_batch, tokenizer_signature
from .options import EvaluateOptions


def column_texts(frame: pd.DataFrame, column: str | None, markers: Sequence[str]) -> list[str | None]:
    if column is None:
        return [None] * len(frame)
    out: list[str | None] = []
    for value in frame[column].tolist():
        text = cell_text(value)
        out.append(None if text is None or text.strip() in markers else text)
    return out


class Rows:
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


@dataclass
class EvaluateRun:
    """What the stages of one evaluation share: the rows, the scorable rows' texts, and what the summary records."""

    opts: EvaluateOptions
    rows: Rows
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


def start_run(
    frame: pd.DataFrame, opts: EvaluateOptions, cf2_column: str | None, metrics: list[str], hook: ProgressHook
) -> EvaluateRun:
    """Each row's texts, and the rows that cannot be scored (with the reason in their status)."""
    n = len(frame)
    rows = Rows(n)
    origs = column_texts(frame, opts.text_column, ())
    cfs = column_texts(frame, opts.cf_column, opts.missing_markers)
    contexts = column_texts(frame, opts.context_column, ()) if opts.context_column else None
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
    return EvaluateRun(
        opts,
        rows,
        valid,
        v_orig=[origs[r] or "" for r in valid],
        v_cf=[cfs[r] or "" for r in valid],
        cf2s=column_texts(frame, cf2_column, opts.missing_markers),
        contexts=contexts,
        targets=[cell_text(v) for v in frame[opts.target_column].tolist()] if opts.target_column else None,
        hook=hook,
    )


@dataclass(frozen=True)
class StageContext:
    """What the stages get beyond the run: the second counterfactual's column and the models given by the caller."""

    cf2_column: str | None
    classifier: CachedClassifier | None
    judge_llm: Any


Stage = Callable[["EvaluateRun", list[str], StageContext], None]


def card_stages(run: EvaluateRun, metrics: list[str], ctx: StageContext) -> None:
    """The stages the chosen metrics' cards name (``MetricCard.stage``), each once, in :func:`stage_order`: the text
    stage's followers first, then the models."""
    wanted = {CARDS[m].stage for m in metrics if CARDS[m].stage is not None}
    scored = {card.stage: card for card in CARDS.values() if card.model is not None}
    for name in stage_order():
        if name not in wanted:
            continue
        if name in STAGES:
            STAGES[name](run, metrics, ctx)
        else:
            _model_stage(run, scored[name])


def stage_order() -> list[str]:
    """Every evaluate stage in the order they run: the classifier and diversity, then each metric a model scores
    pair by pair (its card's ``model``, in card order), then the LLM judge, the slowest."""
    scored = [card.stage for card in CARDS.values() if card.model is not None and card.stage is not None]
    return [*BEFORE_MODELS, *dict.fromkeys(scored), *AFTER_MODELS]


def text_stages(run: EvaluateRun, metrics: list[str]) -> None:
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


def _diversity_stage(run: EvaluateRun, metrics: list[str], ctx: StageContext) -> None:
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


def _classifier_stage(run: EvaluateRun, metrics: list[str], ctx: StageContext) -> None:
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


def _model_stage(run: EvaluateRun, card: MetricCard) -> None:
    """A metric a model scores pair by pair (its card's :class:`~counterfair.metrics.cards.ModelScoring`: perplexity,
    BERTScore, yours): the worker built once here or per Ray worker, its columns written, each row's failure and note,
    and what the whole run should know."""
    scoring, name = card.model, card.stage
    rows, valid, opts = run.rows, run.valid, run.opts
    if scoring is None or name is None or not valid:
        return
    with run.stage(name):
        factory = functools.partial(scoring.worker, *(getattr(opts, option) for option in scoring.options))
        items: list[Any] = list(zip(run.v_cf, run.v_orig, strict=True)) if scoring.pairs else list(run.v_cf)
        result, run.signatures[name] = _run_scorer(factory, items, opts, run.hook, name)
        for field_name, column in scoring.columns.items():
            rows.column(column)[valid] = getattr(result, field_name)
        for i, reason in enumerate(result.row_failures()):
            if reason is not None:
                rows.fail(valid[i], name, reason)
        for i, note in enumerate(result.row_notes()):
            if note is not None:
                rows.notes[valid[i]].append(note)
        if notice := result.notice():
            run.notices.append(notice)


def _text_quality_stage(run: EvaluateRun, metrics: list[str], ctx: StageContext) -> None:
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
    rows: Rows, valid: list[int], texts: list[str], llm: Any, hook: ProgressHook, log: list[dict[str, Any]]
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
        rows: Rows,
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
    rows: Rows,
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


#: the evaluate stages that compute the model-backed (and second-counterfactual) metrics, in the order they run; a
#: metric's card names its stage (MetricCard.stage), so evaluate loops over the chosen cards, not over metric names
STAGES: dict[str, Stage] = {
    "diversity": _diversity_stage,
    "classifier": _classifier_stage,
    "text_quality": _text_quality_stage,
}
BEFORE_MODELS = ("diversity", "classifier")  # the stages before the model-scored metrics' (stage_order)
AFTER_MODELS = ("text_quality",)

#: a stage's cost on 2 CPU cores: (seconds to load its model, seconds per word of the texts it reads), measured in
#: benchmarks/evaluate_speed.py (perplexity 175 tokens/s, BERTScore 0.125 s per IMDB pair) and llm_judge.py (3 s per
#: 41-word text); a rough guide, said before the work starts
STAGE_COST: dict[str, tuple[float, float]] = {
    "classifier": (2.0, 0.0001),
    "perplexity": (15.0, 0.0078),
    "bertscore": (5.0, 0.0004),
    "text_quality": (15.0, 0.07),
}
