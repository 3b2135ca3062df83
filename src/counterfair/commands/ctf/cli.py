"""``counterfair ctf``'s command line: the CTF gap of identity swaps (paper 001)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...command_line import (
    CLASSIFIER_HELP,
    Address,
    Encoding,
    Engine,
    Language,
    MaxTextChars,
    Overwrite,
    Parquet,
    app,
    console,
    declared,
    flag,
)
from ...runs import allow_overwrite
from ...views.page import to_console
from .core import CTFOptions
from .page import ctf_page

#: every default of the command's options is CTFOptions's, read from it (#48: an option declared once)
_CTF = declared(CTFOptions)


@app.command(
    short_help="The CTF gap of identity swaps (paper 001), overall, per term and per direction.",
)
def ctf(
    data: Annotated[Path, typer.Argument(help="Texts (CSV/TSV/JSONL/JSON/Parquet), optionally with a 0/1 label.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for summary.json and pairs.csv.")] = Path(
        "counterfair-ctf"
    ),
    classifier: Annotated[str, typer.Option(help=CLASSIFIER_HELP)] = "profanity-check",
    identities: Annotated[str | None, flag(CTFOptions, "identities")] = _CTF.identities,
    identities_file: Annotated[Path | None, typer.Option(help="Identity terms from a YAML/JSON/TXT file.")] = None,
    text_column: Annotated[str, flag(CTFOptions, "text_column")] = _CTF.text_column,
    id_column: Annotated[str | None, flag(CTFOptions, "id_column")] = _CTF.id_column,
    label_column: Annotated[str | None, flag(CTFOptions, "label_column")] = _CTF.label_column,
    positive_label: Annotated[str | None, flag(CTFOptions, "positive_label")] = _CTF.positive_label,
    guard: Annotated[bool, flag(CTFOptions, "guard")] = _CTF.guard
    is not None,  # the options name the guard ("spacy"); the flag turns it on or off
    tokens_only: Annotated[
        bool,
        typer.Option(
            "--tokens-only",
            help="Paper 001's Φ_A exactly: listed terms swapped token for token (no plurals, noun forms, capitals "
            "or a/an agreement), as blindness assumes.",
        ),
    ] = False,
    seed: Annotated[int, flag(CTFOptions, "seed", min=0)] = _CTF.seed,
    max_text_chars: MaxTextChars = _CTF.max_text_chars,
    encoding: Encoding = _CTF.encoding,
    language: Language = _CTF.language,
    engine: Engine = "local",
    address: Address = None,
    parquet: Parquet = False,
    overwrite: Overwrite = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Counterfactual token fairness (paper 001): swap identity terms, compare the classifier's scores, report the
    CTF gap overall, for toxic and non-toxic texts, training and held-out terms, per term and per direction."""
    if overwrite:
        allow_overwrite(out)  # --overwrite: the run's claim replaces the one there
    from ...progress import RichProgress
    from .shell import run_ctf

    if identities and identities_file:
        raise typer.BadParameter("give --identities or --identities-file, not both")
    with RichProgress(enabled=not quiet) as progress:
        result = run_ctf(
            data,
            out,
            classifier=classifier,
            identities=str(identities_file) if identities_file else identities,
            text_column=text_column,
            id_column=id_column,
            label_column=label_column,
            positive_label=positive_label,
            guard="spacy" if guard else None,
            grammar=not tokens_only,
            max_text_chars=max_text_chars,
            encoding=encoding,
            language=language,
            seed=seed,
            progress=progress,
            engine=engine,
            address=address,
        )
    from ...runs import parquet_copies

    parquet_copies(out, ("pairs.csv",), wanted=parquet)
    console.print(to_console(ctf_page(result.typed_summary)))
    console.print(f"wrote {out / 'summary.json'} and {out / 'pairs.csv'}{' (and pairs.parquet)' if parquet else ''}")
