"""The ``counterfair`` command line (typer): :mod:`.app` holds the app, the shared options and helpers; one module
per command group registers its commands on it."""

from ..commands.llm_audit import cli as _llm_audit_cli  # noqa: F401 - registers llm-audit
from . import audit, bias, ctf, evaluate, feedback, generate, models, rate, suite  # noqa: F401 - registers the commands, in this order
from .app import app, main, order_commands

order_commands()

__all__ = ["app", "main"]
