"""Old module paths kept for one release: importing one warns and hands out the module at its new place."""

from __future__ import annotations

import importlib
import sys
import warnings


def alias(old: str, new: str, *submodules: str) -> None:
    """Make ``old`` (and ``old.sub`` for each of ``submodules``) the module ``new`` (``new.sub``), with a warning."""
    warnings.warn(
        f"{old} moved to {new}; import it from there (the old path goes in the next release)",
        DeprecationWarning,
        stacklevel=3,
    )
    sys.modules[old] = importlib.import_module(new)
    for sub in submodules:
        sys.modules[f"{old}.{sub}"] = importlib.import_module(f"{new}.{sub}")
