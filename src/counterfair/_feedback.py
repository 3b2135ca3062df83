"""Moved to :mod:`counterfair.core.feedback` and :mod:`counterfair.shell.feedback` (importable from here for one
release)."""

from ._moved import alias

alias(__name__, "counterfair.core.feedback", shell="counterfair.shell.feedback")
