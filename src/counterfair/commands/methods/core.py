"""Several counterfactual methods on the same originals, side by side (CEval, paper 004: Table 2, Figs. 1-2).

Each method's pair file is evaluated into its own run directory (``OUT/methods/<name>/``, resumable like any
evaluation) with one shared classifier, so every original is predicted once. Then:

* ``comparison.csv`` — Table 2: one row per method with the CEval metrics (flip rate over all instances, probability
  change, distance per token of the original over all pairs and over the flipped ones only, as CEval's table reports
  it, the raw token distance, diversity, perplexity, BLEU, BERTScore, text quality where measured);
* ``distance_matrix.csv`` — Fig. 2: the mean token-level Levenshtein distance between the counterfactuals two methods
  wrote for the same original (rows where both wrote one), with the original text as one more "method";
* ``report.html`` — the table, the contrast-label probability histograms before/after (Fig. 1) and the matrix.

The files must hold the same originals in the same order. Originals are compared as methods' preprocessing leaves
them (case, markup and punctuation ignored: CEval's GBDA output is lower-cased, CREST's has ``<unk>``); the few rows
that still differ are left out of the distances between methods and listed in ``summary.json``; files that differ in
more than a tenth of their rows are refused, naming the file and the first such row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...errors import ConfigError, InputError
from ...io import cell_text
from ...metrics import functional as F
from ...results import TableResult
from ...summaries import TABLE2_COLUMNS, MethodComparisonSummary
from ...text import tokenize_batch
from ...writing import write_table
from ..evaluate.core import EvaluationResult
from ..evaluate.options import EvaluateOptions

ORIGINAL = "original"
TABLE_COLUMNS = TABLE2_COLUMNS  # Table 2's columns (counterfair.summaries)


@dataclass
class MethodComparison(TableResult[MethodComparisonSummary]):
    """``table`` (Table 2: one row per method), ``distance_matrix`` (Fig. 2), ``results`` (each method's
    :class:`~counterfair.EvaluationResult`), ``summary`` (as ``summary.json``)."""

    table: pd.DataFrame
    distance_matrix: pd.DataFrame
    results: dict[str, EvaluationResult]
    summary: dict[str, Any]
    _summary_type = MethodComparisonSummary

    _table_file = "comparison.csv"

    def __rich__(self) -> Any:
        from ...views.console import frame_table

        return frame_table(self._table(), "methods (CEval Table 2)")

    def _table(self) -> pd.DataFrame:
        return self.table.reset_index()

    def _saved(self, target: Path) -> None:
        write_table(self.distance_matrix.reset_index(names="method"), target / "distance_matrix.csv")

    def _repr_html_(self) -> str:
        """The notebook view: the report page's verdict, Table 2 and the distances between methods."""
        from ...views.page import to_notebook_html
        from ..evaluate.page import methods_page

        return to_notebook_html(methods_page(self.summary, self.table.reset_index(), self.distance_matrix))


def parse_method_files(specs: list[str]) -> dict[str, Path]:
    """``NAME=PATH`` or ``PATH`` (named by its file stem) for each method; names must differ, and each is a plain name
    (each method's run is written to ``--out/methods/NAME``: never outside ``--out``)."""
    out: dict[str, Path] = {}
    for spec in specs:
        name, sep, path = str(spec).partition("=")
        if not sep or not name or Path(spec).exists():
            name, path = Path(spec).stem, str(spec)
        if name in (".", "..") or any(c in name for c in "/\\\x00") or not name.strip():
            raise ConfigError(
                f"{spec}: the method name {name!r} is not a plain name (it names a folder of the run: no '/', '\\', "
                "'..' or empty name); use NAME=PATH with a NAME such as swap or llm"
            )
        if name == ORIGINAL:
            raise ConfigError(f"{spec}: the method name {ORIGINAL!r} is taken by the original texts; use NAME=PATH")
        if name in out:
            raise ConfigError(f"two methods are named {name!r}; name them with NAME=PATH")
        out[name] = Path(path)
    return out


_MARKUP = re.compile(r"<unk>|<br\s*/?>|[^a-z0-9]")
MAX_MISALIGNED = 0.1  # more rows than this whose original differs: the files are not about the same texts


def _key(text: str | None) -> str:
    """An original as methods' preprocessing leaves it recognisable: lower case, ``<br />`` and ``<unk>`` markup and
    everything but ASCII letters and digits removed, the first 60 characters."""
    return _MARKUP.sub("", (text or "").lower())[:60]


