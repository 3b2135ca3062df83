"""Plugins: modules that register editors, classifier kinds, LLM backends or metrics before a command runs.

The command line imports, before it builds its commands (so their help lists what plugins add):

* every module named in ``$COUNTERFAIR_PLUGINS`` (comma-separated module names, importable from ``sys.path``);
* every entry point of the ``counterfair.plugins`` group of the installed packages (``[project.entry-points.
  "counterfair.plugins"] name = "package.module"`` in a plugin's pyproject), loaded by importing its module.

A plugin module registers at import, e.g. ``register_editor(EditorSpec(...))``, ``register_command(fn)`` (a command
of its own: a typer-annotated function, listed in ``--help`` under "Plugin commands")
(:mod:`counterfair.editors.registry`), ``register_classifier_kind(ClassifierKind(...))``
(:mod:`counterfair.classifiers.kinds`), ``register_llm_backend(LLMBackend(...))`` (:mod:`counterfair.llm.registry`),
``register_metric(card)`` (:mod:`counterfair.metrics.cards`). In Python, the
same calls work without this module: import your plugin before calling counterfair. Importing counterfair itself
loads nothing.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from .errors import ConfigError

ENV = "COUNTERFAIR_PLUGINS"
GROUP = "counterfair.plugins"
_loaded: list[str] = []
PLUGIN_COMMANDS = "Plugin commands"  # the --help panel of the commands plugins add


@dataclass(frozen=True)
class CommandSpec:
    """A command a plugin adds: its function (typer reads its parameters' annotations), name and help panel."""

    function: Callable[..., Any]
    name: str
    panel: str = PLUGIN_COMMANDS
    short_help: str | None = None


_COMMANDS: list[CommandSpec] = []


def register_command(
    function: Callable[..., Any], *, name: str | None = None, panel: str | None = None, short_help: str | None = None
) -> Callable[..., Any]:
    """Add a command to ``counterfair`` (usable as a decorator): the command line builds it like its own, from the
    function's typer annotations, after loading the plugins. A name already taken is an error."""
    spelled = name or function.__name__.replace("_", "-")
    if any(c.name == spelled for c in _COMMANDS):
        raise ConfigError(f"a plugin command named {spelled!r} is already registered")
    _COMMANDS.append(CommandSpec(function, spelled, panel or PLUGIN_COMMANDS, short_help))
    return function


def registered_commands() -> list[CommandSpec]:
    return list(_COMMANDS)


def load_plugins() -> list[str]:
    """Import the plugin modules (once each); their names. A plugin that fails to import is a clear error."""
    names = [n.strip() for n in os.environ.get(ENV, "").split(",") if n.strip()]
    names += [ep.value.partition(":")[0] for ep in entry_points(group=GROUP)]
    for name in names:
        if name in _loaded:
            continue
        try:
            importlib.import_module(name)
        except Exception as exc:
            raise ConfigError(f"plugin {name!r} ({ENV} or the {GROUP} entry points) failed to import: {exc}") from exc
        _loaded.append(name)
    return list(_loaded)
