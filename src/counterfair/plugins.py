"""Plugins: modules that register editors, classifier kinds, LLM backends or metrics before a command runs.

The command line imports, before it builds its commands (so their help lists what plugins add):

* every module named in ``$COUNTERFAIR_PLUGINS`` (comma-separated module names, importable from ``sys.path``);
* every entry point of the ``counterfair.plugins`` group of the installed packages (``[project.entry-points.
  "counterfair.plugins"] name = "package.module"`` in a plugin's pyproject), loaded by importing its module.

A plugin module registers at import, e.g. ``register_command(fn)`` (a command of its own: a typer-annotated
function, listed in ``--help`` under "Plugin commands"; :mod:`counterfair.command_registry`),
``register_editor(EditorSpec(...))`` (:mod:`counterfair.editors.registry`),
``register_classifier_kind(ClassifierKind(...))`` (:mod:`counterfair.classifiers.kinds`),
``register_llm_backend(LLMBackend(...))`` (:mod:`counterfair.llm.registry`), ``register_metric(card)``
(:mod:`counterfair.metrics.cards`). In Python, the
same calls work without this module: import your plugin before calling counterfair. Importing counterfair itself
loads nothing.
"""

from __future__ import annotations

import importlib
import os
from importlib.metadata import entry_points

from .command_registry import COMMANDS, Command, register_command
from .errors import ConfigError

ENV = "COUNTERFAIR_PLUGINS"
GROUP = "counterfair.plugins"
_loaded: list[str] = []

__all__ = ["load_plugins", "register_command", "registered_commands"]


def registered_commands() -> list[Command]:
    """The commands plugins added to the command registry (:func:`register_command`)."""
    return [c for c in COMMANDS if c.function is not None]


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
