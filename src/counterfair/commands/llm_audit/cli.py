"""The command line of ``counterfair llm-audit`` (imported from the command registry by
:func:`counterfair.command_line.build_commands`). Every default is the
options dataclass's (:class:`~counterfair.llm_audit.core.LLMAuditOptions`), read from it, not repeated."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...command_line import (
    LLM_PANEL,
    MORE_PANEL,
    Encoding,
    LogTo,
    MlflowUri,
    Overwrite,
    Parquet,
    app,
    console,
    declared,
    finish_gate,
    flag,
    joined,
    listed,
    log_to_tracker,
)
from ...runs import allow_overwrite
from .core import LLMAuditOptions

_D = declared(LLMAuditOptions)
# --demo: the hiring scenario against the built-in simulated screener (planted biases, seconds on the core install);
# with a real model (--demo --generator llamacpp:...) its first 8 cases, 3 samples of 40 tokens: under 10 minutes with
# the packaged 1.5B model on 2 cores
DEMO_GENERATOR = "simulated:hiring"
DEMO_CASES, DEMO_SAMPLES, DEMO_MAX_TOKENS = 8, 3, 40
OUTCOME_PANEL = "Outcomes"


@app.command(
    "llm-audit",
    short_help="Audit an LLM application: do its responses change with the group named in the prompt?",
)
def llm_audit_command(
    prompts: Annotated[
        Path | None,
        typer.Argument(
            help="Prompts (CSV/TSV/JSONL/JSON/Parquet; column text or prompt): templates with {group}, or "
            "texts naming identity terms. Not with --scenario or --demo."
        ),
    ] = None,
    generator: Annotated[
        str | None,
        typer.Option(
            help="What writes the responses: callable:FILE.py:FN (list\\[str] -> list\\[str]), openai:URL#MODEL "
            "(vLLM, llama.cpp server, Ollama), llamacpp:MODEL.gguf, or simulated:hiring (the demo's simulated "
            "screener, planted biases)."
        ),
    ] = None,
    scenario: Annotated[
        str | None,
        flag(LLMAuditOptions, "scenario"),
    ] = _D.scenario,
    cases: Annotated[
        int | None, typer.Option(min=1, metavar="N", help="With --scenario: its first N cases only.")
    ] = None,
    demo: Annotated[
        bool,
        typer.Option(
            "--demo",
            help="The hiring scenario against a built-in simulated screener with planted biases (Muslim and Jewish "
            "applicants invited 30 points less often, old ones scored 2 points lower): seconds, core install. With "
            f"--generator (a real model): the first {DEMO_CASES} cases, {DEMO_SAMPLES} samples each.",
        ),
    ] = False,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Directory for responses.csv/.jsonl, summary.json, report.html/.md.")
    ] = Path("counterfair-llm-audit"),
    decision_from: Annotated[
        str, flag(LLMAuditOptions, "decision_from", metavar="auto|probabilities|samples")
    ] = _D.decision_from,
    samples: Annotated[int, flag(LLMAuditOptions, "samples", min=2)] = _D.samples,
    temperature: Annotated[float, flag(LLMAuditOptions, "temperature", rich_help_panel=LLM_PANEL)] = _D.temperature,
    max_tokens: Annotated[int, flag(LLMAuditOptions, "max_tokens", min=1, rich_help_panel=LLM_PANEL)] = (_D.max_tokens),
    system: Annotated[str | None, flag(LLMAuditOptions, "system", rich_help_panel=LLM_PANEL)] = (_D.system),
    concurrency: Annotated[
        int | None, flag(LLMAuditOptions, "concurrency", rich_help_panel=LLM_PANEL)
    ] = _D.concurrency,
    timeout: Annotated[
        float | None, flag(LLMAuditOptions, "timeout", rich_help_panel=LLM_PANEL, min=0.001)
    ] = _D.timeout,
    retries: Annotated[int | None, flag(LLMAuditOptions, "retries", rich_help_panel=LLM_PANEL, min=0)] = _D.retries,
    max_calls: Annotated[int, flag(LLMAuditOptions, "max_calls", rich_help_panel=LLM_PANEL, min=1)] = _D.max_calls,
    few_prompts: Annotated[bool, flag(LLMAuditOptions, "few_prompts", rich_help_panel=MORE_PANEL)] = _D.few_prompts,
    max_failed: Annotated[
        float, flag(LLMAuditOptions, "max_failed", rich_help_panel=LLM_PANEL, min=0.0, max=1.0)
    ] = _D.max_failed,
    decision: Annotated[
        str | None,
        flag(LLMAuditOptions, "decision", rich_help_panel=OUTCOME_PANEL),
    ] = _D.decision,
    decision_values: Annotated[
        str | None,
        flag(LLMAuditOptions, "decision_values", rich_help_panel=OUTCOME_PANEL),
    ] = joined(_D.decision_values),
    rating: Annotated[
        str | None,
        flag(LLMAuditOptions, "rating", rich_help_panel=OUTCOME_PANEL),
    ] = _D.rating,
    score: Annotated[
        str | None,
        flag(LLMAuditOptions, "score", rich_help_panel=OUTCOME_PANEL),
    ] = _D.score,
    positive_label: Annotated[
        str | None,
        flag(LLMAuditOptions, "positive_label", rich_help_panel=OUTCOME_PANEL),
    ] = _D.positive_label,
    similarity: Annotated[
        str | None,
        flag(LLMAuditOptions, "similarity", rich_help_panel=OUTCOME_PANEL),
    ] = joined(_D.similarity),
    identities: Annotated[
        str | None,
        flag(LLMAuditOptions, "identities"),
    ] = joined(_D.identities),
    placebo: Annotated[str | None, flag(LLMAuditOptions, "placebo")] = _D.placebo,
    placebo_words: Annotated[
        str | None,
        flag(LLMAuditOptions, "placebo_words"),
    ] = joined(_D.placebo_words),
    guard: Annotated[
        bool,
        flag(LLMAuditOptions, "guard", rich_help_panel=MORE_PANEL),
    ] = _D.guard,
    constrain: Annotated[
        bool,
        flag(LLMAuditOptions, "constrain", rich_help_panel=LLM_PANEL),
    ] = _D.constrain,
    threshold: Annotated[
        float,
        flag(LLMAuditOptions, "threshold", rich_help_panel=MORE_PANEL),
    ] = _D.threshold,
    bootstrap: Annotated[int, flag(LLMAuditOptions, "bootstrap", min=1, rich_help_panel=MORE_PANEL)] = _D.bootstrap,
    seed: Annotated[int, flag(LLMAuditOptions, "seed", min=0, rich_help_panel=MORE_PANEL)] = (_D.seed),
    text_column: Annotated[str, flag(LLMAuditOptions, "text_column")] = (_D.text_column),
    id_column: Annotated[str | None, flag(LLMAuditOptions, "id_column")] = _D.id_column,
    fail_if: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-if",
            help="A gate rule (repeatable): 'default' fails on any material finding and on any group whose effect "
            "the prompts can neither show nor rule out; 'material(decision.identity_effect[*])', "
            "'upper(refusal.identity_effect) > 0.05'.",
        ),
    ] = None,
    allow_inconclusive: Annotated[
        bool,
        typer.Option(
            "--allow-inconclusive", help="With --fail-if default: an inconclusive group passes (a pilot run)."
        ),
    ] = False,
    junit: Annotated[Path | None, typer.Option(help="Write the gate's verdicts as a JUnit XML file.")] = None,
    log_to: LogTo = None,
    parquet: Parquet = False,
    mlflow_uri: MlflowUri = None,
    encoding: Encoding = _D.encoding,
    overwrite: Overwrite = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Audit an LLM application: each prompt's identity slot is written with identity terms and with neutral words
    ("quiet"), every variant sampled several times; the decision, rating, a classifier's score and refusals of the
    responses are compared between each term and the neutral words in the same place, each finding read off a
    simultaneous interval over every estimate. Writes OUT/responses.csv, responses.jsonl, summary.json, report.html,
    report.md."""

    from ...errors import ConfigError
    from ...progress import RichProgress
    from .scenarios import with_scenario
    from .shell import run_llm_audit

    if demo:
        scenario = scenario or "hiring"
        if generator is None:
            if scenario != "hiring":
                raise ConfigError(
                    f"--demo --scenario {scenario}: the demo's simulated screener answers the hiring scenario only; "
                    "give --generator to audit another scenario"
                )
            generator = DEMO_GENERATOR
        else:  # a real model: a size that samples in minutes on a CPU
            cases = cases or DEMO_CASES
            if samples == _D.samples:
                samples = DEMO_SAMPLES
            if max_tokens == _D.max_tokens:
                max_tokens = DEMO_MAX_TOKENS
    if (prompts is None) == (scenario is None):
        raise ConfigError("give PROMPTS or --scenario NAME (or --demo), not both and not neither")
    if cases is not None and scenario is None:
        raise ConfigError("--cases picks a --scenario's first cases: give --scenario NAME (or --demo)")
    if log_to:
        from ...views.tracking import check_tracker

        check_tracker(str(log_to))  # before any work
    if generator is None:
        raise ConfigError(
            "give --generator: callable:FILE.py:FN, openai:URL#MODEL, llamacpp:MODEL or simulated:hiring (or --demo)"
        )
    if overwrite:
        allow_overwrite(out)
    options = LLMAuditOptions(
        identities=identities,
        placebo=placebo,
        placebo_words=listed(placebo_words),
        decision_from=decision_from,
        samples=samples,
        temperature=temperature,
        max_tokens=max_tokens,
        system=system,
        decision=decision,
        decision_values=listed(decision_values),
        rating=rating,
        score=score,
        positive_label=positive_label,
        similarity=listed(similarity),
        guard=guard,
        constrain=constrain,
        threshold=threshold,
        bootstrap=bootstrap,
        seed=seed,
        text_column=text_column,
        id_column=id_column,
        encoding=encoding,
        concurrency=concurrency,
        max_failed=max_failed,
        few_prompts=few_prompts,
        max_calls=max_calls,
        timeout=timeout,
        retries=retries,
        scenario=scenario,
    )
    source, options = with_scenario(prompts, options, cases)
    if not quiet:
        reading = (
            f"each sampled {options.samples} times"
            if options.decision_from == "samples"
            else f"read from token probabilities where the backend gives them (one pass each), else sampled "
            f"{options.samples} times"
        )
        console.print(  # the spec is data: a bracket in it is no markup
            f"asking {generator}: every prompt variant {reading}; how long it takes is said once measured",
            markup=False,
            highlight=False,
        )
    with RichProgress(enabled=not quiet) as bars:
        from ...analysis.gate import allowing_inconclusive
        from ...progress import Foretold

        def say(line: str) -> None:
            console.print(line, markup=False, highlight=False)

        progress = bars if quiet else Foretold(bars, say)
        rules = allowing_inconclusive(fail_if) if fail_if and allow_inconclusive else fail_if
        result = run_llm_audit(source, out, options, generator=generator, rules=rules or None, progress=progress)
    from ...runs import parquet_copies

    # the responses as the model wrote them (the CSV's cells are neutralised for spreadsheets)
    parquet_copies(out, (), {"responses": result.responses}, wanted=parquet)
    console.print(
        f"wrote {out / 'responses.csv'}{' (and .parquet)' if parquet else ''}, {out / 'summary.json'}, "
        f"{out / 'report.html'} and {out / 'report.md'}"
    )
    code = finish_gate(result.summary.gate, junit, run_dir=Path(out)) if result.summary.gate is not None else 0
    for line in result.verdict.splitlines():
        console.print(line, markup=False, highlight=False)
    if log_to:
        from ...views.tracking import log_llm_audit

        log_to_tracker(log_to, out, lambda: log_llm_audit(result.summary, out, to=str(log_to), uri=mlflow_uri))
    raise typer.Exit(code)
