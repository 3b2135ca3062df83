"""``counterfair evaluate``'s command line: the quality of counterfactual texts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...command_line import (
    Overwrite,
    app,
    console,
    declared,
    flag,
    joined,
    options_from,
    print_evaluation,
    sample_pairs_path,
)
from ...runs import allow_overwrite
from .options import EvaluateOptions

#: every default of the command's options is EvaluateOptions's, read from it (#48: an option declared once)
_EVALUATE = declared(EvaluateOptions)


@app.command(
    short_help="Measure counterfactual texts: flips, probability change, distance, fluency, similarity.",
)
def evaluate(
    pairs: Annotated[
        list[str] | None,
        typer.Argument(
            help="Pair file (CSV/TSV/JSONL/JSON/Parquet; CEval format by default). Several files (PATH or NAME=PATH), "
            "one per method on the same originals: each evaluated into OUT/methods/NAME, compared side by side."
        ),
    ] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory for rows.csv and summary.json.")] = Path(
        "counterfair-evaluate"
    ),
    demo: Annotated[
        bool,
        typer.Option(
            "--demo",
            help="Evaluate the built-in sample of pairs (toxic comments; --classifier defaults to profanity-check).",
        ),
    ] = False,
    metrics: Annotated[
        str | None,
        flag(EvaluateOptions, "metrics"),
    ] = joined(_EVALUATE.metrics),
    classifier: Annotated[
        str | None,
        flag(EvaluateOptions, "classifier"),
    ] = _EVALUATE.classifier,
    text_column: Annotated[str, flag(EvaluateOptions, "text_column")] = _EVALUATE.text_column,
    cf_column: Annotated[str, flag(EvaluateOptions, "cf_column")] = _EVALUATE.cf_column,
    cf2_column: Annotated[str | None, flag(EvaluateOptions, "cf2_column")] = _EVALUATE.cf2_column,
    id_column: Annotated[str | None, flag(EvaluateOptions, "id_column")] = _EVALUATE.id_column,
    group_column: Annotated[str | None, flag(EvaluateOptions, "group_column")] = _EVALUATE.group_column,
    context_column: Annotated[
        str | None,
        flag(EvaluateOptions, "context_column"),
    ] = _EVALUATE.context_column,
    revised_input: Annotated[str, flag(EvaluateOptions, "revised_input")] = _EVALUATE.revised_input,
    target_column: Annotated[str | None, flag(EvaluateOptions, "target_column")] = _EVALUATE.target_column,
    missing_marker: Annotated[
        list[str] | None, typer.Option(help="Cell value meaning 'no counterfactual' (default: -1, as in CEval).")
    ] = None,
    threshold: Annotated[float | None, flag(EvaluateOptions, "threshold")] = _EVALUATE.threshold,
    ppl_model: Annotated[str, flag(EvaluateOptions, "ppl_model")] = _EVALUATE.ppl_model,
    ppl_window: Annotated[int, flag(EvaluateOptions, "ppl_window")] = _EVALUATE.ppl_window,
    ppl_stride: Annotated[int, flag(EvaluateOptions, "ppl_stride")] = _EVALUATE.ppl_stride,
    ppl_max_tokens: Annotated[int, flag(EvaluateOptions, "ppl_max_tokens")] = _EVALUATE.ppl_max_tokens,
    ppl_token_budget: Annotated[int, flag(EvaluateOptions, "ppl_token_budget")] = _EVALUATE.ppl_token_budget,
    ppl_dtype: Annotated[
        str,
        flag(EvaluateOptions, "ppl_dtype"),
    ] = _EVALUATE.ppl_dtype,
    judge_llm: Annotated[str, flag(EvaluateOptions, "judge_llm")] = _EVALUATE.judge_llm,
    batch_size: Annotated[int, flag(EvaluateOptions, "batch_size")] = _EVALUATE.batch_size,
    bootstrap: Annotated[int, flag(EvaluateOptions, "bootstrap", min=1)] = _EVALUATE.bootstrap,
    seed: Annotated[int, flag(EvaluateOptions, "seed", min=0)] = _EVALUATE.seed,
    fmt: Annotated[str | None, flag(EvaluateOptions, "fmt", "--format")] = _EVALUATE.fmt,
    encoding: Annotated[str, flag(EvaluateOptions, "encoding")] = _EVALUATE.encoding,
    engine: Annotated[str, flag(EvaluateOptions, "engine")] = _EVALUATE.engine,
    address: Annotated[str | None, flag(EvaluateOptions, "address")] = _EVALUATE.address,
    overwrite: Overwrite = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Measure counterfactual texts: flip rate, probability change, distance, diversity, perplexity, BLEU,
    BERTScore, LLM-judged text quality. Writes OUT/rows.csv (one row per input row, with status), OUT/summary.json
    and OUT/report.html; with several pair files, OUT/comparison.csv (CEval's Table 2), OUT/distance_matrix.csv and a
    report with both of CEval's figures."""
    if overwrite:
        allow_overwrite(out)  # --overwrite: the run's claim replaces the one there
    from ...progress import RichProgress
    from .options import EvaluateOptions
    from .shell import evaluate_pairs

    if demo == bool(pairs):
        raise typer.BadParameter("give a PAIRS file or --demo (not both)")
    if demo and classifier is None:
        classifier = "profanity-check"  # the sample pairs are toxic comments and their rewrites: said in --help
    options = options_from(
        EvaluateOptions,
        locals(),
        metrics=metrics.split(",") if metrics else None,
        missing_markers=tuple(missing_marker) if missing_marker else ("-1",),
    )
    if pairs and len(pairs) > 1:
        from ..methods.core import parse_method_files
        from ..methods.shell import evaluate_methods

        with RichProgress(enabled=not quiet) as progress:
            comparison = evaluate_methods(parse_method_files(pairs), options, out_dir=out, progress=progress)
        console.print(comparison)
        console.print(f"wrote {out / 'comparison.csv'}, {out / 'distance_matrix.csv'} and {out / 'report.html'}")
        if comparison.typed_summary.errors:
            raise typer.Exit(code=1)
        return
    source = sample_pairs_path() if demo else Path(pairs[0]) if pairs else None
    assert source is not None
    if options.left_out:
        from rich.markup import escape

        from ...extras import pip_line

        console.print(
            escape(
                f"{' and '.join(options.left_out)} need counterfair[metrics], which is not installed: left out "
                f"(add them with {pip_line(['metrics'])}); the others need no extra"
            )
        )
    from .core import estimate

    cost = estimate(source, options)
    stages = ", ".join(f"{k} {v / 60:.1f}" for k, v in cost.items() if k != "total")
    console.print(
        f"estimated time on 2 CPU cores: about {cost['total'] / 60:.1f} min" + (f" ({stages})" if stages else "")
    )
    with RichProgress(enabled=not quiet) as progress:
        result = evaluate_pairs(source, options, out_dir=out, progress=progress)
    print_evaluation(result.summary)
    from .page import build_evaluation_report

    build_evaluation_report(out)
    console.print(f"wrote {out / 'rows.csv'}, {out / 'summary.json'} and {out / 'report.html'}")
    if result.typed_summary.errors:
        raise typer.Exit(code=1)
