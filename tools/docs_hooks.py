"""MkDocs hooks (mkdocs.yml ``hooks:``): the reference pages that are generated, so they cannot drift from the code.

- ``reference/cli.md``: every command's usage, arguments and options, from the typer app (typer's own Markdown);
- ``reference/options.md``: one row per option name, with its placeholder and the commands that take it (the
  vocabulary: one name and one placeholder per idea);
- ``reference/api.md``: the top-level names of ``import counterfair as cf`` (verbs, options, results), the editors
  and the extension points, rendered by mkdocstrings from their docstrings.
"""

from __future__ import annotations

import collections.abc
import importlib
import inspect
import re
import types
import typing
from collections import defaultdict
from typing import Any, NotRequired, Union, get_args, get_origin

CLI_INTRO = """# Command-line reference

Generated from the commands themselves at every docs build. Placeholders say what goes in an option (`SPEC`: a
classifier or LLM spec, see [Classifiers and models](classifiers.md); `DIR`, `FILE`, `COLUMN`; `A|B`: one of the
choices; `X,...`: a comma-separated list); the same idea has the same name in every command: [Options](options.md).
Exit codes: 0 done (every gate rule passed), 1 a gate rule failed, 2 bad input, options or config values, a missing
extra or a rule that could not be evaluated, 3 an internal error (a bug; the traceback is in a log file).

"""

API_GROUPS = {
    "The verbs": [
        "audit",
        "generate",
        "evaluate",
        "ctf",
        "feedback",
        "bias",
        "suite",
        "llm_audit",
        "as_classifier",
        "evaluate_methods",
        "run_audit",
        "run_generate",
        "run_ctf",
        "run_llm_audit",
        "open_run",
        "evaluate_pairs",
        "nli_revision_pairs",
    ],
    "Options": [
        "AuditOptions",
        "GenerateOptions",
        "EvaluateOptions",
        "CTFOptions",
        "FeedbackOptions",
        "BiasOptions",
        "SuiteOptions",
        "LLMAuditOptions",
    ],
    "Results": [
        "AuditResult",
        "CTFResult",
        "EvaluationResult",
        "FeedbackResult",
        "MethodComparison",
        "BiasResult",
        "SuiteResult",
        "LLMAuditResult",
    ],
}
EXTENSION_POINTS = [
    ("Records", ["counterfair.records.Counterfactual", "counterfair.records.Candidate", "counterfair.records.Edit"]),
    (
        "Editors",
        [
            "counterfair.editors.base.EditorBase",
            "counterfair.editors.registry.EditorSpec",
            "counterfair.editors.registry.register_editor",
        ],
    ),
    (
        "Classifiers",
        ["counterfair.classifiers.kinds.ClassifierKind", "counterfair.classifiers.kinds.register_classifier_kind"],
    ),
    ("Metrics", ["counterfair.metrics.cards.MetricCard", "counterfair.metrics.cards.register_metric"]),
    ("Testing", ["counterfair.testing.assert_fair"]),
    ("Errors", ["counterfair.errors.CounterfairError", "counterfair.extras.MissingExtra"]),
]


def cli_reference() -> str:
    import typer
    from typer.cli import get_docs_for_click

    from counterfair.cli import app

    command = typer.main.get_command(app)
    ctx = typer.Context(command)
    text = get_docs_for_click(obj=command, ctx=ctx, name="counterfair", title="counterfair")
    return CLI_INTRO + command_table() + text.replace("&#x27;", "'").replace("# `counterfair`", "## `counterfair`", 1)


def command_table() -> str:
    """Every command, from the command registry: its --help panel, what it does and the folder that holds it."""
    import typer

    from counterfair.cli import app
    from counterfair.command_registry import COMMANDS

    built = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    lines = ["| command | what it does | panel | code |", "|---|---|---|---|"]
    for command in COMMANDS:
        what = (built[command.name].short_help or built[command.name].help or "").split("\n")[0].replace("|", "\\|")
        where = f"`commands/{command.folder}/`" if command.module else "a plugin"
        lines.append(f"| `{command.name}` | {what} | {command.panel} | {where} |")
    return "\n".join(lines) + "\n\n"


def _commands() -> list[tuple[str, Any]]:
    import typer

    from counterfair.cli import app

    found: list[tuple[str, Any]] = []

    def walk(command: Any, path: list[str]) -> None:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, [*path, name])
        else:
            found.append((" ".join(path), command))

    walk(typer.main.get_command(app), [])
    return found


