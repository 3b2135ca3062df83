"""Counterfactuals of counterfactuals (paper 002): feed an editor its own output, step after step.

At step k the editor edits f_{k-1}(x) (f_0(x) = x) and, among its candidates, the one with the smallest word
Levenshtein distance that flips the classifier's prediction is chosen, else the one with the smallest distance.
With d_k = d(f_k(x), f_{k-1}(x)):

* minimality@k = mean d_k;
* inc@k (paper 002 eq. 1-2) = mean over texts of (1/k) sum_{i=1..k} relu(d_{i+1} - d_i) — a positive value proves the
  editor missed a smaller edit, since the previous text was reachable at distance d_i. inc@k needs k + 1 edits, so
  ``steps = n`` applies the editor n + 1 times and reports inc@1 .. inc@n;
* flip-rate@k = share of texts whose predicted label changed at step k;
* probability@k = mean probability of the step's target label after the edit;
* ppl-base@k and ppl-fine@k = perplexity of f_k(x) under a general LM and under the same LM adapted to the domain
  (:func:`adapt_lm`).

A text whose editor returns no candidate at some step stops there (status ``stopped:no_candidate``; for an LLM
editor whose prompt would not fit the model's context, ``stopped:too_long_for_llm_context``); later steps have no
row values. Multi-class targets are the second most probable class.

Texts are processed one after another, all n + 1 edits of a text before the next text, and each finished text is
checkpointed in ``DIR/.work/done.jsonl``: a rerun with the same ``DIR``, options and input resumes (the shared
run-directory rules of :mod:`counterfair.checkpoint`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Required, TypedDict

import numpy as np
import pandas as pd

from ... import __version__, vocabulary
from ...classifiers import CachedClassifier
from ...editors.base import EditorBase
from ...errors import ConfigError
from ...io import read_texts
from ...jsontypes import JSONObject
from ...metrics.functional import contrast_labels, flipped_one
from ...progress import NullProgress, ProgressHook
from ...records import knob, option, options_signature
from ...results import TableResult
from ...summaries import ClassifierInfo, EditorInfo, FeedbackStep, FeedbackSummary
from ...text import MAX_TEXT_CHARS, TOKENS, skip_reason, tokenize_batch, word_distance
from ...writing import missing_as_nan, nan_to_none


@dataclass
class FeedbackOptions:
    editor: str = "synonym"
    # the classifier's own identity joins the run's (claim_run_dir)
    classifier: str = knob("imdb-sentiment", help="Classifier the editor tries to flip.")
    steps: int = option(5, help="Feedback steps n (the editor runs n + 1 times; inc@1..inc@n).")
    text_column: str = option("text", help="Column with the texts.")
    llm: str = option("llamacpp:qwen2.5-coder-1.5b-instruct", help="LLM for mask_fill and llm_flip.")
    ppl_model: str | None = option("gemma-3-270m", help="General LM for ppl-base ('none' to skip).")
    ppl_fine_model: str | None = option(None, help="Domain-adapted LM for ppl-fine (see counterfair adapt-lm).")
    ppl_steps: str = option(
        "all", help="Perplexity of every step's text ('all') or of the first and last only ('ends')."
    )
    label_names: dict[str, str] | None = option(None, help="Names the LLM editors call the labels by (label -> name).")
    seed: int = option(0, help="Seed.")
    limit: int | None = option(None, help="Only the first N texts.")
    id_column: str | None = option(None, help="Column with unique ids (default: row number).")
    max_text_chars: int = option(MAX_TEXT_CHARS, help=vocabulary.MAX_TEXT_CHARS)
    encoding: str = option("utf-8", help=vocabulary.ENCODING)  # of the input file (a byte-order mark overrides it)
    # how minimality and inc@n count tokens: words (whitespace ignored) or whitespace (paper 002's added space counts)
    tokens: str = field(
        default="words",
        metadata={
            "later": True,
            "help": (
                "How minimality and inc@n count tokens: words (the tokenizer's; a whitespace-only edit is 0) "
                "or whitespace (split at spaces, as paper 002 counts an added space: 'awful !' vs 'awful!' is "
                "2)."
            ),
        },
    )

    def __post_init__(self) -> None:
        if self.tokens not in TOKENS:
            raise ConfigError(f"tokens must be one of {', '.join(TOKENS)}, not {self.tokens!r}")
        if self.steps < 1:
            raise ConfigError("steps must be at least 1")
        if self.ppl_steps not in ("all", "ends"):
            raise ConfigError(f"ppl_steps must be 'all' or 'ends', not {self.ppl_steps!r}")
        from ...editors.registry import editor_forms, editor_names

        if self.editor.split(":", 1)[0] not in editor_names("feedback"):
            raise ConfigError(f"unknown editor {self.editor!r}; use one of {', '.join(editor_forms('feedback'))}")


def build_editor(options: FeedbackOptions, classifier: CachedClassifier) -> EditorBase:
    """The feedback editor from the one registry (:mod:`counterfair.editors.registry`)."""
    from ...editors.registry import EditorContext
    from ...editors.registry import build_editor as build
    from ...llm import load_llm

    context = EditorContext(
        llm=lambda: load_llm(options.llm), classifier=classifier, seed=options.seed, label_names=options.label_names
    )
    return build(options.editor, context)


def select(current: str, candidates: Sequence[Any], flips: Sequence[bool], tokens: str = "words") -> int | None:
    """Paper 002's rule: the minimal-distance candidate that flips, else the minimal-distance candidate."""
    if not candidates:
        return None
    distances = [word_distance(current, c.text, tokens=tokens) for c in candidates]
    flipping = [i for i, f in enumerate(flips) if f]
    pool = flipping or list(range(len(candidates)))
    return min(pool, key=lambda i: (distances[i], i))


