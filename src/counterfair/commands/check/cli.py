"""``counterfair check``: the fairness gate on a finished run, without recomputing (exit 0 pass, 1 a rule failed, 2 a
rule could not be evaluated)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...command_line import app, finish_gate
from ...summaries import AuditSummary


@app.command(
    short_help="Check a finished audit against gate rules, without recomputing (exit 1 when a rule fails).",
)
def check(
    run_dir: Annotated[
        Path, typer.Argument(help="An audit, llm-audit, bias or suite run directory (or an audit's pairs.csv).")
    ],
    fail_if: Annotated[list[str], typer.Option("--fail-if", help="A rule (repeatable), as for audit --fail-if.")],
    junit: Annotated[Path | None, typer.Option(help="Write the verdicts as a JUnit XML file.")] = None,
    allow_inconclusive: Annotated[
        bool, typer.Option("--allow-inconclusive", help="With default: an inconclusive group passes.")
    ] = False,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the bootstrap.")] = 0,
    bootstrap: Annotated[int, typer.Option(min=1, help="Bootstrap resamples.")] = 2000,
) -> None:
    """The fairness gate on a finished audit, without recomputing it: exit 0 pass, 1 a rule failed, 2 a rule could
    not be evaluated."""
    from ...analysis.compare import read_pairs
    from ...analysis.gate import allowing_inconclusive, gate_pairs
    from ...analysis.slots import read_slots
    from ...summaries import read_summary

    fail_if = allowing_inconclusive(fail_if) if allow_inconclusive else fail_if
    folder = run_dir if run_dir.is_dir() else run_dir.parent
    if is_llm_audit(folder):
        from ..llm_audit.result import check_run

        raise typer.Exit(finish_gate(check_run(folder, fail_if), junit, run_dir=folder))
    if run_dir.is_dir() and (folder / "summary.json").exists():
        from ..registry import open_run, run_command

        if run_command(folder)[0].name != "audit":  # bias, suite: the result's own metrics (another: no gate, said)
            raise typer.Exit(finish_gate(open_run(folder).check(fail_if), junit, run_dir=folder))
    run = read_summary(folder / "summary.json", expect="audit") if (folder / "summary.json").exists() else None
    typed = run if isinstance(run, AuditSummary) else AuditSummary()
    gate = gate_pairs(
        read_pairs(run_dir),
        fail_if,
        seed=seed,
        n_resamples=bootstrap,
        effects=typed.effects,  # the run's own; else its slots.csv
        slots=read_slots(folder),
        threshold=typed.threshold if typed.threshold is not None else 0.5,
    )
    raise typer.Exit(finish_gate(gate, junit, run_dir=folder))


def is_llm_audit(folder: Path) -> bool:
    """Whether ``folder`` holds a run of ``counterfair llm-audit`` (its summary says so)."""
    import json

    try:
        return json.loads((folder / "summary.json").read_text(encoding="utf-8")).get("command") == "llm-audit"
    except (OSError, ValueError, AttributeError):
        return False
