"""``counterfair generate``: counterfactuals of attribute-referencing texts by several methods.

Methods: ``ablation`` and ``substitution`` (paper 000's word lists), ``swap`` (paper 001's Φ_A over identity
terms, guarded), ``llm`` (paper 000's few-shot LLM rewriting with filters, ranking and up to 5 attempts).

Outputs in ``DIR``:

* ``candidates.csv`` — every candidate of every method with its filter verdicts and scores (``status`` is ``ok`` or
  ``filtered:<reason>+<reason>``), and whether it was selected;
* ``counterfactuals.csv`` — one row per input and method, in input order: the selected counterfactual, or the
  reason there is none (``unchanged:no_attribute_term``, ``failed:no_candidate_passed_filters``, ...);
* ``summary.json`` — counts, shares and score distributions per method, the options and model signatures.

Work is checkpointed per input in ``DIR/.work/done.jsonl``; a rerun with the same ``DIR`` and options resumes
where the last one stopped (a half-written last line is discarded and redone).
"""

from __future__ import annotations

import json
import math
import time
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TypedDict, cast

import numpy as np
import pandas as pd

from ... import __version__, vocabulary
from ...checkpoint import MemorySink
from ...detectors import DETECTORS_WITH_LLM
from ...editors.base import EditorBase
from ...editors.filters import CandidateFilter, FilterConfig, Verdict, best
from ...editors.registry import (
    IDENTITY_SWAP,
    default_editors,
    editor_names,
    editor_spec,
    resolve_detector,
    swaps_identities,
)
from ...errors import ConfigError, LLMInputsFailed
from ...io import (
    read_texts,
)
from ...jsontypes import JSONObject
from ...lexicons.attributes import Attribute, load_attribute
from ...metrics.bertscore import BERTScoreScorer
from ...metrics.functional import summarize
from ...progress import NullProgress, ProgressHook
from ...records import (
    Candidate,
    Counterfactual,
    Counterfactuals,
    fingerprint,
    knob,
    make_status,
    option,
    options_signature,
    run_identity,
)
from ...summaries import GenerateSummary
from ...text import MAX_TEXT_CHARS, printable, skip_reason


def normalize_methods(methods: Sequence[str], command: str = "generate") -> list[str]:
    """Lower-cased, offered by ``command`` (:mod:`counterfair.editors.registry`), in the registry's order; an unknown
    or empty list is an error naming the known ones."""
    known = editor_names(command)
    wanted = [m.strip().lower() for m in methods if m.strip()]
    unknown = [m for m in wanted if m not in known]
    if unknown or not wanted:
        raise ConfigError(f"unknown method(s) {unknown or wanted}; known methods: {', '.join(known)}")
    return [m for m in known if m in wanted]


def is_sampled(method: str) -> bool:
    """Sampled from a language model: filtered, ranked, up to max_attempts."""
    return editor_spec(method).sampled


def is_scored(method: str, score_methods: list[str] | None) -> bool:
    """Whether ``method``'s candidates get BLEU/BERTScore/attribute verdicts (``GenerateOptions.score_methods``)."""
    if score_methods is None:
        return is_sampled(method)
    return "all" in score_methods or method in score_methods


def uses_sampled_method(options: Any) -> bool:
    """Whether a generate or audit run has a sampled method (its retry rule then applies)."""
    return any(is_sampled(m) for m in options.methods)


#: a text without a passing candidate is sampled again only while its nearest candidate came this near to passing
#: every filter (``Verdict.nearness``) and, with a RETRY_PATIENCE, its nearness grew in one of its last that many
#: attempts; retry_nearness 0 retries every such text up to max_attempts, as runs did before (#50,
#: benchmarks/llm_retries.py)
RETRY_NEARNESS = 0.8
RETRY_PATIENCE: int | None = None  # 2 saved more on two attributes and lost too many on the others (llm_retries.py)


class RetryRule:
    """Which texts without a passing candidate a sampled method samples again (#50). In the 200-text benchmark the
    texts that never passed took 47 % of the samples: short texts every rewrite changes too much (no candidate comes
    near) and texts stuck just under a threshold (their nearness stops growing)."""

    def __init__(self, nearness: float, patience: int | None = RETRY_PATIENCE) -> None:
        self.nearness, self.patience = nearness, patience
        self._near: dict[int, float] = {}
        self._grew: dict[int, int] = {}  # the last attempt at which each text's nearness grew

    def saw(self, k: int, attempt: int, nearest: float) -> None:
        """Text ``k``'s candidates of ``attempt`` came ``nearest`` near to passing."""
        if attempt == 1 or nearest > self._near.get(k, 0.0):
            self._grew[k] = attempt
        self._near[k] = max(self._near.get(k, 0.0), nearest)

    def again(self, k: int, attempt: int) -> bool:
        """Whether text ``k``, without a passing candidate after ``attempt``, is sampled again."""
        if self.nearness <= 0:
            return True
        stalled = self.patience is not None and attempt - self._grew.get(k, attempt) >= self.patience
        return self._near.get(k, 0.0) >= self.nearness and not stalled


def _uses_polyjuice_lm(o: Any) -> bool:
    return any(editor_spec(m).lm == "polyjuice_lm" for m in o.methods)


