"""The typer app every command registers on, the options several commands share, and the helpers they use."""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import os
import sys
import time
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from . import __version__, vocabulary
from .errors import CounterfairError
from .plugins import load_plugins
from .redact import redact
from .summaries import GATE_MEANINGS, EvaluationSummary, GateVerdict, typed
from .views.console import stage_error

try:
    load_plugins()  # before the commands are built: their help lists what plugins register
except CounterfairError as _plugin_error:  # an expected error: one line, exit code 2 (as main() gives)
    print(f"error: {_plugin_error}", file=sys.stderr)
    sys.exit(2)

app = typer.Typer(
    name="counterfair",
    help="Generate counterfactual texts, measure their quality, and audit text classifiers for fairness.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# In a terminal rich fits the tables to it; piped into a file or a CI log it would wrap and truncate at 80 columns
# ("race_ethni…"): there the tables get room for every name (COLUMNS, if set, still wins).
PIPED_WIDTH = 160


def help_text(text: str) -> str:
    """``text`` as a help text shows it: rich reads ``[parquet]`` or ``[#MODEL]`` as markup and drops it, so every
    bracket is escaped (the help is plain text: no markup is meant)."""
    from rich.markup import escape

    return escape(text)


class RedactingConsole(Console):
    """A console that never prints a secret: every string it renders is :func:`~counterfair.redact.redact`-ed first
    (a classifier's or server's address with a password or a key in its query, named in a progress line)."""

    def render_str(self, text: str, **kwargs: Any) -> Any:
        return super().render_str(redact(text), **kwargs)


console = RedactingConsole(width=None if sys.stdout.isatty() or os.environ.get("COLUMNS") else PIPED_WIDTH)

# What goes in an option, by parameter name: one placeholder per idea in every command's help and in the generated
# reference (docs/reference/options.md lists them). An option's own ``metavar=`` wins; names ending in ``_column`` take
# a COLUMN; the rest fall back to their type (N, NUMBER, TEXT, PATH); an on/off flag shows none.
PLACEHOLDERS: dict[str, str] = {
    "data": "FILE",
    "config": "FILE",
    "junit": "FILE",
    "cases": "FILE",
    "file": "FILE",
    "original": "FILE",
    "revised": "FILE",
    "ratings": "FILE",
    "identities_file": "FILE",
    "source": "DIR|FILE",
    "out": "DIR",
    "run_dir": "DIR",
    "run_a": "DIR",
    "run_b": "DIR",
    "directory": "DIR",
    "only_good": "DIR",
    "classifier": "SPEC",
    "baseline": "DIR|SPEC",
    "llm": "SPEC",
    "judge_llm": "SPEC",
    "ppl_model": "NAME|DIR|FILE.gguf",
    "ppl_fine_model": "NAME|DIR",
    "base": "NAME|DIR",
    "polyjuice_model": "DIR|HUB_ID",
    "pairs": "[NAME=]FILE",
    "attributes": "NAME|FILE,...",
    "attribute": "NAME|FILE",
    "pack": "NAME|FILE",
    "methods": "METHOD,...",
    "metrics": "METRIC,...",
    "score_methods": "METHOD,...|all",
    "identities": "SET|FILE|TERM,...",
    "placebo": "default|en|fr|de|es|FILE|none",
    "detector": "auto|keyword|keyword+llm|mlp:DIR|llm",
    "editor": "NAME|external:FILE",
    "engine": "local|ray",
    "address": "ADDRESS",
    "language": "en|fr|de|es",
    "log_to": "mlflow",
    "mlflow_uri": "URI",
    "encoding": "CODEC",
    "prompt_style": "turns|plain",
    "instruction": "TEMPLATE",
    "fail_if": "RULE",
    "missing_marker": "MARKER",
    "fmt": "csv|tsv|jsonl|json|parquet",
    "revised_input": "first|second",
    "part": "premise|hypothesis",
    "ppl_steps": "all|ends",
    "ppl_dtype": "float32|bfloat16",
    "method": "baseline|blind|augment|clp",
    "augment": "all|one",
    "architecture": "cnn|minilm",
    "vectors": "learned|spacy",
    "clp_reduction": "sum|mean",
    "token": "TOKEN",
    "host": "HOST",
    "allowed_host": "HOST",
    "port": "PORT",
    "name": "NAME",
    "positive": "LABEL",
    "positive_label": "LABEL",
    "negatives": "N|all",
    "parts": "PART",
    "group_columns": "COLUMN,...",
    "label_columns": "COLUMN,...",
    "threshold": "0..1",
}
_BY_TYPE = {"int": "N", "float": "NUMBER", "str": "TEXT", "list[str]": "TEXT"}


def placeholder(param: Any) -> str | None:
    """What a reader types for ``param`` (None for an on/off flag): the help's type column and the reference."""
    if getattr(param, "is_flag", False):
        return None
    if param.metavar:
        return str(param.metavar)
    name = param.name or ""
    if name in PLACEHOLDERS:
        return PLACEHOLDERS[name]
    if name.endswith("_column"):
        return "COLUMN"
    if param.type_descriptor.is_path:
        return "PATH"
    bare = param.bare_type()
    return _BY_TYPE.get(bare, bare.upper())


def _show_placeholders() -> None:
    """typer (0.29) writes an option's type as ``<str>``, ``<bool>``, ``<path>`` and ignores ``metavar``: its help and
    ``typer ... utils docs`` show :func:`placeholder` instead, the one place this is decided."""
    from typer.core import TyperArgument, TyperOption

    for cls in (TyperOption, TyperArgument):
        cls.display_type_rich = lambda self, ctx: placeholder(self)  # type: ignore[method-assign,assignment]
        cls.display_type = lambda self, ctx: placeholder(self) or ""  # type: ignore[method-assign,assignment]
    TyperArgument._usage_display_name = _usage_name  # type: ignore[method-assign]


def _usage_name(self: Any) -> str:
    """An argument in the usage line as the rest of the help names it: ``DATA``, ``[DATA]``, ``PAIRS...``."""
    name = str(self.name or "").upper()
    return (name if self.required else f"[{name}]") + ("..." if self.nargs != 1 else "")


_show_placeholders()


def one_attribute(value: str | None) -> str | None:
    if value is not None and "," in value:
        raise typer.BadParameter(f"{value!r}: this command takes one attribute or pack per run (audit takes several)")
    return value


#: Options whose default differs between commands, and why (#48: one vocabulary; what differs is said). A test
#: (tests/test_vocabulary.py) fails on a difference missing here or a reason for one that is gone; the docs list them
#: (reference/options.md).
DEFAULTS_THAT_DIFFER: dict[str, str] = {
    "attribute": "generate edits one attribute (paper 000's first, islam); select and rate init take one only to "
    "narrow what they show (none: all)",
    "batch_size": "evaluate and train pass texts through a transformer (64); train-attribute's small network over "
    "sentence embeddings trains on larger batches (256, paper 000's)",
    "bootstrap": "bias and suite run recompute every group's AUCs in each resample, so 1000 keeps them quick; the "
    "counterfactual commands resample means of pair differences (2000)",
    "classifier": "the fairness commands audit a toxicity classifier (profanity-check ships); feedback's editors flip "
    "a sentiment classifier (paper 002's IMDB one); evaluate computes flip rate and probability change only when "
    "given one",
    "detector": "select ranks many texts and loads no LLM (keyword); audit and generate use the LLM's judgement when "
    "the llm method loads it anyway (auto)",
    "epochs": "train fine-tunes a classifier for 10 passes; adapt-lm adapts an LM in one; train-attribute counts "
    "steps unless told epochs",
    "language": "audit reads a user's texts whole before any work, so it can tell their language from their words "
    "(auto); generate, ctf and bias take English unless told",
    "label_column": "bias and train need gold labels (label); suite run reads HateCheck's layout (label_gold); audit, "
    "ctf and wordlist derive add labelled metrics only when named",
    "negatives": "train-attribute keeps paper 000's 20000 texts without a positive label; wordlist derive reads all",
    "placebo": "audit's placebo words are the built-in ones of its language (default); llm-audit's come from "
    "--placebo-words unless a file is named",
    "samples": "LLM rewrites per text and attempt in audit and generate (paper 000's 16); responses per prompt "
    "variant in llm-audit (5: each is a whole generated answer)",
    "steps": "feedback's rounds of editing (paper 002's n); train-attribute's optimisation steps (default: the "
    "paper's schedule)",
    "target_column": "suite run reads HateCheck's target_ident; evaluate groups by target only when named",
    "text_column": "evaluate reads CEval's layout (orig_text), suite run HateCheck's (test_case), train-attribute "
    "Civil Comments' (comment_text); every other command reads text",
    "threshold": "evaluate without one takes the classifier's own decision (its most probable label); the others "
    "cut the score at 0.5",
}

# Options that several commands share, declared once.
CLASSIFIER_HELP = (
    "Classifier under test: profanity-check, sklearn:FILE, callable:MODULE:FUNC, http:URL, hf:DIR, scores:FILE, ... "
    "(docs: Classifiers and models)."
)
OneAttribute = Annotated[
    str,
    typer.Option(
        "--attributes",
        "--attribute",
        callback=one_attribute,
        help=vocabulary.ATTRIBUTE,
    ),
]


def build_commands() -> None:
    """Give ``app`` every command of the registry (:data:`counterfair.command_registry.COMMANDS`): each built-in's
    ``cli`` module (``commands/<name>/cli.py``) registers its function or group when imported, a plugin's function
    is added here; each gets its registry panel, and ``--help`` lists them panel by panel in the registry's order. A
    command registered without a registry line, or a line without its command, is an error naming it."""
    import importlib

    from .command_registry import COMMANDS, PANELS

    for command in list(COMMANDS):
        if command.module is not None:
            importlib.import_module(command.module)  # registers it (once: a module is imported once)
        elif command.function is not None and command.name not in {_name(i) for i in app.registered_commands}:
            app.command(command.name, short_help=command.short_help)(command.function)
    order = {c.name: (i, c.panel) for i, c in enumerate(COMMANDS)}
    infos: list[Any] = [*app.registered_commands, *app.registered_groups]
    names = [_name(info) for info in infos]
    unlisted = [name for name in names if name not in order]
    missing = [name for name in order if name not in names]
    if unlisted or missing:
        raise RuntimeError(f"the command registry and the cli modules disagree: unlisted {unlisted}, missing {missing}")
    for info, name in zip(infos, names, strict=True):
        info.rich_help_panel = order[name][1]
    panels = PANELS + [c.panel for c in COMMANDS if c.panel not in PANELS]

    def place(info: Any) -> tuple[int, int]:
        index, panel = order[_name(info)]
        return panels.index(panel), index

    app.registered_commands.sort(key=place)
    app.registered_groups.sort(key=place)


def _name(info: Any) -> str:
    """A registered command's or group's name as typed (typer spells an unnamed function's name with dashes)."""
    return str(info.name or info.callback.__name__.replace("_", "-"))


#: option panels of --help, essentials first (#49 item 7): a command's own options stay in "Options"
INPUT_PANEL, LLM_PANEL, MORE_PANEL = "Input", "LLM", "More"
MaxTextChars = Annotated[
    int,
    typer.Option(
        help=vocabulary.MAX_TEXT_CHARS,
        rich_help_panel=INPUT_PANEL,
    ),
]
Overwrite = Annotated[
    bool,
    typer.Option(
        "--overwrite",
        help="Replace the run in --out (which counterfair wrote) instead of resuming it or refusing a different one; "
        "only the files that run wrote are removed.",
    ),
]
LogTo = Annotated[
    str | None,
    typer.Option(help="Log metrics, verdicts and the report to a tracker: mlflow.", rich_help_panel=MORE_PANEL),
]


def _parquet_ready(wanted: bool) -> bool:
    """--parquet without pyarrow is refused before any work, not after the run."""
    if wanted:
        from .extras import check

        check([("--parquet", ("parquet",))])
    return wanted


Parquet = Annotated[
    bool,
    typer.Option(
        "--parquet",
        help=help_text(
            "Also write the run's tables as Parquet beside the CSVs (pairs.parquet, ...); needs the [parquet] extra."
        ),
        rich_help_panel=MORE_PANEL,
        callback=_parquet_ready,
    ),
]
MlflowUri = Annotated[
    str | None,
    typer.Option(help="MLflow tracking URI (default: MLFLOW_TRACKING_URI, else ./mlruns).", rich_help_panel=MORE_PANEL),
]


def log_to_tracker(log_to: str, target: Path, log: Callable[[], str]) -> None:
    """``log()`` (a finished run into the tracker), said on the console; a tracker's failure exits 2 saying the run
    itself is done and where."""
    try:
        run_id = log()
    except Exception as err:  # the tracker's own errors: the run is done, the exit code must not say "failed"
        said = f"the run is in {target}, but logging to {log_to} failed: {err}"
        err_console.print(f"[red]error:[/red] {escape(said)}")  # err_console redacts what it prints
        raise typer.Exit(2) from err
    console.print(f"logged to {log_to}: run {run_id}")


Encoding = Annotated[
    str,
    typer.Option(
        help=vocabulary.ENCODING,
        rich_help_panel=INPUT_PANEL,
    ),
]
Language = Annotated[
    str,
    typer.Option(
        help=vocabulary.LANGUAGE,
        rich_help_panel=INPUT_PANEL,
    ),
]
AuditLanguage = Annotated[  # audit reads the language from its texts by default
    str,
    typer.Option(
        "--language",
        metavar="auto|en|fr|de|es",
        help=vocabulary.LANGUAGE_AUTO,
        rich_help_panel=INPUT_PANEL,
    ),
]
LLMParallel = Annotated[
    int | None,
    typer.Option(
        help=vocabulary.LLM_PARALLEL,
        rich_help_panel=LLM_PANEL,
    ),
]
RetryNearness = Annotated[
    float,
    typer.Option(
        min=0.0,
        max=1.0,
        metavar="0..1",
        help=vocabulary.RETRY_NEARNESS,
        rich_help_panel=LLM_PANEL,
    ),
]
LLMConcurrency = Annotated[
    int | None,
    typer.Option(
        help=vocabulary.LLM_CONCURRENCY,
        rich_help_panel=LLM_PANEL,
    ),
]
Engine = Annotated[
    str,
    typer.Option(
        help=vocabulary.ENGINE,
        rich_help_panel=MORE_PANEL,
    ),
]
Address = Annotated[str | None, typer.Option(help=vocabulary.ADDRESS, rich_help_panel=MORE_PANEL)]
BatchSize = Annotated[int, typer.Option(min=1, help=vocabulary.CLASSIFIER_BATCH, rich_help_panel=MORE_PANEL)]
err_console = RedactingConsole(stderr=True, soft_wrap=True)  # an error is one line: a CI log keeps its paths whole


def _version_callback(value: bool) -> None:
    if value:
        console.print(f"counterfair {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version_callback, is_eager=True, help="Show the version.")
    ] = False,
    device: Annotated[
        str | None,
        typer.Option(
            "--device",
            help="Where every torch model the command loads runs (hf: classifiers, BERTScore, the MiniLM "
            "encoder): auto (a GPU torch sees, else the CPU), cpu, cuda, cuda:N or mps; before the command: "
            "counterfair --device cuda audit ... (also COUNTERFAIR_DEVICE).",
        ),
    ] = None,
    dtype: Annotated[
        str | None,
        typer.Option(
            "--dtype",
            help="The precision hf: classifiers run in: float32 (the default), bfloat16 or float16 (autocast: "
            "faster on a GPU, scores within about 0.01; their runs and cached scores are kept apart from "
            "float32's); before the command: counterfair --device cuda --dtype bfloat16 audit ... "
            "(also COUNTERFAIR_DTYPE).",
        ),
    ] = None,
) -> None:
    """counterfair command line."""
    if device is not None or os.environ.get("COUNTERFAIR_DEVICE"):
        from .models import DEVICE_GIVEN_AS, check_device_there

        given_as = "--device" if device is not None else "COUNTERFAIR_DEVICE"
        DEVICE_GIVEN_AS[0] = given_as
        os.environ["COUNTERFAIR_DEVICE"] = check_device_there(
            device or os.environ["COUNTERFAIR_DEVICE"], given_as=given_as
        )
    if dtype is not None:
        from .models import check_dtype_form

        os.environ["COUNTERFAIR_DTYPE"] = check_dtype_form(dtype)


