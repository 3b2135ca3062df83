"""Label helpers shared by audit, ctf and training: which label's probability is compared, and gold 0/1 labels."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ConfigError, InputError


def positive_index(labels: Sequence[str], positive: str | None) -> int:
    """The index of the label whose probability is compared: ``positive`` by name, else the second of two labels;
    a classifier with more labels must be told which (one rule for audit, ctf and evaluate)."""
    if positive is not None:
        if positive not in labels:
            raise ConfigError(f"the classifier has no label {positive!r}; its labels: {list(labels)}")
        return list(labels).index(positive)
    if len(labels) != 2:
        raise ConfigError(
            f"the classifier has {len(labels)} labels {list(labels)}; name the one to compare with --positive-label"
        )
    return 1


def binary_labels(frame: pd.DataFrame, column: str | None, origin: str) -> np.ndarray:
    """A gold 0/1 label per row from ``column`` (0/1, true/false, toxic/non-toxic, hateful/non-hateful, bad/not_bad,
    or a score cut at 0.5); NaN for every row when ``column`` is None. A missing or unreadable label is an
    :class:`InputError` naming the row."""
    if column is None:
        return np.full(len(frame), math.nan)
    raw = frame[column]
    text = raw.astype(str).str.strip().str.lower()
    mapping = {
        "1": 1.0,
        "0": 0.0,
        "true": 1.0,
        "false": 0.0,
        "toxic": 1.0,
        "nontoxic": 0.0,
        "non-toxic": 0.0,
        "bad": 1.0,
        "not_bad": 0.0,
        "hateful": 1.0,  # HateCheck's label_gold
        "non-hateful": 0.0,
        "1.0": 1.0,
        "0.0": 0.0,
    }
    out = np.full(len(frame), math.nan)
    for row, (value, cell) in enumerate(zip(text, raw, strict=True)):
        if cell is None or (isinstance(cell, float) and math.isnan(cell)):
            raise InputError(f"{origin}: row {row} has no label in column {column!r}")
        if value in mapping:
            out[row] = mapping[value]
            continue
        try:
            out[row] = 1.0 if float(value) >= 0.5 else 0.0  # a toxicity score
        except ValueError:
            raise InputError(
                f"{origin}: row {row}: label {cell!r} in column {column!r} is not 0/1 or a score"
            ) from None
    return out


def checked_positive_index(classifier: Any, sample: str, positive: str | None) -> int:
    """:func:`positive_index` after one prediction: a function that does not declare its labels shows how many it
    has only when it first answers (cached, so the text is not predicted twice)."""
    classifier.predict_proba([sample])
    return positive_index(classifier.labels, positive)
