"""A report page, answer first: the one view of every command, rendered as ``report.html``, ``report.md``, its
notebook view and its console view, so the four always agree.

A :class:`Page` holds the verdict block (a headline, findings, the gate's rules as sentences, what to look at next),
then tables with their captions, figures, titled :class:`Section` s (text, tables, small print), then the summary's
raw JSON behind a disclosure. Every missing value renders as "—"; a row resting on few cases says so in the row
itself. The console and the notebook show the verdict and the first rows of each table marked ``brief``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from ..text import md_text

MISSING = "–"  # the one mark of a missing value, as the audit and evaluation reports write it


def num(value: Any, digits: int = 3) -> str:
    """A number as the pages show it; ``MISSING`` for None or NaN."""
    if value is None or (isinstance(value, float) and value != value):
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.{digits}f}"


class Interval(Protocol):
    """What :func:`interval` reads: an :class:`~counterfair.summaries.Estimate`, a ``GapReport``, a slot estimate."""

    @property
    def value(self) -> float | None: ...
    @property
    def ci_low(self) -> float | None: ...
    @property
    def ci_high(self) -> float | None: ...


def interval(e: Interval | None, digits: int = 3) -> str:
    """``0.812 [0.790, 0.831]``; ``MISSING`` without a value, the value alone without an interval."""
    if e is None or e.value is None:
        return MISSING
    if e.ci_low is None or e.ci_high is None:
        return num(e.value, digits)
    return f"{num(e.value, digits)} [{num(e.ci_low, digits)}, {num(e.ci_high, digits)}]"


def percent(value: float | None) -> str:
    """A share as a percentage with one decimal (``12.5%``); ``MISSING`` for None or NaN."""
    return MISSING if value is None or value != value else f"{100 * value:.1f}%"


@dataclass(frozen=True)
class Table:
    """A captioned table; ``frame``'s cells are shown as they are (format numbers with :func:`num`).

    For the HTML page only: ``markup`` gives some columns' cells as safe HTML (an edit highlighted; the other views
    show the frame's text), ``row_class`` a CSS class per row (a finding's level), ``signed`` the columns coloured by
    the sign of their number, ``folded`` a disclosure's summary to put the table behind. ``brief``: shown by the
    console and the notebook too (their first rows)."""

    caption: str
    frame: pd.DataFrame
    note: str | None = None
    key: str = ""  # the HTML id
    markup: Mapping[str, Sequence[str]] = field(default_factory=dict)
    row_class: tuple[str, ...] = ()
    signed: tuple[str, ...] = ()
    folded: str | None = None
    brief: bool = True

    def cells(self) -> pd.DataFrame:
        return self.frame.astype(object).where(self.frame.notna(), MISSING)


@dataclass(frozen=True)
class Figure:
    """A captioned plot: the PNG inline (base64), the SVG beside the report."""

    caption: str
    png: str
    svg: str
    key: str = ""


@dataclass(frozen=True)
class Section:
    """A titled part of a page after its tables and figures: paragraphs, tables, small print, a command line."""

    title: str
    key: str
    text: tuple[str, ...] = ()
    tables: tuple[Table, ...] = ()
    notes: tuple[str, ...] = ()
    code: str | None = None


@dataclass(frozen=True)
class Page:
    """One report: ``status`` is a word for the verdict box's colour (``fail``, ``pass``, ``attention``,
    ``neutral``)."""

    command: str
    title: str
    headline: str
    status: str = "neutral"
    findings: tuple[str, ...] = ()
    finding_class: tuple[str, ...] = ()  # a CSS class per finding (its level), HTML only
    gate_status: str | None = None
    rules: tuple[tuple[str, str], ...] = ()  # (pass | fail | error, the rule as a sentence)
    hidden_passes: int = 0  # passed rules left out of ``rules`` (a gate of many checks shows those that did not pass)
    meta: tuple[str, ...] = ()  # what the verdict rests on: data, classifier, version
    next_steps: tuple[str, ...] = ()
    intro: tuple[str, ...] = ()  # paragraphs after the verdict block: what was measured, in words
    tables: tuple[Table, ...] = ()
    figures: tuple[Figure, ...] = ()  # after the tables (plots drawn from the run directory's rows)
    notes: tuple[str, ...] = ()
    sections: tuple[Section, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)  # the summary, behind a disclosure

    def lines(self) -> list[str]:
        """The verdict block as plain lines (report.md's head, the console's last lines, a CI log)."""
        out = [f"Verdict: {self.headline}", *(f if heading(f) else f"- {f}" for f in self.findings)]
        if self.gate_status is not None:
            out.append(f"Fairness gate: {self.gate_status.upper()}")
            out += [f"- {verdict.upper()}: {sentence}" for verdict, sentence in self.rules]
            if self.hidden_passes:
                out.append(f"- PASS: {self.hidden_passes} more rules (each in summary.json's gate)")
        out += list(self.meta)
        out += [f"Next: {step}" for step in self.next_steps]
        return out

    def brief_tables(self) -> list[Table]:
        """The tables the console and the notebook show: the page's, then its sections', those marked brief."""
        tables = [*self.tables, *(t for section in self.sections for t in section.tables)]
        return [t for t in tables if t.brief and not t.frame.empty]


def heading(finding: str) -> bool:
    """A finding that titles the ones after it ("Worst functionalities:")."""
    return finding.endswith(":")


# ------------------------------------------------------------------------------------------------ renderers


def _frame_html(table: Table) -> str:
    cells = table.cells()
    first = cells.columns[0] if len(cells.columns) else None
    left = {c for c in cells.columns if c == first or c in table.markup or not all(map(_numeric, cells[c]))}
    head = "".join(f'<th class="{"l" if c in left else ""}">{html.escape(str(c))}</th>' for c in cells.columns)
    body = []
    for r, row in enumerate(cells.itertuples(index=False)):
        tds = "".join(
            _cell_html(table, column, r, v, first=i == 0)
            for i, (column, v) in enumerate(zip(cells.columns, row, strict=True))
        )
        shade = f' class="{html.escape(table.row_class[r])}"' if r < len(table.row_class) and table.row_class[r] else ""
        body.append(f"<tr{shade}>{tds}</tr>")
    key = f' id="{html.escape(table.key)}"' if table.key else ""
    return f"<table{key}><tr>{head}</tr>" + "".join(body) + "</table>"


def _cell_html(table: Table, column: Any, row: int, value: Any, *, first: bool) -> str:
    """One cell: left-aligned text or a right-aligned number, coloured by its sign in a ``signed`` column (red:
    raises the score), or the cell's safe HTML from ``markup``."""
    classes = ["l"] if first or not _numeric(value) else []
    if column in table.signed:
        classes += [_sign_class(value)]
    inner = table.markup[column][row] if column in table.markup else html.escape(str(value))
    shown = " ".join(c for c in classes if c)
    return f'<td class="{shown}">{inner}</td>'


