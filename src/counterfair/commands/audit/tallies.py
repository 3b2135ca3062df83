"""What the audit's statistics keep of each block of pairs as it goes by (#47: 200,000 texts, 9.5 million pairs, in
flat memory): counts, each pair's change where a mean over pairs needs it, and per-text values for the intervals (they
resample texts) — never the pairs table. Each tally's result is the whole table's, value for value: a text's pairs are
all in one block and the blocks come in the order of the pairs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...metrics.fairness import gap_entry, text_gap_values
from ...metrics.functional import cluster_bootstrap_ci
from ...spill import ArrayLog, Scratch
from ...summaries import GapReport


def _runs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``values`` as runs of equal values (bit for bit): the runs' values and lengths (a text's pairs, next to each
    other, share its original's score: one run a text, not 8 bytes a pair)."""
    if values.size == 0:
        return values, np.zeros(0, dtype=np.int64)
    starts = _run_starts(values.view(np.int64))
    return values[starts].copy(), np.diff(np.append(starts, values.size))


def _run_starts(keys: np.ndarray) -> np.ndarray:
    """Where each run of equal ``keys`` starts (``keys`` not empty)."""
    return np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))


def _text_sums(ids: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each text's sum of ``values`` and its pair count, a text being a run of equal ``ids`` (its pairs lie next to
    each other)."""
    if values.size == 0:
        return values, np.zeros(0)
    starts = _run_starts(ids)
    return np.add.reduceat(values, starts), np.diff(np.append(starts, values.size)).astype(float)


class MethodTally:
    """One method on one attribute as its summary entry reads the pairs: the pairs and the scored ones, each scored
    pair's change, each text's sum of changes and pair count (the mean change's interval resamples texts), the
    originals' scores as runs, the flips."""

    def __init__(self, scratch: Scratch | None = None) -> None:
        self.pairs = 0
        self.diff = ArrayLog(scratch)  # on disk with a scratch file: 8 bytes a pair
        self.text_sums = ArrayLog(scratch)  # 16 bytes a text
        self.text_pairs = ArrayLog(scratch)
        self.orig = ArrayLog(scratch)  # the originals' scores, a run of equal values a text: its value and length
        self.orig_lengths = ArrayLog(scratch)
        self.flips = 0

    def add(self, part: pd.DataFrame) -> None:
        """This method's pairs of one block (``status``, ``diff``, ``score_orig``, ``flipped``)."""
        self.pairs += len(part)
        ok = part[(part["status"] == "ok").to_numpy(dtype=bool)]
        if ok.empty:
            return
        diff = ok["diff"].to_numpy(dtype=float).copy()
        self.diff.append(diff)
        sums, counts = _text_sums(ok["input_id"].to_numpy(), diff)
        self.text_sums.append(sums)
        self.text_pairs.append(counts)
        values, lengths = _runs(ok["score_orig"].to_numpy(dtype=float))
        self.orig.append(values)
        self.orig_lengths.append(lengths)
        self.flips += int(ok["flipped"].sum())

    @property
    def scored(self) -> int:
        return self.diff.size

    def changes(self) -> np.ndarray:
        """Every scored pair's change, in the pairs' order."""
        return self.diff.concatenate(np.zeros(0))

    def change_interval(self, *, seed: int, n_resamples: int) -> tuple[float, float]:
        """The mean change's 95 % interval, texts resampled (a text's pairs share its original: not independent)."""
        return cluster_bootstrap_ci(
            self.text_sums.concatenate(), self.text_pairs.concatenate(), n_resamples=n_resamples, seed=seed
        )

    def originals(self) -> np.ndarray:
        """Every scored pair's original score, in the pairs' order."""
        return np.repeat(self.orig.concatenate(), self.orig_lengths.concatenate(np.zeros(0, dtype=np.int64)))


class GapTally:
    """The CTF gap alone (no breakdown), block by block: each text's gap and the pair count."""

    def __init__(self, scratch: Scratch | None = None) -> None:
        self.gaps = ArrayLog(scratch)
        self.pairs = 0

    def add(self, pairs: pd.DataFrame) -> None:
        if len(pairs):
            self.gaps.append(text_gap_values(pairs))
            self.pairs += len(pairs)

    def report(self, *, seed: int, n_resamples: int) -> GapReport:
        """The gap, its interval over texts and the counts (no mean signed change: NaN)."""
        values = self.gaps.concatenate(np.empty(0))
        return gap_entry(values, self.pairs, math.nan, seed=seed, n_resamples=n_resamples)


class FlipTally:
    """The identity swaps' decision flips as the gate reads them (overall and per group of the source term), and why
    a run with identity swaps may have none scored."""

    def __init__(self) -> None:
        self.flips: dict[str | None, list[int]] = {}  # group (None: overall) -> [flips, scored pairs]
        self.swaps = 0  # identity swaps, scored or not
        self.first_status: str | None = None

    def add(self, swaps: pd.DataFrame) -> None:
        """One block's identity swaps (``status``, ``flipped``, ``group``), every status."""
        if swaps.empty:
            return
        self.swaps += len(swaps)
        if self.first_status is None:
            self.first_status = str(swaps["status"].iloc[0])
        ok = swaps[(swaps["status"] == "ok").to_numpy(dtype=bool)]
        self._count(None, ok)
        for group, part in ok.groupby("group", sort=False):
            self._count(str(group), part)

    def _count(self, group: str | None, part: pd.DataFrame) -> None:
        if len(part):
            counts = self.flips.setdefault(group, [0, 0])
            counts[0] += int(part["flipped"].astype(bool).sum())
            counts[1] += len(part)

    def unscored(self) -> str | None:
        """Why a run with identity swaps has no counterfactual metric: every swap is without a score."""
        if not self.swaps or None in self.flips:
            return None
        return (
            f"all {self.swaps} identity swaps are without a score (status {self.first_status}): the classifier "
            "returned NaN for them"
        )
