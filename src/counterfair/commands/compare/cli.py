"""``counterfair compare``'s command line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...command_line import app, console


@app.command(
    short_help="Two classifiers on the same counterfactual pairs: which is fairer, per group.",
)
def compare(
    run_a: Annotated[Path, typer.Argument(help="The baseline audit (run directory or pairs.csv): A.")],
    run_b: Annotated[Path, typer.Argument(help="The audit to compare with it: B.")],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Run directory for summary.json and the report (report.html, report.md); a path ending .json "
            "writes the comparison alone.",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the bootstrap and the permutation test.")] = 0,
    bootstrap: Annotated[int, typer.Option(min=1, help="Bootstrap resamples.")] = 2000,
    shared_only: Annotated[
        bool,
        typer.Option(
            "--shared-only", help="Compare only the pairs whose original texts match (audits of different inputs)."
        ),
    ] = False,
) -> None:
    """Two classifiers on the same counterfactual pairs: B − A per group with a CI, a paired permutation test and
    a verdict (better / worse / no evidence)."""
    from dataclasses import replace

    from ...analysis.compare import compare_pairs
    from ...writing import write_json

    comparison = compare_pairs(
        run_a, run_b, names=(str(run_a), str(run_b)), seed=seed, n_resamples=bootstrap, shared_only=shared_only
    )
    from ...views.page import to_console
    from .page import compare_page

    console.print(to_console(compare_page(comparison)))
    if out is not None and out.suffix.lower() == ".json":
        write_json(comparison, out)
        console.print(f"wrote {out}")
    elif out is not None:
        from ...runs import prepare_out_dir
        from ...views.page import write_summary_page
        from .page import compare_page

        target = prepare_out_dir(out)
        write_json(replace(comparison, command="compare"), target / "summary.json")
        paths = write_summary_page(target, compare_page)
        console.print(f"wrote {target / 'summary.json'}, {paths.get('html')} and {paths.get('markdown')}")
