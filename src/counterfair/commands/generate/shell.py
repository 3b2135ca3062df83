"""Generate's shell: ``counterfair generate`` into a run directory — claimed before any work, every finished
(method, input) checkpointed in ``.work/done.jsonl`` (a rerun resumes), then ``candidates.csv`` streamed in input
order, ``counterfactuals.csv`` and ``summary.json``.

An input file of :func:`~counterfair.io.stream_threshold` bytes or more (64 MB) is read in blocks of 10,000 rows
(:func:`~counterfair.io.read_text_blocks`), its checkpoint keeps only file offsets in memory
(:class:`~counterfair.checkpoint.RowCheckpoint`) and both tables are written block by block: memory stays flat
whatever the number of rows (``benchmarks/generate_stream.py``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from ...checkpoint import JsonlCheckpoint, RowCheckpoint
from ...io import file_sha256, input_sha256, read_text_blocks, streamed
from ...needs import require
from ...progress import NullProgress, ProgressHook
from ...runs import claim_run_dir, holds_run_dir, prepare_run_dir
from ...views.page import write_summary_page
from ...writing import csv_writer, write_csv_chunks, write_json, write_table
from .core import GenerateResult, Tally, collect, collect_blocks, generate_blocks, generate_into, read_input, slim
from .options import CANDIDATE_COLUMNS, COUNTERFACTUAL_COLUMNS, GenerateOptions
from .page import generate_page
from .recipe import Generator


@holds_run_dir
def run_generate(
    source: str | Path | pd.DataFrame,
    out_dir: str | Path,
    options: GenerateOptions | None = None,
    *,
    progress: ProgressHook | None = None,
    generator: Generator | None = None,
) -> GenerateResult:
    """The shell: generate for every row of ``source`` by every chosen method, resumable in ``out_dir``
    (``run.json``, ``.work/done.jsonl``, then ``candidates.csv``, ``counterfactuals.csv``, ``summary.json``)."""
    opts = options or GenerateOptions()
    require(opts)  # a missing extra is named before any work
    hook = progress or NullProgress()
    prepare_run_dir(out_dir)  # before any work: a bad --out is found now
    if streamed(source, opts.fmt):
        return _run_streamed(Path(str(source)), Path(out_dir), opts, hook, generator)
    origin, ids, texts = read_input(source, opts)
    target = Path(out_dir)
    input_sha = input_sha256(source, texts)
    claim_run_dir(
        target,
        {"options_fingerprint": opts.fingerprint(), "input_sha256": input_sha},
        {"options": asdict(opts), "input": origin},
    )
    checkpoint = JsonlCheckpoint(
        target / ".work" / "done.jsonl", key=lambda r: (r["method"], int(r["row"])), slim=slim, shape=DONE_SHAPE
    )
    gen = generator or Generator(opts)
    started = time.perf_counter()
    timing = generate_into(checkpoint, gen, opts, ids, texts, hook)
    order, counterfactuals, summary = collect(checkpoint, gen, opts, texts, timing, started, origin)

    def candidate_chunks(per_chunk: int = 500) -> Iterator[pd.DataFrame]:
        for start in range(0, len(order), per_chunk):
            rows = [c for record in checkpoint.full(order[start : start + per_chunk]) for c in record["candidates"]]
            if rows:  # object dtype: a value prints the same whichever chunk it falls in
                yield pd.DataFrame(rows, columns=list(CANDIDATE_COLUMNS), dtype=object)

    write_csv_chunks(candidate_chunks(), target / "candidates.csv", CANDIDATE_COLUMNS)
    write_table(counterfactuals, target / "counterfactuals.csv")
    written = summary.to_dict()  # the record as summary.json holds it: serialised here, at the edge
    write_json(written, target / "summary.json")
    write_summary_page(target, generate_page)  # report.html, report.md: the verdict first
    return GenerateResult(target / "candidates.csv", counterfactuals, written)


#: a finished unit of ``.work/done.jsonl`` as it is read back (a damaged line is redone: :class:`JsonlCheckpoint`)
DONE_SHAPE = {"method": str, "row": int, "counterfactual": dict, "candidates": list}


def _run_streamed(
    source: Path, target: Path, opts: GenerateOptions, hook: ProgressHook, generator: Generator | None
) -> GenerateResult:
    """The same run over a large file, holding one block of it at a time (the module's docstring)."""
    blocks = read_text_blocks(
        source, text_column=opts.text_column, id_column=opts.id_column, encoding=opts.encoding, fmt=opts.fmt
    )  # every row checked before any work
    claim_run_dir(
        target,
        {"options_fingerprint": opts.fingerprint(), "input_sha256": file_sha256(source)},
        {"options": asdict(opts), "input": blocks.origin},
    )
    checkpoint = RowCheckpoint(
        target / ".work" / "done.jsonl", key=lambda r: (r["method"], int(r["row"])), slim=slim, shape=DONE_SHAPE
    )
    gen = generator or Generator(opts)
    started = time.perf_counter()
    timing = generate_blocks(checkpoint, gen, opts, blocks, blocks.rows, hook)
    tally = Tally(opts.methods)
    with (
        csv_writer(target / "candidates.csv", CANDIDATE_COLUMNS) as candidates,
        csv_writer(target / "counterfactuals.csv", COUNTERFACTUAL_COLUMNS) as counterfactuals,
    ):
        for candidate_rows, counterfactual_rows in collect_blocks(checkpoint, opts, blocks.rows, tally):
            if candidate_rows:  # object dtype, as the in-memory run's chunks
                candidates(pd.DataFrame(candidate_rows, columns=list(CANDIDATE_COLUMNS), dtype=object))
            counterfactuals(pd.DataFrame(counterfactual_rows, columns=list(COUNTERFACTUAL_COLUMNS)))
    written = tally.summary(gen, opts, timing, time.perf_counter() - started, blocks.origin).to_dict()
    write_json(written, target / "summary.json")
    write_summary_page(target, generate_page)
    return GenerateResult(target / "candidates.csv", None, written)
