"""``counterfair generate``'s command line: counterfactual texts from word lists, identity swaps or an LLM."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...command_line import (
    Encoding,
    Language,
    LLMConcurrency,
    LLMParallel,
    MaxTextChars,
    OneAttribute,
    Overwrite,
    RetryNearness,
    app,
    console,
    declared,
    flag,
    joined,
    options_from,
)
from ...editors.registry import editors_help
from ...runs import allow_overwrite
from ...views.page import to_console
from .options import GenerateOptions
from .page import generate_page

#: every default of the command's options is GenerateOptions's, read from it (#48: an option declared once)
_GENERATE = declared(GenerateOptions)


@app.command(
    short_help="Write counterfactual texts: word lists, identity swaps, LLM rewriting with filters.",
)
def generate(
    data: Annotated[Path, typer.Argument(help="Texts that reference the attribute (CSV/TSV/JSONL/JSON/Parquet).")],
    attribute: OneAttribute = _GENERATE.attribute,
    methods: Annotated[str, typer.Option(help="Comma-separated: " + editors_help("generate"))] = ",".join(
        _GENERATE.methods
    ),
    out: Annotated[Path, typer.Option("--out", "-o", help="Run directory (a rerun with it resumes).")] = Path(
        "counterfair-generate"
    ),
    text_column: Annotated[str, flag(GenerateOptions, "text_column")] = _GENERATE.text_column,
    id_column: Annotated[str | None, flag(GenerateOptions, "id_column")] = _GENERATE.id_column,
    identities: Annotated[str | None, flag(GenerateOptions, "identities")] = _GENERATE.identities,
    guard: Annotated[bool, flag(GenerateOptions, "guard")] = _GENERATE.guard
    is not None,  # the options name the guard ("spacy"); the flag turns it on or off
    llm: Annotated[str, flag(GenerateOptions, "llm")] = _GENERATE.llm,
    polyjuice_model: Annotated[
        str,
        flag(GenerateOptions, "polyjuice_model"),
    ] = _GENERATE.polyjuice_model,
    prompt_style: Annotated[str, flag(GenerateOptions, "prompt_style")] = _GENERATE.prompt_style,
    instruction: Annotated[str | None, flag(GenerateOptions, "instruction")] = _GENERATE.instruction,
    samples: Annotated[int, flag(GenerateOptions, "samples")] = _GENERATE.samples,
    max_attempts: Annotated[int, flag(GenerateOptions, "max_attempts")] = _GENERATE.max_attempts,
    retry_nearness: RetryNearness = _GENERATE.retry_nearness,
    llm_parallel: LLMParallel = _GENERATE.llm_parallel,
    llm_concurrency: LLMConcurrency = _GENERATE.llm_concurrency,
    llm_chunk: Annotated[int, flag(GenerateOptions, "llm_chunk")] = _GENERATE.llm_chunk,
    min_bleu: Annotated[float, flag(GenerateOptions, "min_bleu")] = _GENERATE.min_bleu,
    min_bertscore: Annotated[float, flag(GenerateOptions, "min_bertscore")] = _GENERATE.min_bertscore,
    max_attribute_prob: Annotated[float, flag(GenerateOptions, "max_attribute_prob")] = _GENERATE.max_attribute_prob,
    detector: Annotated[
        str,
        flag(GenerateOptions, "detector"),
    ] = _GENERATE.detector,
    score_methods: Annotated[
        str | None,
        flag(GenerateOptions, "score_methods"),
    ] = joined(_GENERATE.score_methods),
    seed: Annotated[int, flag(GenerateOptions, "seed", min=0)] = _GENERATE.seed,
    engine: Annotated[str, flag(GenerateOptions, "engine")] = _GENERATE.engine,
    address: Annotated[str | None, flag(GenerateOptions, "address")] = _GENERATE.address,
    max_text_chars: MaxTextChars = _GENERATE.max_text_chars,
    encoding: Encoding = _GENERATE.encoding,
    language: Language = _GENERATE.language,
    overwrite: Overwrite = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Generate counterfactuals of attribute-referencing texts: word-list ablation and substitution, identity
    swaps, LLM rewriting with filters. Writes OUT/candidates.csv, OUT/counterfactuals.csv, OUT/summary.json."""
    if overwrite:
        allow_overwrite(out)  # --overwrite: the run's claim replaces the one there
    from ...progress import RichProgress
    from .options import GenerateOptions
    from .shell import run_generate

    options = options_from(
        GenerateOptions,
        locals(),
        methods=methods.split(","),
        guard="spacy" if guard else None,
        score_methods=score_methods.split(",") if score_methods else None,
    )
    from ... import io

    if io.streamed(data, options.fmt) and not quiet:  # the check of every row comes before the first bar
        size = Path(data).stat().st_size / 2**20
        console.print(f"{data}: {size:,.0f} MB, read in blocks of {io.BLOCK_ROWS:,} rows; checking every row first")
    with RichProgress(enabled=not quiet) as progress:
        result = run_generate(data, out, options, progress=progress)
    console.print(to_console(generate_page(result.summary)))
    console.print(f"wrote {out / 'counterfactuals.csv'}, {out / 'candidates.csv'} and {out / 'summary.json'}")
