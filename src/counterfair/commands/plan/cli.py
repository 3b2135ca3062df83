"""``counterfair plan``: how many texts (or prompts) an audit needs to detect an effect, from a pilot run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...command_line import app, console


@app.command(
    short_help="How many texts (or prompts) an audit needs to detect an effect, from a pilot run.",
)
def plan(
    run_dir: Annotated[Path, typer.Argument(help="A pilot audit's or LLM audit's run directory.")],
    effect: Annotated[
        float, typer.Option(min=0.01, max=99.0, help="The effect to detect, in probability points (2: 2 points).")
    ] = 2.0,
    power: Annotated[float, typer.Option(min=0.5, max=0.99, help="The chance of detecting it.")] = 0.8,
) -> None:
    """From a pilot run: per group, the texts it had, the smallest effect detectable over them, and about how many
    texts (prompts) would detect EFFECT points with POWER, simultaneously over the pilot's estimates."""
    from .core import plan as make_plan

    console.print(str(make_plan(run_dir, effect=effect / 100, power=power)))