@dataclass
class GenerateOptions:
    attribute: str = option("islam", help=vocabulary.ATTRIBUTE)
    methods: list[str] = field(default_factory=lambda: list(default_editors("generate")))
    text_column: str = option("text", help="Column with the texts.")
    id_column: str | None = option(None, help="Column with unique ids (default: row number).")
    identities: str | None = option(None, help="Identity terms for swap: dixon50 (default), a file, or t1,t2,...")
    guard: str | None = option("spacy", help="Skip non-identity uses of ambiguous terms ('a black car').")
    llm: str = option(
        "llamacpp:qwen2.5-coder-1.5b-instruct", help="LLM: llamacpp:NAME|FILE.gguf, openai:URL[#MODEL], hf:DIR."
    )
    # a causal LM directory or hub id trained on Polyjuice's format (part of the identity of runs that use it)
    polyjuice_model: str = field(
        default="uw-hai/polyjuice",
        metadata={
            "applies": _uses_polyjuice_lm,
            "help": (
                "The polyjuice method's causal LM: a transformers directory or hub id (from your Hugging Face "
                "cache) trained on Polyjuice's format."
            ),
        },
    )
    prompt_style: str = option("turns", help="turns (chat models) or plain (next-token LMs).")
    instruction: str | None = option(None, help="Instruction template; default 'not about {subject}'.")
    samples: int = option(16, help="LLM samples per input and attempt.")
    temperature: float = option(1.0, help="LLM sampling temperature.")
    top_k: int = option(40, help="LLM sampling: the k most probable tokens.")
    max_attempts: int = option(5, help="Attempts when no sample passes the filters.")
    # a text is sampled again (up to max_attempts) only while a candidate of it came this near to passing every filter
    # (Verdict.nearness: the smallest of its scores over their thresholds; 0: always retry); part of the identity of
    # runs with a sampled method only
    retry_nearness: float = field(
        default=RETRY_NEARNESS,
        metadata={"applies": uses_sampled_method, "before": 0.0, "help": vocabulary.RETRY_NEARNESS},
    )
    min_bleu: float = option(0.5, help="Filter: minimum BLEU against the original.")
    min_bertscore: float = option(0.5, help="Filter: minimum BERTScore F1.")
    max_attribute_prob: float = option(0.5, help="Filter: maximum attribute-reference probability.")
    # keyword | keyword+llm | llm | mlp:DIR[#LABEL] | auto: keyword+llm when a method loads the LLM anyway, else keyword
    detector: str = option(
        "auto",
        help=(
            "Attribute detector: keyword, keyword+llm (also sees allusions: 'during Eid'), "
            "mlp:DIR[#LABEL], llm; auto: keyword+llm when the llm method runs, else keyword."
        ),
    )
    seed: int = option(0, help="Seed of sampling and of the swap example shown per input.")
    reuse_prefix: bool = knob(True, help="In-process LLM: reuse the shared prompt prefix's cache across samples.")
    n_ctx: int = knob(4096, help="In-process LLM: context length in tokens.")
    chunk: int = knob(64, help="Texts per call of a method that is not sampled; a checkpoint after each.")
    llm_chunk: int = knob(4, help="Texts per LLM call: their samples are drawn together; a checkpoint after each.")
    llm_parallel: int | None = knob(None, help=vocabulary.LLM_PARALLEL)
    llm_concurrency: int | None = knob(None, help=vocabulary.LLM_CONCURRENCY)
    engine: str = knob("local", help="local, or ray: LLM rewriting on Ray workers (one LLM each).")
    address: str | None = knob(None, help="Ray cluster address (default: start a local Ray).")
    # methods whose candidates get BLEU/BERTScore/attribute verdicts: None, the sampled ones (which the filters judge;
    # paper 000 filters only the LLM's samples), the others only the detector's attribute probability; ["all"]: every
    # method (BERTScore needs counterfair[metrics]); []: none
    score_methods: list[str] | None = option(
        None,
        help=(
            "Methods whose candidates get BLEU/BERTScore/attribute scores: default the sampled ones (llm, "
            "polyjuice), which the filters judge; 'all' for every method (needs counterfair\\[metrics])."
        ),
    )
    fmt: str | None = option(None, help="Input format if the suffix does not tell.")
    encoding: str = option("utf-8", help=vocabulary.ENCODING)
    max_text_chars: int = option(MAX_TEXT_CHARS, help=vocabulary.MAX_TEXT_CHARS)
    # en | fr | de: built-in packs, default identity set, BERTScore encoder (English runs keep the identity they had
    # before languages existed)
    language: str = field(default="en", metadata={"later": True, "help": vocabulary.LANGUAGE})

    def __post_init__(self) -> None:
        from ...languages import get_language

        self.language = get_language(self.language).code
        self.methods = normalize_methods(self.methods)
        self.detector = resolve_detector(self.detector, self.methods)
        if self.max_attempts < 1 or self.samples < 1:
            raise ConfigError("samples and max_attempts must be at least 1")
        if not 0.0 <= self.retry_nearness <= 1.0:
            raise ConfigError(f"retry_nearness must be between 0 and 1, got {self.retry_nearness}")
        for name in ("llm_chunk", "llm_parallel", "llm_concurrency"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"{name} must be at least 1, got {value}")
        if self.max_text_chars < 0:
            raise ConfigError(f"max_text_chars must be 0 (no limit) or positive, got {self.max_text_chars}")
        # gender, names, nationality, an identity set: the pack's swap variants, as the audit runs it
        if self.swap_pack:
            others = [m for m in self.methods if not swaps_identities(m)]
            if self.methods == normalize_methods(list(default_editors("generate"))):
                self.methods = [IDENTITY_SWAP]
            elif others:
                raise ConfigError(
                    f"{self.attribute} is a swap pack: it makes swap variants only (--methods swap); "
                    f"{', '.join(others)} needs a word-list attribute such as islam, judaism, lgbq or transgender"
                )
            if self.identities not in (None, self.attribute):
                raise ConfigError(
                    f"--attributes {self.attribute} is a swap pack and names the swapped terms; leave out "
                    f"--identities {self.identities}"
                )
            self.identities = self.attribute
            if self.score_methods is None:
                self.score_methods = []  # no word-list attribute for a detector to look for

    @property
    def swap_pack(self) -> bool:
        """Whether ``attribute`` names a swap pack (``counterfair attributes list``: kind identity or gender)."""
        from ...lexicons.attributes import is_swap_attribute

        return is_swap_attribute(self.attribute)

    def fingerprint(self) -> str:
        """What must match for a rerun to resume (:func:`~counterfair.runs.run_identity`)."""
        return fingerprint(run_identity(self))


# the columns of candidates.csv, in order (one row per candidate, see _candidate_row)
CANDIDATE_COLUMNS = (
    "input_id", "row", "method", "candidate", "attempt", "text", "status", "passed", "bleu", "bertscore_f1",
    "attribute_prob", "rank_score", "selected", "source_term", "target_term", "source_split", "target_split",
    "edits", "raw", "finish_reason", "seed", "params_hash", "model_id",
)  # fmt: skip


COUNTERFACTUAL_COLUMNS = (
    "input_id", "row", "source_text", "method", "text", "status", "bleu", "bertscore_f1", "attribute_prob",
    "n_candidates", "attempts", "source_term", "target_term",
)  # fmt: skip


