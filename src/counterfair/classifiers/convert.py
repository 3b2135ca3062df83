"""``as_classifier``: whatever the user has — a function, a scikit-learn estimator, a transformers pipeline or
model and tokenizer, a local directory, a Hugging Face hub id, a spec string — as a counterfair classifier.

Every classifier gets a signature that says what it runs, so that a run directory or a cache never mixes two
classifiers: a spec's version or file sha256; for Python objects a digest of their code and state (the function's
code, the values it closes over and the globals it names; a fitted estimator's parameters; a model's weights). When
part of that cannot be hashed, the signature says ``stable: False`` and why, and runs with it cannot be resumed.
"""

from __future__ import annotations

import hashlib
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..jsontypes import JSONObject
from .adapters import transformer_proba
from .base import CachedClassifier
from .kinds import ClassifierKind, find_kind, kind_for, spec_forms


def as_classifier(
    obj: Any, *, labels: Sequence[str] | None = None, name: str | None = None, batch_size: int | None = None
) -> CachedClassifier:
    """A counterfair classifier from ``obj``.

    * a function ``list[str] -> (n,) scores or (n, k) probabilities`` (``labels=`` names the classes; binary scores
      are the probability of the second label);
    * a fitted scikit-learn estimator or pipeline that takes raw texts (labels from ``classes_``);
    * a ``transformers`` text-classification pipeline, or a ``(model, tokenizer)`` pair;
    * any object with ``labels`` and ``predict_proba(texts)``;
    * a string: a spec the CLI takes (``profanity-check``, ``sklearn:PATH``, ``hf:DIR``, ...), a local transformers
      or spaCy directory, or a Hugging Face hub id (loaded with the user's cache and network settings);
    * a classifier made by this function, returned unchanged.

    ``batch_size``: texts per call (default: a spec's own, see :func:`~counterfair.classifiers.load_classifier`;
    64 for a Python object).
    """
    if labels is not None and len({str(label) for label in labels}) != len(list(labels)):
        raise ConfigError(f"labels= names a class twice: {list(labels)!r}")
    if batch_size is not None and (not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1):
        raise ConfigError(f"batch_size must be a whole number of at least 1, got {batch_size!r}")
    if isinstance(obj, CachedClassifier):
        if labels is not None:
            raise ConfigError("labels= cannot relabel an existing counterfair classifier")
        return obj
    if isinstance(obj, str | Path):
        return _from_string(str(obj), labels=labels, batch_size=batch_size)
    inner, signature = _wrap_object(obj, labels)
    spec = f"python:{name or signature.get('name') or type(obj).__name__}"
    return CachedClassifier(inner, spec=spec, batch_size=batch_size or 64, signature=signature, cli_spec=False)


def _from_string(text: str, *, labels: Sequence[str] | None, batch_size: int | None) -> CachedClassifier:
    if labels is not None:
        raise ConfigError(f"labels= applies to Python functions, not to the classifier spec {text!r}")
    if find_kind(text) is not None:
        return load_classifier(text, batch_size=batch_size)
    path = Path(text).expanduser()
    if path.is_dir():
        if (path / "config.json").exists():
            return load_classifier(f"hf:{path}", batch_size=batch_size)
        if (path / "meta.json").exists():
            return load_classifier(f"spacy:{path}", batch_size=batch_size)
        raise ConfigError(f"{path}: neither a transformers directory (config.json) nor a spaCy pipeline (meta.json)")
    if path.suffix in (".joblib", ".pkl", ".pickle") and path.is_file():
        return load_classifier(f"sklearn:{path}", batch_size=batch_size)
    if text.count("/") == 1 and " " not in text:
        return _from_hub(text, batch_size=batch_size)
    raise ConfigError(
        f"unknown classifier spec {text!r}: not a spec ({spec_forms()}), a directory, a saved scikit-learn model or a "
        "Hugging Face hub id (owner/name)"
    )


