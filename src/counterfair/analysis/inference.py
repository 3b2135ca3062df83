"""What the in-slot measures conclude from per-text values: each estimate's mean over texts, its 95 % bootstrap
interval, a simultaneous interval over the whole test family, the power the data give, and the finding read off that
interval (:mod:`counterfair.analysis.slots` builds the per-text values; the classifier audit, the LLM audit and
``compare`` read the findings).

**One interval decides each label.** With ``m`` estimates in the test family (every estimate of every measure, set,
form and combination over at least :data:`MIN_INTERVAL_TEXTS` texts: with fewer, every text lies on one side of the
true mean too often for any interval to hold), each estimate gets the t-interval at level ``1 − α/m`` (Bonferroni:
all ``m`` intervals hold their true values together at least 95 % of the time). With ``τ`` the measure's materiality
threshold (2 probability points for effects and disparity, 5 for flips):

* ``material``: the interval lies beyond ``τ`` (either side for a signed effect; above it for disparity and flips);
* ``detected``: it excludes 0 but reaches past ``τ`` — an effect, of a size not yet resolved;
* ``small``: it excludes 0 and stays within ``±τ`` — an effect, shown to be below ``τ``;
* ``not detected``: it holds 0, stays within ``±τ``, and the data had the power to see ``τ``: the smallest effect
  detected four times in five at this size, noise and family (``mde``) is at most ``τ``;
* ``inconclusive``: it holds 0 but reaches past ``τ``, or ``mde`` exceeds ``τ``, or too few texts for any interval:
  neither an effect nor its absence is shown (every estimate over fewer than :data:`MIN_INTERVAL_TEXTS` texts).
  ``texts_needed`` says about how many texts would give ``mde ≤ τ``.

An effect under :data:`NEGLIGIBLE` (0.05 points, what prints as 0.0) is never a finding. The two-sided tests behind
the labels are reported as p-values: ``p_adjusted`` (Bonferroni, against 0) and ``p_material`` (Bonferroni over both
tails, beyond ``τ``): an estimate is material exactly when ``p_material < α``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypedDict

import numpy as np

from ..summaries import MIN_INTERVAL_TEXTS, SlotEffects, SlotEstimate, SlotMeasure, typed
from .measures import SLOT_MEASURES

ALPHA = 0.05  # the family-wise error rate of the simultaneous intervals
POWER = 0.8  # the chance of detecting an effect of the reported minimum detectable size
NEGLIGIBLE = 0.0005  # smaller effects round to 0.0 points: never a finding
FINDINGS = ("material", "detected", "inconclusive", "small", "not detected")  # the strongest first
#: the findings that leave an estimate unsettled: neither shown to be material nor shown to be within the threshold.
#: The one definition of "inconclusive" that the gate's ``conclusive(...)`` checks and the verdict's words share
UNSETTLED = ("inconclusive", "detected")


# ------------------------------------------------------------------------------------------------ per estimate


def estimates(
    values: np.ndarray, *, seed: int, n_resamples: int, margins: Sequence[tuple[float, bool]]
) -> tuple[list[SlotEstimate], list[float | None]]:
    """Per column of a texts x estimates array: the mean over texts with a value, the per-text standard deviation
    (``sd``), its paired percentile bootstrap interval (the same resamples of texts for every column) and a two-sided
    one-sample t-test's p-value against 0 (``p_value``); and apart, per column, the one-sided t-test's p-value that it
    exceeds the column's margin (with ``margins``' (margin, signed): for a signed estimate its size exceeds the margin,
    else its value does), which :func:`conclude` reads."""
    from scipy.stats import t as student

    # ``values`` is the caller's to give up: rounded and filled in place (at 200,000 texts each copy is 128 MB)
    np.round(values, 12, out=values)  # float residue (0.2 − mean(0.2, 0.2) = −2.8e-17) is no effect and no variance
    known = ~np.isnan(values)
    n = known.sum(axis=0)
    filled = values
    filled[~known] = 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.round(filled.sum(axis=0) / n, 12)  # the residue of the sum, as the values' own
        sd = np.sqrt(squared_deviations(filled, known, mean) / np.maximum(n - 1, 1))
    low, high = bootstrap_interval(filled, known, seed=seed, n_resamples=n_resamples)
    out: list[SlotEstimate] = []
    beyond: list[float | None] = []
    for c in range(values.shape[1]):
        if n[c] == 0:
            out.append(SlotEstimate(n=0))
            beyond.append(None)
            continue
        p_value = p_beyond = None
        margin, signed = margins[c]
        size = abs(mean[c]) if signed else mean[c]
        if n[c] >= 2:
            if sd[c] == 0:  # every text the same: no doubt about the mean (0 is no effect; anything else is one)
                p_value = 1.0 if mean[c] == 0 else 0.0
                p_beyond = 0.0 if size > margin else 1.0
            else:
                se = sd[c] / math.sqrt(n[c])
                p_value = float(2 * student.sf(abs(mean[c]) / se, n[c] - 1))
                p_beyond = float(student.sf((size - margin) / se, n[c] - 1))
        bounded = bool(np.isfinite(low[c]) and np.isfinite(high[c]))  # none from too few texts (bootstrap_interval)
        out.append(
            SlotEstimate(
                value=float(mean[c]),
                ci_low=float(low[c]) if bounded else None,
                ci_high=float(high[c]) if bounded else None,
                n=int(n[c]),
                sd=float(sd[c]) if n[c] >= 2 else None,
                p_value=p_value,
            )
        )
        beyond.append(p_beyond)
    return out, beyond


# ------------------------------------------------------------------------------------------------ the family


def conclude(
    found: Sequence[SlotEstimate],
    beyond: Sequence[float | None],
    margins: Sequence[tuple[float, bool]],
    tested: Sequence[bool],
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    bounds: Sequence[float | None] | None = None,
) -> tuple[list[SlotEstimate], int]:
    """Each estimate of :func:`estimates` (with its p-value beyond the margin, ``beyond``) completed with its
    simultaneous interval (``sim_low``, ``sim_high``), Bonferroni's ``p_adjusted`` and ``p_material``, the minimum
    detectable effect (``mde``), the texts that would bring it to the margin (``texts_needed``) and its ``finding``
    (see the module's docstring); and the family's size. ``bounds``: per estimate, the size no value of it can pass
    (1 for a difference of probabilities or shares; None: unbounded): its intervals are cut there — a share cannot
    change by more than 100 points, whatever the t-quantile says — which moves no finding (each threshold is well
    inside the bound). ``tested``: which estimates are in the family (the others
    keep their values and are ``inconclusive``)."""
    members = {i for i, e in enumerate(found) if tested[i] and e.sd is not None and e.p_value is not None}
    m = max(len(members), 1)
    out: list[SlotEstimate] = []
    for i, e in enumerate(found):
        margin, signed = margins[i]
        p_beyond = beyond[i]
        if i not in members:  # too few texts: no interval and no power, but the spread says about how many would do
            needed = texts_needed(e.sd, m, margin, alpha=alpha, power=power) if e.sd is not None else None
            e = replace(e, p_value=None, texts_needed=needed)
        else:
            assert e.value is not None and e.sd is not None and e.p_value is not None and p_beyond is not None
            sim = simultaneous(e.value, e.sd, e.n or 0, m, alpha=alpha, power=power, margin=margin)
            e = replace(
                e,
                sim_low=sim["sim_low"],
                sim_high=sim["sim_high"],
                mde=sim["mde"],
                texts_needed=sim["texts_needed"],
                p_adjusted=min(1.0, m * e.p_value),
                p_material=min(1.0, 2 * m * p_beyond),
            )
        bound = bounds[i] if bounds is not None else None
        if bound is not None:
            e = replace(
                e,
                ci_low=_within(e.ci_low, bound),
                ci_high=_within(e.ci_high, bound),
                sim_low=_within(e.sim_low, bound),
                sim_high=_within(e.sim_high, bound),
            )
        e = replace(e, finding=finding(e, margin, signed))
        out.append(_more_than_held(e, margin, signed))
    return out, len(members)


def _more_than_held(e: SlotEstimate, margin: float, signed: bool) -> SlotEstimate:
    """An unsettled estimate's ``texts_needed`` made more than the texts it holds: where the power is already there
    (``mde`` within the margin) but the interval still straddles the margin (the effect lies near it), the texts that
    would narrow the interval to the distance between the estimate and the margin (the interval's half-width falls as
    one over the square root of the texts), at least one more than held."""
    n, needed = e.n or 0, e.texts_needed
    if e.finding not in UNSETTLED or needed is None or needed > n or e.sim_low is None or e.sim_high is None:
        return e
    value = abs(e.value or 0.0) if signed else (e.value or 0.0)
    gap, half = abs(value - margin), (e.sim_high - e.sim_low) / 2
    more = math.ceil(n * (half / gap) ** 2) if gap > 0 else 100 * n
    return replace(e, texts_needed=max(more, n + 1))


def _within(value: float | None, bound: float) -> float | None:
    return None if value is None else min(max(value, -bound), bound)


class Simultaneous(TypedDict):
    """An estimate's simultaneous interval, minimum detectable effect and the texts that would bring it to a margin."""

    sim_low: float
    sim_high: float
    mde: float
    texts_needed: int


def simultaneous(
    value: float, sd: float, n: int, m: int, *, alpha: float = ALPHA, power: float = POWER, margin: float
) -> Simultaneous:
    """The interval of one estimate among ``m`` (t at ``1 − α/(2m)``), its minimum detectable effect (the true
    effect found to differ from 0 with probability ``power``) and the texts that would bring that to ``margin``."""
    from scipy.stats import t as student

    se = sd / math.sqrt(n)
    reach = float(student.ppf(1 - alpha / (2 * m), n - 1))
    mde = (reach + float(student.ppf(power, n - 1))) * se
    return {
        "sim_low": value - reach * se,
        "sim_high": value + reach * se,
        "mde": mde,
        "texts_needed": texts_needed(sd, m, margin, alpha=alpha, power=power),
    }


def texts_needed(sd: float, m: int, effect: float, *, alpha: float = ALPHA, power: float = POWER) -> int:
    """About how many texts give a minimum detectable effect of ``effect`` at this per-text spread and family size
    (at least :data:`MIN_INTERVAL_TEXTS`, the fewest an interval is given from)."""
    from scipy.stats import norm
    from scipy.stats import t as student

    if sd <= 0:
        return MIN_INTERVAL_TEXTS
    z = float(norm.ppf(1 - alpha / (2 * m)) + norm.ppf(power))
    k = max(MIN_INTERVAL_TEXTS, math.ceil((z * sd / effect) ** 2))
    for _ in range(60):  # the t quantiles exceed the normal ones: step up until the t-based minimum reaches it
        if (float(student.ppf(1 - alpha / (2 * m), k - 1)) + float(student.ppf(power, k - 1))) * sd / math.sqrt(
            k
        ) <= effect:
            return k
        k = math.ceil(k * 1.05) + 1
    return k


def finding(e: SlotEstimate, margin: float, signed: bool) -> str:
    """The label of one estimate from its simultaneous interval and power (module docstring)."""
    value, low, high, mde = e.value, e.sim_low, e.sim_high, e.mde
    if value is None or low is None or high is None or mde is None:
        return "inconclusive"
    if signed:
        if low > margin or high < -margin:
            return "material"
        shown = (low > 0 or high < 0) and abs(value) >= NEGLIGIBLE
        reach = max(abs(low), abs(high))
    else:
        if low > margin:
            return "material"
        shown = low > 0 and value >= NEGLIGIBLE
        reach = high
    if shown:
        return "small" if reach <= margin else "detected"
    return "not detected" if reach <= margin and mde <= margin else "inconclusive"


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of the p-values given (``None`` stays ``None`` and is not counted)."""
    known = [(p, i) for i, p in enumerate(p_values) if p is not None]
    out: list[float | None] = [None] * len(p_values)
    running, m = 0.0, len(known)
    for rank, (p, i) in enumerate(sorted(known)):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def mean_by(codes: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Per code (text), the mean of each column over its rows with a value (NaN where none has one)."""
    known = ~np.isnan(values)
    sums = np.zeros((n, values.shape[1]))
    counts = np.zeros((n, values.shape[1]))
    np.add.at(sums, codes, np.where(known, values, 0.0))
    np.add.at(counts, codes, known)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def every_estimate(effects: SlotEffects | Mapping[str, Any]) -> list[SlotEstimate]:
    """Every estimate of an effects section (:func:`slot_effects`' record, or its JSON as ``summary.json`` holds it):
    each measure's overall, and its groups', terms', forms' and combinations' estimates."""
    found = typed(effects, SlotEffects)
    out: list[SlotEstimate] = []
    for measure in SLOT_MEASURES:
        part: SlotMeasure | None = getattr(found, measure)
        if part is None:
            continue
        out += [part.overall] if part.overall else []
        for by in (part.by_group, part.by_term, part.by_form, part.by_cell):
            out += [e for e in (by or {}).values() if e is not None]
    return out


# ------------------------------------------------------------------------------------------------ the bootstrap

_ROWS = 65_536  # texts at a time in the squared deviations (two temporaries of a texts x estimates array otherwise)


def squared_deviations(filled: np.ndarray, known: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """Per column, the sum of the squared deviations from ``mean`` where ``known``, value for value what one
    expression over the whole array gives: numpy adds a many-column array's rows one after another, so each chunk's
    sum continues from the sum so far (the first row of the next reduction). One column: in one go (numpy sums a
    single contiguous column pairwise)."""
    if filled.shape[1] < 2 or filled.shape[0] <= _ROWS:
        return np.asarray(np.where(known, (filled - mean) ** 2, 0.0).sum(axis=0))
    total: np.ndarray | None = None
    for start in range(0, filled.shape[0], _ROWS):
        part = np.where(known[start : start + _ROWS], (filled[start : start + _ROWS] - mean) ** 2, 0.0)
        total = part.sum(axis=0) if total is None else np.vstack([total[None, :], part]).sum(axis=0)
    return np.asarray(total)


def bootstrap_interval(
    filled: np.ndarray, known: np.ndarray, *, seed: int, n_resamples: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each column's 95 % interval from its mean over ``n_resamples`` resamples of the rows (texts), the same
    resamples for every column (a resample in which a column has no value is left out of that column's): the expanded
    percentile interval (Hesterberg 2015), whose percentiles are those of a normal quantile widened to Student's t
    with the column's texts − 1 degrees of freedom; none from fewer than :data:`MIN_INTERVAL_TEXTS` texts. The plain
    2.5/97.5 percentiles are too narrow over few texts: they held a planted effect 90 % of the time over 10 texts and
    93 % over 20; these 94–96 % from 8 texts up (``benchmarks/interval_coverage.py``)"""
    rng = np.random.default_rng(seed)
    rows = filled.shape[0]
    means: list[np.ndarray] = []
    for weights in resample_weights(rng, rows, n_resamples):
        with np.errstate(invalid="ignore", divide="ignore"):
            means.append((weights @ filled) / resample_counts(weights, known))
    stacked = np.vstack(means)
    n = known.sum(axis=0)
    low, high = np.full(n.shape, np.nan), np.full(n.shape, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for size in np.unique(n[n >= MIN_INTERVAL_TEXTS]):
            columns = n == size
            lower = expanded_tail(int(size))
            low[columns], high[columns] = np.nanpercentile(stacked[:, columns], [lower, 100 - lower], axis=0)
    return low, high


def expanded_tail(texts: int, confidence: float = 0.95) -> float:
    """The lower percentile (0–100) of the expanded percentile interval over ``texts`` texts: where a normal
    quantile of √(n/(n−1))·t(n−1) falls (2.03 over 40 texts, 0.86 over 10, 2.5 in the limit)."""
    from scipy.stats import norm
    from scipy.stats import t as student

    widened = math.sqrt(texts / (texts - 1)) * student.ppf(1 - (1 - confidence) / 2, texts - 1)
    return float(100 * norm.sf(widened))


_COLUMNS = 8  # columns of the known mask taken as numbers at a time (all of it: 128 MB at 200,000 texts)


def resample_counts(weights: np.ndarray, known: np.ndarray) -> np.ndarray:
    """``weights @ known`` (how many drawn texts have each column's value, per resample), a few columns at a time: the
    products are whole numbers, so their sums are exact in any order and the result is the one product's."""
    out = np.empty((weights.shape[0], known.shape[1]))
    for start in range(0, known.shape[1], _COLUMNS):
        out[:, start : start + _COLUMNS] = weights @ known[:, start : start + _COLUMNS].astype(float)
    return out


#: resamples weighed at once: their weights are a 16 x texts array (26 MB at 200,000 texts; #47), and every block has
#: this shape whatever the number of texts, so a resample's means come out of the same product at any size
RESAMPLE_BLOCK = 16


def resample_weights(rng: np.random.Generator, rows: int, n_resamples: int) -> Iterator[np.ndarray]:
    """How often each row is drawn in each resample, :data:`RESAMPLE_BLOCK` resamples at a time (a block x rows
    array). The draws are those of 64-bit integers, held as 32-bit ones, drawn one resample at a time."""
    kind = np.int32 if rows < 2**31 else np.int64
    for start in range(0, n_resamples, RESAMPLE_BLOCK):
        size = min(RESAMPLE_BLOCK, n_resamples - start)
        weights = np.empty((size, rows))
        for i in range(size):
            weights[i] = np.bincount(rng.integers(0, rows, size=rows, dtype=kind), minlength=rows)
        yield weights
