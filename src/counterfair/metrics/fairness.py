"""Fairness measures over scored counterfactual pairs, one definition each: the CTF gap (paper 001 §3.2) per text
and over a data set, its summary with a bootstrap interval, and the scoring of a pairs table (both scores, the
change, the flip at a threshold). The audit, ``ctf``, the gate and the comparison of two classifiers use these.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..summaries import GapReport
from .functional import bootstrap_ci, score_flipped


def ctf_gap(score_orig: Sequence[float] | np.ndarray, scores_cf: Sequence[Sequence[float] | np.ndarray]) -> float:
    """Mean over texts of the mean absolute score change over that text's counterfactuals.

    Texts without counterfactuals do not count. Raises ``ValueError`` when no text has one.
    """
    gaps = text_gaps(score_orig, scores_cf)
    finite = gaps[np.isfinite(gaps)]
    if finite.size == 0:
        raise ValueError("no text has a counterfactual: the CTF gap is undefined")
    return float(finite.mean())


def text_gaps(
    score_orig: Sequence[float] | np.ndarray, scores_cf: Sequence[Sequence[float] | np.ndarray]
) -> np.ndarray:
    """Per-text gap (NaN for a text with no counterfactual)."""
    orig = np.asarray(score_orig, dtype=float)
    if len(orig) != len(scores_cf):
        raise ValueError("score_orig and scores_cf differ in length")
    return np.array(
        [
            np.abs(np.asarray(cf, dtype=float) - o).mean() if len(cf) else math.nan
            for o, cf in zip(orig, scores_cf, strict=True)
        ]
    )


def group_rows(frame: pd.DataFrame, keys: str | list[str], *, sort: bool) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``frame`` grouped by ``keys`` as pandas' ``groupby(keys, sort=sort)`` iterates them (groups in
    sorted order or in order of first appearance, rows in their order within a group), without iterating pandas
    groups (a slice of every column per group: most of the time of a CTF breakdown over thousands of swap
    directions): the row order and the group bounds for ``np.split``."""
    codes = frame.groupby(keys, sort=sort).ngroup()
    kept = np.flatnonzero(codes.notna().to_numpy())  # a row whose key is missing is in no group, as in groupby
    numbers = codes.to_numpy()[kept].astype(np.int64)
    if numbers.size == 0:
        return kept, np.empty(0, dtype=np.int64)  # no group: np.split gives one empty part
    return kept[np.argsort(numbers, kind="stable")], np.cumsum(np.bincount(numbers))[:-1]


def adjacent_runs(keys: pd.Series) -> np.ndarray | None:
    """Where each key's run of rows starts (as bounds for ``np.split``) when every key's rows are next to each other
    and no key is missing, else None: then grouping by the key in order of first appearance (``groupby(sort=False)``)
    is the rows in their order, cut at those bounds, with no sort and no reordered copy."""
    codes, _ = pd.factorize(keys)  # numbered in order of first appearance
    if codes.size == 0 or (codes < 0).any():
        return None
    steps = np.diff(codes)
    if ((steps != 0) & (steps != 1)).any():
        return None
    return np.flatnonzero(steps) + 1


def _first_number(values: np.ndarray) -> float:
    """The first value that is not NaN (``groupby(...).first()``), NaN if none."""
    finite = values[~np.isnan(values)]
    return float(finite[0]) if finite.size else math.nan


