"""Where an effect lives: whether a group's or a term's effect differs from text to text by more than a neutral word's
does, and the texts where it is largest.

An in-slot estimate is a mean over texts. A model that adds 10 points to a religion term only where "not" stands
near it moves the mean by one point over texts of which a tenth hold such a slot: the mean is small, and the texts
where the effect lives are hidden in it. Each text's value of an estimate (its slots' mean) is therefore compared
with what the **placebo words** give in the same texts when one of them, or a set of them the size of the group, is
read as if it were the term: ``mean f(x[p]) over the chosen placebo words − mean over the others``. A model without
such a quirk spreads the two alike (the noise of a word in a slot); a model whose effect lives in some slots spreads
the term's values wider.

The test: the variance over texts of the estimate's values against the placebo sets' (the mean over
:data:`ROTATIONS` sets of the size of the estimate's terms, in the same texts), an F-test with ``n − 1`` degrees of
freedom on each side, one-sided, Bonferroni-adjusted over every estimate tested in the run. The placebo set of a
group of ``k`` terms averages ``k`` words against the ``P − k`` others, so its spread is never below the group's own
under no effect: the test errs towards saying nothing. ``excess``: the spread of the effect from text to text beyond
the placebo's, ``sqrt(var(values) − var(placebo sets))`` in probability (a standard deviation over texts; 0 where the
placebo's is as large). A variance below :data:`TINY` counts as none (a model whose scores do not move: what is left
is rounding). Families whose null is a median over groups (first names) and families with fewer than
:data:`MIN_WORDS` placebo words are not tested.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..summaries import Slot, Spread

#: placebo sets per size (each a different run of the placebo words, cyclically)
ROTATIONS = 4
#: the fewest placebo words a family needs for the test (one read as the term, two for its baseline)
MIN_WORDS = 3
#: the fewest texts an estimate needs for the test
MIN_TEXTS = 10
#: the texts listed with the largest effect
SHOWN = 3
#: the least excess an uneven estimate is listed with (half a point: a spread beyond the placebo's that a reader can
#: see; the verdict names only those beyond the materiality threshold)
NOTED = 0.005
#: a variance over texts below this is none (rounding, not a spread: 1e-6 points squared)
TINY = 1e-10
Name = tuple[str, str, str]  # an estimate's (measure, level, name)
_Found = tuple[float, float, tuple[Slot, ...]]


def placebo_sets(placebo: np.ndarray, size: int, rotations: int = ROTATIONS) -> np.ndarray:
    """Each slot's values of ``rotations`` placebo sets of ``size`` words (slots x rotations): the set's mean less the
    other placebo words' mean, the sets starting at evenly spaced words (cyclically)."""
    words = placebo.shape[1]
    size = min(size, words - 1)
    out = np.full((placebo.shape[0], rotations), np.nan)
    if size < 1:
        return out
    for r in range(rotations):
        start = (r * words) // rotations
        chosen = np.zeros(words, dtype=bool)
        chosen[[(start + j) % words for j in range(size)]] = True
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a slot without a placebo score: NaN, as it should
            out[:, r] = np.nanmean(placebo[:, chosen], axis=1) - np.nanmean(placebo[:, ~chosen], axis=1)
    return out


