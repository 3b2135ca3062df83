"""The report page of an ``evaluate`` run (one method) or of a comparison of methods (``evaluate`` with several pair
files): a :class:`~counterfair.views.page.Page` (``report.html``, ``report.md``, the notebook) and ``plots/``, built
only from the files in the directory, so ``counterfair report DIR`` rebuilds it without recomputing."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...errors import InputError
from ...io import read_json, read_table
from ...summaries import TABLE2_COLUMNS, EvaluationSummary, MethodComparisonSummary, command_of
from ...views.page import MISSING, Figure, Page, Table, num, percent, write_page
from ...views.report import embed_figures, plots

# Table 2's columns as the report labels them (CEval's names)
COLUMN_TITLES = {
    "flip_rate": "flip rate",
    "prob_change": "prob. change",
    "distance": "distance",
    "distance_flipped": "distance (flipped)",
    "distance_tokens": "distance (tokens)",
    "diversity": "diversity",
    "perplexity": "perplexity",
    "bleu": "BLEU",
    "bertscore_f1": "BERTScore F1",
    "quality_grammar": "grammar",
    "quality_cohesiveness": "cohesiveness",
    "quality_likability": "likability",
    "quality_fluency": "fluency",
}


def is_evaluation_dir(run_dir: str | Path) -> bool:
    summary = Path(run_dir) / "summary.json"
    return summary.exists() and read_json(summary).get("command") in ("evaluate", "evaluate-methods")


def evaluation_rows(run_dir: Path) -> pd.DataFrame:
    """An evaluation's ``rows.csv`` with its probability columns as numbers."""
    rows = read_table(run_dir / "rows.csv", allow_empty=True)
    for column in ("p_contrast_orig", "p_contrast_cf"):
        if column in rows:
            rows[column] = rows[column].astype(float)
    return rows


def _probabilities(method_rows: dict[str, pd.DataFrame]) -> dict[str, np.ndarray]:
    """Contrast-label probability of the originals (from the first method that has them) and of each method."""
    out: dict[str, np.ndarray] = {}
    befores = [r["p_contrast_orig"].to_numpy(dtype=float) for r in method_rows.values() if "p_contrast_orig" in r]
    if befores:  # the method that left the fewest rows unscored shows the most originals
        out["original"] = max(befores, key=lambda v: int(np.isfinite(v).sum()))
    for name, rows in method_rows.items():
        if "p_contrast_cf" in rows:
            out[name] = rows["p_contrast_cf"].to_numpy(dtype=float)
    return out


def build_evaluation_report(run_dir: str | Path) -> dict[str, Path]:
    """Write ``report.html``, ``report.md`` and ``plots/`` of an evaluate directory (one method, or several
    compared)."""
    target = Path(run_dir)
    paths = write_page(evaluation_page(target), target)
    return {**paths, "plots": target / "plots"}


#: what the metrics table's columns mean (its note)
_METRICS_NOTE = (
    "Flip rate: flips over every instance, a pair without a counterfactual counting as no flip (CEval's definition). "
    "Probability change: of the contrast label, counterfactual minus original. Distance: word-level Levenshtein "
    'distance to the original; "distance (flipped)" over the pairs whose label flipped only, as CEval\'s table reports '
    "it. Means over the pairs each metric could be computed for."
)


