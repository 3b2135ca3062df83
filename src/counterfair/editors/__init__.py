"""Editors: texts in, candidate counterfactuals out (:class:`EditorBase`; one list of candidates per input).

``counterfair.generate(texts, [AblationEditor("islam"), IdentitySwapEditor()])`` runs editor objects; method names
(``"llm"``) go through the filters and ranking of ``counterfair generate``. Every editor has one public name, its
class's; the method names of the command line are in ``counterfair.editors.registry``. Imports are lazy: nothing loads
until used.
"""

from __future__ import annotations

import warnings
from importlib import import_module
from typing import Any

_LAZY = {
    "EditorBase": ".base",
    "AblationEditor": ".wordlist",
    "SubstitutionEditor": ".wordlist",
    "IdentitySwapEditor": ".swap",
    "InflectedSwapEditor": ".inflected",
    "GenderSwapEditor": ".gender",
    "LLMRewriteEditor": ".llm_rewrite",
    "PolyjuiceEditor": ".polyjuice",
    "SynonymSwapEditor": ".flip",
    "MaskFillEditor": ".flip",
    "LLMFlipEditor": ".flip",
    "ExternalEditor": ".flip",
}
# the short names of an earlier release: one more release with a warning, then gone
_RENAMED = {"Ablation": "AblationEditor", "Substitution": "SubstitutionEditor", "IdentitySwap": "IdentitySwapEditor"}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _RENAMED:
        new = _RENAMED[name]
        warnings.warn(
            f"counterfair.editors.{name} is now {new} (one name per editor); the old name goes in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        name = new
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module 'counterfair.editors' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
