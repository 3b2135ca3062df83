"""The CTF shell: ``counterfair ctf`` into a run directory — options and input claimed (a rerun that differs is
refused), then ``pairs.csv`` and ``summary.json``."""

from __future__ import annotations

from typing import Any

from ...needs import require
from ...runs import holds_run_dir
from .core import PAIR_FILE_COLUMNS, CTFOptions, ctf_core
from .result import CTFResult


@holds_run_dir
def run_ctf(
    source: Any,
    out_dir: Any,
    *,
    classifier: Any = "profanity-check",
    progress: Any = None,
    engine: str = "local",
    address: str | None = None,
    **options: Any,
) -> CTFResult:
    """The shell: check ``out_dir`` first, run :func:`ctf_core` block by block with each block's pairs written to
    ``pairs.csv`` as it is made (memory about flat), then ``summary.json`` and the report; returns the result, its
    pairs read from ``pairs.csv`` when first asked for. ``engine="ray"``: the
    classifier's batches on Ray workers (``address``: a cluster), outputs as the local engine's."""
    from ...classifiers import as_classifier
    from ...io import input_sha256, read_texts, row_strings
    from ...records import fingerprint, make_options, run_identity
    from ...runs import claim_run_dir, prepare_run_dir
    from ...views.page import write_summary_page
    from ...writing import csv_writer, write_json
    from .page import ctf_page

    target = prepare_run_dir(out_dir)  # before any work
    opts = make_options(CTFOptions, options)  # every effective option, so a refusal can name the one that differs
    require(opts)
    from ...classifiers.remote import on_engine

    clf = on_engine(as_classifier(classifier), engine, address)
    read = read_texts(source, text_column=opts.text_column, encoding=opts.encoding)
    frame, origin = read.frame, read.origin
    identifying = run_identity(opts)
    rows = row_strings(frame)
    run_id = {"options_fingerprint": fingerprint(identifying), "input_sha256": input_sha256(source, rows)}
    extra = {"options": identifying, "input": origin}
    # claimed once the input is read, before any work: a rerun that differs (or a second process) is refused now;
    # bad input found while computing (a row without a label) gives the claim back (runs.holds_run_dir)
    claim_run_dir(target, run_id, extra, what="ctf run", classifier=clf)
    with csv_writer(target / "pairs.csv", PAIR_FILE_COLUMNS) as write:  # appears whole when every block is in
        _, summary = ctf_core(
            frame, clf, progress=progress, origin=origin, write_pairs=write, scratch_dir=target, **options
        )
    write_json(summary, target / "summary.json")
    write_summary_page(target, ctf_page)  # report.html, report.md: the verdict first
    return CTFResult(None, summary, run_dir=target)
