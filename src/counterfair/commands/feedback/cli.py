"""``counterfair feedback``'s command line: counterfactuals of counterfactuals (paper 002)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...command_line import Encoding, MaxTextChars, Overwrite, app, console, declared, flag, options_from, spelled_none
from ...editors.registry import editors_help
from ...runs import allow_overwrite
from ...views.page import to_console
from .core import FeedbackOptions
from .page import feedback_page

#: every default of the command's options is FeedbackOptions's, read from it (#48: an option declared once)
_FEEDBACK = declared(FeedbackOptions)


@app.command(
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