class GenerateResult:
    """What a generate run made. ``candidates`` (every candidate, possibly millions of rows for identity swaps
    over a large file) is read from ``candidates.csv`` when first used, not held from the run; an in-memory run
    (:func:`generate_frame`) holds them."""

    def __init__(
        self,
        candidates_path: Path | None,
        counterfactuals: pd.DataFrame | None,
        summary: Mapping[str, Any],
        candidates: pd.DataFrame | None = None,
    ) -> None:
        self.candidates_path = candidates_path
        self._counterfactuals = counterfactuals
        self.summary = dict(summary)
        self._candidates: pd.DataFrame | None = candidates

    @property
    def counterfactuals(self) -> pd.DataFrame:
        """One row per input and method; a run over an input read in blocks reads it from ``counterfactuals.csv``
        when first used."""
        if self._counterfactuals is None:
            assert self.candidates_path is not None
            numeric = ("row", "bleu", "bertscore_f1", "attribute_prob", "n_candidates", "attempts")
            frame = pd.read_csv(
                self.candidates_path.with_name("counterfactuals.csv"),
                dtype={
                    c: str
                    for c in ("input_id", "source_text", "method", "text", "status", "source_term", "target_term")
                },
                keep_default_na=False,
                na_values={c: [""] for c in (*numeric, "text", "source_term", "target_term")},
            )
            self._counterfactuals = frame.drop(columns="schema_version")
        return self._counterfactuals

    @property
    def typed_summary(self) -> GenerateSummary:
        """The summary as a typed record (:mod:`counterfair.summaries`)."""
        return GenerateSummary.from_dict(self.summary)

    @property
    def candidates(self) -> pd.DataFrame:
        if self._candidates is None:
            assert self.candidates_path is not None
            numeric = ("row", "candidate", "attempt", "bleu", "bertscore_f1", "attribute_prob", "rank_score", "seed")
            frame = pd.read_csv(
                self.candidates_path,
                dtype={c: str for c in CANDIDATE_COLUMNS if c not in (*numeric, "passed", "selected")},
                keep_default_na=False,  # texts stay texts ("NA", "null"); an empty text field is ""
                na_values={c: [""] for c in numeric},
            )
            self._candidates = frame.drop(columns="schema_version")
        return self._candidates

    def candidate_blocks(self, columns: Sequence[str], rows: int = 100_000) -> Iterator[pd.DataFrame]:
        """The candidates' ``columns`` (text columns: strings, as :attr:`candidates` gives them) about ``rows`` at a
        time, each block holding every candidate of its inputs (the run writes them input by input): what an
        audit over a large input reads of its identity swaps, never the whole table."""
        wanted = [c for c in CANDIDATE_COLUMNS if c in columns]
        if self._candidates is not None or self.candidates_path is None:
            yield from _whole_inputs(
                self.candidates[wanted].iloc[i : i + rows] for i in range(0, len(self.candidates), rows)
            )
            return
        reader = pd.read_csv(self.candidates_path, usecols=wanted, dtype=str, keep_default_na=False, chunksize=rows)
        with reader:
            yield from _whole_inputs(chunk[wanted] for chunk in reader)