def align_originals(frames: dict[str, pd.DataFrame], column: str) -> tuple[list[str], dict[str, list[int]]]:
    """The originals (of the first file) and, per method, the rows whose original is another text. Methods often
    preprocess their input (CEval's GBDA lower-cases, CREST writes ``<unk>`` for characters its tokenizer lacks), so
    originals are compared by :func:`_key`; a few differing rows are left out of the distances that involve them,
    more than :data:`MAX_MISALIGNED` of the rows is an error."""
    first_name, first = next(iter(frames.items()))
    for name, frame in frames.items():
        if column not in frame:
            raise InputError(f"{name}: no column {column!r} (the original text)")
        if len(frame) != len(first):
            raise InputError(
                f"{name}: {len(frame)} rows, {first_name} has {len(first)}; the methods must edit the same originals"
            )
    reference = [_key(cell_text(v)) for v in first[column].tolist()]
    misaligned: dict[str, list[int]] = {}
    for name, frame in frames.items():
        mine = [_key(cell_text(v)) for v in frame[column].tolist()]
        rows = [r for r, (a, b) in enumerate(zip(reference, mine, strict=True)) if a != b]
        if len(rows) > MAX_MISALIGNED * len(reference):
            shown = [(cell_text(f[column].iloc[rows[0]]) or "")[:40] for f in (frame, first)]
            raise InputError(
                f"{name}, row {rows[0]}: the original differs from {first_name}'s row {rows[0]} "
                f"({shown[0]!r} vs {shown[1]!r}), and so do {len(rows) - 1} more rows; the files must hold the same "
                "originals in the same order"
            )
        if rows:
            misaligned[name] = rows
    return [cell_text(v) or "" for v in first[column].tolist()], misaligned


def comparison_table(results: dict[str, EvaluationResult]) -> pd.DataFrame:
    """Table 2 of CEval: per method the flip rate (flips over all instances) and the mean of each metric."""
    records = []
    for name, result in results.items():
        rows, headline = result.rows, result.typed_summary.headline or {}
        record: dict[str, Any] = {"method": name, "pairs": len(rows)}
        record["with_counterfactual"] = int((~rows["status"].str.startswith("skipped")).sum())
        flip_rate = headline.get("flip_rate")
        record["flip_rate"] = flip_rate.value if flip_rate is not None and flip_rate.has("mean") else np.nan
        flipped = rows["flipped"].astype(float).to_numpy() == 1.0 if "flipped" in rows else None
        for column, source, over in TABLE_COLUMNS:
            if source not in rows:
                continue
            values = rows[source].astype(float).to_numpy()
            if over == "flipped":
                if flipped is None:
                    continue
                values = values[flipped]
            finite = values[np.isfinite(values)]
            record[column] = float(finite.mean()) if finite.size else np.nan
        records.append(record)
    return pd.DataFrame(records).set_index("method")


def distance_matrix(
    counterfactuals: dict[str, pd.Series],
    originals: list[str],
    opts: EvaluateOptions,
    *,
    misaligned: dict[str, list[int]] | None = None,
    own_originals: dict[str, pd.Series] | None = None,
) -> pd.DataFrame:
    """Fig. 2 of CEval: mean word-level Levenshtein distance between two methods' counterfactuals of the same
    original, over the rows where both have one (and both edited that original: ``misaligned`` rows are left out);
    ``original`` is the unedited text: each method's own copy of it where ``own_originals`` gives one (a method that
    lower-cased its input is measured against its lower-cased original, as its own distance is)."""
    texts: dict[str, list[str | None]] = {ORIGINAL: list(originals)}
    for name, column in counterfactuals.items():
        cells = [cell_text(v) for v in column.tolist()]
        texts[name] = [None if c is None or not c.strip() or c.strip() in opts.missing_markers else c for c in cells]
    tokens = {name: _tokens(values) for name, values in texts.items()}
    names = list(texts)
    matrix = pd.DataFrame(0.0, index=names, columns=names)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if a == ORIGINAL and own_originals is not None and b in own_originals:
                mine = _tokens([cell_text(v) for v in own_originals[b].tolist()])
                have = [r for r in range(len(originals)) if mine[r] is not None and tokens[b][r] is not None]
                raw, _ = F.token_distances([mine[r] for r in have], [tokens[b][r] for r in have])  # type: ignore[misc]
                matrix.loc[a, b] = matrix.loc[b, a] = float(np.mean(raw)) if have else np.nan
                continue
            skip = set((misaligned or {}).get(a, [])) | set((misaligned or {}).get(b, []))
            both = [
                r
                for r in range(len(originals))
                if tokens[a][r] is not None and tokens[b][r] is not None and r not in skip
            ]
            raw, _ = F.token_distances([tokens[a][r] for r in both], [tokens[b][r] for r in both])  # type: ignore[misc]
            value = float(np.mean(raw)) if len(both) else np.nan
            matrix.loc[a, b] = matrix.loc[b, a] = value
    return matrix


def _tokens(values: list[str | None]) -> list[list[str] | None]:
    present = [i for i, v in enumerate(values) if v is not None]
    out: list[list[str] | None] = [None] * len(values)
    for i, toks in zip(present, tokenize_batch([values[i] or "" for i in present]), strict=True):
        out[i] = toks
    return out
