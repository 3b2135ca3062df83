"""Moved to :mod:`counterfair.views.console` (importable from here for one release)."""

from ._moved import alias

alias(__name__, "counterfair.views.console")
