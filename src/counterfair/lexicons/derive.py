"""Derive a candidate word list for a new attribute (paper 000, App. B.1): a unigram naive Bayes classifier separates
texts labelled with the attribute from the rest, and the unigrams most strongly associated with the attribute's
class are proposed — to be filtered by hand, as the paper did, before they become an attribute file's ``ablation:``.

Association is naive Bayes's log-probability ratio ``log P(w | attribute) - log P(w | rest)`` (Laplace smoothing),
over words seen in at least ``min_count`` attribute texts, so a word met once does not top the list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..io import cell_text, read_table, require_columns

TOKEN_PATTERN = r"(?u)\b[^\W\d_][\w'-]*[^\W_]\b"  # words of two letters or more, inner apostrophes and hyphens kept


@dataclass
class Derived:
    terms: pd.DataFrame  # term, log_ratio, attribute_texts, other_texts
    attribute_texts: int
    other_texts: int
    removed: dict[str, int]

    def to_yaml(self, name: str) -> str:
        import yaml

        header = (
            f"# Candidate ablation terms for {name!r}, derived by naive Bayes from {self.attribute_texts} texts with\n"
            f"# the attribute and {self.other_texts} without (counterfair wordlist derive). Filter them by hand: the\n"
            "# list holds indirect references and words of the data set's topics, not only names of the attribute.\n"
        )
        return header + yaml.safe_dump({"name": name, "ablation": self.terms["term"].tolist()}, sort_keys=False)


def _positive(values: pd.Series, positive: str | None, threshold: float, origin: str, column: str) -> np.ndarray:
    if positive is not None:
        return (values.astype(str).str.strip() == positive).to_numpy()
    numbers = pd.to_numeric(values, errors="coerce")
    bad = numbers.isna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0]) + 2  # the header is line 1
        raise InputError(
            f"{origin}: column {column!r} row {row} is not a number ({values.iloc[row - 2]!r}); give --positive VALUE "
            "for a column of labels"
        )
    return (numbers > threshold).to_numpy()


def derive(
    source: Any,
    *,
    label_column: str,
    text_column: str = "text",
    positive: str | None = None,
    threshold: float = 0.5,
    toxicity_column: str | None = None,
    max_toxicity: float = 0.1,
    negatives: int | None = None,
    top: int = 20,
    min_count: int = 5,
    seed: int = 0,
) -> Derived:
    """The ``top`` unigrams of the attribute's class. ``label_column`` holds an attribute score (``> threshold``
    counts, as paper 000's annotator shares > 0.5) or labels (``positive`` names the attribute's). With
    ``toxicity_column`` only texts scoring at most ``max_toxicity`` are used (the paper's non-toxic subset);
    ``negatives`` samples that many of the other texts (the paper's "random sample of the rest")."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.naive_bayes import MultinomialNB

    origin = str(source) if not isinstance(source, pd.DataFrame) else "DataFrame"
    frame = read_table(source)
    wanted = {text_column: "--text-column", label_column: "--label-column"}
    if toxicity_column:
        wanted[toxicity_column] = "--toxicity-column"
    require_columns(frame, wanted, origin=origin)
    removed: dict[str, int] = {}
    if toxicity_column:
        toxic = pd.to_numeric(frame[toxicity_column], errors="coerce")
        keep = (toxic <= max_toxicity).to_numpy()
        removed["toxicity"] = int((~keep).sum())
        frame = frame[keep]
    texts = [cell_text(v) or "" for v in frame[text_column].tolist()]
    labels = _positive(frame[label_column], positive, threshold, origin, label_column)
    empty = np.array([not t.strip() for t in texts])
    removed["empty"] = int(empty.sum())
    texts = [t for t, e in zip(texts, empty, strict=True) if not e]
    labels = labels[~empty]
    if labels.sum() == 0 or labels.sum() == len(labels):
        which = "no" if labels.sum() == 0 else "every"
        raise InputError(f"{origin}: {which} text has the attribute (column {label_column!r}); naive Bayes needs both")
    rest = np.flatnonzero(~labels)
    if negatives is not None and negatives < rest.size:
        rng = np.random.default_rng(seed)
        chosen = np.sort(rng.choice(rest, negatives, replace=False))
        removed["not_sampled"] = int(rest.size - negatives)
        index = np.concatenate([np.flatnonzero(labels), chosen])
        texts = [texts[i] for i in index]
        labels = labels[index]
    vectorizer = CountVectorizer(lowercase=True, token_pattern=TOKEN_PATTERN, binary=True)
    counts = vectorizer.fit_transform(texts)
    model = MultinomialNB(alpha=1.0).fit(counts, labels.astype(int))
    ratio = model.feature_log_prob_[1] - model.feature_log_prob_[0]
    in_attribute = np.asarray(counts[labels].sum(axis=0)).ravel()
    in_rest = np.asarray(counts[~labels].sum(axis=0)).ravel()
    table = pd.DataFrame(
        {
            "term": vectorizer.get_feature_names_out(),
            "log_ratio": ratio,
            "attribute_texts": in_attribute,
            "other_texts": in_rest,
        }
    )
    table = table[table["attribute_texts"] >= min_count]
    table = table.sort_values(["log_ratio", "term"], ascending=[False, True]).head(top).reset_index(drop=True)
    return Derived(table, int(labels.sum()), int((~labels).sum()), removed)
