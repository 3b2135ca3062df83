"""``counterfair report``: a finished run's report rebuilt without recomputing; the command registry says which
command wrote the run and how its report is built."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...command_line import app, console


@app.command(short_help="Rebuild a run's report (HTML, Markdown) without recomputing.")
def report(run_dir: Annotated[Path, typer.Argument(help="A run directory of any counterfair command.")]) -> None:
    """Rebuild the report (HTML and Markdown; plots for an audit, evaluation or feedback run) of a run directory,
    without recomputing: audit, llm-audit, evaluate, bias, suite, ctf, generate, feedback, compare."""
    from ..registry import rebuild_report

    paths = rebuild_report(run_dir)  # the command that wrote the run (its summary says which) rebuilds it
    console.print("wrote " + " and ".join(str(paths[k]) for k in ("html", "markdown") if k in paths))
