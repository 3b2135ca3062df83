"""Editors: texts in, candidate counterfactuals out (:class:`EditorBase`; one list of candidates per input).

``counterfair.generate(texts, [Ablation("islam"), IdentitySwap()])`` runs editor objects; method names (``"llm"``)
go through the filters and ranking of ``counterfair generate``. Imports are lazy: nothing loads until used.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_LAZY = {
    "EditorBase": ".base",
    "AblationEditor": ".wordlist",
    "SubstitutionEditor": ".wordlist",
    "IdentitySwapEditor": ".swap",
    "LLMRewriteEditor": ".llm_rewrite",
    "Ablation": ".wordlist",
    "Substitution": ".wordlist",
    "IdentitySwap": ".swap",
}
_ALIASES = {"Ablation": "AblationEditor", "Substitution": "SubstitutionEditor", "IdentitySwap": "IdentitySwapEditor"}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), _ALIASES.get(name, name))
    raise AttributeError(f"module 'counterfair.editors' has no attribute {name!r}")
