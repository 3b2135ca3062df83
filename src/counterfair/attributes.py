"""Moved to :mod:`counterfair.lexicons.attributes` (importable from here for one release)."""

from ._moved import alias

alias(__name__, "counterfair.lexicons.attributes")
