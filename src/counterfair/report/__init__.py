"""Moved to :mod:`counterfair.views.report` (importable from here for one release)."""

from .._moved import alias

alias(__name__, "counterfair.views.report", "plots", "evaluation")
