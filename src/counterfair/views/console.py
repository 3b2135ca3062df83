"""The console view of each result: rich tables and notes built from a summary.

The CLI prints these after a run; the result objects render them too (``rich.print(result)`` in a terminal or a
notebook), so a command's table and the library's are one piece of code. Built from the summary alone (what a run
directory's ``summary.json`` holds), never from the pairs table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rich.console import Group
from rich.table import Table

from ..summaries import (
    AuditSummary,
    EvaluationSummary,
    Record,
    StageError,
    typed,
)


def fmt(value: Any, digits: int = 3) -> str:
    """A number for a table cell: ``digits`` decimals, one above 1000, ``–`` for a missing or infinite value."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}" if abs(value) < 1000 else f"{value:.1f}"
    return str(value)


def console_table(title: str, columns: tuple[str, ...], left: tuple[str, ...]) -> Table:
    table = Table(title=title)
    for column in columns:
        table.add_column(column, justify="left" if column in left else "right")
    return table


def frame_table(frame: Any, title: str) -> Table:
    """A DataFrame as a rich table: numbers formatted, text columns left-aligned."""
    table = Table(title=title)
    for column in frame.columns:
        table.add_column(str(column), justify="left" if frame[column].dtype == object else "right")
    for row in frame.itertuples(index=False):
        table.add_row(*(fmt(v) for v in row))
    return table


def evaluate_view(summary: dict[str, Any] | Record, *, errors: bool = True) -> Group:
    """Counts by status, each metric's mean, CI, median and mean on flipped pairs, notices, skipped rows and failed
    stages (``errors=False`` leaves those out: the CLI prints them to stderr)."""
    s = typed(summary, EvaluationSummary)
    status = ", ".join(f"{k} {v}" for k, v in sorted(s.counts.status.items()))
    parts: list[Any] = [f"[bold]{s.counts.rows}[/bold] rows, {s.counts.scored} scored ({status})"]
    table = console_table(
        "counterfactual metrics", ("metric", "n", "mean", "95% CI", "median", "mean on flipped"), ("metric",)
    )
    for name, entry in (s.metrics or {}).items():
        agg, flipped = entry.all, entry.flipped
        table.add_row(
            "flip rate" if name == "flipped" else name,
            str(agg.n),
            fmt(agg.value),
            f"[{fmt(agg.ci_low)}, {fmt(agg.ci_high)}]",
            fmt(agg.median),
            fmt(flipped.value) if flipped else "",
        )
    parts.append(table)
    if s.classifier_spec() is not None:
        parts.append(f"classifier: {s.classifier_spec()}")
    parts += [f"[yellow]note:[/yellow] {notice}" for notice in s.notices]
    if s.skipped_rows:
        shown = ", ".join(f"row {r['row']} ({r['status']})" for r in s.skipped_rows[:10])
        more = f" and {len(s.skipped_rows) - 10} more" if len(s.skipped_rows) > 10 else ""
        parts.append(f"[yellow]skipped {len(s.skipped_rows)} rows:[/yellow] {shown}{more}")
    if errors:
        parts += [stage_error(error) for error in s.errors]
    return Group(*parts)


def stage_error(error: StageError | dict[str, str]) -> str:
    """One failed stage of an evaluation, as a line."""
    e = typed(error, StageError)
    return f"[red]stage {e.stage} failed:[/red] {e.message}"


def audit_view(summary: dict[str, Any] | Record, *, with_verdict: bool = True) -> Group:
    """Score change per method and attribute, CTF gaps, the identity effect per group, coverage, unscored pairs,
    with a baseline the comparison, and last the verdict (``with_verdict=False``: the CLI prints it at the very end)."""
    s = typed(summary, AuditSummary)
    table = console_table(
        f"score change original -> counterfactual ({s.classifier.spec})",
        ("method", "attribute", "pairs", "mean change", "95% CI", "flips"),
        ("method", "attribute"),
    )
    for g in s.groups:
        change = g.score_change
        table.add_row(
            g.method,
            g.attribute,
            str(g.pairs),
            fmt(change.value),
            f"[{fmt(change.ci_low)}, {fmt(change.ci_high)}]",
            f"{g.flips}",
        )
    parts: list[Any] = [table]
    if s.ctf:
        parts.append(f"CTF gap over identity swaps: {fmt(s.ctf.value)}")
    for name, ctf in s.swap_gaps().items():
        by_group = ctf.by_group or {}
        worst = max(by_group.items(), key=lambda kv: kv[1].value or 0, default=(None, None))[0]
        parts.append(f"CTF gap over {name} swaps: {fmt(ctf.value)} (largest for swaps of {worst}'s words)")
    if s.effects and s.effects.identity_effect and s.effects.identity_effect.by_group:
        parts.append(effects_table(s.effects))
    if s.coverage and s.coverage.unreached:
        c = s.coverage
        parts.append(
            f"coverage: {c.reached} of {c.texts} texts got a counterfactual"
            + (f"; [yellow]{c.hint}[/yellow]" if c.hint else "")
        )
    if s.pairs_without_score:
        parts.append(
            f"[yellow]note:[/yellow] {s.pairs_without_score} pairs have no score (the classifier returned "
            "NaN); they are in pairs.csv with status partial:classifier_returned_nan and left out of the aggregates"
        )
    if s.comparison:
        parts.append(comparison_view(s.comparison))
    if with_verdict:
        parts.append(verdict_view(s))
    return Group(*parts)


