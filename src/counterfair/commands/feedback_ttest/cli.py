"""``counterfair feedback-ttest``: two feedback runs compared per text (paired t-test of inc@k, paper 002)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ...command_line import app, console
from ...views.console import fmt


@app.command("feedback-ttest", short_help="Compare two feedback runs per text (paired t-test).")
def feedback_ttest(
    run_a: Annotated[Path, typer.Argument(help="A feedback run directory (or its summary.json).")],
    run_b: Annotated[Path, typer.Argument(help="Another feedback run on the same texts.")],
    k: Annotated[int | None, typer.Option(help="Compare inc@k (default: every k both runs have).")] = None,
) -> None:
    """Paired t-test of per-text inc@k between two feedback runs (paper 002's comparison of editors)."""
    from ...summaries import FeedbackSummary, read_summary, typed
    from ..feedback.core import paired_inc_test

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
