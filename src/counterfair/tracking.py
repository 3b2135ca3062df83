"""Moved to :mod:`counterfair.views.tracking` (importable from here for one release)."""

from ._moved import alias

alias(__name__, "counterfair.views.tracking")
