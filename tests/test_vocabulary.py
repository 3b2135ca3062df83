"""One vocabulary: the same option name and placeholder for the same idea in every command, help that says what goes
in each option, one public name per editor, and every pack reachable from every command that takes attributes."""

from __future__ import annotations

import re
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

import counterfair as cf
from counterfair.cli import app
from counterfair.command_line import placeholder
from counterfair.errors import ConfigError

runner = CliRunner()


def _commands() -> list[tuple[list[str], Any]]:
    found = []

    def walk(command: Any, path: list[str]) -> None:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, [*path, name])
        else:
            found.append((path, command))

    walk(typer.main.get_command(app), [])
    return found


@pytest.mark.slow
def test_every_help_names_what_goes_in_each_option() -> None:
    commands = _commands()
    assert len(commands) >= 30
    typer_types = re.compile(r"<(str|bool|path|int|float|list\[str\])>")
    for path, _ in commands:
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (path, result.output)
        assert not typer_types.search(result.output), (path, typer_types.findall(result.output))
    generate = runner.invoke(app, ["generate", "--help"], env={"COLUMNS": "200"}).output
    assert "Usage: counterfair generate [OPTIONS] DATA" in generate and "{data}" not in generate
    assert re.search(r"--classifier\s+SPEC", runner.invoke(app, ["audit", "--help"], env={"COLUMNS": "200"}).output)


def test_one_name_and_one_placeholder_per_idea() -> None:
    spellings: dict[str, set[str]] = defaultdict(set)
    shown: dict[str, set[str | None]] = defaultdict(set)
    for _, command in _commands():
        for param in command.params:
            if param.param_type_name == "option":
                spellings[param.name].add(param.opts[0])
                shown[param.name].add(placeholder(param))
    # every option of one name has one spelling and one placeholder across commands ...
    assert {n: s for n, s in spellings.items() if len(s) > 1} == {}
    assert {n: s for n, s in shown.items() if len(s) > 1} == {
        "negatives": {"N", "N|all"},  # an int and a choice
        "language": {"en|fr|de|es", "auto|en|fr|de|es"},  # audit alone reads it from the texts
    }
    # ... and the attribute options are --attributes everywhere (--attribute still reads, for one attribute)
    assert spellings["attribute"] == {"--attributes"} and spellings["attributes"] == {"--attributes"}
    assert shown["text_column"] == {"COLUMN"} and shown["out"] == {"DIR"} and shown["classifier"] == {"SPEC"}