def sample_pairs_path() -> Path:
    """The built-in sample of pairs (written for counterfair) used by ``evaluate --demo``."""
    return Path(str(resources.files("counterfair") / "resources" / "sample_pairs.csv"))


def print_evaluation(summary: dict[str, Any]) -> None:
    from .commands.evaluate.page import evaluation_summary_page
    from .views.page import to_console

    s = EvaluationSummary.from_dict(summary)
    console.print(to_console(evaluation_summary_page(summary)))
    for error in s.errors:
        err_console.print(stage_error(error))


def require_extras(what: str, *extras: str) -> None:
    """A command that always needs an extra names it before any work (``counterfair.extras``)."""
    from .extras import check

    check([(what, extras)])


_Options = TypeVar("_Options")


def declared(cls: type[_Options]) -> _Options:
    """An options object holding each field's default as the dataclass declares it (``__post_init__`` not run:
    ``detector="auto"`` stays ``"auto"``, ``metrics=None`` stays None): what a command's typer options take as their
    defaults, so each default is declared once, in the dataclass (#48)."""
    import dataclasses

    obj = cls.__new__(cls)
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.default is not dataclasses.MISSING:
            value = f.default
        elif f.default_factory is not dataclasses.MISSING:
            value = f.default_factory()
        else:
            continue  # a required field has no default to take
        object.__setattr__(obj, f.name, value)
    return obj


