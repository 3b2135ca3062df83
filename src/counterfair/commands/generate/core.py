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
from dataclasses import asdict
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from ... import __version__
from ...checkpoint import MemorySink
from ...editors.base import EditorBase
from ...editors.registry import (
    editor_spec,
    swaps_identities,
)
from ...errors import LLMInputsFailed
from ...io import (
    read_texts,
)
from ...metrics.functional import summarize
from ...progress import NullProgress, ProgressHook
from ...records import (
    Counterfactual,
    Counterfactuals,
    options_signature,
)
from ...summaries import GenerateSummary, MeanEstimate, MethodCounts
from ...text import skip_reason
from .options import (
    CANDIDATE_COLUMNS,
    GenerateOptions,
    is_sampled,
)
from .recipe import GenerationRecord, Generator, SlimRecord, StoredResults, run_llm_distributed, skipped_record


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
    return GenerateResult(None, counterfactuals, summary.to_dict(), candidates=candidates)


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
        sink.add([skipped_record(method, start + k, ids[k], texts[k], reasons[k]) for k in skipped])
        hook.advance(len(skipped) * unit)
    local = [k for k in todo if k not in reasons]
    row_ids = {start + k: ids[k] for k in local}
    row_texts = {start + k: texts[k] for k in local}
    rows = [start + k for k in local]
    stored = StoredResults(gen, method)
    if distributed:
        run_llm_distributed(opts, gen, stored, sink, rows, row_ids, row_texts, hook)
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
    stored: StoredResults,
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
) -> tuple[list[tuple[str, int]], pd.DataFrame, GenerateSummary]:
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
    ) -> GenerateSummary:
        per_method: dict[str, MethodCounts] = {}
        for method in opts.methods:
            n_candidates, n_passed = self.candidates[method]
            # value_counts' order: by count, from the counts in order of first appearance
            status = pd.Series(self.statuses[method], dtype="int64").sort_values(ascending=False)
            ok = {k: pd.Series(np.asarray(v), dtype=float) for k, v in self.ok[method].items()}
            n_ok, scored, seconds = len(ok["bleu"]), self.scored[method], timing.get(method)
            prob = ok["attribute_prob"]
            per_method[method] = MethodCounts(
                inputs=int(status.sum()),
                status={str(k): int(v) for k, v in status.items()},
                share_with_counterfactual=n_ok / scored if scored else math.nan,
                candidates=n_candidates,
                candidates_passing_filters=n_passed,
                share_still_referencing=float((prob >= opts.max_attribute_prob).mean())
                if n_ok and prob.notna().any()
                else math.nan,
                bleu=MeanEstimate.from_dict(summarize(ok["bleu"])),  # summarize's keys, in its order
                bertscore_f1=MeanEstimate.from_dict(summarize(ok["bertscore_f1"])),
                seconds_this_run=seconds,
                candidates_per_s_this_run=(n_candidates / seconds) if seconds else None,
            )
        return GenerateSummary(
            counterfair_version=__version__,
            command="generate",
            input=origin,
            methods=per_method,
            signatures=gen.signatures(self.occurrences),
            options=asdict(opts),
            timing_s={**timing, "total": round(elapsed, 3)},
        )


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
