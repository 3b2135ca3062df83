"""Moved to :mod:`counterfair.core.generate` and :mod:`counterfair.shell.generate` (importable from here for one
release)."""

from ._moved import alias

alias(__name__, "counterfair.core.generate", shell="counterfair.shell.generate")
