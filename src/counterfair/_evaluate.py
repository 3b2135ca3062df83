"""Moved to :mod:`counterfair.core.evaluate` and :mod:`counterfair.shell.evaluate` (importable from here for one
release)."""

from ._moved import alias

alias(__name__, "counterfair.core.evaluate", shell="counterfair.shell.evaluate")
