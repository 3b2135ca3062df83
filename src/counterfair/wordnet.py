"""Moved to :mod:`counterfair.lexicons.wordnet` (importable from here for one release)."""

from ._moved import alias

alias(__name__, "counterfair.lexicons.wordnet")
