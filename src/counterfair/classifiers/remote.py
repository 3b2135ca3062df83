"""The classifier stage on an engine's workers (:mod:`counterfair.engine`: a Ray cluster): each worker builds the
classifier its spec names once (a model loads once per Ray actor) and predicts the batches sent to it; the driver
validates, caches and stores what comes back exactly as for a local call, so the outputs are the local engine's."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ConfigError
from .base import CachedClassifier, pair_proba
from .kinds import kind_for


def on_engine(clf: CachedClassifier, engine: str, address: str | None = None) -> CachedClassifier:
    """``clf`` predicting on an engine's workers (``ray``: each Ray actor builds the classifier from its spec once);
    the outputs are the local engine's. A classifier given as a Python object has no spec to rebuild: local only."""
    from ..engine import ENGINES

    if engine not in ENGINES:
        raise ConfigError(f"unknown engine {engine!r}; use {' or '.join(ENGINES)}")
    if engine != "local" and not clf.cli_spec:
        raise ConfigError(
            f"--engine {engine} rebuilds the classifier from its spec on every worker; {clf.spec} is a Python "
            "object: pass a spec (sklearn:PATH, hf:DIR, callable:FILE.py:FN, ...) or use the local engine"
        )
    from ..models import classifier_dtype

    clf.engine, clf.address = engine, address
    dtype = classifier_dtype()  # the driver's --dtype travels with the spec: a remote node has its own environment
    clf.worker_factory = functools.partial(ClassifierWorker, clf.spec, dtype) if engine != "local" else None
    return clf


class ClassifierWorker:
    """Predicts batches with the classifier ``spec`` names (built on first use in the worker's process), torch
    models in the driver's precision ``dtype``."""

    def __init__(self, spec: str, dtype: str = "float32") -> None:
        self.spec = spec
        self.dtype = dtype
        self._inner: Any = None

    def __call__(self, batch: Sequence[Any]) -> np.ndarray:
        if self._inner is None:
            from ..models import dtype_set

            kind, argument = kind_for(self.spec)
            with dtype_set(self.dtype):  # for this build only: the worker's process keeps its own environment
                self._inner, _ = kind.build(argument, self.spec)
        pairs = bool(batch) and not isinstance(batch[0], str)
        raw = pair_proba(self._inner, list(batch), self.spec) if pairs else self._inner.predict_proba(list(batch))
        return np.asarray(raw, dtype=float)
