"""Moved to :mod:`counterfair.analysis.placebo` (importable from here for one release)."""

from ._moved import alias

alias(__name__, "counterfair.analysis.placebo")
