"""Sentence embeddings from a packaged sentence-transformers encoder (all-MiniLM-L6-v2 by default), loaded once per
process on the run's device: what the attribute detector's MLP, the training's allusion features and the LLM audit's
cosine similarity embed texts with."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

_ENCODERS: dict[str, Any] = {}


def encoder_named(name: str) -> Any:
    if name not in _ENCODERS:
        from sentence_transformers import SentenceTransformer

        from .models import get_model_info, quiet_loading, torch_device

        path = Path(name) if Path(name).exists() else get_model_info(name).path()
        with quiet_loading():
            _ENCODERS[name] = SentenceTransformer(str(path), device=torch_device())
    return _ENCODERS[name]


def embed(texts: Sequence[str], *, encoder: str = "all-minilm-l6-v2", batch_size: int = 64) -> np.ndarray:
    """Normalised sentence embeddings, ``(n, d)`` float32."""
    model = encoder_named(encoder)
    return np.asarray(
        model.encode(
            list(texts),
            batch_size=batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        ),
        dtype=np.float32,
    )
