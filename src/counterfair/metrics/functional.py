"""Counterfactual metrics as pure functions over arrays.

Probabilities are ``(n, k)`` arrays of finite values; callers drop rows a classifier could not score
before calling (and give them a status). Token arguments are lists of token lists from
:func:`counterfair.text.tokenize_batch`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from rapidfuzz.distance import Levenshtein

ArrayLike = Any


def _proba(proba: ArrayLike, name: str = "proba") -> np.ndarray:
    arr = np.asarray(proba, dtype=float)
    if arr.ndim != 2 or arr.shape[1] < 2:
        raise ValueError(f"{name} must have shape (n, k) with k >= 2, got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} holds NaN or infinite values; drop those rows first")
    return arr


def predicted_labels(proba: ArrayLike, *, threshold: float | None = None) -> np.ndarray:
    """Index of the predicted label per row: argmax, or for binary ``p[:, 1] >= threshold``."""
    arr = _proba(proba)
    if threshold is None:
        return arr.argmax(axis=1)
    if arr.shape[1] != 2:
        raise ValueError("a threshold applies to binary classifiers only")
    return (arr[:, 1] >= threshold).astype(int)


def flipped(proba_orig: ArrayLike, proba_cf: ArrayLike, *, threshold: float | None = None) -> np.ndarray:
    """THE flip, used by evaluate, audit, feedback and the classifier-guided editors: per pair, did the predicted
    label change from original to counterfactual? (CheckList's INV test fails exactly on these pairs.)"""
    return predicted_labels(proba_orig, threshold=threshold) != predicted_labels(proba_cf, threshold=threshold)


def flipped_one(proba_orig: ArrayLike, proba_cf: ArrayLike) -> bool:
    """:func:`flipped` for one original and one counterfactual probability vector; ``False`` when either holds NaN
    (a classifier that gave no score changed nothing we can see)."""
    a, b = np.atleast_2d(np.asarray(proba_orig, dtype=float)), np.atleast_2d(np.asarray(proba_cf, dtype=float))
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return False
    return bool(flipped(a, b)[0])


def score_flipped(score_orig: ArrayLike, score_cf: ArrayLike, threshold: float) -> np.ndarray:
    """:func:`flipped` for one label's score against a threshold (the audit's ``--threshold``): the prediction is
    that label when its score is at least ``threshold``. Pairs with a NaN score are ``False`` (callers mark them)."""
    a, b = np.asarray(score_orig, dtype=float), np.asarray(score_cf, dtype=float)
    return np.isfinite(a) & np.isfinite(b) & ((a >= threshold) != (b >= threshold))


def flip_rate(pred_orig: ArrayLike, pred_cf: ArrayLike) -> float:
    """Share of pairs whose predicted label changed (CEval's FR), in [0, 1]."""
    a, b = np.asarray(pred_orig), np.asarray(pred_cf)
    if a.shape != b.shape:
        raise ValueError(f"label arrays differ in shape: {a.shape} vs {b.shape}")
    if a.size == 0:
        raise ValueError("flip rate of zero pairs is undefined")
    return float(np.mean(a != b))


def contrast_labels(proba_orig: ArrayLike, *, rule: str = "second") -> np.ndarray:
    """The label a counterfactual should move toward, per row.

    Binary: the label not predicted for the original. More classes: ``rule="second"`` takes the second
    most probable label (as paper 002 does); ``rule="least"`` the least probable (as CEval's code does).
    """
    arr = _proba(proba_orig, "proba_orig")
    order = np.argsort(-arr, axis=1, kind="stable")
    if arr.shape[1] == 2 or rule == "second":
        return order[:, 1]
    if rule == "least":
        return order[:, -1]
    raise ValueError(f"unknown contrast rule {rule!r}; use 'second' or 'least'")


def prob_change(proba_orig: ArrayLike, proba_cf: ArrayLike, contrast: ArrayLike | None = None) -> np.ndarray:
    """CEval's probability change: ``P(c | x') - P(c | x)`` for the contrast label ``c``, in [-1, 1]."""
    a, b = _proba(proba_orig, "proba_orig"), _proba(proba_cf, "proba_cf")
    if a.shape != b.shape:
        raise ValueError(f"probability arrays differ in shape: {a.shape} vs {b.shape}")
    target = contrast_labels(a) if contrast is None else np.asarray(contrast, dtype=int)
    rows = np.arange(a.shape[0])
    return b[rows, target] - a[rows, target]


def token_distances(
    orig_tokens: Sequence[Sequence[str]], cf_tokens: Sequence[Sequence[str]]
) -> tuple[np.ndarray, np.ndarray]:
    """Word Levenshtein distance per pair, raw and divided by the original's token count."""
    if len(orig_tokens) != len(cf_tokens):
        raise ValueError("orig_tokens and cf_tokens differ in length")
    raw = np.array([Levenshtein.distance(a, b) for a, b in zip(orig_tokens, cf_tokens, strict=True)], dtype=float)
    lengths = np.array([len(a) for a in orig_tokens], dtype=float)
    if (lengths == 0).any():
        raise ValueError("an original text has no tokens; normalised distance is undefined")
    return raw, raw / lengths


def diversity(
    cf1_tokens: Sequence[Sequence[str]],
    cf2_tokens: Sequence[Sequence[str]],
    orig_lengths: Sequence[int],
) -> tuple[np.ndarray, np.ndarray]:
    """Distance between two counterfactuals of the same source, raw and divided by the original's length.

    The divisor follows CEval's paper (length of the original); CEval's released code divides by the
    length of the first counterfactual instead.
    """
    if not len(cf1_tokens) == len(cf2_tokens) == len(orig_lengths):
        raise ValueError("cf1_tokens, cf2_tokens and orig_lengths differ in length")
    raw = np.array([Levenshtein.distance(a, b) for a, b in zip(cf1_tokens, cf2_tokens, strict=True)], dtype=float)
    lengths = np.asarray(orig_lengths, dtype=float)
    if (lengths == 0).any():
        raise ValueError("an original text has no tokens; normalised diversity is undefined")
    return raw, raw / lengths


def perplexity_from_nll(nll_sum: ArrayLike, n_tokens: ArrayLike) -> np.ndarray:
    """``exp(total negative log-likelihood / number of scored tokens)``, per text."""
    nll = np.asarray(nll_sum, dtype=float)
    count = np.asarray(n_tokens, dtype=float)
    if (count <= 0).any():
        raise ValueError("perplexity needs at least one scored token per text")
    return np.exp(nll / count)


def bleu_metric() -> Any:
    """The sacrebleu BLEU object used everywhere: sentence level, ``exp`` smoothing, effective order."""
    from sacrebleu.metrics.bleu import BLEU

    return BLEU(smooth_method="exp", effective_order=True)


def bleu_signature() -> str:
    """sacrebleu's signature of :func:`bleu_metric` (it is only known after scoring one pair)."""
    bleu = bleu_metric()
    bleu.sentence_score("a", ["a"])
    return str(bleu.get_signature())


def sentence_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """sacrebleu sentence BLEU of each hypothesis against its one reference, on 0–1.

    ``exp`` smoothing is the NIST geometric sequence: the k-th n-gram order with no match gets precision
    ``1 / (2**k * total)``. Effective order ignores orders longer than the hypothesis.
    """
    if len(hypotheses) != len(references):
        raise ValueError("hypotheses and references differ in length")
    bleu = bleu_metric()
    scores = np.array([bleu.sentence_score(h, [r]).score / 100.0 for h, r in zip(hypotheses, references, strict=True)])
    return np.clip(scores, 0.0, 1.0)  # exp(log(...)) can land a rounding error above 1


#: values drawn per batch of bootstrap resamples (#47: the batches were 4x larger and made the peak of an audit's
#: last phase, ~100 MB above its blocks' at 200,000 texts)
BOOTSTRAP_BATCH_VALUES = 1_000_000


def bootstrap_ci(
    values: ArrayLike,
    *,
    statistic: Callable[..., Any] = np.mean,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap CI of ``statistic`` via :func:`scipy.stats.bootstrap`.

    ``(nan, nan)`` for fewer than two finite values; ``(v, v)`` when all values equal ``v``. ``statistic``
    must accept an ``axis`` keyword (vectorised), as numpy reductions do.
    """
    from scipy.stats import bootstrap

    data = np.ascontiguousarray(values, dtype=float)  # no copy of a contiguous float array
    finite = np.isfinite(data)
    if not finite.all():  # a copy only when there is something to leave out (9.5 million changes are 76 MB)
        data = data[finite]
    del finite
    if data.size < 2:
        return (math.nan, math.nan)
    if np.all(data == data[0]):
        value = float(statistic(data))
        return (value, value)
    result = bootstrap(
        (data,),
        statistic,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method="percentile",
        vectorized=True,
        # resamples drawn in batches of about a million values (8 MB of indices), not all at once: for 100k values
        # and 2000 resamples the all-at-once draw alone would take 3 GB (the interval does not depend on the batch:
        # the draws come from one generator in order, each resample's mean is its own row's)
        batch=max(1, BOOTSTRAP_BATCH_VALUES // data.size),
        rng=np.random.default_rng(seed),
    )
    return (float(result.confidence_interval.low), float(result.confidence_interval.high))


def cluster_bootstrap_ci(
    sums: ArrayLike,
    sizes: ArrayLike,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap CI of a mean over items that come in clusters (a text's pairs): each resample draws whole
    clusters with replacement and takes its items' mean (its clusters' ``sums`` over their ``sizes``).

    Items of one cluster are not independent (every pair of a text starts from the same original score), so drawing
    items one by one would give too narrow an interval. ``(nan, nan)`` for fewer than two clusters; ``(v, v)`` when
    every cluster's mean is ``v``. Memory: 24 bytes a cluster per resample, in batches of about 500,000 cluster draws
    (about 12 MB at once)."""
    total = np.ascontiguousarray(sums, dtype=float)
    size = np.ascontiguousarray(sizes, dtype=float)
    if total.shape != size.shape:
        raise ValueError(f"cluster_bootstrap_ci: {total.size} sums but {size.size} sizes")
    keep = np.isfinite(total) & (size > 0)
    if not keep.all():
        total, size = total[keep], size[keep]
    k = total.size
    if k < 2:
        return (math.nan, math.nan)
    means = total / size
    if np.all(means == means[0]):
        return (float(means[0]), float(means[0]))
    rng = np.random.default_rng(seed)
    stats = np.empty(n_resamples)
    batch = max(1, BOOTSTRAP_BATCH_VALUES // 2 // k)  # each resample's sums are its own row's: any batch, one result
    for start in range(0, n_resamples, batch):
        pick = rng.integers(0, k, size=(min(batch, n_resamples - start), k))
        stats[start : start + pick.shape[0]] = total[pick].sum(axis=1) / size[pick].sum(axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.percentile(stats, [100 * alpha, 100 * (1 - alpha)])
    return (float(low), float(high))


def summarize(
    values: ArrayLike, *, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0
) -> dict[str, float | int]:
    """n, mean, std, median, min, max and a bootstrap CI of the mean over the finite values."""
    data = np.asarray(values, dtype=float)
    data = data[np.isfinite(data)]
    if data.size == 0:
        return {
            "n": 0,
            "mean": math.nan,
            "std": math.nan,
            "median": math.nan,
            "min": math.nan,
            "max": math.nan,
            "ci_low": math.nan,
            "ci_high": math.nan,
        }
    low, high = bootstrap_ci(data, confidence=confidence, n_resamples=n_resamples, seed=seed)
    return {
        "n": int(data.size),
        "mean": float(data.mean()),
        "std": float(data.std(ddof=1)) if data.size > 1 else math.nan,
        "median": float(np.median(data)),
        "min": float(data.min()),
        "max": float(data.max()),
        "ci_low": low,
        "ci_high": high,
    }


def grouped_summary(
    values: ArrayLike,
    groups: Sequence[Any],
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[str, dict[str, float | int]]:
    """:func:`summarize` per group value (groups as strings, sorted)."""
    data = np.asarray(values, dtype=float)
    keys = np.asarray([str(g) for g in groups], dtype=object)
    if data.shape[0] != keys.shape[0]:
        raise ValueError("values and groups differ in length")
    return {
        str(key): summarize(data[keys == key], confidence=confidence, n_resamples=n_resamples, seed=seed)
        for key in sorted(set(keys.tolist()))
    }
