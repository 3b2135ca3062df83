"""Moved to :mod:`counterfair.core.methods` and :mod:`counterfair.shell.methods` (importable from here for one
release)."""

from ._moved import alias

alias(__name__, "counterfair.core.methods", shell="counterfair.shell.methods")