class Nulls:
    """Per text, the placebo sets' values for each size a family's tested estimates need (:func:`placebo_sets`, each
    text's slots averaged as its estimates' are), gathered a block of slots at a time. ``sizes``: per tested estimate
    ``(level, name)``, its terms (a term 1, a group its members)."""

    def __init__(self, texts: int, sizes: Mapping[tuple[str, str], int]) -> None:
        self.sizes = dict(sizes)
        self.values = {k: np.full((texts, ROTATIONS), np.nan) for k in sorted(set(self.sizes.values()))}

    @classmethod
    def of(cls, texts: int, layout: Any) -> Nulls | None:
        """The nulls of a family of slots over ``texts`` texts, by its layout (its placebo words, terms where the
        family estimates them, groups' members); None where it has too few placebo words."""
        if len(layout.words) < MIN_WORDS:
            return None
        terms = layout.terms if layout.design.terms else []
        sizes = {("term", t): 1 for t in terms} | {("group", g): len(m) for g, m in layout.members.items() if m}
        return cls(texts, sizes)

    def add(self, rows: np.ndarray, codes: np.ndarray, placebo: np.ndarray) -> None:
        from .inference import mean_by

        for size, kept in self.values.items():
            kept[rows] = mean_by(codes, placebo_sets(placebo, size), len(rows))

    def test(self, values: np.ndarray, names: Sequence[Name], texts: Sequence[str]) -> dict[Name, _Found]:
        """Per tested column of ``values`` (texts x estimates, each named ``(measure, level, name)``): the excess
        spread, the one-sided p-value of the F-test (not adjusted) and the texts with the largest values."""
        from scipy.stats import f as fisher

        out: dict[Name, _Found] = {}
        for j, (measure, level, name) in enumerate(names):
            size = self.sizes.get((level, name))
            if measure != "identity_effect" or size is None:
                continue
            null = self.values[size]
            have = np.isfinite(values[:, j]) & np.isfinite(null).all(axis=1)
            n = int(have.sum())
            if n < MIN_TEXTS:
                continue
            # float residue left out, as the estimates do (inference.estimates): a text's slots in other blocks
            v, u = np.round(values[have, j], 12), np.round(null[have], 12)
            own, neutral = float(v.var(ddof=1)), float(u.var(axis=0, ddof=1).mean())
            own, neutral = (own if own > TINY else 0.0), (neutral if neutral > TINY else 0.0)
            p = float(fisher.sf(own / neutral, n - 1, n - 1)) if neutral > 0 else 0.0 if own > 0 else 1.0
            ids = np.asarray(texts, dtype=object)[have]
            largest = tuple(Slot(input_id=str(ids[i]), value=float(v[i])) for i in np.argsort(-np.abs(v))[:SHOWN])
            out[(measure, level, name)] = (float(np.sqrt(max(own - neutral, 0.0))), p, largest)
        return out


def spreads(parts: Sequence[tuple[np.ndarray, Sequence[Name], Mapping[str, Any]]], alpha: float) -> dict[Any, Spread]:
    """Every tested estimate's :class:`~counterfair.summaries.Spread`, keyed ``(part, (measure, level, name))``, of
    the parts of a test family (each ``(values, names, info)``, ``info["nulls"]`` its :class:`Nulls` or None), the
    p-values Bonferroni-adjusted over every test of every part."""
    found = {
        (i, name): result
        for i, (values, names, info) in enumerate(parts)
        if info.get("nulls") is not None
        for name, result in info["nulls"].test(values, names, info["texts"]).items()
    }
    out = {}
    for key, (excess, p, largest) in found.items():
        p_adjusted = min(1.0, p * len(found))
        out[key] = Spread(excess=excess, p_adjusted=p_adjusted, varies=p_adjusted < alpha, largest=largest)
    return out


def uneven(effects: Any, *, at_least: float = NOTED, hidden: bool = False) -> list[tuple[str, Any]]:
    """The groups and terms of a summary's in-slot ``effects`` whose spread test found their effect uneven by at least
    ``at_least`` (``excess``, a standard deviation over texts beyond a neutral word's), named as the verdict names them
    (a term in quotes), groups first. ``hidden``: only those the verdict does not already call material (a group:
    none of its terms either; their material terms say where the effect is), and no term of a group said — where the
    mean hides the effect."""
    measure = effects.identity_effect if effects is not None else None
    if measure is None:
        return []
    by_term = measure.by_term or {}
    loud = {e.group for e in by_term.values() if e.finding == "material"} if hidden else set()
    found = [
        (n, e)
        for n, e in [*(measure.by_group or {}).items(), *((f'"{t}"', e) for t, e in by_term.items())]
        if e.spread is not None
        and e.spread.varies
        and (e.spread.excess or 0.0) >= at_least
        and not (hidden and (e.finding == "material" or n in loud))
    ]
    if not hidden:
        return found
    said = {n for n, _ in found}  # a group said: its terms are not said again (they share its texts)
    return [(n, e) for n, e in found if not (n.startswith('"') and getattr(e, "group", None) in said)]