def effects_table(effects: Any) -> Any:
    """The in-slot measures per group (:mod:`counterfair.analysis.slots`), in probability points."""
    from .verdict import group_estimates

    def pts(e: Any) -> str:
        return "–" if e is None or e.value is None else f"{100 * e.value:+.1f}"

    def ci(e: Any) -> str:
        if e is None or e.ci_low is None or e.ci_high is None:
            return "–"
        return f"[{100 * e.ci_low:+.1f}, {100 * e.ci_high:+.1f}]"

    from rich.table import Table

    material = effects.material
    table = Table(
        title="measured in the slot against neutral words (probability points; material: shown to exceed "
        f"{100 * material.get('identity_effect', 0.02):.0f}, flips {100 * material.get('flip_excess', 0.05):.0f})"
    )
    longest = max((len(g) for g in effects.identity_effect.by_group or {}), default=5)
    table.add_column("group", no_wrap=True, min_width=longest)  # a group's name is never cut ("race_ethni…")
    for column in ("effect [95% CI]", "largest term", "disparity", "flips"):
        table.add_column(column, justify="right")
    table.add_column("finding")
    for g in group_estimates(effects):
        colour = {"material": "red", "small": "yellow"}.get(g.level, "green")
        top = g.terms[0] if g.terms else None  # the largest term effect
        table.add_row(
            g.group,
            f"{pts(g.effect)} {ci(g.effect)}",
            f"{top[0]} {pts(top[1])}" if top else "–",
            pts(g.disparity),
            pts(g.flips),
            f"[{colour}]{ {'small': 'small', 'material': 'MATERIAL'}.get(g.level, 'none') }[/]",
        )
    return table


def verdict_view(summary: dict[str, Any] | Record) -> Group:
    """The audit's verdict (:mod:`counterfair.views.verdict`), the first lines of the console."""
    from rich.markup import escape

    from .verdict import verdict

    v = verdict(summary)
    colour = {"unfair": "red", "gate failed": "red", "no evidence of unfairness": "green"}.get(v.status, "yellow")
    lines = [f"[bold {colour}]Verdict:[/] {escape(v.headline)}", f"[dim]{escape(v.basis)}[/]"]
    tint = {"material": "red", "small": "yellow"}
    lines += [
        f"  [{tint[f.level]}]{escape(f.sentence())}[/]" if f.level in tint else f"  {escape(f.sentence())}"
        for f in v.findings
    ]
    if v.gate_status is not None:
        code = {"pass": 0, "fail": 1}.get(v.gate_status, 2)
        lines.append(f"[bold]Fairness gate:[/] {v.gate_status.upper()} (exit {code})")
    lines += [
        f"[bold]Labelled data:[/] {escape(line.removeprefix('Verdict: '))}" if i == 0 else f"  {escape(line)}"
        for i, line in enumerate(v.labelled)
    ]
    lines += [f"[dim]next: {escape(step)}[/]" for step in v.next_steps]
    return Group(*lines)


def comparison_view(comparison: Mapping[str, Any]) -> Group:
    """Classifier B against A on the same pairs: per metric, B − A per group with its CI, p and verdict."""
    from rich.markup import escape

    from ..analysis.compare import comparison_table
    from ..summaries import ComparisonSummary
    from .verdict import comparison_headline

    headline, status = comparison_headline(ComparisonSummary.from_dict(comparison))
    colour = {"fail": "red", "pass": "green"}.get(status, "yellow")
    parts: list[Any] = [
        f"[bold {colour}]Comparison:[/] {escape(headline)}",
        f"comparison: B = {comparison['b']} against A = {comparison['a']} on {comparison['matched_pairs']} "
        f"common pairs (only in A: {comparison['pairs_only_in_a']}, only in B: {comparison['pairs_only_in_b']})",
    ]
    for metric in comparison["metrics"]:
        frame = comparison_table(dict(comparison), metric)
        table = console_table(
            f"{metric}: B − A per group (negative: B is fairer)",
            ("unit", "A", "B", "B − A", "95% CI", "p", "verdict"),
            ("unit", "verdict"),
        )
        for unit, row in frame.iterrows():
            table.add_row(
                str(unit),
                fmt(row["a"]),
                fmt(row["b"]),
                fmt(row["difference"]),
                f"[{fmt(row['ci_low'])}, {fmt(row['ci_high'])}]",
                fmt(row["p_value"]),
                str(row["verdict"]),
            )
        parts.append(table)
    return Group(*parts)


def rating_view(report: dict[str, Any]) -> Table:
    """Paper 000's Table 3 from a consolidated rating project: per method, the shares of fluent, no attribute
    reference, same label, and all three with meaning 2+."""
    columns = ("method", "examples", "fluent", "no reference", "same label", "FAL & meaning 2+")
    table = console_table("by method", columns, ("method",))
    keys = ("fluent", "no_attribute_reference", "same_label", "fal_meaning_2plus")
    for method, row in report["tables"]["by_method"].items():
        table.add_row(method, str(row["examples"]), *(fmt(row[k], 2) for k in keys))
    return table