def inconsistency(distances: Sequence[float], k: int) -> float:
    """inc@k for one text: (1/k) sum_{i=1..k} relu(d_{i+1} - d_i); NaN if fewer than k + 1 distances."""
    if len(distances) < k + 1 or any(math.isnan(d) for d in distances[: k + 1]):
        return math.nan
    return sum(max(0.0, distances[i + 1] - distances[i]) for i in range(k)) / k


@options_signature(FeedbackOptions, skip=("editor", "classifier"))
def feedback(
    texts: Any,
    editor: str | EditorBase = "synonym",
    classifier: Any = "imdb-sentiment",
    *,
    steps: int = 5,
    progress: ProgressHook | bool | None = None,
    **options: Any,
) -> FeedbackResult:
    """Counterfactuals of counterfactuals in memory (paper 002): ``editor`` (a registered name or an editor object)
    applied ``steps + 1`` times to its own output, trying to flip ``classifier`` (anything ``as_classifier`` takes);
    ``options`` are :class:`FeedbackOptions`'s fields (``llm``, ``ppl_model``, ``seed``, ...)."""
    from ...checkpoint import MemorySink
    from ...classifiers import as_classifier
    from ...needs import require_in_memory
    from ...records import make_options

    name = editor if isinstance(editor, str) else f"external:{editor.name}"  # an editor object: recorded by name
    asked = {"steps": steps, "editor": name, **options}
    require_in_memory(FeedbackOptions, asked, classifier=classifier, editor=editor)  # before any work
    clf = as_classifier(classifier)
    opts = make_options(FeedbackOptions, {"editor": name, "classifier": clf.spec, "steps": steps, **options})
    ed = editor if isinstance(editor, EditorBase) else build_editor(opts, clf)
    origin, ids, source_texts = read_input(texts, opts)
    sink: MemorySink[ChainRecord, ChainRecord] = MemorySink(key=lambda r: r["text_id"])
    from ...progress import resolve_progress

    hook = resolve_progress(progress)
    table, summary = feedback_core(source_texts, ids, ed, clf, opts, sink=sink, origin=origin, progress=hook)
    return FeedbackResult(table, summary_json(summary))


def read_input(source: Any, opts: FeedbackOptions) -> tuple[str, list[str], list[str]]:
    """Feedback's input (:func:`~counterfair.io.read_texts`): its origin, the row ids, the texts ("" when empty)."""
    read = read_texts(
        source, text_column=opts.text_column, id_column=opts.id_column, encoding=opts.encoding, limit=opts.limit
    )
    return read.origin, read.ids, read.filled()


