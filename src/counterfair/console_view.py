"""The console view of each result: rich tables and notes built from a summary.

The CLI prints these after a run; the result objects render them too (``rich.print(result)`` in a terminal or a
notebook), so a command's table and the library's are one piece of code. Built from the summary alone (what a run
directory's ``summary.json`` holds), never from the pairs table.
"""

from __future__ import annotations

import math
from typing import Any

from rich.console import Group
from rich.table import Table


def fmt(value: Any, digits: int = 3) -> str:
    """A number for a table cell: ``digits`` decimals, one above 1000, ``–`` for a missing or infinite value."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}" if abs(value) < 1000 else f"{value:.1f}"
    return str(value)


def _table(title: str, columns: tuple[str, ...], left: tuple[str, ...]) -> Table:
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


def evaluate_view(summary: dict[str, Any], *, errors: bool = True) -> Group:
    """Counts by status, each metric's mean, CI, median and mean on flipped pairs, notices, skipped rows and failed
    stages (``errors=False`` leaves those out: the CLI prints them to stderr)."""
    counts = summary["counts"]
    status = ", ".join(f"{k} {v}" for k, v in sorted(counts["status"].items()))
    parts: list[Any] = [f"[bold]{counts['rows']}[/bold] rows, {counts['scored']} scored ({status})"]
    table = _table(
        "counterfactual metrics", ("metric", "n", "mean", "95% CI", "median", "mean on flipped"), ("metric",)
    )
    for name, entry in summary["metrics"].items():
        agg, flipped = entry["all"], entry.get("flipped", {})
        table.add_row(
            "flip rate" if name == "flipped" else name,
            str(agg["n"]),
            fmt(agg["mean"]),
            f"[{fmt(agg['ci_low'])}, {fmt(agg['ci_high'])}]",
            fmt(agg["median"]),
            fmt(flipped.get("mean")) if flipped else "",
        )
    parts.append(table)
    if "classifier" in summary["signatures"]:
        parts.append(f"classifier: {summary['signatures']['classifier']['spec']}")
    parts += [f"[yellow]note:[/yellow] {notice}" for notice in summary.get("notices", [])]
    skipped = summary.get("skipped_rows", [])
    if skipped:
        shown = ", ".join(f"row {s['row']} ({s['status']})" for s in skipped[:10])
        more = f" and {len(skipped) - 10} more" if len(skipped) > 10 else ""
        parts.append(f"[yellow]skipped {len(skipped)} rows:[/yellow] {shown}{more}")
    if errors:
        parts += [stage_error(error) for error in summary.get("errors", [])]
    return Group(*parts)


def stage_error(error: dict[str, str]) -> str:
    """One failed stage of an evaluation, as a line."""
    return f"[red]stage {error['stage']} failed:[/red] {error['message']}"


def audit_view(summary: dict[str, Any]) -> Group:
    """Score change per method and attribute, CTF gaps, the identity effect per group, coverage, unscored pairs
    and, with a baseline, the comparison."""
    table = _table(
        f"score change original -> counterfactual ({summary['classifier']['spec']})",
        ("method", "attribute", "pairs", "mean change", "95% CI", "flips"),
        ("method", "attribute"),
    )
    for g in summary["groups"]:
        change = g["score_change"]
        table.add_row(
            g["method"],
            g["attribute"],
            str(g["pairs"]),
            fmt(change["mean"]),
            f"[{fmt(change['ci_low'])}, {fmt(change['ci_high'])}]",
            f"{g['flips']}",
        )
    parts: list[Any] = [table]
    if summary.get("ctf"):
        parts.append(f"CTF gap over identity swaps: {fmt(summary['ctf']['ctf_gap'])}")
    for name, ctf in (summary.get("ctf_by_attribute") or {}).items():
        if name != "identity":
            worst = max(ctf["by_group"].items(), key=lambda kv: kv[1]["ctf_gap"] or 0, default=(None, None))[0]
            parts.append(f"CTF gap over {name} swaps: {fmt(ctf['ctf_gap'])} (largest for {worst})")
    placebo = summary.get("placebo") or {}
    if placebo.get("by_group"):
        effects = _table(
            "identity effect = CTF gap − placebo gap, by group swapped in",
            ("group", "identity gap", "placebo gap", "effect", "95% CI", "above placebo"),
            ("group",),
        )
        for name, e in sorted(placebo["by_group"].items(), key=lambda kv: -(kv[1]["identity_effect"] or 0)):
            effects.add_row(
                name,
                fmt(e["identity_gap"]),
                fmt(e["placebo_gap"]),
                fmt(e["identity_effect"]),
                f"[{fmt(e['ci_low'])}, {fmt(e['ci_high'])}]",
                "yes" if e["exceeds_placebo"] else "no",
            )
        parts.append(effects)
    coverage = summary.get("coverage") or {}
    if coverage.get("unreached"):
        parts.append(
            f"coverage: {coverage['reached']} of {coverage['texts']} texts got a counterfactual"
            + (f"; [yellow]{coverage['hint']}[/yellow]" if coverage.get("hint") else "")
        )
    if summary.get("pairs_without_score"):
        parts.append(
            f"[yellow]note:[/yellow] {summary['pairs_without_score']} pairs have no score (the classifier returned "
            "NaN); they are in pairs.csv with status partial:classifier_returned_nan and left out of the aggregates"
        )
    if summary.get("comparison"):
        parts.append(comparison_view(summary["comparison"]))
    return Group(*parts)


def comparison_view(comparison: dict[str, Any]) -> Group:
    """Classifier B against A on the same pairs: per metric, B − A per group with its CI, p and verdict."""
    from .compare import comparison_table

    parts: list[Any] = [
        f"comparison: B = {comparison['b']} against A = {comparison['a']} on {comparison['matched_pairs']} "
        f"common pairs (only in A: {comparison['pairs_only_in_a']}, only in B: {comparison['pairs_only_in_b']})"
    ]
    for metric in comparison["metrics"]:
        frame = comparison_table(comparison, metric)
        table = _table(
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


def ctf_view(summary: dict[str, Any]) -> Group:
    """The CTF gap overall, by label and by term split, the unscored pairs and the overlapping terms."""
    table = _table(
        f"CTF gap ({summary['classifier']['spec']})", ("subset", "texts", "pairs", "CTF gap", "95% CI"), ("subset",)
    )

    def add(name: str, entry: dict[str, Any]) -> None:
        gap = entry.get("ctf_gap")
        table.add_row(
            name,
            str(entry.get("texts", 0)),
            str(entry.get("pairs", 0)),
            fmt(gap),
            f"[{fmt(entry.get('ci_low'))}, {fmt(entry.get('ci_high'))}]" if gap is not None else "",
        )

    add("all", summary)
    for label, entry in summary["by_label"].items():
        add(label, entry)
    for split, entry in summary["by_split"].items():
        add(f"{split} terms", entry)
    parts: list[Any] = [table]
    if summary.get("pairs_without_score"):
        incomplete = summary["incomplete_texts"]
        parts.append(
            f"[yellow]warning:[/yellow] {summary['pairs_without_score']} pairs have no score (not in a scores: file, "
            f"or the classifier returned NaN); the gap above is over the scored pairs only, and {incomplete['texts']} "
            "texts are incomplete (summary.json: incomplete_texts; pairs.csv has every pair)"
        )
    parts += [f"[yellow]note:[/yellow] {note}" for note in summary["identities"]["overlapping_terms"]]
    return Group(*parts)


def feedback_view(summary: dict[str, Any]) -> Group:
    """Per step: texts, minimality, flip rate, probability, perplexities, inc@k and length; the inputs' length."""
    columns = ("step", "texts", "minimality", "flip rate", "probability", "ppl-base", "ppl-fine", "inc@k", "words")
    table = _table(f"feedback: {summary['editor']['name']} on {summary['classifier']['spec']}", columns, ())
    for step, entry in summary["steps"].items():
        table.add_row(
            step,
            str(entry["texts"]),
            fmt(entry["minimality"], 2),
            fmt(entry["flip_rate"], 2),
            fmt(entry["probability"], 2),
            fmt(entry["ppl_base"], 1),
            fmt(entry["ppl_fine"], 1),
            fmt(summary["inconsistency"].get(f"inc@{step}"), 2),
            fmt(entry.get("mean_words"), 1),
        )
    return Group(table, f"mean words of the inputs: {fmt(summary['mean_words_by_step'].get('0'), 1)}")


def rating_view(report: dict[str, Any]) -> Table:
    """Paper 000's Table 3 from a consolidated rating project: per method, the shares of fluent, no attribute
    reference, same label, and all three with meaning 2+."""
    columns = ("method", "examples", "fluent", "no reference", "same label", "FAL & meaning 2+")
    table = _table("by method", columns, ("method",))
    keys = ("fluent", "no_attribute_reference", "same_label", "fal_meaning_2plus")
    for method, row in report["tables"]["by_method"].items():
        table.add_row(method, str(row["examples"]), *(fmt(row[k], 2) for k in keys))
    return table
