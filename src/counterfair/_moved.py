"""Old module paths kept for one release: importing one warns and hands out the module at its new place."""

from __future__ import annotations

import importlib
import sys
import types
import warnings
from typing import Any


def alias(old: str, new: str, *submodules: str, shell: str | None = None) -> None:
    """Make ``old`` (and ``old.sub`` for each of ``submodules``) the module ``new`` (``new.sub``), with a warning.
    With ``shell`` (the command's run-directory half, which left the core), ``old`` is a module that hands out the
    names of both."""
    moved = f"{new} and {shell}" if shell else new
    warnings.warn(
        f"{old} moved to {moved}; import it from there (the old path goes in the next release)",
        DeprecationWarning,
        stacklevel=3,
    )
    core = importlib.import_module(new)
    if shell is None:
        sys.modules[old] = core
    else:
        halves = (core, importlib.import_module(shell))
        both = types.ModuleType(old, core.__doc__)

        def lookup(name: str) -> Any:
            for half in halves:
                if hasattr(half, name):
                    return getattr(half, name)
            raise AttributeError(f"module {old!r} has no attribute {name!r}")

        both.__getattr__ = lookup  # type: ignore[method-assign]
        sys.modules[old] = both
    for sub in submodules:
        sys.modules[f"{old}.{sub}"] = importlib.import_module(f"{new}.{sub}")