def flag(cls: type[Any], name: str, *param_decls: str, **settings: Any) -> Any:
    """The typer option of field ``name`` of the options dataclass ``cls``, its help text the field's (declared once,
    with the field: :func:`counterfair.records.option`); ``param_decls`` and ``settings`` as ``typer.Option`` takes
    them (``"--out", "-o"``, ``min=0``)."""
    import dataclasses

    found = {f.name: f for f in dataclasses.fields(cls)}
    if name not in found or "help" not in found[name].metadata:
        raise TypeError(f"{cls.__name__}.{name}: no such field with help text (declare it with option(..., help=...))")
    return typer.Option(*param_decls, help=help_text(found[name].metadata["help"]), **settings)


def joined(value: str | list[str] | None) -> str | None:
    """A list default as the command line spells it: comma-separated (None stays None)."""
    return ",".join(value) if isinstance(value, list) else value


def as_path(value: str | Path | None) -> Path | None:
    """A path default as the command line types it."""
    return None if value is None else Path(value)


def spelled_none(value: str | None) -> str:
    """A default of None as the command line spells it ("none")."""
    return "none" if value is None else value


def options_from(cls: Any, given: dict[str, Any], **spelled: Any) -> Any:
    """A command's options dataclass from the command's parameters of the same names; ``spelled``: the ones the
    command line spells differently (a comma list, a flag)."""
    import dataclasses

    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in given.items() if k in names} | spelled)


