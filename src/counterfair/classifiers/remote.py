"""The classifier stage on an engine's workers (:mod:`counterfair.engine`: a Ray cluster): each worker builds the
classifier its spec names once (a model loads once per Ray actor) and predicts the batches sent to it; the driver
validates, caches and stores what comes back exactly as for a local call, so the outputs are the local engine's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class ClassifierWorker:
    """Predicts batches with the classifier ``spec`` names (built on first use in the worker's process)."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self._inner: Any = None

    def __call__(self, batch: Sequence[Any]) -> np.ndarray:
        from .base import pair_proba
        from .kinds import kind_for

        if self._inner is None:
            kind, argument = kind_for(self.spec)
            self._inner, _ = kind.build(argument, self.spec)
        pairs = bool(batch) and not isinstance(batch[0], str)
        raw = pair_proba(self._inner, list(batch), self.spec) if pairs else self._inner.predict_proba(list(batch))
        return np.asarray(raw, dtype=float)