def test_generate_reaches_every_pack(tmp_path: Path) -> None:
    data = tmp_path / "texts.csv"
    pd.DataFrame({"text": ["She said he was late.", "My Muslim neighbour waved.", "A quiet day."]}).to_csv(data)
    out = tmp_path / "gender"
    result = runner.invoke(app, ["generate", str(data), "--attributes", "gender", "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    rows = pd.read_csv(out / "counterfactuals.csv")
    assert set(rows["method"]) == {"swap"}
    assert rows.loc[0, "text"] == "He said she was late." and rows.loc[0, "status"] == "ok"
    assert rows.loc[2, "status"] == "unchanged:no_gender_term"
    # a swap pack makes swap variants only: another method is refused before any work, naming why
    refused = runner.invoke(
        app, ["generate", str(data), "--attribute", "gender", "--methods", "ablation", "--out", str(tmp_path / "x")]
    )
    assert isinstance(refused.exception, ConfigError) and "swap pack" in str(refused.exception)  # main(): exit 2
    assert not (tmp_path / "x").exists()
    several = runner.invoke(app, ["generate", str(data), "--attributes", "islam,lgbq", "--out", str(tmp_path / "y")])
    assert several.exit_code == 2 and "one attribute or pack per run" in several.output
    # the same from Python
    records = cf.generate(["She said he was late."], ["swap"], attribute="gender", progress=False)
    assert [r.text for r in records] == ["He said she was late."]


def test_one_public_name_per_editor() -> None:
    public = [n for n in dir(cf.editors) if not n.startswith("_")]
    assert all(n == "EditorBase" or n.endswith("Editor") for n in public) and "AblationEditor" in public
    with pytest.warns(DeprecationWarning, match="Ablation is now AblationEditor"):
        old = cf.editors.Ablation
    assert old is cf.editors.AblationEditor
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cf.editors.IdentitySwapEditor().name == "swap"


def _option_commands() -> list[tuple[str, Any, Any, set[str]]]:
    """Each command that has an options dataclass: its last word, the click command, the class and its field names."""
    import dataclasses

    classes = _options_by_command()
    return [
        (path[-1], command, classes[path[-1]], {f.name for f in dataclasses.fields(classes[path[-1]])})
        for path, command in _commands()
        if path[-1] in classes
    ]


def _options_by_command() -> dict[str, Any]:
    """Each command's options dataclass, from the command registry, by the command line's last word (``suite run``:
    ``run``; ``evaluate-methods`` shares evaluate's options and command line)."""
    from counterfair.commands.registry import RUNS

    found = {spec.name: spec.options_class() for spec in RUNS.values() if spec.options}
    found["run"] = found.pop("suite")
    del found["evaluate-methods"]
    assert len(found) == 8
    return found


def test_every_command_option_takes_its_default_from_the_options_dataclass() -> None:
    """#48: a default is declared once, in the options dataclass. Each option of a command that is also a field of
    the command's options has the field's declared default (a list joined with commas; the guard flag on when the
    options name a guard), and the command's source reads it from the dataclass rather than repeating a literal."""
    import ast
    import inspect

    from counterfair.command_line import declared

    checked, literals, differing = 0, [], []
    for name, command, cls, fields in _option_commands():
        defaults = declared(cls)
        function = ast.parse(inspect.getsource(command.callback.__wrapped__).lstrip()).body[0]
        assert isinstance(function, ast.FunctionDef)
        args = function.args
        written = dict(
            zip([a.arg for a in args.args][len(args.args) - len(args.defaults) :], args.defaults, strict=True)
        )
        for param in command.params:
            if param.param_type_name != "option" or param.name not in fields:
                continue
            checked += 1
            want = getattr(defaults, param.name)
            if isinstance(want, list):
                want = ",".join(want)
            if param.name == "guard" and isinstance(param.default, bool):
                want = want not in (None, False)
            if param.default != want:
                differing.append((name, param.name, param.default, want))
            node = written.get(param.name)
            if node is None or isinstance(node, ast.Constant):
                literals.append((name, param.name, None if node is None else node.value))
    assert checked >= 150
    assert differing == []
    assert literals == []


#: options whose help is built when the command line is (from the registries, which plugins extend), not declared
COMPUTED_HELP = {"classifier", "methods", "editor"}


def test_every_command_option_takes_its_help_from_the_options_dataclass() -> None:
    """#48: an option's help is declared once, on its options field (``records.option``/``knob``, shared texts from
    ``counterfair.vocabulary``); the command's ``--help`` shows that text, and Python reads it with ``option_help``."""

    from counterfair.command_line import flag, help_text
    from counterfair.records import option_help

    same, computed, differing = 0, set(), []
    for name, command, cls, fields in _option_commands():
        helps = option_help(cls)
        for param in command.params:
            if param.param_type_name != "option" or param.name not in fields:
                continue
            if param.name in helps:  # as the option shows it: brackets escaped from rich's markup (help_text)
                same += param.help == help_text(helps[param.name])
                if param.help != help_text(helps[param.name]):
                    differing.append((name, param.name))
            else:
                computed.add(param.name)
    assert differing == [] and same >= 140  # 147 when this was written
    assert computed == COMPUTED_HELP
    assert option_help(cf.BiasOptions)["group_threshold"] == "A membership score at or above it is a member."
    with pytest.raises(TypeError, match="no such field with help text"):
        flag(cf.BiasOptions, "nothing")


def test_every_default_that_differs_between_commands_says_why() -> None:
    """#48: the same option has the same default everywhere, or DEFAULTS_THAT_DIFFER says why it does not (and the
    docs' options reference shows it); a reason for a difference that is gone fails too."""
    from counterfair.command_line import DEFAULTS_THAT_DIFFER

    defaults: dict[str, dict[str, Any]] = defaultdict(dict)
    for path, command in _commands():
        for param in command.params:
            if param.param_type_name == "option" and param.name not in ("out", "quiet", "help", "config"):
                defaults[str(param.name)][" ".join(path)] = param.default
    differ = {name for name, by in defaults.items() if len({repr(v) for v in by.values()}) > 1}
    assert differ == set(DEFAULTS_THAT_DIFFER)
    assert all(len(reason) > 40 for reason in DEFAULTS_THAT_DIFFER.values())
