"""Label helpers shared by audit, ctf and training: which label's probability is compared, and gold 0/1 labels."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .errors import ConfigError, InputError

#: label names (lower case, letters and digits only) that say "this is the positive class": toxic, hateful, 1, ...
POSITIVE_NAMES = frozenset(
    {"1", "true", "yes", "toxic", "toxicity", "severetoxic", "positive", "pos", "hateful", "hate", "hatespeech",
     "offensive", "abusive", "insult", "obscene", "bad", "label1", "spam", "unsafe"}
)  # fmt: skip
#: ... and names that say "this is the negative class": non-toxic, not hate, 0, ...
NEGATIVE_NAMES = frozenset(
    {"0", "false", "no", "nontoxic", "nottoxic", "negative", "neg", "nonhateful", "nothateful", "nothate",
     "notoffensive", "nonoffensive", "neutral", "normal", "clean", "notbad", "label0", "ham", "none", "ok", "safe"}
)  # fmt: skip


def _folded(label: str) -> str:
    return "".join(ch for ch in str(label).lower() if ch.isalnum())


def positive_index(labels: Sequence[str], positive: str | None) -> int:
    """The index of the label whose probability is compared: ``positive`` by name; else, of two labels, the one whose
    name says it is positive (``toxic``, ``1``, ``hate``, ``positive``, ...: :data:`POSITIVE_NAMES`) or the other of
    one whose name says it is negative (``non-toxic``, ``0``, ``nothate``, ...). Anything else — two unknown names,
    two positive-looking ones, more than two labels — is an error naming the labels and the option: the positive
    label is never guessed (one rule for every command)."""
    if positive is not None:
        if positive not in labels:
            raise ConfigError(f"the classifier has no label {positive!r}; its labels: {list(labels)}")
        return list(labels).index(positive)
    if len(labels) != 2:
        raise ConfigError(
            f"the classifier has {len(labels)} labels {list(labels)}; name the one to compare with --positive-label"
        )
    folded = [_folded(label) for label in labels]
    pos = [i for i, name in enumerate(folded) if name in POSITIVE_NAMES]
    neg = [i for i, name in enumerate(folded) if name in NEGATIVE_NAMES]
    if len(pos) == 1 and pos[0] not in neg:
        return pos[0]
    if not pos and len(neg) == 1:
        return 1 - neg[0]
    raise ConfigError(
        f"the classifier's labels {list(labels)} do not say which one is positive (toxic); name it with "
        "--positive-label (positive_label= in Python)"
    )


def binary_labels(frame: pd.DataFrame, column: str | None, origin: str) -> np.ndarray:
    """A gold 0/1 label per row from ``column`` (0/1, true/false, toxic/non-toxic, hateful/non-hateful, bad/not_bad,
    or a score in [0, 1] cut at 0.5, as Civil Comments' share of raters); NaN for every row when ``column`` is None. A
    missing or unreadable label, and a number outside [0, 1] (2, -1, inf: labels of more than two classes, or of
    another coding, which no cut at 0.5 can read), is an :class:`InputError` naming the row."""
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
            score = float(value)
        except ValueError:
            score = math.nan
        if not 0.0 <= score <= 1.0:  # NaN, inf and numbers of other codings (0/1/2, -1/1, 0/2) are no 0/1 label
            raise InputError(
                f"{origin}: row {row}: label {cell!r} in column {column!r} is not 0/1, true/false, toxic/non-toxic or "
                "a score in [0, 1]; recode a label of several classes or another coding (-1/1, 0/2) as 0/1 first"
            )
        out[row] = 1.0 if score >= 0.5 else 0.0  # a toxicity score
    return out


def checked_positive_index(classifier: Any, sample: str, positive: str | None) -> int:
    """:func:`positive_index` after one prediction: a function that does not declare its labels shows how many it
    has only when it first answers (cached, so the text is not predicted twice)."""
    classifier.predict_proba([sample])
    return positive_index(classifier.labels, positive)
