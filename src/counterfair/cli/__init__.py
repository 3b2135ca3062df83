"""The ``counterfair`` command line (typer). :mod:`counterfair.command_line` holds the app, the shared options and
helpers; the command registry (:mod:`counterfair.command_registry`) lists every command, and each built-in one's
folder ``commands/<name>/cli.py`` registers it on the app when :func:`~counterfair.command_line.build_commands`
imports it, after the plugins' commands joined the registry. This module is the entry: it gathers the commands from
above, and no command module imports it."""

import sys

from ..command_line import app, build_commands, main
from ..errors import CounterfairError

try:
    build_commands()
except CounterfairError as _plugin_error:  # an expected error: one line, exit code 2 (as main() gives)
    print(f"error: {_plugin_error}", file=sys.stderr)
    sys.exit(2)

__all__ = ["app", "main"]
