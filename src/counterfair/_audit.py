"""Moved to :mod:`counterfair.core.audit` (importable from here for one release)."""

from ._moved import alias

alias(__name__, "counterfair.core.audit")
