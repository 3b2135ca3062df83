"""``counterfair bias``'s command line: unintended bias on labelled data."""

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
    Language,
    Overwrite,
    app,
    console,
    declared,
    end_with_verdict,
    flag,
    joined,
    listed,
    options_from,
)
from ...runs import allow_overwrite
from ...views.page import to_console
from .core import BiasOptions
from .page import bias_page

#: every default of the command's options is BiasOptions's, read from it (#48: an option declared once)
_BIAS = declared(BiasOptions)


@app.command(
    short_help="Bias AUCs per identity group on labelled data (subgroup, BPSN, BNSP, final metric).",
)
def bias(
    data: Annotated[Path, typer.Argument(help="Labelled texts (CSV/TSV/JSONL/JSON/Parquet).")],
    label_column: Annotated[str, flag(BiasOptions, "label_column")] = _BIAS.label_column,
    classifier: Annotated[str, typer.Option(help=CLASSIFIER_HELP)] = _BIAS.classifier,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Directory for rows.csv, summary.json, report.html/.md.")
    ] = Path("counterfair-bias"),
    positive_label: Annotated[str | None, flag(BiasOptions, "positive_label")] = _BIAS.positive_label,
    group_columns: Annotated[
        str | None,
        flag(BiasOptions, "group_columns"),
    ] = joined(_BIAS.group_columns),
    identities: Annotated[
        str | None,
        flag(BiasOptions, "identities"),
    ] = _BIAS.identities,
    guard: Annotated[bool, flag(BiasOptions, "guard")] = _BIAS.guard,
    threshold: Annotated[float, flag(BiasOptions, "threshold")] = _BIAS.threshold,
    group_threshold: Annotated[float, flag(BiasOptions, "group_threshold")] = _BIAS.group_threshold,
    text_column: Annotated[str, flag(BiasOptions, "text_column")] = _BIAS.text_column,
    id_column: Annotated[str | None, flag(BiasOptions, "id_column")] = _BIAS.id_column,
    bootstrap: Annotated[int, flag(BiasOptions, "bootstrap", min=0)] = _BIAS.bootstrap,
    fail_if: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-if", help="A gate rule (repeatable), e.g. 'lower(bpsn_auc[*]) < 0.8' or 'final_metric < 0.9'."
        ),
    ] = None,
    junit: Annotated[Path | None, typer.Option(help="Write the gate's verdicts as a JUnit XML file.")] = None,
    seed: Annotated[int, flag(BiasOptions, "seed", min=0)] = _BIAS.seed,
    encoding: Encoding = _BIAS.encoding,
    language: Language = _BIAS.language,
    overwrite: Overwrite = False,
    engine: Engine = _BIAS.engine,
    address: Address = _BIAS.address,
    batch_size: BatchSize = _BIAS.batch_size,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Unintended bias on labelled data: per identity group the subgroup, BPSN and BNSP AUC (Borkan et al. 2019) and
    the pinned AUC (Dixon et al. 2018) with bootstrap intervals, their generalized means, the Jigsaw final metric,
    and the false positive / negative equality differences. Writes OUT/rows.csv, summary.json, report.html,
    report.md."""
    if overwrite:
        allow_overwrite(out)  # --overwrite: the run's claim replaces the one there
    from ...progress import RichProgress
    from .core import BiasOptions
    from .shell import run_bias

    options = options_from(BiasOptions, locals(), group_columns=listed(group_columns))
    with RichProgress(enabled=not quiet) as progress:
        s = run_bias(data, out, options, progress=progress, rules=fail_if or None).typed_summary
    console.print(f"wrote {out / 'rows.csv'}, {out / 'summary.json'}, {out / 'report.html'} and {out / 'report.md'}")
    end_with_verdict(s.gate, junit, to_console(bias_page(s)))
