"""What the audit's report reads of ``pairs.csv``, tallied block by block as the file goes by (#47): per method the
score-change histogram's counts and the score panel's hexagonal-cell counts (its points while there are few), the
sums behind the heat map's cells and the swap packs' directions, each listed cell's largest changes, and the few
points of the topic and rating panels. The file (9.5 million pairs at 200,000 texts) is never held as a table."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...editors.registry import swap_methods
from .plots import CHANGE_BINS, DENSE_POINTS, hex_counts


class Panel:
    """One method's pairs as the histogram and the score panel draw them: the count, the changes' histogram, and the
    points themselves until there are more than :data:`DENSE_POINTS`, then their hexagonal cells' counts (the sum of
    each block's: the counts of one call over every point)."""

    def __init__(self) -> None:
        self.n = 0
        self.changes = np.zeros(len(CHANGE_BINS) - 1)
        self.xs: list[np.ndarray] = []
        self.ys: list[np.ndarray] = []
        self.cells: np.ndarray | None = None
        self.centres: np.ndarray | None = None

    @property
    def dense(self) -> bool:
        return self.n > DENSE_POINTS

    def add(self, x: np.ndarray, y: np.ndarray, diff: np.ndarray) -> None:
        self.n += x.size
        self.changes += np.histogram(diff, bins=CHANGE_BINS)[0]
        if self.cells is None:
            self.xs.append(x)
            self.ys.append(y)
            if not self.dense:
                return
            x, y = self.points()
            self.xs, self.ys = [], []
        counts, self.centres = hex_counts(x, y)
        self.cells = counts if self.cells is None else self.cells + counts

    def points(self) -> tuple[np.ndarray, np.ndarray]:
        """The points of a panel with few (in the pairs' order)."""
        if not self.xs:
            return np.zeros(0), np.zeros(0)
        return np.concatenate(self.xs), np.concatenate(self.ys)


class CellTops:
    """For each listed swap direction (source term -> target term), its pairs with the largest |score change|, ties
    in the order of the pairs: each block's few largest kept, then the largest of those."""

    def __init__(self, directions: Sequence[Any], per_cell: int) -> None:
        self.directions, self.per_cell = list(directions), per_cell
        self.found: list[list[pd.DataFrame]] = [[] for _ in self.directions]

    def add(self, pairs: pd.DataFrame) -> None:
        """One block's pairs (``method``, ``source_term``, ``target_term``, ``diff``; ``attribute`` where known)."""
        if not self.directions or pairs.empty:
            return
        swaps = identity_swaps(pairs)
        if not swaps.any():
            return
        source, target = pairs["source_term"], pairs["target_term"]
        shown = [c for c in pairs.columns if c not in ("method", "attribute", "source_term", "target_term")]
        for d, kept in zip(self.directions, self.found, strict=True):  # only the listed cells, each picked by a mask
            cell = swaps & (source == d.source).to_numpy(dtype=bool) & (target == d.target).to_numpy(dtype=bool)
            if cell.any():
                kept.append(_largest_changes(pairs.loc[cell, shown], self.per_cell))

    def tops(self) -> list[tuple[Any, pd.DataFrame]]:
        """(direction, its largest-change pairs, largest first) for each listed direction with pairs."""
        return [
            (d, _largest_changes(kept[0] if len(kept) == 1 else pd.concat(kept), self.per_cell))
            for d, kept in zip(self.directions, self.found, strict=True)
            if kept
        ]


def identity_swaps(pairs: pd.DataFrame, swaps: np.ndarray | None = None) -> np.ndarray:
    """Which pairs are identity swaps (an identity-swapping method on the ``identity`` attribute, where the table
    names attributes); ``swaps``: which pairs' methods swap identities, where already known."""
    found = pairs["method"].isin(swap_methods()).to_numpy(dtype=bool) if swaps is None else swaps
    return found & (pairs["attribute"] == "identity").to_numpy(dtype=bool) if "attribute" in pairs else found


def _largest_changes(part: pd.DataFrame, count: int) -> pd.DataFrame:
    order = part["diff"].abs().sort_values(ascending=False, kind="stable").index
    return part.reindex(order).head(count)