def feedback_core(
    texts: list[str],
    ids: list[str],
    editor: EditorBase,
    clf: CachedClassifier,
    opts: FeedbackOptions,
    *,
    sink: Any,
    origin: str,
    progress: ProgressHook | None = None,
) -> tuple[pd.DataFrame, FeedbackSummary]:
    """Every text's chain of ``opts.steps + 1`` edits not yet in ``sink.done`` (a checkpoint or memory), then the
    steps table, perplexities and the summary."""
    hook = progress or NullProgress()
    applications = opts.steps + 1
    todo = [i for i in range(len(texts)) if i not in sink.done]
    started = time.perf_counter()
    hook.start(f"{editor.name}: {applications} edits per text", len(todo))
    for i in todo:
        rows = _edit_chain(i, texts[i], applications, editor, clf, opts.max_text_chars, opts.tokens)
        sink.add([{"text_id": i, "rows": rows}])
        hook.advance(1)
    rows = [row for i in range(len(texts)) for row in sink.done[i]["rows"]]
    table = pd.DataFrame(rows).sort_values(["text_id", "step"], kind="stable").reset_index(drop=True)
    table.insert(1, "input_id", [ids[int(i)] for i in table["text_id"]])
    _add_perplexities(table, opts, applications, hook)
    elapsed = time.perf_counter() - started
    summary = _summary(table, len(texts), applications, opts, clf, editor, origin, elapsed, len(texts) - len(todo))
    return missing_as_nan(table), summary


class FeedbackResult(TableResult[FeedbackSummary]):
    """``steps`` (one row per text and edit), ``by_step`` (minimality, flip rate, probability, perplexities per
    step), ``inconsistency`` (inc@1..n), ``summary``."""

    def _saved(self, target: Path) -> None:
        from ...views.page import write_summary_page
        from .page import feedback_figures, feedback_page

        write_summary_page(target, feedback_page, feedback_figures)

    _table_file = "steps.csv"

    def _console(self) -> Any:
        from ...views.page import to_console
        from .page import feedback_page

        return to_console(feedback_page(self.summary))

    _summary_type = FeedbackSummary

    def __init__(self, steps: pd.DataFrame, summary: Mapping[str, Any] | FeedbackSummary) -> None:
        self.steps = steps
        self._keep_summary(summary)  # the record the core made, or a summary read

    def _table(self) -> pd.DataFrame:
        return self.steps

    @property
    def by_step(self) -> pd.DataFrame:
        steps = {k: v.to_dict() for k, v in (self.typed_summary.steps or {}).items()}
        return pd.DataFrame.from_dict(steps, orient="index").rename_axis("step")

    @property
    def inconsistency(self) -> dict[str, float | None]:
        return dict(self.typed_summary.inconsistency)

    def _repr_html_(self) -> str:
        """The notebook view: the report page's verdict and the first rows of its tables."""
        from ...views.page import to_notebook_html
        from .page import feedback_page

        return to_notebook_html(feedback_page(self.summary))


class StepRow(TypedDict, total=False):
    """One edit of a feedback chain (a row of steps.csv): its status always; the rest where the edit was made."""

    text_id: Required[int]
    step: Required[int]
    status: Required[str]
    text: str
    words_before: int
    words: int
    distance: float
    distance_norm: float
    flipped: bool
    label_before: str
    label_after: str | None
    p_target: float
    candidates: int
    seconds_per_text: float


class ChainRecord(TypedDict):
    """One text's finished chain, as the checkpoint keeps it (``.work/done.jsonl``)."""

    text_id: int
    rows: list[StepRow]


class PairedIncTest(TypedDict):
    """Paired t-test of per-text inc@k between two feedback runs (``counterfair feedback-ttest``)."""

    k: int
    texts: int
    mean_a: float
    mean_b: float
    t: float
    p_value: float


def _edit_chain(
    text_id: int,
    text: str,
    applications: int,
    editor: EditorBase,
    clf: CachedClassifier,
    max_chars: int,
    tokens: str = "words",
) -> list[StepRow]:
    """The editor applied ``applications`` times to one text, each time to its previous output."""
    reason = skip_reason(text, max_chars)
    if reason:
        return [{"text_id": text_id, "step": 1, "status": f"skipped:{reason}"}]
    rows: list[StepRow] = []
    current = text
    for step in range(1, applications + 1):
        before = clf.predict_proba([current])
        if not np.isfinite(before).all():  # the classifier gave no score: no label to flip, the chain ends here
            rows.append({"text_id": text_id, "step": step, "status": "partial:classifier_returned_nan"})
            break
        label_before = int(before[0].argmax())
        target = int(contrast_labels(before)[0])
        fits = getattr(editor, "fits", None)  # LLM editors: a text (or an earlier output) may outgrow the context
        if fits is not None and not fits(current):  # checked here for the status; the editor would return nothing
            rows.append({"text_id": text_id, "step": step, "status": "stopped:too_long_for_llm_context"})
            break
        t0 = time.perf_counter()
        cands = editor.edit([current])[0]
        seconds = time.perf_counter() - t0
        if not cands:
            rows.append(
                {"text_id": text_id, "step": step, "status": "stopped:no_candidate", "seconds_per_text": seconds}
            )
            break
        proba = clf.predict_proba([c.text for c in cands])
        scored = np.isfinite(proba).all(axis=1)  # a NaN row is never a flip
        flips = [bool(ok) and flipped_one(before[0], p) for p, ok in zip(proba, scored, strict=True)]
        choice = select(current, cands, flips, tokens)
        assert choice is not None
        chosen = cands[choice]
        d = word_distance(current, chosen.text, tokens=tokens)
        rows.append(
            {
                "text_id": text_id,
                "step": step,
                "status": "ok" if scored[choice] else "partial:classifier_returned_nan",
                "text": chosen.text,
                "words_before": len(current.split()),
                "words": len(chosen.text.split()),
                "distance": d,
                "distance_norm": d
                / max(1, len(current.split() if tokens == "whitespace" else tokenize_batch([current])[0])),
                "flipped": bool(flips[choice]),
                "label_before": clf.labels[label_before],
                "label_after": clf.labels[int(proba[choice].argmax())] if scored[choice] else None,
                "p_target": float(proba[choice][target]),
                "candidates": len(cands),
                "seconds_per_text": seconds,
            }
        )
        current = chosen.text
    return rows