def options_reference() -> str:
    from counterfair.command_line import placeholder

    rows: dict[str, dict[str, Any]] = defaultdict(lambda: {"spelled": {}, "shown": set(), "commands": [], "help": ""})
    for name, command in _commands():
        for param in command.params:
            if param.param_type_name != "option":
                continue
            row = rows[param.opts[0]]
            row["spelled"].update(dict.fromkeys(param.opts + list(param.secondary_opts)))
            row["shown"].add(placeholder(param) or "(flag)")
            row["commands"].append(f"`{name}`")
            row["help"] = row["help"] or (param.help or "").split(". ")[0].replace("|", "\\|")
    lines = [
        "# Options across commands",
        "",
        "Generated from the commands at every docs build: each option name means one thing and takes one kind of "
        "value wherever it appears (a test, `tests/test_vocabulary.py`, keeps it so). Placeholders: `SPEC` a "
        "classifier or LLM spec ([Classifiers and models](classifiers.md)), `A|B` one of the choices, `X,...` a "
        "comma-separated list. Any option of `audit` can also come from `--config FILE.yaml`.",
        "",
        "| option | value | commands | what it is (first command's help) |",
        "|---|---|---|---|",
    ]
    for first in sorted(rows, key=lambda o: (-len(rows[o]["commands"]), o)):
        row = rows[first]
        shown = " or ".join(f"`{s}`" if s != "(flag)" else s for s in sorted(row["shown"]))
        spelled = ", ".join(f"`{o}`" for o in row["spelled"])
        lines.append(f"| {spelled} | {shown} | {', '.join(row['commands'])} | {row['help']} |")
    lines += _differing_defaults()
    lines += _python_options()
    return "\n".join(lines) + "\n"


def _python_options() -> list[str]:
    """Each options dataclass's fields with their help (declared once, on the field: what ``--help`` shows too)."""
    import dataclasses

    import counterfair as cf
    from counterfair.records import option_help

    lines = [
        "",
        "## In Python: the options dataclasses",
        "",
        "The same options as keyword arguments of the verbs (`cf.audit(texts, clf, threshold=0.4)`) or fields of their "
        "options (`cf.AuditOptions(threshold=0.4)`), with the help `--help` shows (`counterfair.records.option_help` "
        "gives it as a dict).",
    ]
    for name in ("AuditOptions", "CTFOptions", "BiasOptions", "SuiteOptions", "GenerateOptions", "EvaluateOptions",
                 "FeedbackOptions", "LLMAuditOptions"):  # fmt: skip
        cls = getattr(cf, name)
        helps = option_help(cls)
        lines += ["", f"### `{name}`", "", "| field | default | what it is |", "|---|---|---|"]
        for field in dataclasses.fields(cls):
            if not field.init:
                continue  # the options' own bookkeeping, not an option
            if field.default is not dataclasses.MISSING:
                default = f"`{field.default!r}`"
            elif field.default_factory is not dataclasses.MISSING:
                default = f"`{field.default_factory()!r}`"
            else:
                default = "(required)"
            text = helps.get(field.name, "(help built from the registries: see `--help`)")
            lines.append(f"| `{field.name}` | {default} | {text.replace('|', chr(92) + '|')} |")
    return lines


def _differing_defaults() -> list[str]:
    """The options whose default differs between commands, each command's default, and why (``DEFAULTS_THAT_DIFFER``,
    which a test keeps complete)."""
    from counterfair.command_line import DEFAULTS_THAT_DIFFER

    defaults: dict[str, dict[str, Any]] = defaultdict(dict)
    for name, command in _commands():
        for param in command.params:
            if param.param_type_name == "option" and param.name in DEFAULTS_THAT_DIFFER:
                defaults[str(param.name)][name] = param.default
    lines = [
        "",
        "## Defaults that differ between commands, and why",
        "",
        "| option | defaults | why |",
        "|---|---|---|",
    ]
    for option, reason in sorted(DEFAULTS_THAT_DIFFER.items()):
        shown = "; ".join(f"`{c}`: {'none' if v is None else f'`{v}`'}" for c, v in defaults[option].items())
        lines.append(f"| `--{option.replace('_', '-')}` | {shown} | {reason} |")
    return lines


def api_reference() -> str:
    out = [
        "# Python API reference",
        "",
        "Generated from the docstrings at every docs build. `import counterfair as cf` does no work: every name below "
        "loads its module on first use. How the pieces fit: [Python](python.md) and the "
        "[notebook tour](../tutorials/notebook.ipynb).",
        "",
    ]
    from counterfair import _LAZY  # the lazy table is the public surface

    for group, names in API_GROUPS.items():
        out += [f"## {group}", ""]
        for name in names:
            out += [f"::: {_LAZY[name]}.{name}", "    options:", "      heading_level: 3", ""]
    out += ["## Extension points", ""]
    for group, paths in EXTENSION_POINTS:
        out += [f"### {group}", ""]
        for path in paths:
            out += [f"::: {path}", "    options:", "      heading_level: 4", ""]
    return "\n".join(out)


