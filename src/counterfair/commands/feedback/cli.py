"""The command line: counterfactuals of counterfactuals: feedback, feedback-ttest, adapt-lm."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ...command_line import (
    MAKE_COMMANDS,
    TRAIN_COMMANDS,
    Encoding,
    MaxTextChars,
    Overwrite,
    app,
    console,
    declared,
    flag,
    options_from,
    require_extras,
    spelled_none,
)
from ...editors.registry import editors_help
from ...runs import allow_overwrite
from ...views.console import fmt
from ...views.page import to_console
from .core import FeedbackOptions
from .page import feedback_page

#: every default of the command's options is FeedbackOptions's, read from it (#48: an option declared once)
_FEEDBACK = declared(FeedbackOptions)


@app.command(
    rich_help_panel=MAKE_COMMANDS,
    short_help="Feed an editor its own output n times and measure how it drifts (paper 002).",
)
def feedback(
    data: Annotated[Path, typer.Argument(help="Texts to edit (CSV/TSV/JSONL/JSON/Parquet).")],
    editor: Annotated[str, typer.Option(help=editors_help("feedback"))] = _FEEDBACK.editor,
    classifier: Annotated[str, flag(FeedbackOptions, "classifier")] = _FEEDBACK.classifier,
    steps: Annotated[int, flag(FeedbackOptions, "steps")] = _FEEDBACK.steps,
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for steps.csv and summary.json.")] = Path(
        "counterfair-feedback"
    ),
    text_column: Annotated[str, flag(FeedbackOptions, "text_column")] = _FEEDBACK.text_column,
    id_column: Annotated[str | None, flag(FeedbackOptions, "id_column")] = _FEEDBACK.id_column,
    llm: Annotated[str, flag(FeedbackOptions, "llm")] = _FEEDBACK.llm,
    ppl_model: Annotated[str, flag(FeedbackOptions, "ppl_model")] = spelled_none(_FEEDBACK.ppl_model),
    ppl_fine_model: Annotated[str | None, flag(FeedbackOptions, "ppl_fine_model")] = _FEEDBACK.ppl_fine_model,
    ppl_steps: Annotated[str, flag(FeedbackOptions, "ppl_steps")] = _FEEDBACK.ppl_steps,
    limit: Annotated[int | None, flag(FeedbackOptions, "limit")] = _FEEDBACK.limit,
    seed: Annotated[int, flag(FeedbackOptions, "seed", min=0)] = _FEEDBACK.seed,
    tokens: Annotated[
        str,
        flag(FeedbackOptions, "tokens"),
    ] = _FEEDBACK.tokens,
    max_text_chars: MaxTextChars = _FEEDBACK.max_text_chars,
    encoding: Encoding = _FEEDBACK.encoding,
    overwrite: Overwrite = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Counterfactuals of counterfactuals (paper 002): feed an editor its own output n times; report
    minimality@k, inc@k, flip-rate@k, probability@k, ppl-base@k and ppl-fine@k."""
    if overwrite:
        allow_overwrite(out)  # --overwrite: the run's claim replaces the one there
    from ...progress import RichProgress
    from .core import FeedbackOptions
    from .shell import run_feedback

    options = options_from(FeedbackOptions, locals(), ppl_model=None if ppl_model == "none" else ppl_model)
    with RichProgress(enabled=not quiet) as progress:
        result = run_feedback(data, out, options, progress=progress)
    console.print(to_console(feedback_page(result.typed_summary)))
    console.print(f"wrote {out / 'steps.csv'} and {out / 'summary.json'}")


@app.command(
    "feedback-ttest", rich_help_panel=MAKE_COMMANDS, short_help="Compare two feedback runs per text (paired t-test)."
)
def feedback_ttest(
    run_a: Annotated[Path, typer.Argument(help="A feedback run directory (or its summary.json).")],
    run_b: Annotated[Path, typer.Argument(help="Another feedback run on the same texts.")],
    k: Annotated[int | None, typer.Option(help="Compare inc@k (default: every k both runs have).")] = None,
) -> None:
    """Paired t-test of per-text inc@k between two feedback runs (paper 002's comparison of editors)."""
    from ...summaries import FeedbackSummary, read_summary, typed
    from .core import paired_inc_test

    # a clear error for a missing file, another schema or another command's summary
    typed_runs = [typed(read_summary(run, expect="feedback"), FeedbackSummary) for run in (run_a, run_b)]
    summaries = [s.to_dict() for s in typed_runs]
    ks = [k] if k else sorted({int(x) for s in typed_runs for x in s.inconsistency_by_text})
    table = Table(title=f"inc@k: A = {run_a}, B = {run_b} (paired t-test over common texts)")
    for column in ("k", "texts", "mean A", "mean B", "t", "p"):
        table.add_column(column, justify="right")
    for value in ks:
        test = paired_inc_test(summaries[0], summaries[1], value)
        if test is None:
            table.add_row(str(value), "–", "–", "–", "–", "fewer than 2 common texts, or no difference")
            continue
        table.add_row(
            str(value),
            str(test["texts"]),
            fmt(test["mean_a"]),
            fmt(test["mean_b"]),
            fmt(test["t"], 2),
            fmt(test["p_value"], 4),
        )
    console.print(table)


@app.command(
    "adapt-lm",
    rich_help_panel=TRAIN_COMMANDS,
    short_help="Adapt a language model to your texts (the domain perplexity of paper 002).",
)
def adapt_lm_command(
    data: Annotated[Path, typer.Argument(help="Domain texts (CSV/TSV/JSONL/JSON/Parquet).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for the adapted transformers model.")],
    text_column: Annotated[str, typer.Option(help="Column with the texts.")] = "text",
    base: Annotated[str, typer.Option(help="Base causal LM.")] = "gemma-3-270m",
    layers: Annotated[int, typer.Option(help="Number of final blocks to fine-tune.")] = 2,
    epochs: Annotated[int, typer.Option(help="Passes over the texts.")] = 1,
    limit: Annotated[int | None, typer.Option(help="Only the first N texts.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Adapt an LM to domain texts (the ppl-fine model of paper 002) by fine-tuning its last blocks on the CPU."""
    require_extras("counterfair adapt-lm", "metrics")
    from ...io import cell_text, read_table
    from ...progress import RichProgress
    from .core import adapt_lm

    texts = [cell_text(v) or "" for v in read_table(data)[text_column].tolist()][:limit]
    with RichProgress(enabled=not quiet) as progress:
        path = adapt_lm(
            [t for t in texts if t.strip()], out, base=base, train_layers=layers, epochs=epochs, progress=progress
        )
    console.print(f"wrote {path}; use it with --ppl-fine-model {path}")