def text_gap_values(pairs: pd.DataFrame) -> np.ndarray:
    """Each text's CTF gap in a pairs table (``input_id``, ``score_orig``, ``score_cf``), texts in order of first
    appearance (NaN for a text none of whose counterfactuals has a score)."""
    bounds = adjacent_runs(pairs["input_id"])
    if bounds is None:
        order, bounds = group_rows(pairs, "input_id", sort=False)
        orig_values, cf_values = pairs["score_orig"].to_numpy(float)[order], pairs["score_cf"].to_numpy(float)[order]
    else:  # each text's swaps next to each other, as they are made: the columns as they are, no reordered copies
        orig_values, cf_values = pairs["score_orig"].to_numpy(float), pairs["score_cf"].to_numpy(float)
    score_orig = np.array([_first_number(part) for part in np.split(orig_values, bounds)])
    # views into one array, not lists of Python floats (32 bytes a swap, 300 MB at 9.6 M swaps: #47's ctf at 200k)
    return text_gaps(score_orig, np.split(cf_values, bounds))  # the one definition of the CTF gap


def gap_entry(per_text: np.ndarray, pairs: int, mean_signed_change: float, *, seed: int, n_resamples: int) -> GapReport:
    """A CTF gap from its texts' gaps (:func:`text_gap_values`), its pair count and mean signed change: the gap, its
    bootstrap CI over texts and the counts; no value (and no mean signed change) for no pair."""
    if pairs == 0:
        return GapReport()
    finite = per_text[np.isfinite(per_text)]
    if finite.size == 0:
        raise ValueError("no text has a counterfactual: the CTF gap is undefined")
    low, high = bootstrap_ci(per_text, n_resamples=n_resamples, seed=seed)
    return GapReport(
        value=float(finite.mean()),
        texts=int(per_text.size),
        pairs=pairs,
        ci_low=low,
        ci_high=high,
        mean_signed_change=mean_signed_change,
    )


def gap_summary(pairs: pd.DataFrame, *, seed: int, n_resamples: int) -> GapReport:
    """The CTF gap of a pairs table (one row per swap: ``input_id``, ``score_orig``, ``score_cf``, ``diff``) with its
    bootstrap CI over texts, its counts and the mean signed change; ``ctf_gap`` None for no pair."""
    if pairs.empty:
        return gap_entry(np.empty(0), 0, math.nan, seed=seed, n_resamples=n_resamples)
    mean_change = float(pairs["diff"].mean())
    return gap_entry(text_gap_values(pairs), len(pairs), mean_change, seed=seed, n_resamples=n_resamples)


def with_scores(pairs: pd.DataFrame, score: dict[str, float], threshold: float) -> pd.DataFrame:
    """``pairs`` with the score columns from ``score`` (text -> the positive label's probability): both scores,
    ``diff``, ``flipped`` and ``status`` (a NaN from the classifier keeps the pair, marked, out of aggregates). One
    definition for the audit and for re-scored pair sets."""
    out = pairs.copy()
    out["score_orig"] = pd.Series([score[t] for t in out["source_text"]], index=out.index, dtype=float)
    out["score_cf"] = pd.Series([score[t] for t in out["cf_text"]], index=out.index, dtype=float)
    out["diff"] = out["score_cf"] - out["score_orig"]
    scored = out["diff"].notna()
    flipped = pd.Series(score_flipped(out["score_orig"], out["score_cf"], threshold), index=out.index)
    out["flipped"] = flipped.astype(object).where(scored, np.nan)
    out["status"] = np.where(scored, "ok", "partial:classifier_returned_nan")
    return out


# ------------------------------------------------------------------------------------------------ labelled data
# The unintended-bias metrics on labelled data: Borkan et al. (2019), "Nuanced Metrics for Measuring Unintended Bias
# with Real Data for Text Classification" (subgroup, BPSN and BNSP AUC, their generalized mean and the Jigsaw final
# metric), and Dixon et al. (2018), "Measuring and Mitigating Unintended Bias in Text Classification" (pinned AUC and
# the false positive / false negative equality differences).

POWER = -5.0  # the generalized mean's power (Borkan et al. 2019; the Jigsaw competition)
OVERALL_WEIGHT = 0.25  # the final metric: 0.25 * overall AUC + 0.75 * mean of the three generalized means


