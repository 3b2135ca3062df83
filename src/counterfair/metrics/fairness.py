"""Fairness measures over scored counterfactual pairs, one definition each: the CTF gap (paper 001 §3.2) per text
and over a data set, its summary with a bootstrap interval, and the scoring of a pairs table (both scores, the
change, the flip at a threshold). The audit, ``ctf``, the gate and the comparison of two classifiers use these.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .functional import bootstrap_ci, score_flipped


def ctf_gap(score_orig: Sequence[float] | np.ndarray, scores_cf: Sequence[Sequence[float]]) -> float:
    """Mean over texts of the mean absolute score change over that text's counterfactuals.

    Texts without counterfactuals do not count. Raises ``ValueError`` when no text has one.
    """
    gaps = text_gaps(score_orig, scores_cf)
    finite = gaps[np.isfinite(gaps)]
    if finite.size == 0:
        raise ValueError("no text has a counterfactual: the CTF gap is undefined")
    return float(finite.mean())


def text_gaps(score_orig: Sequence[float] | np.ndarray, scores_cf: Sequence[Sequence[float]]) -> np.ndarray:
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


def gap_summary(pairs: pd.DataFrame, *, seed: int, n_resamples: int) -> dict[str, Any]:
    """The CTF gap of a pairs table (one row per swap: ``input_id``, ``score_orig``, ``score_cf``, ``diff``) with its
    bootstrap CI over texts, its counts and the mean signed change; ``ctf_gap`` None for no pair."""
    if pairs.empty:
        return {"ctf_gap": None, "texts": 0, "pairs": 0, "ci_low": None, "ci_high": None}
    by_text = pairs.groupby("input_id", sort=False)
    score_orig = by_text["score_orig"].first().to_numpy(dtype=float)
    scores_cf = [group.tolist() for _, group in by_text["score_cf"]]
    per_text = text_gaps(score_orig, scores_cf)  # the one definition of the CTF gap
    low, high = bootstrap_ci(per_text, n_resamples=n_resamples, seed=seed)
    return {
        "ctf_gap": ctf_gap(score_orig, scores_cf),
        "texts": int(per_text.size),
        "pairs": len(pairs),
        "ci_low": low,
        "ci_high": high,
        "mean_signed_change": float(pairs["diff"].mean()),
    }


def with_scores(pairs: pd.DataFrame, score: dict[str, float], threshold: float) -> pd.DataFrame:
    """``pairs`` with the score columns from ``score`` (text -> the positive label's probability): both scores,
    ``diff``, ``flipped`` and ``status`` (a NaN from the classifier keeps the pair, marked, out of aggregates), and
    for rows with a placebo its score and change. One definition for the audit and for re-scored pair sets."""
    out = pairs.copy()
    out["score_orig"] = pd.Series([score[t] for t in out["source_text"]], index=out.index, dtype=float)
    out["score_cf"] = pd.Series([score[t] for t in out["cf_text"]], index=out.index, dtype=float)
    out["diff"] = out["score_cf"] - out["score_orig"]
    scored = out["diff"].notna()
    flipped = pd.Series(score_flipped(out["score_orig"], out["score_cf"], threshold), index=out.index)
    out["flipped"] = flipped.astype(object).where(scored, np.nan)
    out["status"] = np.where(scored, "ok", "partial:classifier_returned_nan")
    if "placebo_text" in out.columns:
        placebo = [t if isinstance(t, str) and t else None for t in out["placebo_text"]]
        out["score_placebo"] = pd.Series([score[t] if t else np.nan for t in placebo], index=out.index, dtype=float)
        out["diff_placebo"] = out["score_placebo"] - out["score_orig"]
    return out