def _add_perplexities(table: pd.DataFrame, opts: FeedbackOptions, applications: int, hook: ProgressHook) -> None:
    from ...metrics.perplexity import PerplexityScorer

    ok = table["status"] == "ok" if "status" in table else pd.Series(dtype=bool)
    if opts.ppl_steps == "ends" and len(ok):
        ok &= table["step"].isin([1, applications])
    for column, model in (("ppl_base", opts.ppl_model), ("ppl_fine", opts.ppl_fine_model)):
        table[column] = np.nan
        if model and ok.any():
            result = PerplexityScorer(model).score(table.loc[ok, "text"].astype(str).tolist(), progress=hook)
            table.loc[ok, column] = result.perplexity


def _step_entry(part: pd.DataFrame, n_texts: int) -> FeedbackStep:
    """One feedback step's means over the texts edited at that step (paper 002's @k figures)."""

    def mean(column: str, *, any_value: bool = False) -> float | None:
        if not len(part) or (any_value and not part[column].notna().any()):
            return None
        return float(part[column].mean())

    return FeedbackStep(
        texts=len(part),
        minimality=mean("distance"),
        minimality_norm=mean("distance_norm"),
        flip_rate=mean("flipped"),
        flip_rate_all_texts=float(part["flipped"].sum() / n_texts) if n_texts else None,
        probability=mean("p_target"),
        ppl_base=mean("ppl_base", any_value=True),
        ppl_fine=mean("ppl_fine", any_value=True),
        seconds_per_text=mean("seconds_per_text"),
        mean_words=mean("words", any_value=True),
    )


def _summary(
    table: pd.DataFrame,
    n_texts: int,
    applications: int,
    opts: FeedbackOptions,
    clf: CachedClassifier,
    editor: EditorBase,
    origin: str,
    elapsed: float,
    resumed: int,
) -> FeedbackSummary:
    step_columns = (
        "text",
        "distance",
        "distance_norm",
        "flipped",
        "p_target",
        "seconds_per_text",
        "label_after",
        "words",
        "words_before",
    )
    table = table.reindex(columns=[*table.columns, *(c for c in step_columns if c not in table.columns)])
    ok = table[table["status"] == "ok"] if not table.empty else table  # a run where no text got an edit: no columns
    per_step = {str(step): _step_entry(ok[ok["step"] == step], n_texts) for step in range(1, applications + 1)}
    first = ok[ok["step"] == 1] if not ok.empty else ok
    # paper 002 App. D: how the texts' length drifts as the editor is fed its own output (step 0: the inputs)
    length = {"0": float(first["words_before"].mean()) if len(first) and first["words_before"].notna().any() else None}
    length |= {step: entry.mean_words for step, entry in per_step.items()}
    distances = (
        {
            str(t): g.set_index("step")["distance"].reindex(range(1, applications + 1)).tolist()
            for t, g in ok.groupby("text_id")
        }
        if not ok.empty
        else {}
    )
    inc: dict[str, float | None] = {}
    per_text_inc: dict[str, dict[str, float]] = {}  # k -> text id -> inc@k, for paired tests between editors
    for k in range(1, applications):
        values = {t: inconsistency(d, k) for t, d in distances.items()}
        finite = {t: v for t, v in values.items() if not math.isnan(v)}
        per_text_inc[str(k)] = finite
        inc[f"inc@{k}"] = float(np.mean(list(finite.values()))) if finite else None
    return FeedbackSummary(
        counterfair_version=__version__,
        command="feedback",
        input={"source": origin, "texts": n_texts},
        editor=EditorInfo(name=editor.name, params=editor.params()),
        classifier=ClassifierInfo.from_dict(clf.summary_info()),  # the signature's own keys, in their order
        applications=applications,
        inconsistency=inc,
        inconsistency_by_text=per_text_inc,
        steps=per_step,
        mean_words_by_step=length,
        status={str(k): int(v) for k, v in table["status"].value_counts().items()} if not table.empty else {},
        options={**asdict(opts), "classifier": clf.spec},
        seconds=round(elapsed, 1),
        resumed_texts=resumed,
    )