def _sign_class(value: Any) -> str:
    """``pos`` for a positive leading number, ``neg`` for a negative one, nothing for zero or no number."""
    try:
        number = float(str(value).split(" ")[0].replace(",", ""))
    except ValueError:
        return ""
    return "" if abs(number) < 1e-9 else ("pos" if number > 0 else "neg")


def _numeric(value: Any) -> bool:
    text = str(value).split(" ")[0].replace(",", "").removesuffix("%")
    try:
        float(text)
    except ValueError:
        return text == MISSING
    return True


def to_html(page: Page) -> str:
    """The whole report page (``report.html``)."""
    from .report import render

    tables = [(t, _frame_html(t)) for t in page.tables if not t.frame.empty]
    sections = [(s, [(t, _frame_html(t)) for t in s.tables if not t.frame.empty]) for s in page.sections]
    details = json.dumps(dict(page.details), indent=2, ensure_ascii=False, default=str)
    return render("page.html.j2", page=page, tables=tables, sections=sections, details=details, heading=heading)


def to_notebook_html(page: Page, *, rows: int = 15) -> str:
    """The notebook view: the verdict block and the first rows of each table."""
    status = html.escape(page.status)
    parts = [f'<div class="counterfair {status}"><h4>{html.escape(page.title)}</h4>']
    parts += [f"<p>{html.escape(line)}</p>" for line in page.lines()]
    parts += [f'<p class="note">{html.escape(note)}</p>' for note in page.notes]
    for table in page.brief_tables():
        shown = Table(table.caption, table.frame.head(rows), table.note, table.key, signed=table.signed)
        parts.append(f"<p><b>{html.escape(table.caption)}</b></p>{_frame_html(shown)}")
    return "".join(parts) + "</div>"


_CONSOLE_STYLE = {"fail": "bold red", "pass": "bold green", "attention": "bold yellow"}


