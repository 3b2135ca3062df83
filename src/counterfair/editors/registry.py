"""The one editor registry: every editor a command can name, built from one context.

``generate`` and ``audit`` (``ablation``, ``substitution``, ``swap``, ``llm``, ``polyjuice``) and ``feedback``
(``synonym``, ``mask_fill``, ``llm_flip``, ``llm_flip_loop``, ``external:PATH``) build their editors here, so a name
means the same editor everywhere and the conformance tests can walk every registered editor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from .base import EditorBase


@dataclass
class EditorContext:
    """What editors are built from. ``llm`` is called on first need, so editors without an LLM never load one;
    ``classifier`` is the classifier a classifier-guided editor tries to flip."""

    attribute: Any = "islam"
    identities: Any = None
    guard: str | None = "spacy"
    llm: Callable[[], Any] | None = None
    classifier: Any = None
    seed: int = 0
    label_names: dict[str, str] | None = None
    rewrite: dict[str, Any] = field(default_factory=dict)  # LLMRewriteEditor options: style, instruction, n, ...
    polyjuice_lm: Callable[[], Any] | None = None  # the causal LM trained on Polyjuice's format

    def need_llm(self, name: str) -> Any:
        if self.llm is None:
            raise ConfigError(f"the {name} editor needs an LLM (--llm)")
        return self.llm()

    def need_classifier(self, name: str) -> Any:
        if self.classifier is None:
            raise ConfigError(f"the {name} editor needs the classifier it tries to flip (--classifier)")
        return self.classifier


def _ablation(ctx: EditorContext, arg: str) -> EditorBase:
    from .wordlist import AblationEditor

    return AblationEditor(ctx.attribute)


def _substitution(ctx: EditorContext, arg: str) -> EditorBase:
    from .wordlist import SubstitutionEditor

    return SubstitutionEditor(ctx.attribute)


def _swap(ctx: EditorContext, arg: str) -> EditorBase:
    """Identity swaps over ``ctx.identities``: an identity set (dixon50, names, nationality, a user's) or a gender
    pack, whose swaps follow English grammar (:mod:`counterfair.editors.gender`)."""
    from ..attributes import GenderSet, load_swap_set
    from .gender import GenderSwapEditor
    from .swap import IdentitySwapEditor

    found = load_swap_set(ctx.identities) if isinstance(ctx.identities, str) else ctx.identities
    if isinstance(found, GenderSet):
        return GenderSwapEditor(found)
    if found is not None and found.language != "en":
        from .inflected import InflectedSwapEditor

        return InflectedSwapEditor(found)
    return IdentitySwapEditor(found, guard=ctx.guard)


def _llm(ctx: EditorContext, arg: str) -> EditorBase:
    from ..attributes import load_attribute
    from .llm_rewrite import LLMRewriteEditor

    attribute = load_attribute(ctx.attribute) if isinstance(ctx.attribute, str) else ctx.attribute
    return LLMRewriteEditor(ctx.need_llm("llm"), attribute, seed=ctx.seed, **ctx.rewrite)


def _polyjuice(ctx: EditorContext, arg: str) -> EditorBase:
    from ..attributes import load_attribute
    from .polyjuice import PolyjuiceEditor

    if ctx.polyjuice_lm is None:
        raise ConfigError("the polyjuice editor needs a causal LM trained on Polyjuice's format (--polyjuice-model)")
    attribute = load_attribute(ctx.attribute) if isinstance(ctx.attribute, str) else ctx.attribute
    return PolyjuiceEditor(ctx.polyjuice_lm(), attribute, seed=ctx.seed)


def _synonym(ctx: EditorContext, arg: str) -> EditorBase:
    from .flip import SynonymSwapEditor

    return SynonymSwapEditor(ctx.need_classifier("synonym"))


def _mask_fill(ctx: EditorContext, arg: str) -> EditorBase:
    from .flip import MaskFillEditor

    clf = ctx.need_classifier("mask_fill")
    return MaskFillEditor(clf, ctx.need_llm("mask_fill"), label_names=ctx.label_names, seed=ctx.seed)


def _llm_flip(ctx: EditorContext, arg: str, *, in_loop: bool = False) -> EditorBase:
    from .flip import LLMFlipEditor

    clf = ctx.need_classifier("llm_flip")
    return LLMFlipEditor(clf, ctx.need_llm("llm_flip"), in_loop=in_loop, label_names=ctx.label_names, seed=ctx.seed)


def _external(ctx: EditorContext, arg: str) -> EditorBase:
    from .flip import ExternalEditor

    if not arg:
        raise ConfigError("the external editor needs a file: external:PATH")
    return ExternalEditor(arg)


#: name -> builder(context, argument after "name:")
EDITORS: dict[str, Callable[[EditorContext, str], EditorBase]] = {
    "ablation": _ablation,
    "substitution": _substitution,
    "swap": _swap,
    "llm": _llm,
    "polyjuice": _polyjuice,
    "synonym": _synonym,
    "mask_fill": _mask_fill,
    "llm_flip": _llm_flip,
    "llm_flip_loop": lambda ctx, arg: _llm_flip(ctx, arg, in_loop=True),
    "external": _external,
}


def build_editor(spec: str, context: EditorContext) -> EditorBase:
    """The editor named by ``spec`` (``name`` or ``name:argument``)."""
    name, _, arg = spec.partition(":")
    if name not in EDITORS:
        raise ConfigError(f"unknown editor {spec!r}; the editors are: {', '.join(EDITORS)} (external:PATH)")
    return EDITORS[name](context, arg)