def listed(value: Any) -> list[str] | None:
    """A comma-separated string (command line) or a list (config file) as a list; None when empty."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else [str(v) for v in value]
    return [i.strip() for i in items if i.strip()] or None


def config_defaults(ctx: typer.Context, param: Any, config: Path | None) -> Path | None:
    """``--config FILE``'s callback (an eager option, read before the others): the YAML file's values become the
    command's defaults (click's ``default_map``), so a value given on the command line wins and every value reaches
    the command as its parameter, converted and checked by the option's own type; an unknown key is refused."""
    if config is None:
        return None
    from .errors import ConfigError
    from .yamlfiles import read_mapping

    data = read_mapping(config, "--config")  # size, binary content, YAML aliases and item count checked
    params = {p.name: p for p in ctx.command.params if p.name and p.name != param.name}
    defaults: dict[str, Any] = {}
    for key, value in data.items():
        name = str(key).replace("-", "_")
        if name not in params:
            raise ConfigError(f"--config {config}: unknown option {key!r} (options: {', '.join(sorted(params))})")
        defaults[name] = _config_value(config, key, value, params[name], ctx)
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    return config


def _config_value(config: Path, key: Any, value: Any, param: Any, ctx: typer.Context) -> Any:
    """A config file's value as the command line would have it: converted and checked by the option's own type
    (``threshold: "abc"`` is refused, ``guard: "false"`` is False, ``fail_if: 5`` a rule), a list for a
    comma-separated option joined."""
    from .errors import ConfigError

    if param is None or value is None:
        return value
    if isinstance(value, list | tuple) and not getattr(param, "multiple", False):
        if not all(isinstance(v, str | int | float) for v in value):
            raise ConfigError(f"--config {config}: {key}: a list of plain values, got {value!r}")
        value = ",".join(str(v) for v in value)
    if isinstance(value, dict):
        raise ConfigError(f"--config {config}: {key}: a value, not a mapping ({value!r})")
    try:
        return param.process_value(ctx, value)
    except (typer.BadParameter, ValueError, TypeError) as err:
        message = getattr(err, "message", None) or str(err)
        raise ConfigError(f"--config {config}: {key}: {message} (got {value!r})") from err