class CellSums:
    """Sums, counts of values and rows of ``diff`` per key (a tuple of column values, missing as ``None``), added block
    by block; a key's mean is its sum over its count (within one block pandas' grouped mean, bit for bit; over several,
    the blocks' sums added)."""

    def __init__(self, keys: Sequence[str]) -> None:
        self.keys = list(keys)
        self.sums: dict[tuple[Any, ...], list[float]] = {}

    def add(self, part: pd.DataFrame) -> None:
        if part.empty:
            return
        grouped = part.groupby(self.keys, dropna=False, observed=True, sort=False)["diff"]
        table = grouped.agg(["sum", "count", "size"])
        for key, row in zip(table.index, table.itertuples(index=False), strict=True):
            key = tuple(None if pd.isna(k) else k for k in (key if isinstance(key, tuple) else (key,)))
            entry = self.sums.setdefault(key, [0.0, 0, 0])
            entry[0] += row[0]
            entry[1] += int(row[1])
            entry[2] += int(row[2])

    def table(self) -> pd.DataFrame:
        """One row per key, sorted as pandas' groupby sorts (a missing value last): the keys, ``mean`` and ``size``."""
        keys = sorted(self.sums, key=lambda k: tuple((v is None, "" if v is None else v) for v in k))
        rows = [
            (*(np.nan if v is None else v for v in k), s / c if c else np.nan, n)
            for k in keys
            for s, c, n in [self.sums[k]]
        ]
        return pd.DataFrame(rows, columns=[*self.keys, "mean", "size"])


class ReportTally:
    """Everything the report draws and lists from the pairs, added block by block (pairs without a score are left
    out: they are listed, not plotted)."""

    def __init__(self, directions: Sequence[Any] = (), per_cell: int = 3) -> None:
        self.panels: dict[str, Panel] = {}  # per method, in the order the methods appear
        self.edits: list[pd.DataFrame] = []  # word-list and LLM edits with both scores: the topic panels
        self.rated: list[pd.DataFrame] = []  # pairs rated good or poor
        self.cells = CellSums(["source_term", "target_term"])  # the heat map: identity swaps
        self.packs = CellSums(["attribute", "group", "target_group"])  # every swap pack's group directions
        self.tops = CellTops(directions, per_cell)

    @classmethod
    def of(cls, blocks: Iterable[pd.DataFrame], directions: Sequence[Any] = (), per_cell: int = 3) -> ReportTally:
        tally = cls(directions, per_cell)
        for block in blocks:
            tally.add(block)
        return tally

    def add(self, pairs: pd.DataFrame) -> None:
        if "status" in pairs:
            pairs = pairs[(pairs["status"] == "ok").to_numpy(dtype=bool)]
        if pairs.empty:
            return
        method = pairs["method"]
        x, y = pairs["score_orig"].to_numpy(dtype=float), pairs["score_cf"].to_numpy(dtype=float)
        diff = pairs["diff"].to_numpy(dtype=float)
        for name in method.unique():  # in order of appearance
            mine = (method == name).to_numpy(dtype=bool)
            self.panels.setdefault(str(name), Panel()).add(x[mine], y[mine], diff[mine])
        swaps = method.isin(swap_methods()).to_numpy(dtype=bool)
        if "attribute" in pairs:
            known = ~np.isnan(x) & ~np.isnan(y)
            self.edits.append(pairs.loc[~swaps & known, ["method", "attribute", "score_orig", "score_cf"]])
        if "rating" in pairs:
            self.rated.append(pairs.loc[pairs["rating"].isin(["good", "poor"]).to_numpy(dtype=bool)])
        if {"source_term", "target_term"} <= set(pairs.columns):
            self.cells.add(pairs.loc[identity_swaps(pairs, swaps), ["source_term", "target_term", "diff"]])
            self.tops.add(pairs)
        if {"attribute", "group", "target_group"} <= set(pairs.columns):
            self.packs.add(pairs.loc[swaps, ["attribute", "group", "target_group", "diff"]])

    def topic_points(self) -> pd.DataFrame:
        return _stacked(self.edits, ["method", "attribute", "score_orig", "score_cf"])

    def rated_points(self) -> pd.DataFrame:
        return _stacked(self.rated, ["method", "rating", "score_orig", "score_cf"])


def _stacked(parts: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
    parts = [p for p in parts if len(p)]
    if not parts:
        return pd.DataFrame(columns=columns)
    return parts[0] if len(parts) == 1 else pd.concat(parts)
