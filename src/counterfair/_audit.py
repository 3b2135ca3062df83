"""Moved to :mod:`counterfair.core.audit` and :mod:`counterfair.shell.audit` (importable from here for one
release)."""

from ._moved import alias

alias(__name__, "counterfair.core.audit", shell="counterfair.shell.audit")