def end_with_verdict(gate: GateVerdict | None, junit: Any, view: Any) -> None:
    """A labelled-data command's end: the gate's rules (and JUnit), then the view with the verdict in the last lines;
    exits with the gate's code (0 without a gate)."""
    code = finish_gate(gate, junit, status_line=False) if gate is not None else 0
    console.print(view)
    raise typer.Exit(code)


def finish_gate(
    gate: Mapping[str, Any] | GateVerdict,
    junit: Any,
    *,
    status_line: bool = True,
    checks_shown: bool = False,
    run_dir: Path | None = None,
) -> int:
    """Print the gate's checks as sentences (not where the page printed them: ``checks_shown``) and its status line,
    write the JUnit file (with ``run_dir``'s identity as its properties), on GitHub Actions an annotation per failing
    check and the step summary (:mod:`counterfair.views.ci`); return the exit code."""
    from rich.markup import escape

    from .analysis.gate import write_junit
    from .views.ci import github_annotations, junit_properties
    from .views.verdict import MANY_RULES, rule_sentence

    verdict = typed(gate, GateVerdict)
    colour = {"pass": "green", "fail": "red", "error": "yellow", "inconclusive": "yellow"}
    order = {"fail": 0, "error": 1}
    checks = sorted(verdict.checks, key=lambda c: order.get(c.verdict, 2))  # failed first, then not evaluated
    shown = checks if len(checks) <= MANY_RULES else [c for c in checks if c.verdict != "pass"]
    for check in () if checks_shown else shown:
        sentence = rule_sentence(check, verdict.rules)
        console.print(f"[{colour[check.verdict]}]{check.verdict.upper()}[/] {escape(sentence)}")
    if len(shown) < len(checks) and not checks_shown:
        where = f" (every check: {junit})" if junit else " (every check: --junit FILE)"
        console.print(f"[green]PASS[/] {len(checks) - len(shown)} more checks{where}")
    if status_line:
        meaning = GATE_MEANINGS.get(verdict.verdict, "")
        console.print(
            f"fairness gate: [{colour[verdict.verdict]}]{verdict.verdict}[/] (exit {verdict.exit_code}: {meaning})"
        )
    if junit:
        console.print(f"wrote {write_junit(verdict, junit, properties=junit_properties(run_dir))}")
    for line in github_annotations(verdict):
        print(line, flush=True)  # a workflow command: one whole line, as written
    return int(verdict.exit_code)


