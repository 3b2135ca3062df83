"""The ``counterfair`` command line (typer)."""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from . import __version__
from .editors.registry import default_editors, editors_help
from .errors import CounterfairError
from .plugins import load_plugins
from .summaries import AuditSummary, EvaluationSummary, GateVerdict, typed
from .text import MAX_TEXT_CHARS
from .views.console import (
    audit_view,
    comparison_view,
    ctf_view,
    evaluate_view,
    feedback_view,
    generate_view,
    rating_view,
    stage_error,
    verdict_view,
)
from .views.console import fmt as _fmt

try:
    load_plugins()  # before the commands are built: their help lists what plugins register
except CounterfairError as _plugin_error:
    sys.exit(f"error: {_plugin_error}")

app = typer.Typer(
    name="counterfair",
    help="Generate counterfactual texts, measure their quality, and audit text classifiers for fairness.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()

# Options that several commands share, declared once.
MaxTextChars = Annotated[
    int, typer.Option(help="Longer texts (in characters) are not edited: status skipped:too_long; 0 = no limit.")
]
Encoding = Annotated[
    str, typer.Option(help="Text encoding of the input file (a byte-order mark overrides it), e.g. latin-1.")
]
LLMParallel = Annotated[
    int | None,
    typer.Option(
        help="In-process LLM: sequences decoded together (default 16, env COUNTERFAIR_LLM_PARALLEL; 1: one "
        "after another)."
    ),
]
LLMConcurrency = Annotated[
    int | None,
    typer.Option(help="LLM server (openai:URL): requests in flight (default 32, env COUNTERFAIR_LLM_CONCURRENCY)."),
]
err_console = Console(stderr=True)


def _version_callback(value: bool) -> None:
    if value:
        console.print(f"counterfair {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version_callback, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """counterfair command line."""


def sample_pairs_path() -> Path:
    """The built-in sample of pairs (written for counterfair) used by ``evaluate --demo``."""
    return Path(str(resources.files("counterfair") / "resources" / "sample_pairs.csv"))


def _print_summary(summary: dict[str, Any]) -> None:
    s = EvaluationSummary.from_dict(summary)
    console.print(evaluate_view(s, errors=False))
    for error in s.errors:
        err_console.print(stage_error(error))


@app.command()
def audit(
    ctx: typer.Context,
    data: Annotated[Path | None, typer.Argument(help="Texts to audit (CSV/TSV/JSONL/JSON/Parquet).")] = None,
    demo: Annotated[bool, typer.Option("--demo", help="Audit the built-in identity-referencing sentences.")] = False,
    out: Annotated[Path, typer.Option("--out", "-o", help="Run directory (a rerun with it resumes).")] = Path(
        "counterfair-audit"
    ),
    classifier: Annotated[str, typer.Option(help="Classifier under test (spec, see README).")] = "profanity-check",
    attributes: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated attributes or packs (default: every paper-000 attribute the texts reference); "
            "gender, names and nationality add their swaps; `counterfair attributes list` shows them all."
        ),
    ] = None,
    methods: Annotated[str, typer.Option(help="Comma-separated: " + editors_help("audit"))] = ",".join(
        default_editors("audit")
    ),
    text_column: Annotated[str, typer.Option(help="Column with the texts.")] = "text",
    id_column: Annotated[str | None, typer.Option(help="Column with unique ids.")] = None,
    threshold: Annotated[float, typer.Option(help="Score threshold for flips.")] = 0.5,
    positive_label: Annotated[str | None, typer.Option(help="Classifier label whose probability is the score.")] = None,
    identities: Annotated[
        str | None, typer.Option(help="Identity terms for swaps (default: Dixon et al.'s 50).")
    ] = None,
    guard: Annotated[bool, typer.Option(help="Skip non-identity uses of ambiguous terms ('a black car').")] = True,
    placebo: Annotated[
        str,
        typer.Option(help="Placebo words matched to each identity swap: en (built-in), a YAML file, or none."),
    ] = "en",
    llm: Annotated[str, typer.Option(help="LLM for the llm method.")] = "llamacpp:qwen2.5-coder-1.5b-instruct",
    samples: Annotated[int, typer.Option(help="LLM samples per input and attempt.")] = 16,
    llm_parallel: LLMParallel = None,
    llm_concurrency: LLMConcurrency = None,
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
    only_good: Annotated[
        Path | None, typer.Option(help="A consolidated rating project: audit only the pairs its raters judged good.")
    ] = None,
    fail_if: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-if",
            help="A rule that fails the run (exit 1), e.g. 'identity_effect > 0.05', 'upper(ctf_gap[*]) > 0.1'; "
            "repeatable. Exit 0: every rule passed; 2: a rule could not be evaluated.",
        ),
    ] = None,
    junit: Annotated[Path | None, typer.Option(help="Write the rules' verdicts as a JUnit XML file.")] = None,
    baseline: Annotated[
        str | None,
        typer.Option(help="Compare with another audit's run directory, or a classifier spec scoring the same pairs."),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(help="A YAML file with any of these options (fail_if: a list of rules); the command line wins."),
    ] = None,
    log_to: Annotated[
        str | None, typer.Option(help="Log metrics, verdicts and the report to a tracker: mlflow.")
    ] = None,
    mlflow_uri: Annotated[
        str | None, typer.Option(help="MLflow tracking URI (default: MLFLOW_TRACKING_URI, else ./mlruns).")
    ] = None,
    max_text_chars: MaxTextChars = MAX_TEXT_CHARS,
    encoding: Encoding = "utf-8",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """The fairness audit: counterfactuals of identity-referencing texts, the classifier's score changes, CTF gaps,
    the identity effect over a placebo, and a report (OUT/report.html, report.md, plots/, summary.json, pairs.csv).
    With --fail-if rules it is a gate: exit 0 pass, 1 a rule failed, 2 could not be evaluated."""
    from .core.audit import AuditOptions, demo_path, plan, run_audit

    given = _with_config(ctx, {k: v for k, v in locals().items() if k != "ctx"}, config)
    if given["demo"] == (given["data"] is not None):
        raise typer.BadParameter("give a DATA file or --demo (not both)")
    source = demo_path() if given["demo"] else Path(given["data"])
    options = _options(
        AuditOptions,
        given,
        attributes=_listed(given["attributes"]),
        methods=_listed(given["methods"]) or [],
        id_column="id" if given["demo"] else given["id_column"],
        placebo=None if str(given["placebo"]).lower() in ("none", "off", "no") else str(given["placebo"]),
        only_good=str(given["only_good"]) if given["only_good"] else None,
    )
    target = Path(given["out"])
    if given["log_to"]:
        from .views.tracking import check_tracker

        check_tracker(str(given["log_to"]))  # before any work
    the_plan = plan(source, options)
    attrs = ", ".join(f"{a} ({n})" for a, n in the_plan["attributes"].items()) or "none"
    console.print(
        f"auditing {options.classifier} on {the_plan['texts']} texts; attributes referenced: {attrs}; "
        f"texts with identity terms: {the_plan['identity_texts']}; methods: {', '.join(options.methods)}"
    )
    console.print(f"estimated time on 2 CPU cores: about {the_plan['estimated_seconds'] / 60:.1f} min")
    from .progress import RichProgress

    with RichProgress(enabled=not given["quiet"]) as progress:
        summary = run_audit(
            source,
            target,
            options,
            progress=progress,
            rules=_listed(given["fail_if"]),
            baseline=str(given["baseline"]) if given["baseline"] else None,
        )
    s = AuditSummary.from_dict(summary)
    console.print(audit_view(s, with_verdict=False))
    console.print(f"done in {s.timing_s['total'] / 60:.1f} min; report: {target / 'report.html'}")
    code = _finish_gate(s.gate, given["junit"], status_line=False) if s.gate is not None else 0
    console.print(verdict_view(s))  # the answer in the last lines
    if given["log_to"]:
        from .views.tracking import log_audit

        try:
            run_id = log_audit(summary, target, to=str(given["log_to"]), uri=given["mlflow_uri"])
        except Exception as err:  # the tracker's own errors: the audit is done, the exit code must not say "failed"
            err_console.print(
                f"[red]error:[/red] the audit is in {target}, but logging to {given['log_to']} failed: {err}"
            )
            raise typer.Exit(2) from err
        console.print(f"logged to {given['log_to']}: run {run_id}")
    raise typer.Exit(code)


def _options(cls: Any, given: dict[str, Any], **spelled: Any) -> Any:
    """A command's options dataclass from the command's parameters of the same names; ``spelled``: the ones the
    command line spells differently (a comma list, a flag)."""
    import dataclasses

    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in given.items() if k in names} | spelled)


def _listed(value: Any) -> list[str] | None:
    """A comma-separated string (command line) or a list (config file) as a list; None when empty."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else [str(v) for v in value]
    return [i.strip() for i in items if i.strip()] or None


def _with_config(ctx: typer.Context, given: dict[str, Any], config: Path | None) -> dict[str, Any]:
    """Options from a YAML config file, for every option the command line left at its default."""
    if config is None:
        return given
    import yaml

    from .errors import ConfigError

    try:
        data = yaml.safe_load(Path(config).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as err:
        raise ConfigError(f"--config {config}: cannot read it ({err})") from err
    if not isinstance(data, dict):
        raise ConfigError(f"--config {config}: a mapping of option names to values, e.g. 'classifier: ...'")
    out = dict(given)
    for key, value in data.items():
        name = str(key).replace("-", "_")
        if name in ("config", "ctx") or name not in given:
            known = ", ".join(sorted(k for k in given if k != "config"))
            raise ConfigError(f"--config {config}: unknown option {key!r} (options: {known})")
        source = ctx.get_parameter_source(name)  # an enum of click's (or of the click typer bundles)
        if source is None or getattr(source, "name", "") == "DEFAULT":
            out[name] = value
    return out


def _finish_gate(gate: dict[str, Any] | GateVerdict, junit: Any, *, status_line: bool = True) -> int:
    """Print the gate's checks as sentences (and its status line), write the JUnit file, return the exit code."""
    from rich.markup import escape

    from .analysis.gate import write_junit
    from .views.verdict import rule_sentence

    verdict = typed(gate, GateVerdict)
    colour = {"pass": "green", "fail": "red", "error": "yellow"}
    for check in verdict.checks:
        sentence = rule_sentence(check, verdict.rules)
        console.print(f"[{colour[check.verdict]}]{check.verdict.upper()}[/] {escape(sentence)}")
    if status_line:
        console.print(f"fairness gate: [{colour[verdict.verdict]}]{verdict.verdict}[/] (exit {verdict.exit_code})")
    if junit:
        console.print(f"wrote {write_junit(verdict, junit)}")
    return int(verdict.exit_code)


@app.command()
def check(
    run_dir: Annotated[Path, typer.Argument(help="An audit run directory (or its pairs.csv).")],
    fail_if: Annotated[list[str], typer.Option("--fail-if", help="A rule (repeatable), as for audit --fail-if.")],
    junit: Annotated[Path | None, typer.Option(help="Write the verdicts as a JUnit XML file.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples.")] = 2000,
) -> None:
    """The fairness gate on a finished audit, without recomputing it: exit 0 pass, 1 a rule failed, 2 a rule could
    not be evaluated."""
    from .analysis.compare import read_pairs
    from .analysis.gate import gate_pairs

    gate = gate_pairs(read_pairs(run_dir), fail_if, seed=seed, n_resamples=bootstrap)
    raise typer.Exit(_finish_gate(gate, junit))


@app.command()
def compare(
    run_a: Annotated[Path, typer.Argument(help="The baseline audit (run directory or pairs.csv): A.")],
    run_b: Annotated[Path, typer.Argument(help="The audit to compare with it: B.")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the comparison as JSON.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap and the permutation test.")] = 0,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples.")] = 2000,
) -> None:
    """Two classifiers on the same counterfactual pairs: B − A per group with a CI, a paired permutation test and
    a verdict (better / worse / no evidence)."""
    from .analysis.compare import compare_pairs
    from .io import write_json

    comparison = compare_pairs(run_a, run_b, names=(str(run_a), str(run_b)), seed=seed, n_resamples=bootstrap)
    console.print(comparison_view(comparison))
    if out is not None:
        write_json(comparison, out)
        console.print(f"wrote {out}")


@app.command("nli-pairs")
def nli_pairs(
    original: Annotated[Path, typer.Argument(help="Original pairs (sentence1, sentence2, gold_label), e.g. SNLI.")],
    revised: Annotated[Path, typer.Argument(help="Revisions of those pairs, in the original file's order.")],
    part: Annotated[str, typer.Option(help="Which input the revisions edited: premise or hypothesis.")] = "premise",
    out: Annotated[Path, typer.Option("--out", "-o", help="Pair file to write (CSV, JSONL, ...).")] = Path(
        "nli-pairs.csv"
    ),
) -> None:
    """Build an evaluate pair file from an NLI original file and its revisions (CEval's SNLI layout): orig_text and
    gen_text are the revised input before and after, context the other input, target_label the revision's label."""
    from .io import write_table
    from .nli import nli_revision_pairs

    table = nli_revision_pairs(original, revised, part=part)
    write_table(table, out)
    revised_input = "first" if part == "premise" else "second"
    console.print(
        f"wrote {out}: {len(table)} revisions of {table['original_row'].nunique()} originals. Evaluate with "
        f"--context-column context --revised-input {revised_input} --target-column target_label"
    )


@app.command()
def report(run_dir: Annotated[Path, typer.Argument(help="An audit or evaluate run directory.")]) -> None:
    """Rebuild the report (HTML, plots; Markdown for an audit) of an audit or evaluate directory, without
    recomputing."""
    from .views.report import build_report
    from .views.report.evaluation import build_evaluation_report, is_evaluation_dir

    if is_evaluation_dir(run_dir):
        console.print(f"wrote {build_evaluation_report(run_dir)['html']}")
        return
    paths = build_report(run_dir)
    console.print(f"wrote {paths['html']} and {paths['markdown']}")


@app.command()
def evaluate(
    pairs: Annotated[
        list[str] | None,
        typer.Argument(
            help="Pair file (CSV/TSV/JSONL/JSON/Parquet; CEval format by default). Several files (PATH or NAME=PATH), "
            "one per method on the same originals: each evaluated into OUT/methods/NAME, compared side by side."
        ),
    ] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory for rows.csv and summary.json.")] = Path(
        "counterfair-evaluate"
    ),
    demo: Annotated[bool, typer.Option("--demo", help="Evaluate the built-in sample of pairs.")] = False,
    metrics: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated: flip, prob_change, distance, diversity, perplexity, bleu, bertscore (the default "
            "set), text_quality (an LLM judge; only when named), or all."
        ),
    ] = None,
    classifier: Annotated[
        str, typer.Option(help="Classifier spec, e.g. profanity-check, sklearn:PATH, hf:DIR, scores:PATH.")
    ] = "profanity-check",
    text_column: Annotated[str, typer.Option(help="Column with the original text.")] = "orig_text",
    cf_column: Annotated[str, typer.Option(help="Column with the counterfactual.")] = "gen_text",
    cf2_column: Annotated[
        str | None, typer.Option(help="Column with a second counterfactual (diversity); default gen_text_2 if present.")
    ] = None,
    id_column: Annotated[str | None, typer.Option(help="Column with a unique row id.")] = None,
    group_column: Annotated[str | None, typer.Option(help="Column to aggregate by (with bootstrap CIs).")] = None,
    context_column: Annotated[
        str | None,
        typer.Option(
            help="Two-input classifiers (NLI): column with the input left unchanged; the classifier gets text pairs."
        ),
    ] = None,
    revised_input: Annotated[
        str, typer.Option(help="With --context-column: the edited text is the classifier's 'first' or 'second' input.")
    ] = "first",
    target_column: Annotated[
        str | None, typer.Option(help="Column with the label each counterfactual aims at (prob_change measured on it).")
    ] = None,
    missing_marker: Annotated[
        list[str] | None, typer.Option(help="Cell value meaning 'no counterfactual' (default: -1, as in CEval).")
    ] = None,
    threshold: Annotated[
        float | None, typer.Option(help="Binary classifiers: label 1 when p >= threshold (default: argmax).")
    ] = None,
    ppl_model: Annotated[
        str, typer.Option(help="Perplexity LM: a known name, a GGUF file or a transformers directory.")
    ] = "gemma-3-270m",
    ppl_window: Annotated[int, typer.Option(help="Perplexity window in LM tokens.")] = 1024,
    ppl_stride: Annotated[int, typer.Option(help="Sliding-window stride in LM tokens.")] = 512,
    ppl_max_tokens: Annotated[int, typer.Option(help="Texts longer than this get no perplexity (a row note).")] = 8192,
    ppl_token_budget: Annotated[int, typer.Option(help="LM tokens per forward batch (memory vs speed).")] = 1024,
    ppl_dtype: Annotated[
        str,
        typer.Option(help="Perplexity LM precision: float32 (exact) or bfloat16 (about 2x faster on CPUs with bf16)."),
    ] = "float32",
    judge_llm: Annotated[
        str, typer.Option(help="LLM that judges text_quality (llamacpp:NAME|GGUF, openai:URL#MODEL, hf:DIR).")
    ] = "llamacpp:qwen2.5-coder-1.5b-instruct",
    batch_size: Annotated[int, typer.Option(help="Batch size for classifier and BERTScore.")] = 64,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples for confidence intervals.")] = 2000,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    fmt: Annotated[str | None, typer.Option("--format", help="Input format if the suffix does not tell.")] = None,
    encoding: Annotated[str, typer.Option(help="Text encoding of the input file.")] = "utf-8",
    engine: Annotated[
        str, typer.Option(help="local, or ray: perplexity and BERTScore batches on Ray workers.")
    ] = "local",
    address: Annotated[str | None, typer.Option(help="Ray cluster address (default: start a local Ray).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Measure counterfactual texts: flip rate, probability change, distance, diversity, perplexity, BLEU,
    BERTScore, LLM-judged text quality. Writes OUT/rows.csv (one row per input row, with status), OUT/summary.json
    and OUT/report.html; with several pair files, OUT/comparison.csv (CEval's Table 2), OUT/distance_matrix.csv and a
    report with both of CEval's figures."""
    from .core.evaluate import EvaluateOptions, evaluate_pairs
    from .progress import RichProgress

    if demo == bool(pairs):
        raise typer.BadParameter("give a PAIRS file or --demo (not both)")
    options = _options(
        EvaluateOptions,
        locals(),
        metrics=metrics.split(",") if metrics else None,
        missing_markers=tuple(missing_marker) if missing_marker else ("-1",),
    )
    if pairs and len(pairs) > 1:
        from .core.methods import evaluate_methods, parse_method_files

        with RichProgress(enabled=not quiet) as progress:
            comparison = evaluate_methods(parse_method_files(pairs), options, out_dir=out, progress=progress)
        console.print(comparison)
        console.print(f"wrote {out / 'comparison.csv'}, {out / 'distance_matrix.csv'} and {out / 'report.html'}")
        if comparison.typed_summary.errors:
            raise typer.Exit(code=1)
        return
    source = sample_pairs_path() if demo else Path(pairs[0]) if pairs else None
    assert source is not None
    with RichProgress(enabled=not quiet) as progress:
        result = evaluate_pairs(source, options, out_dir=out, progress=progress)
    _print_summary(result.summary)
    from .views.report.evaluation import build_evaluation_report

    build_evaluation_report(out)
    console.print(f"wrote {out / 'rows.csv'}, {out / 'summary.json'} and {out / 'report.html'}")
    if result.typed_summary.errors:
        raise typer.Exit(code=1)


@app.command()
def generate(
    data: Annotated[Path, typer.Argument(help="Texts that reference the attribute (CSV/TSV/JSONL/JSON/Parquet).")],
    attribute: Annotated[
        str, typer.Option(help="islam, judaism, lgbq, transgender, or a YAML/JSON word-list file.")
    ] = "islam",
    methods: Annotated[str, typer.Option(help="Comma-separated: " + editors_help("generate"))] = ",".join(
        default_editors("generate")
    ),
    out: Annotated[Path, typer.Option("--out", "-o", help="Run directory (a rerun with it resumes).")] = Path(
        "counterfair-generate"
    ),
    text_column: Annotated[str, typer.Option(help="Column with the texts.")] = "text",
    id_column: Annotated[str | None, typer.Option(help="Column with unique ids (default: row number).")] = None,
    identities: Annotated[
        str | None, typer.Option(help="Identity terms for swap: dixon50 (default), a file, or t1,t2,...")
    ] = None,
    guard: Annotated[bool, typer.Option(help="Skip non-identity uses of ambiguous terms ('a black car').")] = True,
    llm: Annotated[
        str, typer.Option(help="LLM: llamacpp:NAME|FILE.gguf, openai:URL[#MODEL], hf:DIR.")
    ] = "llamacpp:qwen2.5-coder-1.5b-instruct",
    polyjuice_model: Annotated[
        str,
        typer.Option(
            help="The polyjuice method's causal LM: a transformers directory or hub id (from your Hugging Face cache) "
            "trained on Polyjuice's format."
        ),
    ] = "uw-hai/polyjuice",
    prompt_style: Annotated[str, typer.Option(help="turns (chat models) or plain (next-token LMs).")] = "turns",
    instruction: Annotated[
        str | None, typer.Option(help="Instruction template; default 'not about {subject}'.")
    ] = None,
    samples: Annotated[int, typer.Option(help="LLM samples per input and attempt.")] = 16,
    max_attempts: Annotated[int, typer.Option(help="Attempts when no sample passes the filters.")] = 5,
    llm_parallel: LLMParallel = None,
    llm_concurrency: LLMConcurrency = None,
    llm_chunk: Annotated[
        int, typer.Option(help="Texts per LLM call: their samples are drawn together; a checkpoint after each.")
    ] = 4,
    min_bleu: Annotated[float, typer.Option(help="Filter: minimum BLEU against the original.")] = 0.5,
    min_bertscore: Annotated[float, typer.Option(help="Filter: minimum BERTScore F1.")] = 0.5,
    max_attribute_prob: Annotated[float, typer.Option(help="Filter: maximum attribute-reference probability.")] = 0.5,
    detector: Annotated[str, typer.Option(help="Attribute detector: keyword, mlp:DIR[#LABEL], llm.")] = "keyword",
    score_methods: Annotated[
        str | None,
        typer.Option(
            help="Methods whose candidates get BLEU/BERTScore/attribute scores (default: all; swaps are many)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of sampling and of the swap example shown per input.")] = 0,
    engine: Annotated[str, typer.Option(help="local, or ray: LLM rewriting on Ray workers (one LLM each).")] = "local",
    address: Annotated[str | None, typer.Option(help="Ray cluster address (default: start a local Ray).")] = None,
    max_text_chars: MaxTextChars = MAX_TEXT_CHARS,
    encoding: Encoding = "utf-8",
    language: Annotated[
        str,
        typer.Option(
            help="en, fr or de: the attribute's word lists, the identity set (identity-fr, identity-de) with "
            "agreement of articles and adjectives, and the BERTScore encoder (see README, Languages)."
        ),
    ] = "en",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Generate counterfactuals of attribute-referencing texts: word-list ablation and substitution, identity
    swaps, LLM rewriting with filters. Writes OUT/candidates.csv, OUT/counterfactuals.csv, OUT/summary.json."""
    from .core.generate import GenerateOptions, run_generate
    from .progress import RichProgress

    options = _options(
        GenerateOptions,
        locals(),
        methods=methods.split(","),
        guard="spacy" if guard else None,
        score_methods=score_methods.split(",") if score_methods else None,
    )
    with RichProgress(enabled=not quiet) as progress:
        result = run_generate(data, out, options, progress=progress)
    console.print(generate_view(result.summary, options.attribute))
    console.print(f"wrote {out / 'counterfactuals.csv'}, {out / 'candidates.csv'} and {out / 'summary.json'}")


@app.command()
def ctf(
    data: Annotated[Path, typer.Argument(help="Texts (CSV/TSV/JSONL/JSON/Parquet), optionally with a 0/1 label.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for summary.json and pairs.csv.")] = Path(
        "counterfair-ctf"
    ),
    classifier: Annotated[str, typer.Option(help="Classifier spec (see README).")] = "profanity-check",
    identities: Annotated[
        str | None, typer.Option(help="Identity terms: t1,t2,... (default: the 50 Dixon et al. terms).")
    ] = None,
    identities_file: Annotated[Path | None, typer.Option(help="Identity terms from a YAML/JSON/TXT file.")] = None,
    text_column: Annotated[str, typer.Option(help="Column with the texts.")] = "text",
    id_column: Annotated[str | None, typer.Option(help="Column with unique ids (default: row number).")] = None,
    label_column: Annotated[str | None, typer.Option(help="Column with toxic (1) / non-toxic (0) labels.")] = None,
    positive_label: Annotated[
        str | None, typer.Option(help="Classifier label whose probability is compared (default: the second).")
    ] = None,
    guard: Annotated[bool, typer.Option(help="Skip non-identity uses of ambiguous terms ('a black car').")] = True,
    tokens_only: Annotated[
        bool,
        typer.Option(
            "--tokens-only",
            help="Paper 001's Φ_A exactly: listed terms swapped token for token (no plurals, noun forms, capitals "
            "or a/an agreement), as blindness assumes.",
        ),
    ] = False,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    max_text_chars: MaxTextChars = MAX_TEXT_CHARS,
    encoding: Encoding = "utf-8",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Counterfactual token fairness (paper 001): swap identity terms, compare the classifier's scores, report the
    CTF gap overall, for toxic and non-toxic texts, training and held-out terms, per term and per direction."""
    from .core.ctf import run_ctf
    from .progress import RichProgress

    if identities and identities_file:
        raise typer.BadParameter("give --identities or --identities-file, not both")
    with RichProgress(enabled=not quiet) as progress:
        summary = run_ctf(
            data,
            out,
            classifier=classifier,
            identities=str(identities_file) if identities_file else identities,
            text_column=text_column,
            id_column=id_column,
            label_column=label_column,
            positive_label=positive_label,
            guard="spacy" if guard else None,
            grammar=not tokens_only,
            max_text_chars=max_text_chars,
            encoding=encoding,
            seed=seed,
            progress=progress,
        )
    console.print(ctf_view(summary))
    console.print(f"wrote {out / 'summary.json'} and {out / 'pairs.csv'}")


@app.command("train")
def train_command(
    data: Annotated[Path, typer.Argument(help="Texts with a toxic (1) / non-toxic (0) label.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Model directory (usable as --classifier model:DIR).")],
    method: Annotated[str, typer.Option(help="baseline, blind, augment or clp.")] = "baseline",
    lam: Annotated[float, typer.Option("--lambda", help="CLP weight of the logit-pairing term.")] = 1.0,
    nontoxic_only: Annotated[bool, typer.Option(help="CLP: pair non-toxic examples only (CLP_nontox).")] = False,
    augment: Annotated[str, typer.Option(help="Augmentation: all counterfactuals, or one random one.")] = "all",
    architecture: Annotated[str, typer.Option(help="cnn (paper 001) or minilm (head on MiniLM).")] = "cnn",
    identities: Annotated[
        str | None, typer.Option(help="Identity set: dixon50 (35 training / 15 held-out terms) or a file.")
    ] = None,
    text_column: Annotated[str, typer.Option(help="Column with the texts.")] = "text",
    label_column: Annotated[str, typer.Option(help="Column with the labels.")] = "label",
    epochs: Annotated[int, typer.Option(help="Epochs.")] = 10,
    batch_size: Annotated[int, typer.Option(help="Batch size.")] = 64,
    filters: Annotated[int, typer.Option(help="CNN filters per kernel size (paper 001: 300).")] = 300,
    vectors: Annotated[str, typer.Option(help="CNN word vectors: learned, or spacy (medium model).")] = "learned",
    freeze_vectors: Annotated[
        bool, typer.Option(help="Keep pretrained vectors (--vectors spacy) as loaded instead of fine-tuning them.")
    ] = False,
    clp_reduction: Annotated[
        str,
        typer.Option(
            help="CLP pair term over a batch: sum (paper 001's objective; λ compares with the paper's) or mean."
        ),
    ] = "sum",
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
    resume: Annotated[bool, typer.Option(help="Continue an interrupted training from OUT/checkpoint.pt.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Train a toxicity classifier with a counterfactual-fairness method of paper 001 (blindness, augmentation,
    counterfactual logit pairing) or the baseline."""
    from .progress import RichProgress
    from .training import TrainConfig, train

    config = TrainConfig(
        method=method,
        lam=lam,
        nontoxic_only=nontoxic_only,
        augment=augment,
        architecture=architecture,
        identities=identities,
        epochs=epochs,
        batch_size=batch_size,
        filters=filters,
        vectors=vectors,
        freeze_vectors=freeze_vectors,
        clp_reduction=clp_reduction,
        seed=seed,
    )
    with RichProgress(enabled=not quiet) as progress:
        result = train(
            data, out, config, text_column=text_column, label_column=label_column, resume=resume, progress=progress
        )
    last = result.history[-1] if result.history else {}
    console.print(f"trained {method} in {result.seconds:.1f} s; final loss {last.get('loss', float('nan')):.4f}")
    ev = result.evaluation
    console.print(
        f"on the {ev['on']}: accuracy {_fmt(ev['accuracy'])}, AUC {_fmt(ev['auc'])}, TPR {_fmt(ev['tpr'])}, "
        f"TNR {_fmt(ev['tnr'])}"
    )
    if ev.get("collapse_warning"):
        console.print(f"[yellow]warning:[/yellow] the model may have collapsed: {ev['collapse_warning']}")
    console.print(f"wrote {out}; use it as --classifier model:{out}")


@app.command("train-attribute")
def train_attribute(
    data: Annotated[Path, typer.Argument(help="Texts with identity score columns (CivilComments-Identities style).")],
    label_columns: Annotated[str, typer.Option(help="Comma-separated score columns; positive when > 0.5.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for model.safetensors and config.json.")],
    text_column: Annotated[str, typer.Option(help="Column with the texts.")] = "comment_text",
    steps: Annotated[
        int | None, typer.Option(help="Mini-batches to train (default: the paper's 36000; ~8 min on 2 CPU cores).")
    ] = None,
    epochs: Annotated[int | None, typer.Option(help="Train this many passes over the data instead of --steps.")] = None,
    negatives: Annotated[
        str, typer.Option(help="Most texts with no positive label to keep (sampled; paper: 20000), or 'all'.")
    ] = "20000",
    batch_size: Annotated[int, typer.Option(help="Batch size.")] = 256,
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Train the attribute-reference classifier of paper 000 App. A.3 (2-layer MLP, hidden 2048, over MiniLM
    embeddings; multi-label BCE, AdamW lr 1e-3, weight decay 2e-3, batch 256, 36k steps, all positive texts and 20k
    sampled negatives). Use it with --detector mlp:OUT."""
    from .detectors import train_attribute_classifier
    from .errors import ConfigError
    from .progress import RichProgress

    if negatives != "all" and not (negatives.isdigit() and int(negatives) > 0):
        raise ConfigError(f"--negatives: {negatives!r} is neither a positive number nor 'all'")
    with RichProgress(enabled=not quiet) as progress:
        result = train_attribute_classifier(
            data,
            out,
            text_column=text_column,
            label_columns=[c.strip() for c in label_columns.split(",") if c.strip()],
            steps=steps,
            epochs=epochs,
            negatives=None if negatives == "all" else int(negatives),
            batch_size=batch_size,
            seed=seed,
            progress=progress,
        )
    kept = result.metrics["negatives"]
    console.print(
        f"trained {result.metrics['steps']} steps on {result.metrics['train_rows']} texts "
        f"({kept['kept']} of {kept['available']} without a label) in {result.metrics['seconds']:.0f} s"
    )
    for label, entry in result.metrics.get("validation", {}).items():
        console.print(
            f"{label}: validation F1 {entry['f1']:.3f}" + (f", AUC {entry['auc']:.3f}" if "auc" in entry else "")
        )
    console.print(f"wrote {out / 'model.safetensors'} and {out / 'config.json'}")


@app.command("select")
def select_command(
    data: Annotated[Path, typer.Argument(help="Texts (CSV/TSV/JSONL/JSON/Parquet).")],
    attribute: Annotated[str, typer.Option(help="islam, judaism, lgbq, transgender, or a word-list file.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the kept texts (CSV).")],
    text_column: Annotated[str, typer.Option(help="Column with the texts.")] = "text",
    attribute_column: Annotated[
        str | None, typer.Option(help="Column with the attribute-reference probability (else --detector).")
    ] = None,
    detector: Annotated[str, typer.Option(help="Attribute detector: keyword, mlp:DIR[#LABEL] or llm.")] = "keyword",
    llm: Annotated[str, typer.Option(help="LLM for --detector llm.")] = "llamacpp:qwen2.5-coder-1.5b-instruct",
    toxicity_column: Annotated[
        str | None, typer.Option(help="Column with a toxicity score (else --classifier).")
    ] = None,
    classifier: Annotated[str, typer.Option(help="Toxicity classifier when there is no --toxicity-column.")] = (
        "profanity-check"
    ),
    min_words: Annotated[int, typer.Option(help="Fewest words (paper 000: 10).")] = 10,
    max_words: Annotated[int, typer.Option(help="Most words (paper 000: 45).")] = 45,
    min_attribute: Annotated[float, typer.Option(help="Least attribute probability (paper 000: 0.8).")] = 0.8,
    max_toxicity: Annotated[float, typer.Option(help="Largest toxicity (paper 000: 0.1).")] = 0.1,
) -> None:
    """Select texts as paper 000 §4.1 (10-45 words, no URL, attribute probability >= 0.8, toxicity <= 0.1) and say
    how many each rule removed."""
    from .io import write_json, write_table
    from .selection import select_texts

    the_llm = None
    if detector == "llm":
        from .llm import load_llm

        the_llm = load_llm(llm)
    kept, report = select_texts(
        data,
        attribute=attribute,
        text_column=text_column,
        attribute_column=attribute_column,
        detector=detector,
        llm=the_llm,
        toxicity_column=toxicity_column,
        classifier=None if toxicity_column else classifier,
        min_words=min_words,
        max_words=max_words,
        min_attribute=min_attribute,
        max_toxicity=max_toxicity,
    )
    write_table(kept, out)
    write_json(report, out.with_suffix(".summary.json"))
    removed = ", ".join(f"{rule} {n}" for rule, n in report["removed"].items())
    console.print(f"kept {report['kept']} of {report['texts']} texts; removed by rule: {removed}")
    console.print(f"wrote {out} and {out.with_suffix('.summary.json')}")


attributes_app = typer.Typer(
    help="Lexicon packs: the attributes (word lists), identity sets, names, nationalities and gender swaps.",
    no_args_is_help=True,
)
app.add_typer(attributes_app, name="attributes")


@attributes_app.command("list")
def attributes_list() -> None:
    """The built-in packs, with kind, version, language, size and source."""
    from .lexicons.attributes import pack_catalogue

    columns = ("name", "kind", "version", "language", "terms", "source")
    table = Table(title="lexicon packs (--attributes NAME; your own: --attributes FILE.yaml)")
    for column in columns:
        table.add_column(column, justify="right" if column in ("version", "terms") else "left")
    for row in pack_catalogue():
        table.add_row(*("" if row[c] is None else str(row[c]) for c in columns))
    console.print(table)


@attributes_app.command("show")
def attributes_show(
    pack: Annotated[str, typer.Argument(help="A built-in pack's name or a pack file (YAML/JSON).")],
) -> None:
    """Everything a pack holds: provenance, groups, terms, forms."""
    import json

    from .lexicons.attributes import describe_pack, load_pack

    console.print_json(json.dumps(describe_pack(load_pack(pack)), ensure_ascii=False))


@attributes_app.command("validate")
def attributes_validate(
    file: Annotated[Path, typer.Argument(help="A pack file (YAML/JSON) of kind wordlist, identity or gender.")],
) -> None:
    """Check a pack file: errors name the key and stop with exit code 2; warnings are printed."""
    from .lexicons.attributes import describe_pack, validate_pack

    pack, warnings = validate_pack(file)
    info = describe_pack(pack)
    for warning in warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}")
    console.print(f"{file}: valid {info['kind']} pack {info['name']!r} with {info['terms']} terms")


wordlist_app = typer.Typer(help="Word lists for new attributes (paper 000, App. B.1).", no_args_is_help=True)
app.add_typer(wordlist_app, name="wordlist")


@wordlist_app.command("derive")
def wordlist_derive(
    data: Annotated[Path, typer.Argument(help="Texts with an attribute label or score (CSV/TSV/JSONL/Parquet).")],
    label_column: Annotated[str, typer.Option(help="Column with the attribute's score or label.")],
    text_column: Annotated[str, typer.Option(help="Column with the texts.")] = "text",
    positive: Annotated[
        str | None, typer.Option(help="The label that marks the attribute (default: the column is a score).")
    ] = None,
    threshold: Annotated[float, typer.Option(help="A score above this marks the attribute (paper 000: 0.5).")] = 0.5,
    toxicity_column: Annotated[
        str | None, typer.Option(help="Keep only texts whose toxicity is at most --max-toxicity (paper: < 0.1).")
    ] = None,
    max_toxicity: Annotated[float, typer.Option(help="Largest toxicity kept.")] = 0.1,
    negatives: Annotated[int | None, typer.Option(help="Sample this many texts without the attribute.")] = None,
    top: Annotated[int, typer.Option(help="How many terms to propose (paper 000: 20).")] = 20,
    min_count: Annotated[int, typer.Option(help="Least number of attribute texts a term must appear in.")] = 5,
    name: Annotated[str, typer.Option(help="The attribute's name in the YAML draft.")] = "my-attribute",
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write a YAML attribute draft to hand-filter.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the negative sample.")] = 0,
) -> None:
    """Propose the unigrams most associated with an attribute, by naive Bayes, for a word list to filter by hand."""
    from .lexicons.derive import derive

    derived = derive(
        data,
        label_column=label_column,
        text_column=text_column,
        positive=positive,
        threshold=threshold,
        toxicity_column=toxicity_column,
        max_toxicity=max_toxicity,
        negatives=negatives,
        top=top,
        min_count=min_count,
        seed=seed,
    )
    table = Table(
        title=f"terms of the attribute ({derived.attribute_texts} texts) against the rest ({derived.other_texts})"
    )
    for column in ("term", "log ratio", "attribute texts", "other texts"):
        table.add_column(column, justify="left" if column == "term" else "right")
    for row in derived.terms.itertuples():
        table.add_row(str(row.term), f"{row.log_ratio:.3f}", str(row.attribute_texts), str(row.other_texts))
    console.print(table)
    if any(derived.removed.values()):
        console.print("left out: " + ", ".join(f"{k} {v}" for k, v in derived.removed.items() if v))
    if out is not None:
        out.write_text(derived.to_yaml(name), encoding="utf-8")
        console.print(f"wrote {out}: filter it by hand, then use it as --attribute {out}")


rate_app = typer.Typer(
    help="Human rating of counterfactuals: a web app, CSV exchange, consolidation, LLM judges.", no_args_is_help=True
)
app.add_typer(rate_app, name="rate")


@rate_app.command("init")
def rate_init(
    directory: Annotated[Path, typer.Argument(help="New rating project directory.")],
    source: Annotated[Path, typer.Option("--from", help="A generate run, an audit run, or a CSV of pairs.")],
    attribute: Annotated[
        str | None, typer.Option(help="Attribute, when the pairs file has no 'attribute' column.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the shuffled order.")] = 0,
) -> None:
    """Create a rating project from counterfactual pairs (shuffled; the generating method is hidden from raters)."""
    from .rating import RatingStore, pairs_from_run

    store = RatingStore.create(directory, pairs_from_run(source, attribute=attribute), seed=seed)
    console.print(
        f"{len(store.pairs())} pairs to rate in {store.path}; start the app with: counterfair rate serve {directory}"
    )


@rate_app.command("serve")
def rate_serve(
    directory: Annotated[Path, typer.Argument(help="Rating project directory.")],
    host: Annotated[str, typer.Option(help="Address to bind; anything but loopback requires a token.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8765,
    token: Annotated[str | None, typer.Option(help="Access token (generated for non-loopback hosts).")] = None,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            help="A host name raters use to reach the app (repeatable); by default the bound address (loopback "
            "names on loopback); on 0.0.0.0 any host unless given."
        ),
    ] = None,
) -> None:
    """Serve the rating web app."""
    from .rating.app import serve

    serve(directory, host=host, port=port, token=token, allowed_hosts=allowed_host)


@rate_app.command("export")
def rate_export(
    directory: Annotated[Path, typer.Argument(help="Rating project directory.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="CSV file to write.")],
) -> None:
    """Export ratings as CSV (pair_id, rater, fluent, reference, same_label, meaning, reject)."""
    from .rating import RatingStore

    count = RatingStore(directory).export_csv(out)
    console.print(f"wrote {count} ratings to {out}")


@rate_app.command("import")
def rate_import(
    directory: Annotated[Path, typer.Argument(help="Rating project directory.")],
    ratings: Annotated[
        Path, typer.Argument(help="CSV with pair_id, rater, fluent, reference, same_label, meaning, reject.")
    ],
    replace: Annotated[bool, typer.Option(help="Overwrite a rater's earlier rating of the same pair.")] = False,
) -> None:
    """Import ratings made outside the app (every row is checked first; a bad file adds nothing)."""
    from .rating import RatingStore

    count = RatingStore(directory).import_csv(ratings, replace=replace)
    console.print(f"imported {count} ratings")


@rate_app.command("consolidate")
def rate_consolidate(
    directory: Annotated[Path, typer.Argument(help="Rating project directory.")],
    min_meaning: Annotated[float, typer.Option(help="Minimum mean meaning score of a good pair.")] = 2.0,
) -> None:
    """Majority votes, Krippendorff's alpha, good pairs, and tables like paper 000 Tables 3-4."""
    from .rating import RatingStore
    from .rating.consolidate import consolidate

    report = consolidate(RatingStore(directory), min_meaning=min_meaning)
    console.print(f"{report['good_pairs']} good pairs of {report['rated_pairs']} rated ({report['pairs']} in all)")
    console.print("Krippendorff's alpha: " + ", ".join(f"{k} {_fmt(v)}" for k, v in report["alpha"].items()))
    console.print(rating_view(report))
    console.print(f"wrote {directory / 'consolidated.csv'} and {directory / 'consolidation.json'}")


@rate_app.command("judge")
def rate_judge(
    directory: Annotated[Path, typer.Argument(help="Rating project directory.")],
    llm: Annotated[str, typer.Option(help="LLM spec.")] = "llamacpp:qwen2.5-coder-1.5b-instruct",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Let an LLM answer the four rating questions for every pair (stored as rater llm:<model>)."""
    from .errors import ConfigError as _ConfigError
    from .lexicons.attributes import load_attribute
    from .llm import load_llm
    from .progress import RichProgress
    from .rating import RatingStore
    from .rating.judges import judge_store

    def subject(attribute: str) -> str:
        try:
            return load_attribute(attribute).subject
        except _ConfigError:
            return attribute

    with RichProgress(enabled=not quiet) as progress:
        result = judge_store(RatingStore(directory), load_llm(llm), subject_of=subject, progress=progress)
    console.print(
        f"{result['judged'] - result['failed']} pairs judged by {result['rater']}, {result['failed']} "
        f"unparseable (raw answers in {result['log']})"
    )


@app.command()
def feedback(
    data: Annotated[Path, typer.Argument(help="Texts to edit (CSV/TSV/JSONL/JSON/Parquet).")],
    editor: Annotated[str, typer.Option(help=editors_help("feedback"))] = "synonym",
    classifier: Annotated[str, typer.Option(help="Classifier the editor tries to flip.")] = "imdb-sentiment",
    steps: Annotated[int, typer.Option(help="Feedback steps n (the editor runs n + 1 times; inc@1..inc@n).")] = 5,
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for steps.csv and summary.json.")] = Path(
        "counterfair-feedback"
    ),
    text_column: Annotated[str, typer.Option(help="Column with the texts.")] = "text",
    id_column: Annotated[str | None, typer.Option(help="Column with unique ids (default: row number).")] = None,
    llm: Annotated[str, typer.Option(help="LLM for mask_fill and llm_flip.")] = "llamacpp:qwen2.5-coder-1.5b-instruct",
    ppl_model: Annotated[str, typer.Option(help="General LM for ppl-base ('none' to skip).")] = "gemma-3-270m",
    ppl_fine_model: Annotated[
        str | None, typer.Option(help="Domain-adapted LM for ppl-fine (see counterfair adapt-lm).")
    ] = None,
    ppl_steps: Annotated[
        str, typer.Option(help="Perplexity of every step's text ('all') or of the first and last only ('ends').")
    ] = "all",
    limit: Annotated[int | None, typer.Option(help="Only the first N texts.")] = None,
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
    max_text_chars: MaxTextChars = MAX_TEXT_CHARS,
    encoding: Encoding = "utf-8",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Counterfactuals of counterfactuals (paper 002): feed an editor its own output n times; report
    minimality@k, inc@k, flip-rate@k, probability@k, ppl-base@k and ppl-fine@k."""
    from .core.feedback import FeedbackOptions, run_feedback
    from .progress import RichProgress

    options = _options(FeedbackOptions, locals(), ppl_model=None if ppl_model == "none" else ppl_model)
    with RichProgress(enabled=not quiet) as progress:
        summary = run_feedback(data, out, options, progress=progress)
    console.print(feedback_view(summary))
    console.print(f"wrote {out / 'steps.csv'} and {out / 'summary.json'}")


@app.command("feedback-ttest")
def feedback_ttest(
    run_a: Annotated[Path, typer.Argument(help="A feedback run directory (or its summary.json).")],
    run_b: Annotated[Path, typer.Argument(help="Another feedback run on the same texts.")],
    k: Annotated[int | None, typer.Option(help="Compare inc@k (default: every k both runs have).")] = None,
) -> None:
    """Paired t-test of per-text inc@k between two feedback runs (paper 002's comparison of editors)."""
    import json

    from .core.feedback import paired_inc_test
    from .errors import InputError
    from .summaries import FeedbackSummary, command_of

    summaries = []
    for run in (run_a, run_b):
        path = run / "summary.json" if run.is_dir() else run
        if not path.exists():
            raise InputError(f"{run}: no summary.json (give a feedback run directory)")
        summary = json.loads(path.read_text(encoding="utf-8"))
        if command_of(summary) != "feedback":
            raise InputError(f"{path}: not a feedback run's summary")
        summaries.append(summary)
    typed_runs = [FeedbackSummary.from_dict(s) for s in summaries]
    ks = [k] if k else sorted({int(x) for s in typed_runs for x in s.inconsistency_by_text})
    table = Table(title=f"inc@k: A = {run_a}, B = {run_b} (paired t-test over common texts)")
    for column in ("k", "texts", "mean A", "mean B", "t", "p"):
        table.add_column(column, justify="right")
    for value in ks:
        test = paired_inc_test(summaries[0], summaries[1], value)
        if test is None:
            table.add_row(str(value), "–", "–", "–", "–", "fewer than 2 common texts, or no difference")
            continue
        table.add_row(
            str(value),
            str(test["texts"]),
            _fmt(test["mean_a"]),
            _fmt(test["mean_b"]),
            _fmt(test["t"], 2),
            _fmt(test["p_value"], 4),
        )
    console.print(table)


@app.command("adapt-lm")
def adapt_lm_command(
    data: Annotated[Path, typer.Argument(help="Domain texts (CSV/TSV/JSONL/JSON/Parquet).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for the adapted transformers model.")],
    text_column: Annotated[str, typer.Option(help="Column with the texts.")] = "text",
    base: Annotated[str, typer.Option(help="Base causal LM.")] = "gemma-3-270m",
    layers: Annotated[int, typer.Option(help="Number of final blocks to fine-tune.")] = 2,
    epochs: Annotated[int, typer.Option(help="Passes over the texts.")] = 1,
    limit: Annotated[int | None, typer.Option(help="Only the first N texts.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Adapt an LM to domain texts (the ppl-fine model of paper 002) by fine-tuning its last blocks on the CPU."""
    from .core.feedback import adapt_lm
    from .io import cell_text, read_table
    from .progress import RichProgress

    texts = [cell_text(v) or "" for v in read_table(data)[text_column].tolist()][:limit]
    with RichProgress(enabled=not quiet) as progress:
        path = adapt_lm(
            [t for t in texts if t.strip()], out, base=base, train_layers=layers, epochs=epochs, progress=progress
        )
    console.print(f"wrote {path}; use it with --ppl-fine-model {path}")


@app.command()
def models(
    verify: Annotated[bool, typer.Option("--verify", help="Compute sha256 of every installed model file.")] = False,
) -> None:
    """List the models counterfair knows: installed or not, file path, sha256 status, install line."""
    from .models import describe, known_models

    statuses = describe(known_models(), verify=verify)
    table = Table(title="models")
    table.add_column("name", no_wrap=True)
    for column in ("kind", "installed", "sha256"):
        table.add_column(column)
    for status in statuses:
        installed = "yes" if status.installed else "[red]no[/red]"
        table.add_row(status.name, status.kind, installed, status.sha256)
    console.print(table)
    for status in statuses:
        where = status.path if status.installed else f"not installed; install with: {status.pip}"
        console.print(f"[bold]{status.name}[/bold]: {where}", soft_wrap=True)


@app.command(
    "serve-llm", context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []}
)
def serve_llm(ctx: typer.Context) -> None:
    """Serve a GGUF model over an OpenAI-compatible API (llama-cpp-python's server) on the llama.cpp path that is
    safe on this machine. Takes llama_cpp.server's options: --model NAME|FILE.gguf --host --port --n_ctx ..."""
    from .llm.server import main as serve

    serve(ctx.args)


@app.command("metrics")
def metrics_cards() -> None:
    """Show the metric cards: definition, range, direction, reference."""
    from .metrics.cards import CARDS

    for card in CARDS.values():
        console.print(f"[bold]{card.name}[/bold]  columns: {', '.join(card.columns)}")
        console.print(f"  {card.definition}")
        console.print(f"  range: {card.range}; direction: {card.direction}")
        console.print(f"  reference: {card.reference}\n")


def main() -> None:
    """Entry point: counterfair errors become a one-line message and exit code 2. A crash in native code (llama.cpp,
    torch) cannot be caught, but it is never silent: faulthandler prints the signal and the Python stack."""
    import faulthandler

    try:
        faulthandler.enable()
    except (OSError, ValueError, AttributeError):  # stderr without a file descriptor (captured output)
        faulthandler.enable(file=sys.__stderr__ or 2)
    try:
        app()
    except CounterfairError as err:
        err_console.print(f"[red]error:[/red] {escape(str(err))}")
        sys.exit(2)


if __name__ == "__main__":
    main()
