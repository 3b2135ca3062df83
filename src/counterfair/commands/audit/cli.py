"""``counterfair audit``'s command line (``check``, ``report`` and ``plan``, which read finished runs, have their
own folders)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...command_line import (
    CLASSIFIER_HELP,
    INPUT_PANEL,
    LLM_PANEL,
    MORE_PANEL,
    Address,
    AuditLanguage,
    BatchSize,
    Encoding,
    Engine,
    LLMConcurrency,
    LLMParallel,
    LogTo,
    MaxTextChars,
    MlflowUri,
    Overwrite,
    Parquet,
    RetryNearness,
    app,
    as_path,
    config_defaults,
    console,
    declared,
    finish_gate,
    flag,
    joined,
    listed,
    log_to_tracker,
    options_from,
    spelled_none,
)
from ...editors.registry import editors_help
from ...runs import allow_overwrite
from ...views.page import to_console
from .options import AuditOptions
from .page import audit_page

#: every default of the command's options is AuditOptions's, read from it (#48: an option declared once)
_AUDIT = declared(AuditOptions)


@app.command(
    short_help="Does naming an identity change the classifier's score? Verdict, report and a CI gate.",
)
def audit(
    data: Annotated[Path | None, typer.Argument(help="Texts to audit (CSV/TSV/JSONL/JSON/Parquet).")] = None,
    demo: Annotated[bool, typer.Option("--demo", help="Audit the built-in identity-referencing sentences.")] = False,
    out: Annotated[Path, typer.Option("--out", "-o", help="Run directory (a rerun with it resumes).")] = Path(
        "counterfair-audit"
    ),
    classifier: Annotated[str, typer.Option(help=CLASSIFIER_HELP)] = _AUDIT.classifier,
    attributes: Annotated[
        str | None,
        flag(AuditOptions, "attributes", "--attributes", "--attribute", rich_help_panel=INPUT_PANEL),
    ] = joined(_AUDIT.attributes),
    methods: Annotated[
        str, typer.Option(help="Comma-separated: " + editors_help("audit"), rich_help_panel=INPUT_PANEL)
    ] = ",".join(_AUDIT.methods),
    text_column: Annotated[str, flag(AuditOptions, "text_column", rich_help_panel=INPUT_PANEL)] = _AUDIT.text_column,
    id_column: Annotated[str | None, flag(AuditOptions, "id_column", rich_help_panel=INPUT_PANEL)] = _AUDIT.id_column,
    label_column: Annotated[
        str | None,
        flag(AuditOptions, "label_column", rich_help_panel=INPUT_PANEL),
    ] = _AUDIT.label_column,
    threshold: Annotated[float, flag(AuditOptions, "threshold", rich_help_panel=INPUT_PANEL)] = _AUDIT.threshold,
    positive_label: Annotated[
        str | None, flag(AuditOptions, "positive_label", rich_help_panel=INPUT_PANEL)
    ] = _AUDIT.positive_label,
    labels: Annotated[
        str | None, flag(AuditOptions, "labels", metavar="NAME,NAME", rich_help_panel=INPUT_PANEL)
    ] = joined(_AUDIT.labels),
    identities: Annotated[
        str | None,
        flag(AuditOptions, "identities", rich_help_panel=INPUT_PANEL),
    ] = _AUDIT.identities,
    guard: Annotated[
        bool,
        flag(AuditOptions, "guard", rich_help_panel=INPUT_PANEL),
    ] = _AUDIT.guard,
    placebo: Annotated[
        str,
        flag(AuditOptions, "placebo", rich_help_panel=INPUT_PANEL),
    ] = spelled_none(_AUDIT.placebo),
    probes: Annotated[
        str,
        flag(AuditOptions, "probes", metavar="auto|always|off", rich_help_panel=INPUT_PANEL),
    ] = _AUDIT.probes,
    llm: Annotated[str, flag(AuditOptions, "llm", rich_help_panel=LLM_PANEL)] = _AUDIT.llm,
    samples: Annotated[int, flag(AuditOptions, "samples", rich_help_panel=LLM_PANEL)] = _AUDIT.samples,
    retry_nearness: RetryNearness = _AUDIT.retry_nearness,
    detector: Annotated[
        str,
        flag(AuditOptions, "detector", rich_help_panel=LLM_PANEL),
    ] = _AUDIT.detector,
    llm_parallel: LLMParallel = _AUDIT.llm_parallel,
    llm_concurrency: LLMConcurrency = _AUDIT.llm_concurrency,
    engine: Engine = _AUDIT.engine,
    address: Address = _AUDIT.address,
    batch_size: BatchSize = _AUDIT.batch_size,
    seed: Annotated[int, flag(AuditOptions, "seed", min=0, rich_help_panel=MORE_PANEL)] = _AUDIT.seed,
    only_good: Annotated[
        Path | None,
        flag(AuditOptions, "only_good", rich_help_panel=MORE_PANEL),
    ] = as_path(_AUDIT.only_good),
    ratings: Annotated[
        Path | None,
        flag(AuditOptions, "ratings", metavar="DIR", rich_help_panel=MORE_PANEL),
    ] = as_path(_AUDIT.ratings),
    fail_if: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-if",
            help="A rule that fails the run (exit 1): 'default' (every material in-slot finding: a group's, a "
            "term's, a form's or a combination's effect, a disparity or a flip excess shown by its simultaneous "
            "interval to exceed 2 points (5 for flips); and every group whose effect is inconclusive), or e.g. "
            "'material(term_effect\\[gay])', 'upper(ctf_gap[*]) > 0.1'; repeatable. Exit 0: every rule passed; "
            "1: a material finding or a failed control; 2: a rule could not be evaluated; 4: nothing material but a "
            "group could not be settled (or nothing was measured).",
        ),
    ] = None,
    allow_inconclusive: Annotated[
        bool,
        typer.Option(
            "--allow-inconclusive",
            help="With --fail-if default: a group whose effect the texts can neither show nor rule out passes (exit "
            "0 instead of 4; a run that measured nothing still exits 4).",
        ),
    ] = False,
    junit: Annotated[Path | None, typer.Option(help="Write the rules' verdicts as a JUnit XML file.")] = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            help="Compare with another audit's run directory, or a classifier spec scoring the same pairs.",
            rich_help_panel=MORE_PANEL,
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            help="A YAML file with any of these options (fail_if: a list of rules); the command line wins.",
            is_eager=True,
            callback=config_defaults,
        ),
    ] = None,
    log_to: LogTo = None,
    mlflow_uri: MlflowUri = None,
    parquet: Parquet = False,
    max_text_chars: MaxTextChars = _AUDIT.max_text_chars,
    encoding: Encoding = _AUDIT.encoding,
    language: AuditLanguage = _AUDIT.language,
    overwrite: Overwrite = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bars and no tables: the verdict and the gate only.")
    ] = False,
) -> None:
    """The fairness audit: counterfactuals of identity-referencing texts, the classifier's score changes, CTF gaps,
    the identity effect over a placebo, and a report (OUT/report.html, report.md, plots/, summary.json, pairs.csv).
    With --fail-if rules it is a gate: exit 0 pass, 1 a material finding or a failed control, 2 a rule could not be
    evaluated, 4 nothing material but a group unsettled (or nothing measured)."""
    from ...analysis.gate import allowing_inconclusive
    from ...summaries import AuditInput
    from .options import AuditOptions, demo_path
    from .shell import run_audit

    if overwrite:
        allow_overwrite(Path(out))  # --overwrite: the run's claim replaces the one there
    if demo == (data is not None):
        raise typer.BadParameter("give a DATA file or --demo (not both)")
    source = demo_path(language) if data is None else data  # one of the two, checked above
    options = options_from(
        AuditOptions,
        locals(),
        attributes=listed(attributes),
        labels=listed(labels),
        methods=listed(methods) or [],
        id_column="id" if demo else id_column,
        placebo=None if str(placebo).lower() in ("none", "off", "no") else str(placebo),
        only_good=str(only_good) if only_good else None,
        ratings=str(ratings) if ratings else None,
    )
    target = Path(out)
    if log_to:
        from ...views.tracking import check_tracker

        check_tracker(str(log_to))  # before any work

    def said(the_plan: AuditInput) -> None:  # the input read once: by the run, which hands its plan here
        if quiet:
            return
        attrs = ", ".join(f"{a} ({n})" for a, n in the_plan.attributes.items()) or "none"
        console.print(
            f"auditing {options.classifier} on {the_plan.texts} texts; attributes referenced: {attrs}; "
            f"texts with identity terms: {the_plan.identity_texts}; methods: {', '.join(options.methods)}"
        )
        from ...engine import STARTUP_SECONDS

        start = STARTUP_SECONDS.get(options.engine, 0.0)
        engine = f" (starting the {options.engine} engine: about {start:.0f} s of it)" if start else ""
        console.print(f"estimated time on 2 CPU cores: about {(the_plan.estimated_seconds or 0) / 60:.1f} min{engine}")

    from ...progress import RichProgress

    with RichProgress(enabled=not quiet) as progress:
        result = run_audit(
            source,
            target,
            options,
            progress=progress,
            rules=allowing_inconclusive(listed(fail_if) or []) if allow_inconclusive else listed(fail_if),
            baseline=str(baseline) if baseline else None,
            on_plan=said,
        )
    s = result.typed_summary
    from ...runs import parquet_copies

    parquet_copies(target, ("pairs.csv", "slots.csv"), wanted=parquet)
    page = result.report_page if result.report_page is not None else audit_page(s)  # the report's, built once
    console.print(to_console(page, tables=not quiet))  # the verdict and the gate's rules first, then tables' first rows
    code = finish_gate(s.gate, junit, checks_shown=True, run_dir=target) if s.gate is not None else 0
    console.print(f"done in {s.timing_s['total'] / 60:.1f} min; report: {target / 'report.html'}")
    if log_to:
        from ...views.tracking import log_audit

        log_to_tracker(log_to, target, lambda: log_audit(s, target, to=str(log_to), uri=mlflow_uri))
    raise typer.Exit(code)
