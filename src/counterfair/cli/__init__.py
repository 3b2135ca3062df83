"""The ``counterfair`` command line (typer): :mod:`.app` holds the app, the shared options and helpers; one module
per command group registers its commands on it."""

import sys

from ..commands.llm_audit import cli as _llm_audit_cli  # noqa: F401 - registers llm-audit
from ..errors import CounterfairError
from . import audit, bias, ctf, evaluate, feedback, generate, models, rate, suite  # noqa: F401 - registers the commands, in this order
from .app import add_plugin_commands, app, main, order_commands

try:
    add_plugin_commands()
except CounterfairError as _plugin_error:  # an expected error: one line, exit code 2 (as main() gives)
    print(f"error: {_plugin_error}", file=sys.stderr)
    sys.exit(2)
order_commands()

__all__ = ["app", "main"]