def summary_json(summary: FeedbackSummary) -> JSONObject:
    """The summary as ``summary.json`` holds it (and ``result.summary``): its fields in order, NaN written None."""
    converted: JSONObject = nan_to_none(summary.to_dict())
    return converted


def paired_inc_test(summary_a: Mapping[str, Any], summary_b: Mapping[str, Any], k: int) -> PairedIncTest | None:
    """Paired t-test of per-text inc@k between two feedback runs (paper 002's comparison of editors), over the
    texts both runs have; None when fewer than two texts are common or the differences are all equal."""
    from scipy.stats import ttest_rel

    ra = summary_a["inconsistency_by_text"].get(str(k), {})
    rb = summary_b["inconsistency_by_text"].get(str(k), {})
    common = sorted(set(ra) & set(rb), key=lambda t: (len(t), t))
    va, vb = np.array([ra[t] for t in common]), np.array([rb[t] for t in common])
    if len(common) < 2 or np.std(va - vb) == 0:
        return None
    stat = ttest_rel(va, vb)
    return {
        "k": k,
        "texts": len(common),
        "mean_a": float(va.mean()),
        "mean_b": float(vb.mean()),
        "t": float(stat.statistic),
        "p_value": float(stat.pvalue),
    }


def adapt_lm(
    texts: Sequence[str],
    out_dir: str | Path,
    *,
    base: str = "gemma-3-270m",
    train_layers: int = 2,
    epochs: int = 1,
    lr: float = 1e-4,
    max_tokens: int = 256,
    batch_size: int = 4,
    seed: int = 0,
    progress: ProgressHook | None = None,
) -> Path:
    """Adapt a causal LM to domain texts (for ppl-fine): fine-tune its last ``train_layers`` blocks and final norm
    for ``epochs`` passes, everything else frozen, on the CPU. Saves a transformers directory."""
    import torch

    from ...models import load_causal_lm

    hook = progress or NullProgress()
    torch.manual_seed(seed)
    lm = load_causal_lm(base)
    import copy

    model = copy.deepcopy(lm.model)
    tokenizer = lm.tokenizer
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    blocks = None
    for name in ("model.layers", "model.model.layers", "transformer.h"):
        obj: Any = model
        try:
            for part in name.split("."):
                obj = getattr(obj, part)
            blocks = obj
            break
        except AttributeError:
            continue
    if blocks is None:
        raise ConfigError(f"{base}: cannot find the transformer blocks to adapt")
    trainable = [p for block in list(blocks)[-train_layers:] for p in block.parameters()]
    norm = getattr(getattr(model, "model", model), "norm", None)
    if norm is not None:
        trainable += list(norm.parameters())
    for parameter in trainable:
        parameter.requires_grad_(True)
    optimizer = torch.optim.AdamW(trainable, lr=lr)
    encoded = [ids[:max_tokens] for ids in tokenizer(list(texts), add_special_tokens=True)["input_ids"] if len(ids) > 2]
    order = np.random.default_rng(seed).permutation(len(encoded))
    steps = epochs * math.ceil(len(encoded) / batch_size)
    hook.start(f"adapt {lm.model_id} to {len(encoded)} texts", steps)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    model.train()
    for _ in range(epochs):
        for start in range(0, len(order), batch_size):
            batch = [encoded[i] for i in order[start : start + batch_size]]
            width = max(len(b) for b in batch)
            ids = torch.full((len(batch), width), pad)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, b in enumerate(batch):
                ids[row, : len(b)] = torch.tensor(b)
                mask[row, : len(b)] = 1
            labels = ids.masked_fill(mask == 0, -100)
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            hook.advance(1)
    model.eval()
    target = Path(out_dir)
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return target
