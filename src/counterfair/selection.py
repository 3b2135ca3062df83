"""Text selection as paper 000 §4.1: texts of 10-45 words without URLs that reference the attribute (probability
at least 0.8) and are not toxic (score at most 0.1). The rules apply in that order; each one's count is the texts it
removed that the rules before it had kept.

The attribute probability comes from a column of the data (the paper used Civil Comments' annotator shares) or from
any detector (``keyword``, ``mlp:DIR``, ``llm``); the toxicity from a column or from a classifier under ``classifier``.
"""

from __future__ import annotations

import re
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from .errors import ConfigError, InputError
from .io import cell_text, read_table, require_columns
from .lexicons.attributes import load_attribute

URL = re.compile(r"(?i)\b(?:https?://|www\.)\S+|\b[\w-]+\.(?:com|org|net|gov|edu|ly|io)(?:/\S*)?\b")


def _scores(frame: pd.DataFrame, column: str, origin: str) -> np.ndarray:
    values = pd.to_numeric(frame[column], errors="coerce")
    if values.isna().any():
        row = int(np.flatnonzero(values.isna().to_numpy())[0])
        raise InputError(f"{origin}: column {column!r} row {row + 2} is not a number ({frame[column].iloc[row]!r})")
    return values.to_numpy(dtype=float)


class SelectionRules(TypedDict):
    """The rules a selection applied, in words (the words rule as its bounds)."""

    words: list[int]
    urls: str
    attribute: str
    toxicity: str


class SelectionReport(TypedDict):
    """What ``counterfair select`` kept, and how many texts each rule removed (in the order they ran)."""

    input: str
    texts: int
    kept: int
    removed: dict[str, int]
    rules: SelectionRules


def select_texts(
    source: Any,
    *,
    attribute: str,
    text_column: str = "text",
    attribute_column: str | None = None,
    detector: str = "keyword",
    llm: Any = None,
    toxicity_column: str | None = None,
    classifier: Any = None,
    positive_label: str | None = None,
    min_words: int = 10,
    max_words: int = 45,
    min_attribute: float = 0.8,
    max_toxicity: float = 0.1,
) -> tuple[pd.DataFrame, SelectionReport]:
    """The kept rows (every input column, plus ``words``, ``attribute_prob`` and ``toxicity``) and a report of how
    many each rule removed."""
    if toxicity_column is None and classifier is None:
        raise ConfigError("the toxicity rule needs --toxicity-column or --classifier")
    if min_words > max_words:
        raise ConfigError(f"--min-words {min_words} is above --max-words {max_words}")
    origin = str(source) if not isinstance(source, pd.DataFrame) else "DataFrame"
    frame = read_table(source)
    wanted = {text_column: "--text-column"}
    wanted |= {
        c: f"--{n}" for c, n in ((attribute_column, "attribute-column"), (toxicity_column, "toxicity-column")) if c
    }
    require_columns(frame, wanted, origin=origin)
    frame = frame.reset_index(drop=True)
    texts = [cell_text(v) or "" for v in frame[text_column].tolist()]
    frame = frame.assign(words=[len(t.split()) for t in texts])
    removed: dict[str, int] = {}
    keep = np.ones(len(frame), dtype=bool)

    def rule(name: str, passes: np.ndarray) -> None:
        removed[name] = int((keep & ~passes).sum())
        keep[:] = keep & passes

    rule("length", ((frame["words"] >= min_words) & (frame["words"] <= max_words)).to_numpy())
    rule("url", np.array([URL.search(t) is None for t in texts]))
    attr = load_attribute(attribute)  # an unknown attribute is an error even when a column gives the scores
    if attribute_column:
        attribute_prob = _scores(frame, attribute_column, origin)
    else:
        attribute_prob = _on_kept(texts, keep, _detector(detector, attr, llm))
    rule("attribute", np.nan_to_num(attribute_prob, nan=-1.0) >= min_attribute)
    if toxicity_column:
        toxicity = _scores(frame, toxicity_column, origin)
    else:
        toxicity = _on_kept(texts, keep, _toxicity(classifier, positive_label))
    rule("toxicity", np.nan_to_num(toxicity, nan=2.0) <= max_toxicity)
    kept = frame.assign(attribute_prob=attribute_prob, toxicity=toxicity)[keep].reset_index(drop=True)
    report: SelectionReport = {
        "input": origin,
        "texts": len(frame),
        "kept": int(keep.sum()),
        "removed": removed,
        "rules": {
            "words": [min_words, max_words],
            "urls": "none",
            "attribute": f"{attribute_column or detector} >= {min_attribute}",
            "toxicity": f"{toxicity_column or getattr(classifier, 'spec', classifier)} <= {max_toxicity}",
        },
    }
    return kept, report


def _on_kept(texts: list[str], keep: np.ndarray, score: Any) -> np.ndarray:
    """``score(texts)`` on the texts every earlier rule kept (the models run on no more than they must); NaN for the
    others."""
    out = np.full(len(texts), np.nan)
    todo = np.flatnonzero(keep)
    if todo.size:
        out[todo] = np.asarray(score()([texts[i] for i in todo]), dtype=float)
    return out


def _detector(spec: str, attribute: Any, llm: Any) -> Any:
    """A loader of the attribute detector's probabilities (loaded only when some text is left to score)."""

    def load() -> Any:
        from .detectors import load_detector

        return load_detector(spec, attribute, llm=llm).reference_proba

    return load


def _toxicity(classifier: Any, positive_label: str | None) -> Any:
    """A loader of the classifier's positive-label probability (loaded only when some text is left to score)."""

    def load() -> Any:
        from .classifiers import as_classifier
        from .labels import positive_index

        clf = as_classifier(classifier)
        index = positive_index(clf.labels, positive_label)
        return lambda texts: clf.predict_proba(texts)[:, index]

    return load