class _ThincWithoutTorch(importlib.abc.MetaPathFinder):
    """Lets spaCy's ``thinc`` decide that torch is absent when a command imports spaCy before anything imported
    torch, so that a command that parses with spaCy does not import torch for nothing (1.1 s of the demo audit's
    10 s, and 180 MiB): thinc imports torch only to offer its PyTorch layers, which the pipelines counterfair loads
    (small CNN models) never use. torch itself stays importable (BERTScore, an ``hf:`` classifier, training). Only the
    command line does this (a library user's process is theirs); ``COUNTERFAIR_SPACY_TORCH=1`` turns it off, for a
    ``callable:`` classifier that runs a spaCy transformer pipeline inside the command."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "thinc.compat":
            return None
        sys.meta_path.remove(self)  # once
        if "torch" in sys.modules:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _WithoutTorch(spec.loader)
        return spec


class _WithoutTorch(importlib.abc.Loader):
    """The loader of ``thinc.compat``, run while ``import torch`` fails (a ``None`` in ``sys.modules``)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def create_module(self, spec: Any) -> Any:
        return self.inner.create_module(spec)

    def exec_module(self, module: Any) -> None:
        sys.modules["torch"] = None  # type: ignore[assignment]
        try:
            self.inner.exec_module(module)
        finally:
            if "torch" in sys.modules and sys.modules["torch"] is None:
                del sys.modules["torch"]


class Terminated(BaseException):
    """SIGTERM, raised in the command's process as Ctrl+C is: every ``finally`` runs (locks released, run.json's
    file list written) and the command says what is kept, instead of dying with status -15 in silence."""


