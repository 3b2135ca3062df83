"""Moved to :mod:`counterfair.core.ctf` and :mod:`counterfair.shell.ctf` (importable from here for one
release)."""

from ._moved import alias

alias(__name__, "counterfair.core.ctf", shell="counterfair.shell.ctf")