# ------------------------------------------------------------------------------------ summary.json, key by key

SUMMARY_TYPES = (
    ("audit", "counterfair.summaries:AuditSummary"),
    ("bias", "counterfair.summaries:BiasSummary"),
    ("suite run", "counterfair.summaries:SuiteSummary"),
    ("generate", "counterfair.summaries:GenerateSummary"),
    ("evaluate", "counterfair.summaries:EvaluationSummary"),
    ("feedback", "counterfair.summaries:FeedbackSummary"),
    ("ctf", "counterfair.summaries:CTFSummary"),
)


def _load(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def _is_typed_dict(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, dict) and hasattr(t, "__required_keys__")


def _is_record(t: Any) -> bool:
    """A summary record (:class:`counterfair.summary_record.Record`): the shape a core builds where it is declared
    once."""
    from counterfair.summary_record import Record

    return isinstance(t, type) and issubclass(t, Record) and t is not Record


_NAMESPACES = (
    "counterfair.jsontypes",
    "counterfair.summaries",
    "counterfair.metrics.fairness",
    "counterfair.analysis.placebo",
    "counterfair.analysis.compare",
    "counterfair.analysis.slots",
    "counterfair.commands.bias.core",
    "counterfair.commands.suite.core",
    "counterfair.commands.ctf.core",
    "counterfair.commands.audit.core",
    "counterfair.commands.audit.summary",
    "counterfair.commands.audit.options",
    "counterfair.commands.generate.core",
    "counterfair.commands.generate.recipe",
    "counterfair.commands.evaluate.core",
    "counterfair.commands.evaluate.stages",
    "counterfair.commands.feedback.core",
)


def _hints(cls: Any) -> dict[str, Any]:
    """A TypedDict's keys and types, inherited ones too (a TypedDict's bases are not in its MRO, so every name its
    annotations use is looked up in the modules that declare summary types); a record's JSON keys (a field's ``key``
    where it is stored under another name) and types, its ``extra`` and ``keys`` left out."""
    names: dict[str, Any] = {}
    for module in _NAMESPACES:
        names |= vars(importlib.import_module(module))
    hints = typing.get_type_hints(cls, localns=names, include_extras=True)
    if not _is_record(cls):
        return hints
    import dataclasses

    return {
        f.metadata.get("key") or f.name: hints[f.name]
        for f in dataclasses.fields(cls)
        if f.name not in ("extra", "keys")
    }


def _shown(t: Any, seen: list[Any]) -> str:
    origin, args = get_origin(t), get_args(t)
    if origin is NotRequired:
        return _shown(args[0], seen)
    if _is_typed_dict(t) or _is_record(t):
        if t not in seen:
            seen.append(t)
        return f"[{t.__name__}](#{t.__name__.lower()})"
    if origin in (Union, types.UnionType):
        parts = [a for a in args if a is not type(None)]
        text = " or ".join(_shown(a, seen) for a in parts)
        return text + (" or null" if len(parts) < len(args) else "")
    if origin is dict and "Sequence" in str(args[1]):  # counterfair.jsontypes.JSONObject: JSON data as written
        return "JSON object"
    if origin in (dict, collections.abc.Mapping):
        return f"object: {_shown(args[0], seen)} → {_shown(args[1], seen)}"
    if origin in (list, tuple):
        return f"list of {_shown(args[0], seen)}"
    if t is Any:
        return "any value"
    names = {str: "string", int: "integer", float: "number", bool: "true/false"}
    if t in names:
        return names[t]
    name = getattr(t, "__name__", None) or str(t).replace("typing.", "")
    return "JSON object" if "JSONValue" in str(t) else name


_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data):`~?(?:[\w.]+\.)?([\w]+)`")


def _doc(cls: Any) -> str:
    """A summary type's docstring as Markdown: one paragraph, Sphinx roles and double backquotes made plain code."""
    own = cls.__dict__.get("__doc__")  # its own: a TypedDict without one would show dict's
    text = " ".join((inspect.cleandoc(own) if own else "").split())
    return _ROLE.sub(r"`\1`", text).replace("``", "`")


def _table(cls: Any, seen: list[Any]) -> list[str]:
    rows = ["| key | value |", "|---|---|"]
    for key, t in _hints(cls).items():
        optional = " (when the run has it)" if get_origin(t) is NotRequired else ""
        rows.append(f"| `{key}` | {_shown(t, seen)}{optional} |")
    return rows


