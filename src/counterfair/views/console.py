"""What the console shows besides a command's page (:func:`counterfair.views.page.to_console` renders every
command's verdict and tables): a result's table as a rich table, a failed evaluation stage, the rating project's
table."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rich.table import Table

from ..summaries import StageError, typed


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


def stage_error(error: StageError | dict[str, str]) -> str:
    """One failed stage of an evaluation, as a line."""
    e = typed(error, StageError)
    return f"[red]stage {e.stage} failed:[/red] {e.message}"


def rating_view(report: Mapping[str, Any]) -> Table:
    """Paper 000's Table 3 from a consolidated rating project: per method, the shares of fluent, no attribute
    reference, same label, and all three with meaning 2+."""
    columns = ("method", "examples", "fluent", "no reference", "same label", "FAL & meaning 2+")
    table = console_table("by method", columns, ("method",))
    keys = ("fluent", "no_attribute_reference", "same_label", "fal_meaning_2plus")
    for method, row in report["tables"]["by_method"].items():
        table.add_row(method, str(row["examples"]), *(fmt(row[k], 2) for k in keys))
    return table