def auc(labels: Sequence[Any] | np.ndarray, scores: Sequence[float] | np.ndarray) -> float | None:
    """ROC AUC (ties count one half, as scikit-learn's ``roc_auc_score``): the Mann-Whitney U over the positives'
    average ranks. ``None`` when the rows lack positives or negatives."""
    from scipy.stats import rankdata

    y = np.asarray(labels, dtype=bool)
    s = np.asarray(scores, dtype=float)
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = rankdata(s)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def bias_subsets(labels: np.ndarray, member: np.ndarray) -> dict[str, np.ndarray]:
    """The rows each per-group AUC is computed on (boolean masks): ``subgroup_auc`` the texts that mention the group;
    ``bpsn_auc`` background positives with subgroup negatives; ``bnsp_auc`` background negatives with subgroup
    positives."""
    y, m = np.asarray(labels, dtype=bool), np.asarray(member, dtype=bool)
    return {"subgroup_auc": m, "bpsn_auc": (~m & y) | (m & ~y), "bnsp_auc": (~m & ~y) | (m & y)}


def pinned_rows(member: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Row indices of Dixon et al.'s pinned set: the group's texts and as many texts drawn at random from all."""
    own = np.flatnonzero(member)
    return np.concatenate([own, rng.choice(member.size, size=own.size, replace=False)]) if own.size else own


def power_mean(values: Sequence[float | None], p: float = POWER) -> float | None:
    """The generalized (power) mean ``(mean(v ** p)) ** (1 / p)`` of the values that exist; None when none does."""
    finite = np.array([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if finite.size == 0:
        return None
    if np.any(finite <= 0):
        return 0.0  # a negative power of 0 is infinite: the mean is pulled to 0
    return float(np.mean(finite**p) ** (1 / p))


def final_metric(overall_auc: float | None, means: Sequence[float | None]) -> float | None:
    """The Jigsaw Unintended Bias competition's score: 0.25 * overall AUC + 0.75 * the mean of the generalized means
    of subgroup, BPSN and BNSP AUC."""
    if overall_auc is None or any(m is None for m in means):
        return None
    return float(OVERALL_WEIGHT * overall_auc + (1 - OVERALL_WEIGHT) * np.mean(np.asarray(means, dtype=float)))


def error_rates(labels: np.ndarray, predicted: np.ndarray) -> tuple[float | None, float | None]:
    """(false positive rate, false negative rate); None where the rows lack negatives or positives."""
    y, pred = np.asarray(labels, dtype=bool), np.asarray(predicted, dtype=bool)
    negatives, positives = int((~y).sum()), int(y.sum())
    fpr = float((pred & ~y).sum() / negatives) if negatives else None
    fnr = float((~pred & y).sum() / positives) if positives else None
    return fpr, fnr


def equality_differences(
    labels: np.ndarray, predicted: np.ndarray, members: Mapping[str, np.ndarray]
) -> tuple[float | None, float | None]:
    """Dixon et al.'s false positive and false negative equality differences: the sum over groups of |FPR − FPR_g|
    and of |FNR − FNR_g| (groups without negatives, or without positives, left out of that sum)."""
    fpr, fnr = error_rates(labels, predicted)
    fped = fned = 0.0
    for member in members.values():
        g_fpr, g_fnr = error_rates(labels[member], predicted[member])
        fped += abs(fpr - g_fpr) if fpr is not None and g_fpr is not None else 0.0
        fned += abs(fnr - g_fnr) if fnr is not None and g_fnr is not None else 0.0
    return (fped if fpr is not None else None, fned if fnr is not None else None)


def wilson(successes: int, n: int) -> tuple[float | None, float | None]:
    """Wilson's 95 % interval of a proportion ``successes / n`` (a flip rate, an accuracy); ``(None, None)`` for
    ``n == 0``."""
    if n == 0:
        return (None, None)
    from scipy.stats import binomtest

    interval = binomtest(successes, n).proportion_ci(confidence_level=0.95, method="wilson")
    return (float(interval.low), float(interval.high))