def summary_reference() -> str:
    lines = [
        "# summary.json, key by key",
        "",
        "Generated from the types the code builds each summary with (the records of `counterfair/summaries.py` "
        "where a core builds its summary as one, `TypedDict`s beside the other cores; mypy checks every key and "
        "value where they are built), so this page is what `summary.json` holds. Keys the "
        "shells add as a run ends (`timing_s`, the gate's verdicts) are listed where the type declares them.",
    ]
    seen: list[Any] = []
    for command, path in SUMMARY_TYPES:
        cls = _load(path)
        lines += ["", f"## {command}", "", _doc(cls), "", *_table(cls, seen)]
    lines += ["", "## The parts", ""]
    done: set[Any] = set()
    while any(t not in done for t in seen):
        t = next(t for t in seen if t not in done)
        done.add(t)
        lines += [f"### {t.__name__}", "", _doc(t) or "", "", *_table(t, seen), ""]
    return "\n".join(lines) + "\n"


def measures_reference() -> str:
    """Every measure a gate rule can name, from the measure table (counterfair.analysis.measures)."""
    from counterfair.analysis.measures import MEASURES

    families = {
        "slot": "in the slot (audit, llm-audit)",
        "swap": "identity swaps (audit, ctf)",
        "bias": "labelled data (bias)",
        "suite": "suites (suite run)",
        "llm": "LLM responses (llm-audit)",
        "control": "the audit's own control (audit, llm-audit)",
    }
    signs = {"either": "either direction", "above": "above the placebo", "none": "–"}
    lines = [
        "# Measures",
        "",
        "Generated from the measure table (`counterfair/analysis/measures.py`) that the gate's rules, the verdict's "
        "sentences, JUnit messages and the trackers read: every name a rule (`--fail-if`, `check`) can use. "
        "*Material from* is the size from which a detected in-slot estimate is material (its simultaneous 95 % "
        "interval lies beyond it); *default gate* the scopes `--fail-if default` checks. Points are probability "
        "points of the positive label (0.02 = 2 points). How to write rules: [the CI gate](../how-to/ci-gate.md); "
        "why these measures: [Identity effects in the slot](../concepts/identity-effect.md).",
        "",
        "| measure | said as | from | unit | material from | default gate | computed as |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in MEASURES:
        threshold = "–" if m.threshold is None else f"{m.threshold:g}, {signs[m.sign]}"
        prefix = "SIMILARITY." if m.family == "llm" else ""  # an LLM audit's: per response similarity
        scopes = ", ".join(f"`{rule}`" for rule in m.default_rules(prefix)) or "–"
        what = m.computes.replace("|", "\\|")
        lines.append(f"| `{m.name}` | {m.words} | {families[m.family]} | {m.unit} | {threshold} | {scopes} | {what} |")
    return "\n".join(lines) + "\n"


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for uri, make in (
        ("reference/cli.md", cli_reference),
        ("reference/options.md", options_reference),
        ("reference/api.md", api_reference),
        ("reference/summary.md", summary_reference),
        ("reference/measures.md", measures_reference),
    ):
        files.append(File.generated(config, uri, content=make()))
    return files


_PAPER = re.compile(r"(?<![\[\w/#`-])[Pp]apers? (000|001|002|004)\b(?![\]\w])")
_FENCE = re.compile(r"^(```|~~~)")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """ "paper 000" (001, 002, 004) becomes a link to its citation on the papers page, outside code blocks, links and
    inline code: every page names a paper by number, and one click gives its title, authors and venue."""
    if page.file.src_uri == "concepts/papers.md":
        return markdown
    depth = page.file.src_uri.count("/")
    target = "../" * depth + "concepts/papers.md"
    out, fenced = [], False
    for line in markdown.split("\n"):
        if _FENCE.match(line.strip()):
            fenced = not fenced
        if fenced or line.startswith("    "):
            out.append(line)
            continue
        pieces = line.split("`")
        for i in range(0, len(pieces), 2):  # even pieces are outside inline code
            pieces[i] = _PAPER.sub(lambda m: f"[{m.group(0)}]({target}#paper-{m.group(1)})", pieces[i])
        out.append("`".join(pieces))
    return "\n".join(out)


_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):(<code>)~?")


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """Docstrings cross-reference in Sphinx's roles (``:class:`X```), which mkdocstrings shows as written: the API page
    shows the name alone."""
    return _ROLE.sub(r"\1", html) if page.file.src_uri == "reference/api.md" else html
