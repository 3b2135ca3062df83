"""The editor recipe of ``counterfair generate``: one method over a block of inputs — edit, filter, rank, ask again
where the retry rule says — as :class:`Generator`, its rows (candidates, counterfactuals) as typed records, its
results kept in the run store (:class:`StoredResults`), and the LLM rewrite spread over Ray workers."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any, NotRequired, TypedDict, cast

import numpy as np

from ...detectors import DETECTORS_WITH_LLM
from ...editors.base import EditorBase
from ...editors.filters import CandidateFilter, FilterConfig, Verdict, best
from ...editors.registry import (
    editor_spec,
    swaps_identities,
)
from ...errors import ConfigError, LLMInputsFailed
from ...jsontypes import JSONObject
from ...lexicons.attributes import Attribute, load_attribute
from ...metrics.bertscore import BERTScoreScorer
from ...progress import ProgressHook
from ...records import (
    Candidate,
    make_status,
)
from ...text import printable
from .options import GenerateOptions, RetryRule, is_sampled, is_scored


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


class StoredGeneration(TypedDict):
    """A generation as the run store keeps it (``StoredResults.save``): its counterfactual row and candidates without
    the input's id, row and text (another run's input may share the text), and a swap's occurrence counts."""

    counterfactual: dict[str, Any]
    candidates: list[dict[str, Any]]
    occurrences: NotRequired[dict[str, int]]


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
            from ...language_registry import get_language

            entry = get_language(opts.language)
            identities = opts.identities or (None if entry.default else entry.identity_set)
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
        from ...language_registry import bertscore_encoder, get_language

        if not get_language(opts.language).default:
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


def run_llm_distributed(
    opts: GenerateOptions,
    gen: Generator,
    stored: StoredResults,
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


class StoredResults:
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

    def lookup(self, texts: Sequence[str]) -> dict[int, StoredGeneration]:
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
    def record(value: StoredGeneration, method: str, row: int, input_id: str, text: str) -> GenerationRecord:
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
    """Whether a run-store value is a stored generation (what ``StoredResults.save`` writes): its counterfactual with a
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


def skipped_record(method: str, row: int, input_id: str, text: str | None, reason: str) -> GenerationRecord:
    cf = {"text": None, "status": make_status("skipped", reason)}
    return Generator._record(method, row, input_id, printable(text or ""), cf, [], attempts=0)