def to_console(page: Page, *, rows: int = 10, tables: bool = True) -> Any:
    """The console view (rich): the verdict block first (:meth:`Page.lines`: the answer in the first lines, as the
    report opens), then the first rows of each brief table (none where not ``tables``: ``--quiet``) and the notes;
    report.html has every row."""
    from rich.console import Group
    from rich.markup import escape
    from rich.table import Table as RichTable

    lines = page.lines()
    parts: list[Any] = [f"[{_CONSOLE_STYLE.get(page.status, 'bold')}]{escape(lines[0])}[/]"]
    parts += [escape(line) for line in lines[1:]]
    for table in page.brief_tables() if tables else ():
        cells = table.cells()
        more = f" (first {rows} of {len(cells)}; report.html has all)" if len(cells) > rows else ""
        shown = RichTable(title=escape(table.caption + more))
        first = cells.columns[0]
        for column in cells.columns:
            numeric = column != first and all(_numeric(v) for v in cells[column].head(rows))
            shown.add_column(  # a long name folds onto the next line, never cut ("…") in a narrow pipe
                escape(str(column)), justify="right" if numeric else "left", overflow="fold"
            )
        for row in cells.head(rows).itertuples(index=False):
            shown.add_row(*(escape(str(v)) for v in row))
        parts.append(shown)
    parts += [f"[yellow]note:[/yellow] {escape(note)}" for note in page.notes]
    return Group(*parts)


def _md_cell(value: Any) -> str:
    return md_text(str(value)).replace("|", "\\|").replace("\n", " ")


def to_markdown(page: Page) -> str:
    """``report.md``: the verdict lines, then each table as a Markdown table."""
    out = [f"# {md_text(' '.join(page.title.split()))}", ""]  # a classifier's spec in it is data: inert, one line
    for line in map(md_text, page.lines()):  # a list item follows the line before; any other is a paragraph of its own
        out += [line] if line.startswith("- ") or not out[-1] else ["", line]
    out.append("")
    out += [f"> {md_text(note)}" for note in page.notes]
    for paragraph in page.intro:
        out += ["", md_text(paragraph)]
    for table in page.tables:
        out += _md_table(table, "##")
    for section in page.sections:
        out += ["", f"## {md_text(section.title)}"]
        out += [line for paragraph in section.text for line in ("", md_text(paragraph))]
        for table in section.tables:
            out += _md_table(table, "###")
        out += [line for note in section.notes for line in ("", md_text(note))]
        if section.code:
            out += ["", "```", section.code, "```"]
    return "\n".join(out) + "\n"


def _md_table(table: Table, level: str) -> list[str]:
    """A table as Markdown under its caption; nothing for an empty one."""
    if table.frame.empty:
        return []
    cells = table.cells()
    out = ["", f"{level} {md_text(table.caption)}", ""] if table.caption else [""]
    out.append("| " + " | ".join(_md_cell(c) for c in cells.columns) + " |")
    out.append("|" + "---|" * len(cells.columns))
    out += ["| " + " | ".join(_md_cell(v) for v in row) + " |" for row in cells.itertuples(index=False)]
    return out + (["", table.note] if table.note else [])


def write_page(page: Page, directory: str | Path) -> dict[str, Path]:
    """``report.html`` and ``report.md`` of ``page`` in ``directory``."""
    from .report import write_page as write_text

    target = Path(directory)
    paths = {"html": target / "report.html", "markdown": target / "report.md"}
    write_text(to_html(page), paths["html"])
    write_text(to_markdown(page), paths["markdown"])
    return paths


def summary_page(run_dir: str | Path, build: Any, figures: Any = None) -> Page:
    """``build(summary)``'s page for the summary written in ``run_dir``, with the plots ``figures(run_dir)`` draws
    from the run's tables (a command whose page shows some)."""
    import dataclasses

    from ..errors import InputError
    from ..summaries import read_summary

    target = Path(run_dir)
    if not (target / "summary.json").exists():
        raise InputError(f"{target}: not a counterfair run directory (no summary.json)")
    page: Page = build(read_summary(target))
    return dataclasses.replace(page, figures=figures(target)) if figures is not None else page


def write_summary_page(run_dir: str | Path, build: Any, figures: Any = None) -> dict[str, Path]:
    """``report.html`` and ``report.md`` of a run directory from the summary as written (:func:`summary_page`): the run
    writes the same report ``counterfair report`` rebuilds."""
    return write_page(summary_page(run_dir, build, figures), run_dir)