def _from_hub(repo_id: str, *, batch_size: int | None) -> CachedClassifier:
    """A hub id: the snapshot in the user's Hugging Face cache (downloaded first when the network is allowed)."""
    from ..models import hub_snapshot

    local = hub_snapshot(repo_id, what="Hugging Face model")
    clf = load_classifier(f"hf:{local}", batch_size=batch_size)
    clf.update_signature({"hub_id": repo_id, "revision": Path(local).name})
    return clf


def _wrap_object(obj: Any, labels: Sequence[str] | None) -> tuple[Any, JSONObject]:
    if _is_pipeline(obj):
        return _PipelineClassifier(obj), {"type": "transformers-pipeline", **_model_identity(obj.model)}
    if isinstance(obj, tuple) and len(obj) == 2 and hasattr(obj[0], "config"):
        return _ModelTokenizerClassifier(*obj), {"type": "transformers-model", **_model_identity(obj[0])}
    if hasattr(obj, "predict_proba") and hasattr(obj, "classes_"):
        names = [str(c) for c in (labels if labels is not None else obj.classes_)]
        return _EstimatorClassifier(obj, names), {"type": "sklearn-object", "name": type(obj).__name__, **_digest(obj)}
    if hasattr(obj, "predict_proba") and hasattr(obj, "labels"):
        return obj, {"type": "object", "name": type(obj).__name__, **_digest(obj)}
    if callable(obj):
        fn_name = getattr(obj, "__qualname__", type(obj).__name__)
        identity = {"type": "function", "name": fn_name, "given_labels": list(labels) if labels else None}
        return _FunctionClassifier(obj, labels), {**identity, **_function_digest(obj)}
    raise ConfigError(
        f"cannot make a classifier from a {type(obj).__name__}: pass a function, a scikit-learn estimator, a "
        "transformers pipeline, a (model, tokenizer) pair, an object with labels and predict_proba, or a spec string"
    )


# ---- identities ---------------------------------------------------------------------------------------------------


def _digest(obj: Any) -> JSONObject:
    """A digest of an object's state (joblib.hash); for a class pickle cannot find (defined in a function), its
    methods' code and its attributes; else ``stable: False`` with the reason."""
    import joblib

    try:
        return {"digest": joblib.hash(obj), "stable": True}
    except Exception:  # noqa: BLE001 - try the class's code and the object's attributes instead
        pass
    methods = {k: _code_parts(v.__code__) for k, v in vars(type(obj)).items() if isinstance(v, types.FunctionType)}
    try:
        attributes = {k: _state_of(v) for k, v in vars(obj).items()}
        return {"digest": joblib.hash([type(obj).__qualname__, methods, attributes]), "stable": True}
    except Exception as err:  # noqa: BLE001 - anything unpicklable: the identity is unknown, and said so
        return {"stable": False, "unstable_reason": f"{type(obj).__name__} cannot be hashed ({err})"}


def _code_parts(code: types.CodeType) -> list[Any]:
    parts: list[Any] = [code.co_code, code.co_names]
    for const in code.co_consts:
        parts.append(_code_parts(const) if isinstance(const, types.CodeType) else repr(const))
    return parts


def _function_digest(fn: Callable[..., Any]) -> JSONObject:
    """The function's code, the values it closes over and the globals it names (a model, a threshold)."""
    import joblib

    target = getattr(fn, "__func__", fn)
    code = getattr(target, "__code__", None)
    if code is None:  # a callable object: its class and state
        return _digest(fn)
    closure = [_state_of(cell.cell_contents) for cell in (target.__closure__ or ())]
    scope = getattr(target, "__globals__", {})
    named = sorted((n, _state_of(scope[n])) for n in _all_names(code) if n in scope)
    try:
        state = joblib.hash([_code_parts(code), closure, named])
    except Exception as err:  # noqa: BLE001 - anything unpicklable: the identity is unknown, and said so
        return {"stable": False, "unstable_reason": f"what {target.__qualname__} uses cannot be hashed ({err})"}
    bound = getattr(fn, "__self__", None)
    if bound is not None:  # a bound method: its object's state too
        other = _digest(bound)
        if not other["stable"]:
            return other
        state = hashlib.sha256(f"{state}{other['digest']}".encode()).hexdigest()
    return {"digest": state, "stable": True}


