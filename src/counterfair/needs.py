"""What a command's options need beyond the core install, read from the registries, checked before any work.

:func:`needs` walks the options every command shares by name (``classifier``, ``methods``/``editor``, ``llm``,
``metrics``, ``detector``, ``ppl_model``, ``engine``, ``language``) and asks the registry of each choice which pip
extras it needs (:mod:`counterfair.extras`). :func:`require` raises one :class:`~counterfair.extras.MissingExtra`
naming every missing extra and the exact ``pip install 'counterfair[...]'`` line, then runs the editors' own
preflight checks (Debian's WordNet for the synonym editor). Every shell calls it first, so the command line and the
Python API refuse before reading the input or claiming the run directory; the in-memory verbs (``cf.audit``,
``cf.generate``, ...) call :func:`require_in_memory` before building a classifier or an editor.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from . import extras
from .language_registry import get_language


def llm_extras(spec: str | None) -> tuple[str, ...]:
    """The extras an LLM spec's backend needs: llama.cpp in process, transformers for ``hf:``, none for a server."""
    if not spec:
        return ()
    kind = spec.partition(":")[0]
    if kind in ("http", "https", "openai"):
        return ()
    if kind == "hf":
        return ("metrics",)
    return ("llm",)  # llamacpp:NAME, a bare name or a .gguf file


def classifier_extras(spec: Any) -> tuple[str, ...]:
    """The extras a classifier spec's kind needs (a classifier object, or a spec no kind claims: none; loading it
    names the forms, and the kind a path looks like: "did you mean sklearn:model.joblib?")."""
    if not isinstance(spec, str) or not spec:
        return ()
    from .classifiers.kinds import find_kind

    found = find_kind(spec)
    if found is None:
        return ()
    kind, _ = found
    if kind.name == "llm-classifier":
        return llm_extras(spec.partition(":")[2])
    return kind.extras


def needs(options: Any, given: frozenset[str] = frozenset()) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(what needs it, its extras) for every choice in ``options`` that needs an extra; ``given`` names the options
    the caller passed as objects (a built classifier, editor or LLM), whose specs are not used."""

    def get(name: str) -> Any:
        return None if name in given else getattr(options, name, None)

    spec = get("classifier")
    if isinstance(spec, str):
        yield f"classifier {spec!r}", classifier_extras(spec)
    from .detectors import DETECTORS_WITH_LLM
    from .editors.registry import editor_spec

    editors = list(get("methods") or []) + ([get("editor")] if isinstance(get("editor"), str) else [])
    for name in editors:
        editor = editor_spec(str(name))
        yield f"the {editor.name} editor", editor.extras
        if editor.needs_llm:
            yield f"the {editor.name} editor's LLM {get('llm')!r}", llm_extras(get("llm"))
        scored = get("score_methods")
        if editor.sampled or (scored is not None and ("all" in scored or editor.name in scored)):
            yield f"the BERTScore filter on the {editor.name} editor's candidates", ("metrics",)
    metrics = get("metrics")
    if isinstance(metrics, list | tuple):
        from .metrics.cards import CARDS

        for metric in metrics:
            card = CARDS.get(str(metric))
            if card is not None:
                yield f"metric {card.name}", card.extras
        if "text_quality" in metrics and "llm" not in given:
            yield f"metric text_quality's judge {get('judge_llm')!r}", llm_extras(get("judge_llm"))
    detector = get("detector")
    if isinstance(detector, str) and detector.startswith("mlp"):
        yield f"detector {detector!r}", ("metrics",)
    elif detector in DETECTORS_WITH_LLM:
        yield f"the {detector} detector", llm_extras(get("llm"))
    if get("ppl_model") and not hasattr(options, "metrics"):  # evaluate: only with the perplexity metric (above)
        yield f"perplexity with {get('ppl_model')!r}", ("metrics",)
    if get("engine") == "ray":
        yield "--engine ray", ("ray",)
    language = get("language")
    extra = get_language(language).extra if isinstance(language, str) else None
    if extra:
        yield f"--language {language}", (extra,)


def require(options: Any, **objects: Any) -> None:
    """Refuse, before any work, options that need an extra that is not installed or data an editor lacks.
    ``objects``: what the caller passed built (``classifier=clf``, ``editor=ed``, ``llm=judge``; None: not passed)."""
    given = frozenset(name for name, value in objects.items() if value is not None)
    extras.check(needs(options, given))
    from .editors.registry import editor_spec

    editor = None if "editor" in given else getattr(options, "editor", None)
    for name in [*(getattr(options, "methods", None) or []), editor]:
        if isinstance(name, str):
            preflight = editor_spec(name).preflight
            if preflight is not None:
                preflight()


def require_in_memory(kind: Any, options: Mapping[str, Any], **objects: Any) -> None:
    """The in-memory verbs' check (``cf.generate(texts, ["llm"])``, ``cf.audit(texts, "hf:DIR")``), before anything
    is built or read: ``options`` as the verb will pass them to its options dataclass ``kind``; ``objects`` what the
    verb takes as a spec or an object (``classifier``, ``editor``): a string is checked as a spec, an object counts as
    given."""
    import dataclasses
    from types import SimpleNamespace

    from .records import make_options

    fields = {f.name for f in dataclasses.fields(kind)}
    specs = {name: value for name, value in objects.items() if isinstance(value, str)}
    built = {name: value for name, value in objects.items() if value is not None and not isinstance(value, str)}
    # a built object stands in its field by a name (the options' own checks see it given; needs() skips it)
    named = {
        k: getattr(v, "spec", None) or f"python:{type(v).__name__}"
        for k, v in built.items()
        if k in fields and k not in options
    }
    opts = make_options(kind, {**options, **named, **{k: v for k, v in specs.items() if k in fields}})
    beside = {k: v for k, v in specs.items() if k not in fields}  # a spec the options do not hold (ctf's classifier)
    require(SimpleNamespace(**{**vars(opts), **beside}) if beside else opts, **built)
