"""The command registry: every top-level command of ``counterfair`` (its name, its ``--help`` panel and its folder
``commands/<name>/``, whose ``cli`` module registers it on the app) in the order ``--help`` lists them, and the
commands plugins add (:func:`register_command`). :func:`counterfair.command_line.build_commands` builds the command
line from it; the docs' command reference and the structure test loop over it.

Adding a command is a folder ``commands/<name>/`` with its ``cli.py`` and one line in :data:`COMMANDS` (and a run kind
in :mod:`counterfair.commands.registry` if it writes run directories). A leaf: it imports no command."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError

#: the --help panels, what a user comes for first (a command group, such as rate, comes after every command of its
#: panel: typer lists groups last)
AUDIT_COMMANDS = "Audit a classifier (no labels needed)"
LABELLED_COMMANDS = "Labelled data: bias metrics and test suites"
MAKE_COMMANDS = "Make and measure counterfactuals"
TRAIN_COMMANDS = "Train and mitigate"
SETUP_COMMANDS = "Models, word lists and the cache"
RATE_COMMANDS = "Human rating"
PLUGIN_COMMANDS = "Plugin commands"
PANELS = [
    AUDIT_COMMANDS,
    LABELLED_COMMANDS,
    MAKE_COMMANDS,
    TRAIN_COMMANDS,
    SETUP_COMMANDS,
    RATE_COMMANDS,
    PLUGIN_COMMANDS,
]


@dataclass(frozen=True)
class Command:
    """One top-level command: ``name`` as typed, ``panel`` its --help panel; a built-in command lives in
    ``commands/<folder>/`` whose ``cli`` module registers it on the app; a plugin's is its ``function`` (typer reads
    its parameters' annotations) with ``short_help``."""

    name: str
    panel: str
    function: Callable[..., Any] | None = None
    short_help: str | None = None

    @property
    def folder(self) -> str:
        return self.name.replace("-", "_")

    @property
    def module(self) -> str | None:
        """The module registering a built-in command (None for a plugin's)."""
        return None if self.function is not None else f"counterfair.commands.{self.folder}.cli"


#: every command ``counterfair --help`` lists, in its order (panel by panel, the common task first)
COMMANDS: list[Command] = [
    *(Command(name, AUDIT_COMMANDS) for name in "audit llm-audit check compare report ctf plan".split()),
    *(Command(name, LABELLED_COMMANDS) for name in "bias suite".split()),
    *(
        Command(name, MAKE_COMMANDS)
        for name in "generate evaluate feedback feedback-ttest select nli-pairs metrics".split()
    ),
    *(Command(name, TRAIN_COMMANDS) for name in "train train-attribute adapt-lm".split()),
    *(Command(name, SETUP_COMMANDS) for name in "models serve-llm attributes wordlist cache".split()),
    Command("rate", RATE_COMMANDS),
]


def register_command(
    function: Callable[..., Any], *, name: str | None = None, panel: str | None = None, short_help: str | None = None
) -> Callable[..., Any]:
    """Add a plugin's command to the registry (usable as a decorator): the command line builds it like its own, from
    the function's typer annotations, after loading the plugins. A name already taken is an error naming it."""
    spelled = name or function.__name__.replace("_", "-")
    if any(c.name == spelled for c in COMMANDS):
        raise ConfigError(f"plugin command {spelled!r}: counterfair has a command of that name (or a plugin added it)")
    COMMANDS.append(Command(spelled, panel or PLUGIN_COMMANDS, function, short_help))
    return function
