"""The package's structure, checked by tools/check_structure.py: no import cycle, no ``_private`` name imported
from another module, no summary read by string key outside counterfair.summaries, no core function over 60 lines.
The checker is shown to find each defect in a small package made here, so a clean result means something."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from counterfair.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]


def _checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_structure", REPO / "tools" / "check_structure.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_structure"] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def test_the_package_has_no_cycle_private_import_summary_read_or_long_core_function() -> None:
    report = _checker().check()
    assert report.cycles == []
    assert report.long_modules == []  # none over 800 lines
    assert report.private_imports == []
    assert report.summary_reads == []
    assert report.long_functions == []
    assert report.core_run_imports == []
    assert report.editor_comparisons == []  # #48: at most 3 allowed; the registry answers every one


#: #48 asked for at most 40 (from 141) top-level; #70 counts nested ones too (``tuple[..., dict[str, Any]]``): 83
#: when first counted so, 68 after the classifier kinds' and metric cards' returns were typed, 14 after the
#: checkpoints, the rating, training, selection and LLM-audit records and the in-slot estimate were (#70 asks for at
#: most 15, outside the readers of user files). A new function returning dict[str, Any] should return a TypedDict, a
#: record or a result (or JSONObject for JSON it writes) instead of raising this.
DICT_RETURNS_CEILING = 13


def test_few_functions_return_an_untyped_dict() -> None:
    report = _checker().check()
    assert len(report.untyped_dict_returns) <= DICT_RETURNS_CEILING, "\n".join(report.untyped_dict_returns)
    assert len(report.json_object_returns) >= 40  # the JSON records are typed as such, not counted as untyped
    # each reader set apart is one (a stale name would set a future function apart unseen), and still a reader
    checker = _checker()
    found = {f"{r.split(':')[0]}.{r.split()[-1]}" for r in report.user_file_readers}
    assert found == set(checker.USER_FILE_READERS), set(checker.USER_FILE_READERS) ^ found


def test_the_checkers_editor_names_are_the_registrys() -> None:
    from counterfair.editors.registry import editor_names

    assert set(editor_names()) == _checker().EDITOR_NAMES


def test_the_checker_finds_each_defect(tmp_path: Path) -> None:
    package = tmp_path / "counterfair"
    for command in ("x", "y"):
        (package / "commands" / command).mkdir(parents=True)
        (package / "commands" / command / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "commands" / "__init__.py").write_text("")
    (package / "a.py").write_text("from .b import helper\n\n\ndef f():\n    return helper()\n")
    (package / "b.py").write_text(
        "def helper():\n    from .a import f  # lazy: still a cycle\n\n    return f\n\n\ndef _hidden():\n    return 1\n"
    )
    (package / "c.py").write_text("from .b import _hidden\n\n\ndef view(summary):\n    return summary['ctf_gap']\n")
    (package / "d.py").write_text("def build(summary):\n    summary['ctf_gap'] = 1\n    return summary\n")
    body = "".join(f"    x{i} = {i}\n" for i in range(61))
    (package / "commands" / "x" / "core.py").write_text(f'def long():\n    """Doc."""\n{body}    return x0\n')
    (package / "commands" / "x" / "shell.py").write_text(f'def long():\n    """Doc."""\n{body}    return x0\n')
    (package / "runs.py").write_text("def claim_run_dir():\n    return 1\n")
    (package / "big.py").write_text("X = 1\n" * 801)
    (package / "commands" / "y" / "core.py").write_text(
        "def run():\n    from ...runs import claim_run_dir\n    from ..x import shell\n\n"
        "    return claim_run_dir(), shell\n"
    )
    # a cycle through a package's __init__, which imports its submodule whenever the package is imported (#48: the
    # checker dropped that edge and missed a cycle of 7 modules); an import for annotations only runs never
    (package / "pkg").mkdir()
    (package / "pkg" / "__init__.py").write_text("from .kinds import kind\n")
    (package / "pkg" / "kinds.py").write_text("def kind():\n    from ..e import user\n\n    return user\n")
    (package / "e.py").write_text("from .pkg import kind\n\n\ndef user():\n    return kind\n")
    # importing a submodule runs its package's __init__ first (#70): "from .web.app import x" is an edge to "web"
    # too, whose __init__ gathers the views that import "web.app": a cycle as Python runs it
    (package / "web").mkdir()
    (package / "web" / "__init__.py").write_text("from ..views import page\n")
    (package / "web" / "app.py").write_text("APP = 1\n")
    (package / "views.py").write_text("from .web.app import APP\n\n\ndef page():\n    return APP\n")
    (package / "f.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from .g import G\n\n\ndef f(x: 'G'):\n"
        "    return x\n"
    )
    (package / "g.py").write_text("from .f import f\n\nG = f\n")
    (package / "h.py").write_text(
        "def pick(pairs, opts, row, kind):\n    a = pairs[pairs['method'] == 'swap']\n"
        "    b = 'llm' in opts.methods\n    c = pairs['method'].isin(['ablation'])\n"
        "    d = row['method'] in ('x', 'polyjuice')\n    return kind == 'swap', row['source'] != 'llm', a, b, c, d\n"
    )
    (package / "editors").mkdir()
    (package / "editors" / "__init__.py").write_text("def own(method):\n    return method == 'swap'\n")
    (package / "typed.py").write_text(
        "def loose() -> dict[str, Any]:\n    return {}\n\n\ndef spaced() -> dict[str,  Any]:\n    return {}\n\n\n"
        "def data() -> JSONObject:\n    return {}\n\n\ndef row() -> Row:\n    return {}\n\n\n"
        "def nested() -> tuple[Frame, dict[str, Any]]:\n    return f, {}\n"
    )
    report = _checker().check(package)
    assert report.cycles == [
        ["counterfair.a", "counterfair.b"],
        ["counterfair.e", "counterfair.pkg", "counterfair.pkg.kinds"],
        ["counterfair.views", "counterfair.web"],
    ]
    assert report.private_imports == ["counterfair.c:1 imports counterfair.b._hidden"]
    assert report.summary_reads == ["counterfair.c:5: return summary['ctf_gap']"]  # d.py writes, it does not read
    assert report.long_functions == ["counterfair.commands.x.core:1 long: 62 lines"]  # a shell may be long
    assert report.long_modules == ["counterfair.big: 801 lines"]
    assert sorted(report.core_run_imports) == [
        "counterfair.commands.y.core:2 imports counterfair.runs",
        "counterfair.commands.y.core:3 imports counterfair.commands.x.shell",  # another slice's shell
    ]
    # a method compared with an editor's name; not another thing that happens to be called "swap" or "llm"
    assert [c.split(":")[1] for c in report.editor_comparisons] == ["2", "3", "4", "5"]
    assert report.untyped_dict_returns == [
        "counterfair.typed:1 loose",
        "counterfair.typed:5 spaced",
        "counterfair.typed:17 nested",  # nested ones count (#70)
    ]
    assert report.json_object_returns == ["counterfair.typed:9 data"]  # a TypedDict (Row) is neither
    assert report.failed()


def test_the_old_module_paths_are_gone() -> None:
    """#48: the shims that re-exported moved modules "for one release" of a package never released are removed."""
    import importlib

    for name in ("counterfair._audit", "counterfair.gate", "counterfair.placebo", "counterfair.report"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(name)


def test_every_command_is_one_folder() -> None:
    """#48, #70: a command is a slice. Every command ``counterfair --help`` lists is one registry line and one folder
    ``counterfair/commands/<name>/`` whose ``cli`` module registers it; a command that writes runs keeps its options
    and in-memory verb (``core``) and its run-directory shell there; the folders the layers were split across are
    gone, and no command's function is registered by another command's module."""
    import importlib

    import typer

    from counterfair.cli import app
    from counterfair.command_registry import COMMANDS
    from counterfair.commands.registry import RUNS

    package = Path(__file__).resolve().parents[1] / "src" / "counterfair"
    listed = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    assert len(listed) == 25 and listed == sorted(c.name for c in COMMANDS)
    for command in COMMANDS:
        folder = package / "commands" / command.folder
        assert (folder / "__init__.py").is_file() and (folder / "cli.py").is_file(), command.name
    functions = [
        (info.name or info.callback.__name__.replace("_", "-"), info.callback) for info in app.registered_commands
    ]
    functions += [(g.name, c.callback) for g in app.registered_groups for c in g.typer_instance.registered_commands]
    for name, callback in functions:  # each command's function (a group's subcommands) from its folder's cli module
        assert callback.__module__ == f"counterfair.commands.{name.replace('-', '_')}.cli", (name, callback.__module__)
    folders = {"evaluate-methods": "methods", "llm-audit": "llm_audit"}
    for name, spec in RUNS.items():
        folder = package / "commands" / folders.get(name, name)
        if spec.options is not None:  # its options are declared in its own slice (methods: evaluate's, one per editor),
            home = "evaluate" if name == "evaluate-methods" else folder.name  # in its core or its options module
            assert spec.options.startswith(
                (f"counterfair.commands.{home}.core:", f"counterfair.commands.{home}.options:")
            ), spec.options
            assert (folder / "shell.py").is_file() and spec.options_class() is not None
    assert {p.name for p in (package / "commands").iterdir() if p.is_dir() and p.name != "__pycache__"} == {
        c.folder for c in COMMANDS
    } | {"methods"}  # evaluate's method comparison: a run kind of evaluate, no command of its own
    assert not (package / "cli").exists() or {p.name for p in (package / "cli").glob("*.py")} == {
        "__init__.py",
        "__main__.py",
    }
    for gone in ("counterfair.core", "counterfair.shell", "counterfair.cli.audit", "counterfair.core.audit"):
        assert not (package / gone.removeprefix("counterfair.").replace(".", "/")).with_suffix(".py").exists()
        assert not (package / gone.removeprefix("counterfair.").replace(".", "/") / "__init__.py").exists()
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("counterfair.core.audit")


def test_the_registry_and_the_cli_modules_agree() -> None:
    """A registry line whose folder registers nothing, or a command registered without a line, stops the build with
    both named (a plugin's command joins the registry and is built from its function)."""
    from counterfair import command_line
    from counterfair import command_registry as registry

    saved = list(registry.COMMANDS)
    try:
        registry.COMMANDS.append(registry.Command("ghost", registry.MAKE_COMMANDS))
        with pytest.raises(ModuleNotFoundError, match=r"counterfair\.commands\.ghost"):
            command_line.build_commands()
        registry.COMMANDS[:] = [c for c in saved if c.name != "metrics"]
        with pytest.raises(RuntimeError, match=r"unlisted \['metrics'\]"):
            command_line.build_commands()
        with pytest.raises(ConfigError, match="'audit': counterfair has a command of that name"):
            registry.register_command(lambda: None, name="audit")
    finally:
        registry.COMMANDS[:] = saved


def test_the_top_level_holds_the_verbs_options_results_and_errors() -> None:
    import counterfair as cf

    names = dir(cf)
    assert {"audit", "ctf", "evaluate", "generate", "feedback", "AuditOptions", "AuditResult", "InputError"} <= set(
        names
    )
    assert "read_table" not in names and "PerplexityScorer" not in names
    assert {"suite", "SuiteOptions", "SuiteResult", "bias", "BiasOptions", "BiasResult"} <= set(cf.__all__)
    assert cf.CTFOptions().n_resamples == 2000 and cf.FeedbackOptions().steps == 5
    with pytest.raises(AttributeError, match="has no attribute 'read_table'"):
        cf.read_table  # noqa: B018 - at home in counterfair.io


def test_no_module_outside_the_languages_branches_on_a_language_code() -> None:
    """#70: what a language does is its entry (``languages/<code>/language.yaml`` and its grammar), so no module
    outside ``counterfair/languages/`` compares a language's code with "en", "fr", "de" or "es" (at most 2 may)."""
    import re

    compare = re.compile(
        r"""(==|!=)\s*["'](en|fr|de|es)["']|["'](en|fr|de|es)["']\s*(==|!=)|in\s*\(["'](en|fr|de|es)["']"""
    )
    found = []
    for path in sorted((REPO / "src" / "counterfair").rglob("*.py")):
        if "languages" in path.relative_to(REPO / "src" / "counterfair").parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if compare.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert len(found) <= 2, "\n".join(found)
    assert compare.search('if language == "fr":') and compare.search("code in ('en', 'de')")  # the check bites