def evaluation_page(run_dir: str | Path) -> Page:
    """The report page of an evaluate directory: the verdict (the flip rate first), Table 2 per method, the contrast
    histograms and, for several methods, the distances between them (CEval Figs. 1-2)."""
    target = Path(run_dir)
    if not (target / "summary.json").exists():
        raise InputError(f"{target}: no summary.json; run counterfair evaluate first")
    summary = read_json(target / "summary.json")
    command = command_of(summary)
    if command == "evaluate":
        method_rows = {"counterfactual": evaluation_rows(target)}
        table = _single_table(EvaluationSummary.from_dict(summary))
        matrix = None
    elif command == "evaluate-methods":
        methods = MethodComparisonSummary.from_dict(summary).methods
        method_rows = {name: evaluation_rows(target / "methods" / name) for name in methods}
        table = _numeric(read_table(target / "comparison.csv"))
        matrix = _numeric(read_table(target / "distance_matrix.csv")).set_index("method")
    else:
        raise InputError(f"{target}: summary.json was written by '{command}', not by counterfair evaluate")
    plot_dir = target / "plots"
    made = [
        (
            "contrast_histograms",
            "Probability of the contrast label for the originals and each method's counterfactuals (CEval Fig. 1); "
            "peaks at 0 and 1 only point to an overconfident classifier",
            plots.contrast_histograms(_probabilities(method_rows), plot_dir),
        )
    ]
    if matrix is not None:
        made.append(
            (
                "distance_matrix",
                "Mean word-level Levenshtein distance between the texts two methods wrote for the same original "
                "(CEval Fig. 2)",
                plots.distance_heatmap(matrix, plot_dir),
            )
        )
    figures = tuple(Figure(f["caption"], f["png"], f["svg"], f["name"]) for f in embed_figures(made))
    return _page(summary, table, matrix, figures)


def evaluation_summary_page(summary: Mapping[str, Any]) -> Page:
    """One method's evaluation page from its summary alone (the console, the notebook): the verdict, Table 2's row
    and the notes, without the plots."""
    return _page(summary, _single_table(EvaluationSummary.from_dict(summary)), None, ())


def methods_page(summary: Mapping[str, Any], table: pd.DataFrame, matrix: pd.DataFrame) -> Page:
    """Several methods compared, from the comparison in memory (the notebook): the verdict, Table 2 and the
    distances between methods, without the plots."""
    return _page(summary, table, matrix.rename_axis("method"), ())


def _page(
    summary: Mapping[str, Any], table: pd.DataFrame, matrix: pd.DataFrame | None, figures: tuple[Figure, ...]
) -> Page:
    command = command_of(summary)
    evaluation = EvaluationSummary.from_dict(summary)
    headline, lines = evaluation_verdict(table, evaluation.options.get("classifier"))
    version = evaluation.counterfair_version or MISSING
    tables = [Table("Metrics by method (CEval Table 2)" if matrix is not None else "Metrics", _shown(table),
                    _METRICS_NOTE, "metrics-table")]  # fmt: skip
    if matrix is not None:
        compared = MethodComparisonSummary.from_dict(summary)
        distances = matrix.map(lambda v: f"{v:.1f}").reset_index().rename(columns={"method": ""})
        tables.append(Table("Distances between methods", distances, None, "distance-table"))
        meta = f"{len(compared.methods)} methods on the same {compared.originals} originals; counterfair {version}."
        notes = [f"{e.extra.get('method', MISSING)}: stage {e.stage} failed ({e.extra.get('error', 'error')}: "
                 f"{e.message})" for e in compared.errors]  # fmt: skip
    else:
        counts, source = evaluation.counts, evaluation.input.get("source", MISSING)
        status = ", ".join(f"{k} {v}" for k, v in sorted(counts.status.items()))
        meta = (
            f"{counts.rows} pairs from {source}, {counts.scored} scored ({status}); classifier "
            f"{evaluation.options.get('classifier')}; counterfair {version}."
        )
        notes = [f"stage {e.stage} failed ({e.extra.get('error', 'error')}: {e.message})" for e in evaluation.errors]
        notes += list(evaluation.notices)
        tables.append(Table("Each metric over the pairs", _metric_rows(evaluation), None, "metric-table"))
        skipped = evaluation.skipped_rows
        if skipped:
            shown = ", ".join(f"row {r['row']} ({r['status']})" for r in skipped[:10])
            more = f" and {len(skipped) - 10} more" if len(skipped) > 10 else ""
            notes.append(f"skipped {len(skipped)} rows: {shown}{more}")
    return Page(
        command=str(command),
        title="Counterfactual methods compared" if matrix is not None else "Counterfactual evaluation",
        headline=headline,
        findings=lines,
        meta=(meta,),
        tables=tuple(tables),
        figures=figures,
        notes=tuple(notes),
        details=evaluation.to_dict(),
    )


