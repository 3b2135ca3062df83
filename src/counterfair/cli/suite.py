"""The command line: functional test suites: suite run, suite export."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..runs import allow_overwrite
from ..views.console import suite_view
from .app import (
    CLASSIFIER_HELP,
    LABELLED_COMMANDS,
    Address,
    Encoding,
    Engine,
    Overwrite,
    app,
    console,
    declared,
    end_with_verdict,
    options_from,
)

suite_app = typer.Typer(
    help="Functional test suites: cases with a gold label, a functionality and a target (HateCheck's layout).",
    no_args_is_help=True,
)
app.add_typer(suite_app, name="suite", rich_help_panel=LABELLED_COMMANDS)


from ..core.suite import SuiteOptions  # noqa: E402

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
    text_column: Annotated[str, typer.Option(help="Column with the test case's text.")] = _SUITE.text_column,
    label_column: Annotated[
        str, typer.Option(help="Column with the gold label: hateful/non-hateful, 1/0, toxic/non-toxic.")
    ] = _SUITE.label_column,
    functionality_column: Annotated[
        str, typer.Option(help="Column with the case's functionality.")
    ] = _SUITE.functionality_column,
    target_column: Annotated[
        str, typer.Option(help="Column with the targeted group ('' for none: no per-target rows, no bias AUCs).")
    ] = _SUITE.target_column or "",  # "" for none
    id_column: Annotated[
        str | None, typer.Option(help="Column with unique ids (default: row number).")
    ] = _SUITE.id_column,
    identities: Annotated[
        str | None, typer.Option(help="The built-in suite's identity set (default dixon50; ignored with CASES).")
    ] = _SUITE.identities,
    positive_label: Annotated[
        str | None, typer.Option(help="Classifier label whose probability is the score (default: the second).")
    ] = _SUITE.positive_label,
    threshold: Annotated[float, typer.Option(help="A score at or above it predicts hateful.")] = _SUITE.threshold,
    bootstrap: Annotated[
        int, typer.Option(min=0, help="Bootstrap resamples of the bias AUCs' intervals (0: none).")
    ] = _SUITE.bootstrap,
    fail_if: Annotated[
        list[str] | None,
        typer.Option("--fail-if", help="A gate rule (repeatable), e.g. 'lower(accuracy[*]) < 0.8'."),
    ] = None,
    junit: Annotated[Path | None, typer.Option(help="Write the gate's verdicts as a JUnit XML file.")] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the bootstrap.")] = _SUITE.seed,
    encoding: Encoding = _SUITE.encoding,
    overwrite: Overwrite = False,
    engine: Engine = _SUITE.engine,
    address: Address = _SUITE.address,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Run a functional test suite: accuracy per functionality, per target and per cell with Wilson intervals (worst
    first) and the bias AUCs with the targets as groups. Writes OUT/rows.csv, summary.json, report.html, report.md.
    With --fail-if rules it is a gate: exit 0 pass, 1 a rule failed, 2 could not be evaluated."""
    if overwrite:
        allow_overwrite(out)  # --overwrite: the run's claim replaces the one there
    from ..core.suite import SuiteOptions
    from ..progress import RichProgress
    from ..shell.suite import run_suite

    options = options_from(SuiteOptions, locals(), target_column=target_column or None)
    with RichProgress(enabled=not quiet) as progress:
        s = run_suite(cases, out, options, progress=progress, rules=fail_if or None).typed_summary
    console.print(f"wrote {out / 'rows.csv'}, {out / 'summary.json'}, {out / 'report.html'} and {out / 'report.md'}")
    end_with_verdict(s.gate, junit, suite_view(s))


@suite_app.command("export")
def export(
    out: Annotated[Path, typer.Argument(help="File to write (CSV/TSV/JSONL/Parquet by its suffix).")],
    identities: Annotated[str | None, typer.Option(help="Identity set to expand over (default dixon50).")] = None,
) -> None:
    """Write counterfair's own template suite (every case, its gold label, functionality, target, term and
    template) to a file, to read, edit or run elsewhere."""
    from ..core.suite import template_suite
    from ..io import write_table

    frame = template_suite(identities)
    write_table(frame, out)
    console.print(f"wrote {out}: {len(frame)} cases, {frame['functionality'].nunique()} functionalities")
