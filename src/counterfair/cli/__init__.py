"""The ``counterfair`` command line (typer): :mod:`.app` holds the app, the shared options and helpers; each command
slice's ``cli`` module (``counterfair.commands.<name>.cli``) registers its command on it, as :mod:`.models` and
:mod:`.rate` register theirs; :mod:`.runs` holds ``check`` and ``report``, which read a finished run of any
command."""

import sys

from ..command_line import add_plugin_commands, app, main, order_commands
from ..commands.audit import cli as _audit  # noqa: F401 - each import registers its commands, in this order
from ..commands.bias import cli as _bias  # noqa: F401
from ..commands.compare import cli as _compare  # noqa: F401
from ..commands.ctf import cli as _ctf  # noqa: F401
from ..commands.evaluate import cli as _evaluate  # noqa: F401
from ..commands.feedback import cli as _feedback  # noqa: F401
from ..commands.generate import cli as _generate  # noqa: F401
from ..commands.llm_audit import cli as _llm_audit  # noqa: F401
from ..commands.suite import cli as _suite  # noqa: F401
from ..errors import CounterfairError
from . import models, rate, runs  # noqa: F401

try:
    add_plugin_commands()
except CounterfairError as _plugin_error:  # an expected error: one line, exit code 2 (as main() gives)
    print(f"error: {_plugin_error}", file=sys.stderr)
    sys.exit(2)
order_commands()

__all__ = ["app", "main"]