def _state_of(value: Any) -> Any:
    """What of a referenced value goes into a function's digest: a helper function's code, a module's or class's
    name, any other value itself (a model, a threshold, a word list)."""
    if isinstance(value, types.FunctionType):
        return _code_parts(value.__code__)
    if isinstance(value, types.ModuleType | type | types.BuiltinFunctionType):
        return getattr(value, "__name__", repr(value))
    return value


def _all_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _all_names(const)
    return names


def _model_identity(model: Any) -> JSONObject:
    """A transformers model: where it came from and a digest of its weights."""
    config = model.config
    digest = hashlib.sha256()
    for key, tensor in sorted(model.state_dict().items()):
        digest.update(key.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return {
        "name": str(getattr(config, "_name_or_path", "") or type(model).__name__),
        "revision": getattr(config, "_commit_hash", None),
        "digest": digest.hexdigest(),
        "stable": True,
    }


def _is_pipeline(obj: Any) -> bool:
    import sys

    if "transformers" not in sys.modules:  # a pipeline object means transformers is loaded: never import it to check
        return False
    from transformers import Pipeline

    return isinstance(obj, Pipeline)


# ---- adapters for Python objects ---------------------------------------------------------------------------------


class _FunctionClassifier:
    """A function ``list[str] -> (n,) or (n, k)``; labels from ``labels=``, the function's ``labels`` attribute, or
    ``"0" .. "k-1"``. In a two-input evaluation it receives ``(first, second)`` tuples."""

    accepts_pairs = True

    def __init__(self, fn: Callable[[list[str]], Any], labels: Sequence[str] | None) -> None:
        self.fn = fn
        declared = labels if labels is not None else getattr(fn, "labels", None)
        self._labels = [str(label) for label in declared] if declared is not None else None

    @property
    def labels(self) -> list[str]:
        return self._labels if self._labels is not None else ["0", "1"]

    def predict_proba(self, texts: Sequence[str]) -> Any:
        out = self.fn(list(texts))
        if self._labels is None:
            shape = np.shape(out)
            self._labels = [str(i) for i in range(shape[1] if len(shape) == 2 and shape[1] > 1 else 2)]
        return out


class _EstimatorClassifier:
    def __init__(self, estimator: Any, labels: list[str]) -> None:
        self.estimator = estimator
        self.labels = labels

    def predict_proba(self, texts: Sequence[str]) -> Any:
        return self.estimator.predict_proba(list(texts))


class _PipelineClassifier:
    """A transformers text-classification pipeline; every label's score, in the model's label order."""

    def __init__(self, pipeline: Any) -> None:
        self.pipeline = pipeline
        id2label = pipeline.model.config.id2label
        self.labels = [str(id2label[i]) for i in range(len(id2label))]

    def predict_proba(self, texts: Sequence[str]) -> Any:
        return self._scores(list(texts))

    def predict_proba_pairs(self, pairs: Sequence[tuple[str, str]]) -> Any:
        return self._scores([{"text": a, "text_pair": b} for a, b in pairs])

    def _scores(self, inputs: list[Any]) -> Any:
        out = self.pipeline(inputs, top_k=None, truncation=True)
        if inputs and isinstance(out, list) and out and isinstance(out[0], dict):
            out = [out]  # one input answered with its own list of label scores
        return [[{d["label"]: d["score"] for d in row}[label] for label in self.labels] for row in out]


class _ModelTokenizerClassifier:
    """A transformers sequence-classification model with its tokenizer (softmax over the logits)."""

    sorts_by_length = True  # padded per batch: handed texts of like length together

    def __init__(self, model: Any, tokenizer: Any) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        id2label = model.config.id2label
        self.labels = [str(id2label[i]) for i in range(len(id2label))]

    def predict_proba(self, texts: Sequence[str]) -> Any:
        return transformer_proba(self.model, self.tokenizer, list(texts), None, None, str(self.model.device))

    def predict_proba_pairs(self, pairs: Sequence[tuple[str, str]]) -> Any:
        firsts, seconds = [a for a, _ in pairs], [b for _, b in pairs]
        return transformer_proba(self.model, self.tokenizer, firsts, seconds, None, str(self.model.device))


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