def _metric_rows(s: EvaluationSummary) -> pd.DataFrame:
    """Each metric of one method: the pairs it covers, its mean with a 95 % interval, its median and its mean over the
    pairs whose label flipped."""
    rows = []
    for name, entry in (s.metrics or {}).items():
        agg, flipped = entry.all, entry.flipped
        rows.append({
            "metric": "flip rate" if name == "flipped" else name, "pairs": num(agg.n),
            "mean [95% CI]": f"{num(agg.value)} [{num(agg.ci_low)}, {num(agg.ci_high)}]", "median": num(agg.median),
            "mean on flipped pairs": num(flipped.value) if flipped else MISSING,
        })  # fmt: skip
    return pd.DataFrame(rows)


def _shown(table: pd.DataFrame) -> pd.DataFrame:
    """Table 2 as the report shows it: the flip rate as a percentage, every other metric with three decimals."""
    rows = []
    for r in table.to_dict(orient="records"):
        row = {"method": r["method"], "pairs": r.get("pairs"), "with counterfactual": r.get("with_counterfactual")}
        for column, title in COLUMN_TITLES.items():
            if column in table.columns:
                value = r.get(column)
                if value is None or value != value:  # not computed, or NaN read back from comparison.csv
                    row[title] = MISSING
                else:
                    row[title] = percent(value) if column == "flip_rate" else num(value)
        rows.append(row)
    return pd.DataFrame(rows)


def _numeric(frame: pd.DataFrame) -> pd.DataFrame:
    """A table read back from CSV: every column but ``method`` as numbers (empty cells NaN)."""
    frame = frame.drop(columns=["schema_version"], errors="ignore")
    for column in frame.columns:
        if column != "method":
            frame[column] = pd.to_numeric(frame[column])
    return frame


def _single_table(s: EvaluationSummary) -> pd.DataFrame:
    """One method's row of Table 2 from its summary (means over the rows each metric covers)."""
    record: dict[str, Any] = {"method": "counterfactual", "pairs": s.counts.rows}
    record["with_counterfactual"] = s.counts.scored
    headline = s.headline or {}
    if "flip_rate" in headline:
        record["flip_rate"] = headline["flip_rate"].value
    for column, source, over in TABLE2_COLUMNS:
        metric = (s.metrics or {}).get(source)
        entry = (metric.all if over == "all" else metric.flipped) if metric is not None else None
        if entry is not None:
            record[column] = entry.value
    return pd.DataFrame([record])


def evaluation_verdict(table: pd.DataFrame, classifier: str | None) -> tuple[str, tuple[str, ...]]:
    """The headline and lines above an evaluation report's table (one method, or several compared, one row each):
    the flip rate first (what a counterfactual is for), then closeness (distance, BLEU) and fluency (perplexity)."""
    rows = table.to_dict(orient="records")
    flips = [r for r in rows if r.get("flip_rate") is not None and r.get("flip_rate") == r.get("flip_rate")]
    if flips:
        best = max(flips, key=lambda r: r["flip_rate"])
        headline = (
            f"{best['method']} flips {100 * best['flip_rate']:.1f}% of {classifier}'s predictions"
            + (f", the most of {len(rows)} methods" if len(rows) > 1 else "")
            + "."
        )
    else:
        headline = "no flip rate: no classifier was named (--classifier); closeness and fluency only."
    lines = []
    for r in rows:
        parts = [f"{title} {num(r.get(key))}" for key, title in _EVALUATION_WORDS if key in r]
        lines.append(f"{r['method']}: " + ", ".join(parts))
    return headline, tuple(lines)


_EVALUATION_WORDS = (
    ("flip_rate", "flip rate"),
    ("distance", "distance"),
    ("bleu", "BLEU"),
    ("bertscore_f1", "BERTScore F1"),
    ("perplexity", "perplexity"),
)
