"""Moved to :mod:`counterfair.analysis.compare` (importable from here for one release)."""

from ._moved import alias

alias(__name__, "counterfair.analysis.compare")