def _whole_inputs(chunks: Iterable[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """``chunks`` of a table in input order, re-cut so that no input's rows are split between two (the last input
    of a chunk waits for the next)."""
    held: pd.DataFrame | None = None
    for chunk in chunks:
        frame = chunk if held is None else pd.concat([held, chunk], ignore_index=True)
        if frame.empty:
            continue
        ids = frame["input_id"].to_numpy()
        cut = len(ids)
        while cut > 0 and ids[cut - 1] == ids[-1]:
            cut -= 1
        if cut:
            yield frame.iloc[:cut].reset_index(drop=True)
        held = frame.iloc[cut:]
    if held is not None and not held.empty:
        yield held.reset_index(drop=True)


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class CandidateRow(TypedDict):
    """One candidate as ``candidates.csv`` holds it (and a generation record carries it)."""

    input_id: str
    row: int
    method: str
    candidate: int
    attempt: int
    text: str
    status: str
    passed: bool
    bleu: float | None
    bertscore_f1: float | None
    attribute_prob: float | None
    rank_score: float | None
    selected: bool
    source_term: str | None
    target_term: str | None
    source_split: str | None
    target_split: str | None
    edits: str
    raw: str | None
    finish_reason: str | None
    seed: int | None
    params_hash: str
    model_id: str


class GenerationRecord(TypedDict):
    """One method's result for one input, as the checkpoint and the run store keep it: its counterfactual row (the
    columns of ``counterfactuals.csv``), its candidates, and for an identity swap the occurrences found and blocked."""

    method: str
    row: int
    counterfactual: dict[str, Any]
    candidates: list[CandidateRow]
    occurrences: NotRequired[dict[str, int]]


class SlimRecord(TypedDict):
    """:func:`slim`: a finished record as memory keeps it, its candidates only counted."""

    method: str
    row: int
    counterfactual: dict[str, Any]
    occurrences: NotRequired[dict[str, int]]
    n_candidates: int
    n_passed: int


class FilterScores(TypedDict):
    bleu: float | None
    bertscore_f1: float | None
    attribute_prob: float | None


def _candidate_row(
    method: str, row: int, input_id: str, index: int, cand: Candidate, verdict: Verdict | None, selected: bool
) -> CandidateRow:
    meta = dict(cand.meta)
    out: CandidateRow = {
        "input_id": input_id,
        "row": row,
        "method": method,
        "candidate": index,
        "attempt": meta.pop("attempt", 0),
        "text": cand.text,
        "status": verdict.status if verdict else "ok",
        "passed": verdict.passed if verdict else True,
        "bleu": _json_safe(verdict.bleu) if verdict else None,
        "bertscore_f1": _json_safe(verdict.bertscore_f1) if verdict else None,
        "attribute_prob": _json_safe(verdict.attribute_prob) if verdict else None,
        "rank_score": _json_safe(verdict.rank_score) if verdict else None,
        "selected": selected,
        "source_term": meta.pop("source_term", None),
        "target_term": meta.pop("target_term", None),
        "source_split": meta.pop("source_split", None),
        "target_split": meta.pop("target_split", None),
        "edits": json.dumps([e.as_dict() for e in cand.edits]) if cand.edits else "",
        "raw": meta.pop("raw", None),
        "finish_reason": meta.pop("finish_reason", None),
        "seed": cand.seed,
        "params_hash": cand.params_hash,
        "model_id": ";".join(cand.model_ids),
    }
    return out


class Generator:
    """Builds the editors and filter once, then generates for a list of texts."""

    def __init__(self, options: GenerateOptions) -> None:
        self.opts = options
        # a swap pack has no word lists: its swap editor reads the pack (``identities``)
        self.attribute: Attribute | None = (
            None if options.swap_pack else load_attribute(options.attribute, options.language)
        )
        if self.attribute is not None and self.attribute.language != options.language:
            raise ConfigError(
                f"attribute {options.attribute!r} is in language {self.attribute.language!r} but the run's language "
                f"is {options.language!r}; pass --language {self.attribute.language}"
            )
        self._llm: Any = None
        self._polyjuice_lm: Any = None
        self._editors: dict[str, EditorBase] = {}
        self._filter: CandidateFilter | None = None

    @property
    def llm(self) -> Any:
        if self._llm is None:
            from ...llm import load_llm

            self._llm = load_llm(
                self.opts.llm,
                reuse_prefix=self.opts.reuse_prefix,
                n_ctx=self.opts.n_ctx,
                parallel=self.opts.llm_parallel,
                concurrency=self.opts.llm_concurrency,
            )
        return self._llm

    @property
    def polyjuice_lm(self) -> Any:
        if self._polyjuice_lm is None:
            from ...llm.hf import TransformersLLM
            from ...models import local_model_dir

            directory = local_model_dir(self.opts.polyjuice_model, what="polyjuice model")
            self._polyjuice_lm = TransformersLLM(str(directory), reuse_prefix=self.opts.reuse_prefix)
        return self._polyjuice_lm

    def samples_per_text(self, method: str) -> int:
        """Generations per text and attempt of a sampled method (what its progress bar counts)."""
        option = editor_spec(method).samples_option
        return int(getattr(self.opts, option)) if option else int(getattr(self.editor(method), "n", 16))

    def editor(self, method: str) -> EditorBase:
        if method not in self._editors:
            from ...editors.registry import EditorContext, build_editor

            opts = self.opts
            rewrite: dict[str, Any] = {"style": opts.prompt_style, "instruction": opts.instruction, "n": opts.samples}
            rewrite |= {"temperature": opts.temperature, "top_k": opts.top_k}
            from ...languages import get_language

            identities = opts.identities or (
                None if opts.language == "en" else get_language(opts.language).identity_set
            )
            context = EditorContext(
                self.attribute,
                identities,
                opts.guard,
                lambda: self.llm,
                seed=opts.seed,
                rewrite=rewrite,
                polyjuice_lm=lambda: self.polyjuice_lm,
            )
            self._editors[method] = build_editor(method, context)
        return self._editors[method]

    @property
    def filter(self) -> CandidateFilter:
        if self._filter is None:
            from ...detectors import load_detector

            detector = (  # a swap pack has no word list to look for: BLEU/BERTScore only
                None
                if self.attribute is None
                else load_detector(
                    self.opts.detector,
                    self.attribute,
                    llm=self.llm if self.opts.detector in DETECTORS_WITH_LLM else None,
                )
            )
            config = FilterConfig(self.opts.min_bleu, self.opts.min_bertscore, self.opts.max_attribute_prob)
            scorer = BERTScoreScorer.for_language(self.opts.language)
            self._filter = CandidateFilter(config, detector=detector, bertscore=scorer)
        return self._filter

    # ------------------------------------------------------------------ one method over a chunk of inputs

    def run_deterministic(
        self, method: str, rows: Sequence[int], ids: Sequence[str], texts: Sequence[str]
    ) -> list[GenerationRecord]:
        editor = self.editor(method)
        per_input = editor.edit(texts)
        flat = [(k, c) for k, cands in enumerate(per_input) for c in cands]
        scored = is_scored(method, self.opts.score_methods)
        if flat and scored:
            verdicts = self.filter.judge([texts[k] for k, _ in flat], [c.text for _, c in flat])
        elif self.opts.score_methods is None:  # by default nothing filtered, but the detector says what still refers
            verdicts = self.filter.attribute_verdicts([c.text for _, c in flat])
        else:
            verdicts = [Verdict() for _ in flat]  # not scored: no verdict, nothing filtered
        by_input: dict[int, list[tuple[Candidate, Verdict]]] = {}
        for (k, cand), verdict in zip(flat, verdicts, strict=True):
            by_input.setdefault(k, []).append((cand, verdict))
        records = []
        swapping = swaps_identities(method)
        for k, row in enumerate(rows):
            pairs = by_input.get(k, [])
            chosen = None
            if pairs:
                # the swap example shown per input depends on the seed and the text, not on its row
                seed = [self.opts.seed, _text_seed(texts[k])]
                chosen = int(np.random.default_rng(seed).integers(len(pairs))) if swapping else 0
            cand_rows = [_candidate_row(method, row, ids[k], i, c, v, i == chosen) for i, (c, v) in enumerate(pairs)]
            if chosen is None:
                reason = "no_identity_term" if swapping else "no_attribute_term"
                reason = (getattr(editor, "last_reasons", None) or [None] * len(texts))[k] or reason
                cf: dict[str, Any] = {"text": None, "status": make_status("unchanged", reason)}
            else:
                cf = {
                    "text": pairs[chosen][0].text,
                    "status": "ok",
                    **self._scores(pairs[chosen][1]),
                    "source_term": cand_rows[chosen]["source_term"],
                    "target_term": cand_rows[chosen]["target_term"],
                }
            records.append(self._record(method, row, ids[k], texts[k], cf, cand_rows, attempts=1))
        counts = getattr(editor, "last_counts", None)  # a plugin's identity swap may not count its occurrences
        if swapping and counts is not None:  # per text, so a resumed or store-served run counts every text once
            for record, (found, blocked) in zip(records, counts, strict=True):
                record["occurrences"] = {"found": found, "blocked": blocked}
        return records

    def run_llm(self, row: int, input_id: str, text: str) -> GenerationRecord:
        return self.run_llm_many([row], [input_id], [text])[0]

    def run_llm_many(
        self,
        rows: list[int],
        input_ids: list[str],
        texts: list[str],
        progress: ProgressHook | None = None,
        *,
        method: str = "llm",
    ) -> list[GenerationRecord]:
        """A sampled method (LLM rewrites, Polyjuice) on several texts: each attempt samples every text still without
        a passing candidate in one LM call, so the backend decodes (or requests) them all concurrently. ``progress``
        counts samples: the first attempt's are in the stage's total, a rerun's grow it."""
        editor: Any = self.editor(method)
        per_text = self.samples_per_text(method)
        records: dict[int, GenerationRecord] = {}
        for k, text in enumerate(texts):
            if not editor.fits(text):
                cf: dict[str, Any] = {"text": None, "status": make_status("skipped", "too_long_for_llm_context")}
                records[k] = self._record(method, rows[k], input_ids[k], text, cf, [], attempts=0)
                if progress is not None:
                    progress.advance(per_text)
        cand_rows: dict[int, list[CandidateRow]] = {k: [] for k in range(len(texts))}
        chosen: dict[int, tuple[Candidate, Verdict]] = {}
        pending = [k for k in range(len(texts)) if k not in records]
        detector: Any = self.filter.detector if pending and self.attribute is not None else None
        if hasattr(detector, "check"):  # keyword+llm's control questions before any rewrite: a refused LLM costs none
            detector.check()
        attempts = dict.fromkeys(pending, 0)
        retries = RetryRule(self.opts.retry_nearness)
        failed: dict[int, str] = {}
        for attempt in range(1, self.opts.max_attempts + 1):
            if not pending:
                break
            lost: dict[int, str] = {}
            if attempt > 1 and progress is not None and hasattr(progress, "grow"):
                progress.grow(len(pending) * per_text)
            sampled = editor.sample(
                [texts[k] for k in pending], attempt=attempt - 1, failures=lost, sample_progress=progress
            )
            failed.update({pending[j]: why for j, why in lost.items()})
            for k, candidates in zip(pending, sampled, strict=True):
                if k not in failed:
                    if progress is not None and len(candidates) < per_text:
                        progress.advance(per_text - len(candidates))  # polyjuice: no directed half without a term
                    attempts[k] = attempt
                    top, nearest = self._judge_samples(
                        method, rows[k], input_ids[k], texts[k], candidates, cand_rows[k]
                    )
                    retries.saw(k, attempt, nearest)
                    if top is not None:
                        chosen[k] = top
            pending = [k for k in pending if k not in chosen and k not in failed and retries.again(k, attempt)]
        for k in attempts:
            if k in failed:
                continue
            if k in chosen:
                cf = {"text": chosen[k][0].text, "status": "ok", **self._scores(chosen[k][1])}
            else:
                cf = {"text": None, "status": make_status("failed", "no_candidate_passed_filters")}
            records[k] = self._record(method, rows[k], input_ids[k], texts[k], cf, cand_rows[k], attempts=attempts[k])
        if failed:
            named = "; ".join(f"row {rows[k]} (id {input_ids[k]}): {why}" for k, why in sorted(failed.items())[:3])
            raise LLMInputsFailed(
                f"the LLM gave no answer for {len(failed)} of {len(texts)} texts ({named}); the others are saved, "
                "run the same command again to retry the rest",
                [records[k] for k in range(len(texts)) if k in records],
            )
        return [records[k] for k in range(len(texts))]

    def _judge_samples(
        self,
        method: str,
        row: int,
        input_id: str,
        text: str,
        candidates: list[Candidate],
        cand_rows: list[CandidateRow],
    ) -> tuple[tuple[Candidate, Verdict] | None, float]:
        """One attempt's samples of ``text`` through the filters: their rows appended to ``cand_rows``; the best
        passing candidate, if any, and how near the nearest came to passing (:meth:`Verdict.nearness`)."""
        outputs = [c.text if c.meta.get("parsed") else None for c in candidates]
        verdicts = self.filter.judge([text] * len(candidates), outputs)
        top = best(verdicts)
        offset = len(cand_rows)
        cand_rows.extend(
            _candidate_row(method, row, input_id, offset + i, c, v, i == top)
            for i, (c, v) in enumerate(zip(candidates, verdicts, strict=True))
        )
        nearest = max((v.nearness(self.filter.config) for v in verdicts), default=0.0)
        return (None if top is None else (candidates[top], verdicts[top])), nearest

    @staticmethod
    def _scores(verdict: Verdict) -> FilterScores:
        return {
            "bleu": _json_safe(verdict.bleu),
            "bertscore_f1": _json_safe(verdict.bertscore_f1),
            "attribute_prob": _json_safe(verdict.attribute_prob),
        }

    @staticmethod
    def _record(
        method: str,
        row: int,
        input_id: str,
        text: str,
        cf: dict[str, Any],
        cand_rows: list[CandidateRow],
        *,
        attempts: int,
    ) -> GenerationRecord:
        counterfactual = {
            "input_id": input_id,
            "row": row,
            "source_text": text,
            "method": method,
            "text": cf.get("text"),
            "status": cf["status"],
            "bleu": cf.get("bleu"),
            "bertscore_f1": cf.get("bertscore_f1"),
            "attribute_prob": cf.get("attribute_prob"),
            "n_candidates": len(cand_rows),
            "attempts": attempts,
            "source_term": cf.get("source_term"),
            "target_term": cf.get("target_term"),
        }
        return {"method": method, "row": row, "counterfactual": counterfactual, "candidates": cand_rows}

    def signatures(self, occurrences: dict[str, int] | None = None) -> JSONObject:
        """What made the outputs: every method's editor, and the filter, detector and LLM where a method uses them.

        Built from the options, not from what this process happened to load, so a resumed (or finished) run
        records the same signatures as an uninterrupted one; ``occurrences`` are the swap counts summed over
        the records."""
        opts = self.opts
        pack = {"name": opts.attribute, "kind": "swap pack (its terms: the swap's identity set)"}
        out: dict[str, Any] = {"attribute": self.attribute.to_dict() if self.attribute else pack}
        if opts.language != "en":
            from ...languages import bertscore_encoder

            choice = bertscore_encoder(opts.language)
            out["language"] = {"code": opts.language, "bertscore_encoder": choice.model}
            out["language"] |= {"encoder_covers_language": choice.covers_language, "note": choice.note}
        for method in opts.methods:
            editor = self.editor(method)
            out[method] = {"params": editor.params(), "params_hash": editor.params_hash()}
            if swaps_identities(method):
                out[method]["guard_blocked"] = (occurrences or {}).get("blocked", 0)
                out[method]["identity_occurrences"] = (occurrences or {}).get("found", 0)
        models = (["llm"] if opts.detector in DETECTORS_WITH_LLM else []) + [editor_spec(m).lm for m in opts.methods]
        for lm in dict.fromkeys(m for m in models if m):  # the language models the methods (or the detector) use
            out[lm] = getattr(self, lm).info()
        if any(is_scored(m, opts.score_methods) or is_sampled(m) for m in opts.methods):
            out["filter"] = asdict(self.filter.config)
            if self.filter.detector is not None:
                out["detector"] = self.filter.detector.info()
                if self.filter.tiered:
                    out["detector"]["tiers"] = (
                        "the LLM is asked about the rewrites every other filter passed and the word list did not flag; "
                        "other rejected ones have no value (not asked); unfiltered methods' candidates, the word list's"
                    )
        return out


class LLMWorker:
    """Builds a Generator (LLM, filters) once per Ray actor and rewrites one text per call."""

    def __init__(self, options: GenerateOptions) -> None:
        self.generator = Generator(options)

    def __call__(self, item: tuple[int, str, str]) -> GenerationRecord:
        row, input_id, text = item
        return self.generator.run_llm(row, input_id, text)


def _run_llm_distributed(
    opts: GenerateOptions,
    gen: Generator,
    stored: _StoredResults,
    checkpoint: Any,
    rows: list[int],
    ids: Mapping[int, str],
    texts: Mapping[int, str | None],
    hook: ProgressHook,
) -> None:
    import functools

    from ...engine import map_batches

    hits = stored.lookup([texts[i] or "" for i in rows])
    checkpoint.add([stored.record(v, "llm", rows[k], ids[rows[k]], texts[rows[k]] or "") for k, v in hits.items()])
    missing = [rows[k] for k in range(len(rows)) if k not in hits]

    def finished(index: int, record: GenerationRecord) -> None:
        stored.save([texts[missing[index]] or ""], [record])
        checkpoint.add([record])

    map_batches(
        functools.partial(LLMWorker, opts),
        [(i, ids[i], texts[i] or "") for i in missing],
        engine=opts.engine,
        address=opts.address,
        progress=hook,
        description="llm",
        on_result=finished,
    )


def _text_seed(text: str) -> int:
    import hashlib

    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16)


class _StoredResults:
    """Per-text generation results in the run store, so another run on the same text reuses them."""

    def __init__(self, gen: Generator, method: str) -> None:
        from ...store import default_store

        self.store = default_store()
        self.method = method
        self.gen = gen
        self.params: dict[str, Any] | None = None

    def _params(self) -> JSONObject:
        if self.params is None:
            opts, editor = self.gen.opts, self.gen.editor(self.method)
            scored = is_scored(self.method, opts.score_methods)
            # v2: swap records carry their identity-term counts; v3: unscored candidates carry the detector's verdict
            params: dict[str, Any] = {"editor": editor.params_hash(), "seed": opts.seed, "scored": scored, "v": 3}
            if scored or is_sampled(self.method) or opts.score_methods is None:
                filt = self.gen.filter
                params["detector"] = filt.detector.info() if filt.detector is not None else None
            if scored or is_sampled(self.method):
                params["filter"] = asdict(self.gen.filter.config)
            spec = editor_spec(self.method)
            if spec.lm is not None:
                params |= {"max_attempts": opts.max_attempts, spec.lm_key or spec.lm: getattr(self.gen, spec.lm).info()}
            self.params = params
        return self.params

    def _key(self, text: str) -> str:
        from ...store import content_key

        return content_key(f"generate:{self.method}", self._params(), None, text)

    def lookup(self, texts: Sequence[str]) -> dict[int, dict[str, Any]]:
        if self.store is None:
            return {}
        keys = {i: self._key(t) for i, t in enumerate(texts)}
        found = self.store.get_many(list(keys.values()), valid=is_generation_record)
        return {i: found[k] for i, k in keys.items() if k in found}

    def save(self, texts: Sequence[str], records: Sequence[GenerationRecord]) -> None:
        if self.store is None:
            return
        drop = ("input_id", "row", "source_text")
        rows = []
        for text, record in zip(texts, records, strict=True):
            value = {
                "counterfactual": {k: v for k, v in record["counterfactual"].items() if k not in drop},
                "candidates": [{k: v for k, v in c.items() if k not in drop} for c in record["candidates"]],
                **({"occurrences": record["occurrences"]} if "occurrences" in record else {}),
            }
            rows.append((self._key(text), f"generate:{self.method}", value))
        self.store.put_many(rows)

    @staticmethod
    def record(value: dict[str, Any], method: str, row: int, input_id: str, text: str) -> GenerationRecord:
        """A stored generation (:meth:`save`: its rows without input id, row and source text) as this input's
        record."""
        counterfactual = {"input_id": input_id, "row": row, "source_text": text, **value["counterfactual"]}
        # the candidates as save() stored them, their input id and row put back
        candidates = [cast(CandidateRow, {"input_id": input_id, "row": row, **c}) for c in value["candidates"]]
        out: GenerationRecord = {
            "method": method,
            "row": row,
            "counterfactual": counterfactual,
            "candidates": candidates,
        }
        if "occurrences" in value:
            out["occurrences"] = value["occurrences"]
        return out


def is_generation_record(value: Any) -> bool:
    """Whether a run-store value is a stored generation (what ``_StoredResults.save`` writes): its counterfactual with a
    status, its candidates, and for swaps the occurrence counts."""
    if not isinstance(value, dict) or not isinstance(value.get("counterfactual"), dict):
        return False
    candidates, occurrences = value.get("candidates"), value.get("occurrences", {})
    return (
        "status" in value["counterfactual"]
        and isinstance(candidates, list)
        and all(isinstance(c, dict) for c in candidates)
        and isinstance(occurrences, dict)
    )


def _skipped(method: str, row: int, input_id: str, text: str | None, reason: str) -> GenerationRecord:
    cf = {"text": None, "status": make_status("skipped", reason)}
    return Generator._record(method, row, input_id, printable(text or ""), cf, [], attempts=0)


def generate_frame(
    source: str | Path | pd.DataFrame,
    options: GenerateOptions | None = None,
    *,
    progress: ProgressHook | None = None,
    generator: Generator | None = None,
) -> GenerateResult:
    """The core: the same generation in memory, no files; candidates are held in the result."""
    opts = options or GenerateOptions()
    return _generate_read(read_input(source, opts), opts, progress, generator)


def _generate_read(
    read: tuple[str, list[str], list[str | None]],
    opts: GenerateOptions,
    progress: ProgressHook | None,
    generator: Generator | None = None,
) -> GenerateResult:
    """:func:`generate_frame` on input already read by :func:`read_input` (origin, row ids, texts)."""
    origin, ids, texts = read
    sink = MemorySink(key=lambda r: (r["method"], int(r["row"])), slim=slim)
    gen = generator or Generator(opts)
    started = time.perf_counter()
    timing = generate_into(sink, gen, opts, ids, texts, progress or NullProgress())
    order, counterfactuals, summary = collect(sink, gen, opts, texts, timing, started, origin)
    rows = [c for record in sink.full(order) for c in record["candidates"]]
    candidates = pd.DataFrame(rows, columns=list(CANDIDATE_COLUMNS))
    return GenerateResult(None, counterfactuals, summary, candidates=candidates)


def read_input(source: Any, opts: GenerateOptions) -> tuple[str, list[str], list[str | None]]:
    """Generate's input (:func:`~counterfair.io.read_texts`): its origin, the row ids, the texts (None: empty)."""
    read = read_texts(
        source, text_column=opts.text_column, id_column=opts.id_column, encoding=opts.encoding, fmt=opts.fmt
    )
    return read.origin, read.ids, read.texts


@options_signature(GenerateOptions, skip=("methods",))
def generate(
    texts: Any,
    editors: Sequence[str | EditorBase] = ("ablation", "substitution", "swap"),
    *,
    progress: ProgressHook | bool | None = None,
    **options: Any,
) -> Counterfactuals:
    """Counterfactuals in memory, one :class:`Counterfactual` per (input, method) — per swap variant for ``swap`` —
    with its status (inputs without one keep theirs, e.g. ``unchanged:no_attribute_term``). ``editors``: method
    names (``ablation``, ``substitution``, ``swap``, ``llm``: filtered and ranked as ``counterfair generate`` does,
    with :class:`GenerateOptions`'s ``options`` such as ``attribute``, ``identities``, ``llm``, ``samples``) or
    editor objects (``counterfair.editors.AblationEditor(...)``, your own), whose every candidate is returned."""
    from ...records import make_options

    if isinstance(editors, str):  # one method name, or a comma-separated list of them
        editors = [part.strip() for part in editors.split(",") if part.strip()]
    names = [e for e in editors if isinstance(e, str)]
    objects = [e for e in editors if not isinstance(e, str)]
    from ...needs import require_in_memory

    asked = {"methods": names or ["ablation"], **options}
    require_in_memory(GenerateOptions, asked)  # a missing extra is named before any work
    opts = make_options(GenerateOptions, asked)
    read = read_input(texts, opts)  # a file is read once, for the method names and the editor objects alike
    _, ids, source_texts = read
    records = Counterfactuals()
    if names:
        from ...progress import resolve_progress

        result = _generate_read(read, opts, resolve_progress(progress))
        records += _records(result.counterfactuals, result.candidates)
    for editor in objects:
        for key, text, cands in zip(ids, source_texts, editor.edit([t or "" for t in source_texts]), strict=True):
            records += [
                Counterfactual(
                    key, text or "", c.text, editor.name, c.params_hash, "ok", c.edits, provenance=dict(c.meta)
                )
                for c in cands
            ] or [Counterfactual(key, text or "", "", editor.name, editor.params_hash(), "unchanged:no_edit")]
    return records


def _records(cfs: pd.DataFrame, candidates: pd.DataFrame) -> list[Counterfactual]:
    """Counterfactual records from a generation's tables: the selected one per input and method, every swap."""
    by_input: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for cand in cast(list[dict[str, Any]], candidates.to_dict("records")):
        by_input.setdefault((str(cand["input_id"]), str(cand["method"])), []).append(cand)
    out: list[Counterfactual] = []
    for row in cast(list[dict[str, Any]], cfs.to_dict("records")):
        key = (str(row["input_id"]), str(row["method"]))
        if swaps_identities(key[1]) and row["status"] == "ok":
            out += [_record(row, c, provenance={"source_term": c["source_term"], "target_term": c["target_term"]})
                    for c in by_input[key]]  # fmt: skip
            continue
        chosen = [c for c in by_input.get(key, []) if c.get("selected") is True]
        scores = {k: float(row[k]) for k in ("bleu", "bertscore_f1", "attribute_prob") if pd.notna(row.get(k))}
        out.append(_record(row, chosen[0] if chosen else None, scores=scores))
    return out


def _record(row: dict[str, Any], cand: dict[str, Any] | None, **fields: Any) -> Counterfactual:
    from ...records import Edit

    raw = cand["edits"] if cand is not None else ""
    edits = tuple(Edit(**e) for e in json.loads(raw)) if isinstance(raw, str) and raw else ()
    text = cand["text"] if cand is not None else row.get("text")
    return Counterfactual(
        source_id=str(row["input_id"]),
        source_text=str(row["source_text"]),
        text=text if isinstance(text, str) else "",
        editor=str(row["method"]),
        params_hash=str(cand["params_hash"]) if cand is not None else "",
        status=str(row["status"]),
        edits=edits,
        **fields,
    )


def bar_label(method: str, opts: GenerateOptions, *, samples: bool = False) -> str:
    """A progress bar's name: the method and what it edits ("ablation (islam)", "swap (gender)"), so the bars of an
    audit's several generations can be told apart (#49 item 7)."""
    if swaps_identities(method):
        what = opts.identities if isinstance(opts.identities, str) else None
        return f"{method} ({what or 'identity terms'})"
    return f"{method} samples ({opts.attribute})" if samples else f"{method} ({opts.attribute})"


def generate_into(
    sink: Any, gen: Generator, opts: GenerateOptions, ids: list[str], texts: list[str | None], hook: ProgressHook
) -> dict[str, float]:
    """Every (method, row) not yet in ``sink``, generated chunk by chunk and added to ``sink``."""
    timing: dict[str, float] = {}
    for method in opts.methods:
        todo = [i for i in range(len(texts)) if (method, i) not in sink]
        by_samples = is_sampled(method) and not _distributed(method, opts)  # its bar counts samples (16 per text)
        unit = gen.samples_per_text(method) if by_samples else 1
        hook.start(bar_label(method, opts, samples=by_samples), len(todo) * unit)
        t0 = time.perf_counter()
        _generate_rows(sink, gen, opts, method, 0, ids, texts, hook)
        timing[method] = round(time.perf_counter() - t0, 3)
    return timing


def generate_blocks(
    sink: Any,
    gen: Generator,
    opts: GenerateOptions,
    blocks: Iterable[tuple[int, list[str], list[str | None]]],
    rows: int,
    hook: ProgressHook,
) -> dict[str, float]:
    """:func:`generate_into` over an input read block by block (:class:`~counterfair.io.TextBlocks`, ``rows`` in
    all): every method on one block, then the next, so only one block's texts are held; one progress bar counts
    every method's units (texts, or an LLM's samples)."""
    timing = dict.fromkeys(opts.methods, 0.0)
    units = {m: gen.samples_per_text(m) if is_sampled(m) and not _distributed(m, opts) else 1 for m in opts.methods}
    hook.start(", ".join(bar_label(m, opts) for m in opts.methods), rows * sum(units.values()))
    for start, ids, texts in blocks:
        for method in opts.methods:
            done = sum(1 for k in range(len(texts)) if (method, start + k) in sink)
            hook.advance(done * units[method])
            t0 = time.perf_counter()
            _generate_rows(sink, gen, opts, method, start, ids, texts, hook)
            timing[method] += time.perf_counter() - t0
    return {m: round(t, 3) for m, t in timing.items()}


def _distributed(method: str, opts: GenerateOptions) -> bool:
    return editor_spec(method).distributed and opts.engine != "local"  # Polyjuice runs here even with --engine ray


def _generate_rows(
    sink: Any,
    gen: Generator,
    opts: GenerateOptions,
    method: str,
    start: int,
    ids: list[str],
    texts: list[str | None],
    hook: ProgressHook,
) -> None:
    """One method over ``texts`` (input rows ``start``, ``start + 1``, ...): the rows not yet in ``sink``, chunk by
    chunk, each chunk added to ``sink`` as it finishes."""
    todo = [k for k in range(len(texts)) if (method, start + k) not in sink]
    distributed = _distributed(method, opts)
    by_samples = is_sampled(method) and not distributed
    unit = gen.samples_per_text(method) if by_samples else 1
    reasons = {k: r for k in todo if (r := skip_reason(texts[k], opts.max_text_chars))}
    skipped = [k for k in todo if k in reasons]
    if skipped:
        sink.add([_skipped(method, start + k, ids[k], texts[k], reasons[k]) for k in skipped])
        hook.advance(len(skipped) * unit)
    local = [k for k in todo if k not in reasons]
    row_ids = {start + k: ids[k] for k in local}
    row_texts = {start + k: texts[k] for k in local}
    rows = [start + k for k in local]
    stored = _StoredResults(gen, method)
    if distributed:
        _run_llm_distributed(opts, gen, stored, sink, rows, row_ids, row_texts, hook)
        rows = []
    size = opts.llm_chunk if is_sampled(method) else opts.chunk
    for first in range(0, len(rows), size):
        chunk = rows[first : first + size]
        chunk_texts = [row_texts[i] or "" for i in chunk]
        try:
            records = _chunk_records(gen, stored, method, chunk, row_ids, chunk_texts, hook if by_samples else None)
        except LLMInputsFailed as err:
            sink.add(err.records)
            raise
        sink.add(records)
        if not by_samples:
            hook.advance(len(chunk))


def _chunk_records(
    gen: Generator,
    stored: _StoredResults,
    method: str,
    chunk: list[int],
    ids: Mapping[int, str],
    chunk_texts: list[str],
    progress: ProgressHook | None = None,
) -> list[GenerationRecord]:
    """One chunk's records, from the run store where it has them, else generated (and stored). ``progress``: the
    LLM method's, counting samples."""
    hits = stored.lookup(chunk_texts)
    if progress is not None and hits:
        progress.advance(len(hits) * gen.samples_per_text(method))
    by_position = {k: stored.record(v, method, chunk[k], ids[chunk[k]], chunk_texts[k]) for k, v in hits.items()}
    missing = [k for k in range(len(chunk)) if k not in hits]
    if missing:
        if is_sampled(method):
            try:
                fresh = gen.run_llm_many(
                    [chunk[k] for k in missing],
                    [ids[chunk[k]] for k in missing],
                    [chunk_texts[k] for k in missing],
                    progress,
                    method=method,
                )
            except LLMInputsFailed as err:  # keep (store and checkpoint) what the other texts got, then stop
                done = {record["row"]: record for record in err.records}
                kept = [k for k in missing if chunk[k] in done]
                stored.save([chunk_texts[k] for k in kept], [done[chunk[k]] for k in kept])
                err.records = [*by_position.values(), *(done[chunk[k]] for k in kept)]
                raise
        else:
            rows, keys = [chunk[k] for k in missing], [ids[chunk[k]] for k in missing]
            fresh = gen.run_deterministic(method, rows, keys, [chunk_texts[k] for k in missing])
        stored.save([chunk_texts[k] for k in missing], fresh)
        by_position.update(zip(missing, fresh, strict=True))
    return [by_position[k] for k in range(len(chunk))]


def collect(
    sink: Any,
    gen: Generator,
    opts: GenerateOptions,
    texts: list[str | None],
    timing: dict[str, float],
    started: float,
    origin: str,
) -> tuple[list[tuple[str, int]], pd.DataFrame, GenerateSummaryData]:
    """The counterfactuals table (one row per input and method, input order) and the summary."""
    order = [(m, i) for i in range(len(texts)) for m in opts.methods]
    tally = Tally(opts.methods)
    slims = sink.slims(order)
    for record in slims:
        tally.add(record)
    counterfactuals = pd.DataFrame([record["counterfactual"] for record in slims])
    summary = tally.summary(gen, opts, timing, time.perf_counter() - started, origin)
    return order, counterfactuals, summary


def collect_blocks(
    sink: Any, opts: GenerateOptions, rows: int, tally: Tally, block_rows: int = 500
) -> Iterator[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """:func:`collect` for a run too large to hold: ``(candidate rows, counterfactual rows)`` of ``block_rows``
    inputs at a time, in input order, read back from ``sink`` (a :class:`~counterfair.checkpoint.RowCheckpoint`);
    ``tally`` gathers what the summary needs (:meth:`Tally.summary`) as they pass."""
    for start in range(0, rows, block_rows):
        order = [(m, i) for i in range(start, min(start + block_rows, rows)) for m in opts.methods]
        records = sink.full(order)
        counterfactuals = []
        for record in records:
            tally.add(slim(record))
            counterfactuals.append(record["counterfactual"])
        yield [c for record in records for c in record["candidates"]], counterfactuals


class MethodOutcome(TypedDict):
    """One method in generate's summary: its inputs by status, the candidates and those passing the filters, the
    quality of the chosen counterfactuals, and this run's speed."""

    inputs: int
    status: dict[str, int]
    share_with_counterfactual: float
    candidates: int
    candidates_passing_filters: int
    share_still_referencing: float
    bleu: dict[str, float | int]
    bertscore_f1: dict[str, float | int]
    seconds_this_run: float | None
    candidates_per_s_this_run: float | None


class GenerateSummaryData(TypedDict):
    """generate's summary.json (:class:`~counterfair.summaries.GenerateSummary` reads it)."""

    counterfair_version: str
    command: str
    input: str
    methods: dict[str, MethodOutcome]
    signatures: JSONObject
    options: dict[str, Any]
    timing_s: dict[str, float]


class Tally:
    """What generate's summary needs of each method's counterfactuals, gathered record by record: candidate counts,
    statuses, the identity guard's occurrences, and the BLEU, BERTScore and attribute probability of the rows with a
    counterfactual (8 bytes each: what a run over a million inputs keeps of them)."""

    SCORES = ("bleu", "bertscore_f1", "attribute_prob")

    def __init__(self, methods: Sequence[str]) -> None:
        self.candidates = {m: [0, 0] for m in methods}
        self.occurrences = {"found": 0, "blocked": 0}
        self.statuses: dict[str, dict[str, int]] = {m: {} for m in methods}  # in order of first appearance
        self.scored = dict.fromkeys(methods, 0)
        self.ok: dict[str, dict[str, array[float]]] = {m: {k: array("d") for k in self.SCORES} for m in methods}

    def add(self, record: SlimRecord) -> None:
        """One (method, input) record as :func:`slim` keeps it."""
        method, cf = record["method"], record["counterfactual"]
        self.candidates[method][0] += record["n_candidates"]
        self.candidates[method][1] += record["n_passed"]
        for key, value in record.get("occurrences", {}).items():
            self.occurrences[key] += value
        status = str(cf["status"])
        self.statuses[method][status] = self.statuses[method].get(status, 0) + 1
        self.scored[method] += not status.startswith("skipped")
        if status == "ok":
            for key in self.SCORES:
                score = cf.get(key)
                self.ok[method][key].append(math.nan if score is None else float(score))

    def summary(
        self, gen: Generator, opts: GenerateOptions, timing: dict[str, float], elapsed: float, origin: str
    ) -> GenerateSummaryData:
        per_method: dict[str, MethodOutcome] = {}
        for method in opts.methods:
            n_candidates, n_passed = self.candidates[method]
            # value_counts' order: by count, from the counts in order of first appearance
            status = pd.Series(self.statuses[method], dtype="int64").sort_values(ascending=False)
            ok = {k: pd.Series(np.asarray(v), dtype=float) for k, v in self.ok[method].items()}
            n_ok, scored, seconds = len(ok["bleu"]), self.scored[method], timing.get(method)
            prob = ok["attribute_prob"]
            per_method[method] = {
                "inputs": int(status.sum()),
                "status": {str(k): int(v) for k, v in status.items()},
                "share_with_counterfactual": n_ok / scored if scored else math.nan,
                "candidates": n_candidates,
                "candidates_passing_filters": n_passed,
                "share_still_referencing": float((prob >= opts.max_attribute_prob).mean())
                if n_ok and prob.notna().any()
                else math.nan,
                "bleu": summarize(ok["bleu"]),
                "bertscore_f1": summarize(ok["bertscore_f1"]),
                "seconds_this_run": seconds,
                "candidates_per_s_this_run": (n_candidates / seconds) if seconds else None,
            }
        return {
            "counterfair_version": __version__,
            "command": "generate",
            "input": origin,
            "methods": per_method,
            "signatures": gen.signatures(self.occurrences),
            "options": asdict(opts),
            "timing_s": {**timing, "total": round(elapsed, 3)},
        }


def slim(record: GenerationRecord) -> SlimRecord:
    """What of a finished record stays in memory: all but its candidates, which are only counted."""
    cands = record["candidates"]
    n_passed = sum(1 for c in cands if c.get("passed"))
    if "occurrences" in record:  # the record's keys in its order, the counts last
        return {
            "method": record["method"],
            "row": record["row"],
            "counterfactual": record["counterfactual"],
            "occurrences": record["occurrences"],
            "n_candidates": len(cands),
            "n_passed": n_passed,
        }
    return {
        "method": record["method"],
        "row": record["row"],
        "counterfactual": record["counterfactual"],
        "n_candidates": len(cands),
        "n_passed": n_passed,
    }