def _terminate_as_interrupt() -> None:
    import signal

    main_pid = os.getpid()

    def terminated(signum: int, frame: Any) -> None:
        if os.getpid() != main_pid:  # a forked worker: die as a worker should
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
        raise Terminated

    with contextlib.suppress(ValueError):  # not the main thread (an embedding host): keep its handler
        signal.signal(signal.SIGTERM, terminated)


_STARTED = time.time()  # a JUnit file modified since was the gate's, written by this run


def _error_junit(message: str) -> None:
    """A run that stops on bad input (exit 2) still leaves the JUnit file its command line asks for, saying why (a
    file the gate wrote in this run is kept)."""
    from .views.ci import write_error_junit

    write_error_junit(sys.argv[1:], message, since=_STARTED)


def main() -> None:
    """Entry point: counterfair errors become a one-line message and exit code 2. A crash in native code (llama.cpp,
    torch) cannot be caught, but it is never silent: faulthandler prints the signal and the Python stack."""
    import faulthandler

    if not os.environ.get("COUNTERFAIR_SPACY_TORCH") and "thinc" not in sys.modules:
        sys.meta_path.insert(0, _ThincWithoutTorch())

    try:
        faulthandler.enable()
    except (OSError, ValueError, AttributeError):  # stderr without a file descriptor (captured output)
        faulthandler.enable(file=sys.__stderr__ or 2)
    _terminate_as_interrupt()
    _warnings_as_lines()
    try:
        app()
    except Terminated:
        err_console.print("terminated (SIGTERM): finished units are kept; the same command resumes")
        sys.exit(128 + 15)
    except CounterfairError as err:
        err_console.print(f"[red]error:[/red] {escape(str(err))}")  # err_console redacts what it prints
        _error_junit(str(err))
        sys.exit(EXIT_ERROR)
    except OSError as err:  # a file it could not read or write (--junit on a read-only path, a vanished input)
        where = f" {err.filename}" if getattr(err, "filename", None) else ""
        from .writing import resume_hint

        said = f"cannot use{where}: {err.strerror or err}{resume_hint(err)}"
        err_console.print(f"[red]error:[/red] {escape(said)}")
        _error_junit(said)
        sys.exit(EXIT_ERROR)
    except SystemExit as done:  # the command line not understood (click's usage error), or another exit 2
        if done.code == EXIT_ERROR:
            _error_junit("the run stopped before its fairness gate (exit 2; the message printed above says why)")
        raise
    except KeyboardInterrupt:
        err_console.print("interrupted: finished units are kept; the same command resumes")
        sys.exit(130)
    except Exception as err:  # noqa: BLE001 - a bug: one sentence, the traceback in a log file, exit 3
        log = _crash_log()
        err_console.print(
            f"[red]internal error:[/red] {escape(type(err).__name__)}: {escape(str(err))[:300]}\n"
            f"This is a bug in counterfair; the traceback is in {log}. Finished units are kept."
        )
        sys.exit(EXIT_INTERNAL)


def _warnings_as_lines() -> None:
    """A warning on the command line is one line, ``warning: ...`` (a server's retry, a cache rebuilt), not Python's
    file, line and source. Only the format changes: a caller recording warnings (``catch_warnings(record=True)``,
    pytest) still receives them, which it would not if ``showwarning`` were replaced."""
    import warnings

    def line(message: Warning | str, *args: object, **kwargs: object) -> str:
        return f"warning: {redact(str(message))}\n"

    warnings.formatwarning = line  # type: ignore[assignment]


#: exit codes, one meaning each: 0 done (every gate rule passed), 1 a gate rule failed, 2 bad input, options, a
#: missing extra or a rule that could not be evaluated, 3 an internal error (a bug; traceback in a log file)
EXIT_ERROR, EXIT_INTERNAL = 2, 3


def _crash_log() -> str:
    """Write the current exception's traceback to ``<cache>/logs/`` (or the temp dir) and return the path."""
    import tempfile
    import time
    import traceback

    from .models import cache_root

    text = redact(f"counterfair {__version__}\n{' '.join(sys.argv)}\n\n{traceback.format_exc()}")
    for folder in (cache_root() / "logs", Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
            path.write_text(text, encoding="utf-8")
            return str(path)
        except OSError:
            continue
    return "(no writable place for the log)\n" + text
