"""The command line: the audit and what reads its run directory: audit, check, compare, report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..core.audit import AuditOptions
from ..editors.registry import editors_help
from ..runs import allow_overwrite
from ..summaries import AuditSummary
from ..views.console import (
    audit_view,
    comparison_view,
    verdict_view,
)
from .app import (
    AUDIT_COMMANDS,
    CLASSIFIER_HELP,
    INPUT_PANEL,
    LLM_PANEL,
    MORE_PANEL,
    Address,
    Encoding,
    Engine,
    Language,
    LLMConcurrency,
    LLMParallel,
    MaxTextChars,
    Overwrite,
    RetryNearness,
    app,
    as_path,
    console,
    declared,
    err_console,
    finish_gate,
    flag,
    joined,
    listed,
    options_from,
    spelled_none,
    with_config,
)

#: every default of the command's options is AuditOptions's, read from it (#48: an option declared once)
_AUDIT = declared(AuditOptions)


@app.command(
    rich_help_panel=AUDIT_COMMANDS,
    short_help="Does naming an identity change the classifier's score? Verdict, report and a CI gate.",
)
def audit(
    ctx: typer.Context,
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
            help="A rule that fails the run (exit 1): 'default' (every material in-slot finding: a group's or a "
            "term's effect, a disparity or a flip excess shown, after Holm's correction, to exceed 2 points (5 "
            "for flips), or e.g. 'material(term_effect\\[gay])', 'upper(ctf_gap[*]) > 0.1'; repeatable. Exit 0: "
            "every rule passed; 2: a rule could not be evaluated.",
        ),
    ] = None,
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
        typer.Option(help="A YAML file with any of these options (fail_if: a list of rules); the command line wins."),
    ] = None,
    log_to: Annotated[
        str | None,
        typer.Option(help="Log metrics, verdicts and the report to a tracker: mlflow.", rich_help_panel=MORE_PANEL),
    ] = None,
    mlflow_uri: Annotated[
        str | None,
        typer.Option(
            help="MLflow tracking URI (default: MLFLOW_TRACKING_URI, else ./mlruns).", rich_help_panel=MORE_PANEL
        ),
    ] = None,
    max_text_chars: MaxTextChars = _AUDIT.max_text_chars,
    encoding: Encoding = _AUDIT.encoding,
    language: Language = _AUDIT.language,
    overwrite: Overwrite = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """The fairness audit: counterfactuals of identity-referencing texts, the classifier's score changes, CTF gaps,
    the identity effect over a placebo, and a report (OUT/report.html, report.md, plots/, summary.json, pairs.csv).
    With --fail-if rules it is a gate: exit 0 pass, 1 a rule failed, 2 could not be evaluated."""
    from ..core.audit import AuditOptions, demo_path, plan
    from ..shell.audit import run_audit

    given = with_config(ctx, {k: v for k, v in locals().items() if k != "ctx"}, config)
    if given["overwrite"]:
        allow_overwrite(Path(given["out"]))  # --overwrite: the run's claim replaces the one there
    if given["demo"] == (given["data"] is not None):
        raise typer.BadParameter("give a DATA file or --demo (not both)")
    source = demo_path() if given["demo"] else Path(given["data"])
    options = options_from(
        AuditOptions,
        given,
        attributes=listed(given["attributes"]),
        methods=listed(given["methods"]) or [],
        id_column="id" if given["demo"] else given["id_column"],
        placebo=None if str(given["placebo"]).lower() in ("none", "off", "no") else str(given["placebo"]),
        only_good=str(given["only_good"]) if given["only_good"] else None,
        ratings=str(given["ratings"]) if given["ratings"] else None,
    )
    target = Path(given["out"])
    if given["log_to"]:
        from ..views.tracking import check_tracker

        check_tracker(str(given["log_to"]))  # before any work
    the_plan = plan(source, options)
    attrs = ", ".join(f"{a} ({n})" for a, n in the_plan["attributes"].items()) or "none"
    console.print(
        f"auditing {options.classifier} on {the_plan['texts']} texts; attributes referenced: {attrs}; "
        f"texts with identity terms: {the_plan['identity_texts']}; methods: {', '.join(options.methods)}"
    )
    console.print(f"estimated time on 2 CPU cores: about {the_plan['estimated_seconds'] / 60:.1f} min")
    from ..progress import RichProgress

    with RichProgress(enabled=not given["quiet"]) as progress:
        result = run_audit(
            source,
            target,
            options,
            progress=progress,
            rules=listed(given["fail_if"]),
            baseline=str(given["baseline"]) if given["baseline"] else None,
        )
    s = result.typed_summary
    console.print(verdict_view(s))  # the answer first
    console.print(audit_view(s, with_verdict=False))
    code = finish_gate(s.gate, given["junit"], status_line=False) if s.gate is not None else 0
    console.print(f"done in {s.timing_s['total'] / 60:.1f} min; report: {target / 'report.html'}")
    if given["log_to"]:
        from ..views.tracking import log_audit

        try:
            run_id = log_audit(s, target, to=str(given["log_to"]), uri=given["mlflow_uri"])
        except Exception as err:  # the tracker's own errors: the audit is done, the exit code must not say "failed"
            err_console.print(
                f"[red]error:[/red] the audit is in {target}, but logging to {given['log_to']} failed: {err}"
            )
            raise typer.Exit(2) from err
        console.print(f"logged to {given['log_to']}: run {run_id}")
    raise typer.Exit(code)


@app.command(
    rich_help_panel=AUDIT_COMMANDS,
    short_help="Check a finished audit against gate rules, without recomputing (exit 1 when a rule fails).",
)
def check(
    run_dir: Annotated[
        Path, typer.Argument(help="An audit, llm-audit, bias or suite run directory (or an audit's pairs.csv).")
    ],
    fail_if: Annotated[list[str], typer.Option("--fail-if", help="A rule (repeatable), as for audit --fail-if.")],
    junit: Annotated[Path | None, typer.Option(help="Write the verdicts as a JUnit XML file.")] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the bootstrap.")] = 0,
    bootstrap: Annotated[int, typer.Option(min=1, help="Bootstrap resamples.")] = 2000,
) -> None:
    """The fairness gate on a finished audit, without recomputing it: exit 0 pass, 1 a rule failed, 2 a rule could
    not be evaluated."""
    from ..analysis.compare import read_pairs
    from ..analysis.gate import gate_pairs
    from ..analysis.slots import read_slots
    from ..summaries import read_summary

    folder = run_dir if run_dir.is_dir() else run_dir.parent
    if is_llm_audit(folder):
        from ..commands.llm_audit.result import check_run

        raise typer.Exit(finish_gate(check_run(folder, fail_if), junit))
    if run_dir.is_dir() and (folder / "summary.json").exists():
        from ..commands.registry import open_run, run_command

        if run_command(folder)[0].name != "audit":  # bias, suite: the result's own metrics (another: no gate, said)
            raise typer.Exit(finish_gate(open_run(folder).check(fail_if), junit))
    run = read_summary(folder / "summary.json", expect="audit") if (folder / "summary.json").exists() else None
    typed = run if isinstance(run, AuditSummary) else AuditSummary()
    gate = gate_pairs(
        read_pairs(run_dir),
        fail_if,
        seed=seed,
        n_resamples=bootstrap,
        effects=typed.effects.to_dict() if typed.effects is not None else None,  # the run's own; else its slots.csv
        slots=read_slots(folder),
        threshold=typed.threshold if typed.threshold is not None else 0.5,
    )
    raise typer.Exit(finish_gate(gate, junit))


@app.command(
    rich_help_panel=AUDIT_COMMANDS,
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
    from ..analysis.compare import compare_pairs
    from ..io import write_json

    comparison = compare_pairs(
        run_a, run_b, names=(str(run_a), str(run_b)), seed=seed, n_resamples=bootstrap, shared_only=shared_only
    )
    console.print(comparison_view(comparison))
    if out is not None and out.suffix.lower() == ".json":
        write_json(comparison, out)
        console.print(f"wrote {out}")
    elif out is not None:
        from ..runs import prepare_out_dir
        from ..views.pages import write_report

        target = prepare_out_dir(out)
        write_json({**comparison, "command": "compare"}, target / "summary.json")
        paths = write_report(target) or {}
        console.print(f"wrote {target / 'summary.json'}, {paths.get('html')} and {paths.get('markdown')}")


def is_llm_audit(folder: Path) -> bool:
    """Whether ``folder`` holds a run of ``counterfair llm-audit`` (its summary says so)."""
    import json

    try:
        return json.loads((folder / "summary.json").read_text(encoding="utf-8")).get("command") == "llm-audit"
    except (OSError, ValueError, AttributeError):
        return False


@app.command(rich_help_panel=AUDIT_COMMANDS, short_help="Rebuild a run's report (HTML, Markdown) without recomputing.")
def report(run_dir: Annotated[Path, typer.Argument(help="A run directory of any counterfair command.")]) -> None:
    """Rebuild the report (HTML and Markdown; plots for an audit, evaluation or feedback run) of a run directory,
    without recomputing: audit, llm-audit, evaluate, bias, suite, ctf, generate, feedback, compare."""
    from ..commands.registry import rebuild_report

    paths = rebuild_report(run_dir)  # the command that wrote the run (its summary says which) rebuilds it
    console.print("wrote " + " and ".join(str(paths[k]) for k in ("html", "markdown") if k in paths))
