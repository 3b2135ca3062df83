"""``counterfair suite``'s command line: functional test suites (suite run, suite export)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...command_line import (
    CLASSIFIER_HELP,
    Address,
    BatchSize,
    Encoding,
    Engine,
    Overwrite,
    app,
    console,
    declared,
    end_with_verdict,
    flag,
    options_from,
)
from ...runs import allow_overwrite
from ...views.page import to_console
from .page import suite_page

suite_app = typer.Typer(
    help="Functional test suites: cases with a gold label, a functionality and a target (HateCheck's layout).",
    no_args_is_help=True,
)
app.add_typer(
    suite_app,
    name="suite",
)


from .core import SuiteOptions  # noqa: E402

#: every default of the command's options is SuiteOptions's, read from it (#48: an option declared once)
_SUITE = declared(SuiteOptions)


@suite_app.command("run")
def run(
    cases: Annotated[
        Path | None,
        typer.Argument(help="Cases (CSV/TSV/JSONL/JSON/Parquet); without it, counterfair's own template suite."),
    ] = None,
    classifier: Annotated[str, typer.Option(help=CLASSIFIER_HELP)] = _SUITE.classifier,
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for rows.csv, summary.json, report.html/.md.")] = (
        Path("counterfair-suite")
    ),
    text_column: Annotated[str, flag(SuiteOptions, "text_column")] = _SUITE.text_column,
    label_column: Annotated[str, flag(SuiteOptions, "label_column")] = _SUITE.label_column,
    functionality_column: Annotated[str, flag(SuiteOptions, "functionality_column")] = _SUITE.functionality_column,
    target_column: Annotated[str, flag(SuiteOptions, "target_column")] = _SUITE.target_column or "",  # "" for none
    id_column: Annotated[str | None, flag(SuiteOptions, "id_column")] = _SUITE.id_column,
    identities: Annotated[str | None, flag(SuiteOptions, "identities")] = _SUITE.identities,
    positive_label: Annotated[str | None, flag(SuiteOptions, "positive_label")] = _SUITE.positive_label,
    threshold: Annotated[float, flag(SuiteOptions, "threshold")] = _SUITE.threshold,
    bootstrap: Annotated[int, flag(SuiteOptions, "bootstrap", min=0)] = _SUITE.bootstrap,
    fail_if: Annotated[
        list[str] | None,
        typer.Option("--fail-if", help="A gate rule (repeatable), e.g. 'lower(accuracy[*]) < 0.8'."),
    ] = None,
    junit: Annotated[Path | None, typer.Option(help="Write the gate's verdicts as a JUnit XML file.")] = None,
    seed: Annotated[int, flag(SuiteOptions, "seed", min=0)] = _SUITE.seed,
    encoding: Encoding = _SUITE.encoding,
    overwrite: Overwrite = False,
    engine: Engine = _SUITE.engine,
    address: Address = _SUITE.address,
    batch_size: BatchSize = _SUITE.batch_size,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Run a functional test suite: accuracy per functionality, per target and per cell with Wilson intervals (worst
    first) and the bias AUCs with the targets as groups. Writes OUT/rows.csv, summary.json, report.html, report.md.
    With --fail-if rules it is a gate: exit 0 pass, 1 a rule failed, 2 could not be evaluated."""
    if overwrite:
        allow_overwrite(out)  # --overwrite: the run's claim replaces the one there
    from ...progress import RichProgress
    from .core import SuiteOptions
    from .shell import run_suite

    options = options_from(SuiteOptions, locals(), target_column=target_column or None)
    with RichProgress(enabled=not quiet) as progress:
        s = run_suite(cases, out, options, progress=progress, rules=fail_if or None).typed_summary
    console.print(f"wrote {out / 'rows.csv'}, {out / 'summary.json'}, {out / 'report.html'} and {out / 'report.md'}")
    end_with_verdict(s.gate, junit, to_console(suite_page(s)))


@suite_app.command("export")
def export(
    out: Annotated[Path, typer.Argument(help="File to write (CSV/TSV/JSONL/Parquet by its suffix).")],
    identities: Annotated[str | None, typer.Option(help="Identity set to expand over (default dixon50).")] = None,
) -> None:
    """Write counterfair's own template suite (every case, its gold label, functionality, target, term and
    template) to a file, to read, edit or run elsewhere."""
    from ...writing import write_table
    from .core import template_suite

    frame = template_suite(identities)
    write_table(frame, out)
    console.print(f"wrote {out}: {len(frame)} cases, {frame['functionality'].nunique()} functionalities")
