"""Typed results of the in-memory core: tables as DataFrames, the summary as a dict, a notebook view, ``save(dir)``.

Like fairlearn's ``MetricFrame``: read ``.by_group`` and the other tables instead of string keys of a summary.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any

import pandas as pd


def _figure_png(draw: Any) -> str | None:
    """A small matplotlib figure drawn by ``draw(ax)``, as an inline PNG tag (None if there is nothing to draw)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3))
    try:
        if draw(ax) is False:
            return None
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=90)
    finally:
        plt.close(fig)
    return f'<img alt="figure" src="data:image/png;base64,{base64.b64encode(buffer.getvalue()).decode()}">'


def html_view(title: str, lines: list[str], tables: list[tuple[str, pd.DataFrame]], figures: list[str | None]) -> str:
    parts = [f"<div><h4>{html.escape(title)}</h4>"]
    parts += [f"<p>{html.escape(line)}</p>" for line in lines]
    for caption, table in tables:
        if not table.empty:
            parts.append(f"<p><b>{html.escape(caption)}</b></p>{table.to_html(float_format=lambda v: f'{v:.3f}')}")
    parts += [f for f in figures if f]
    return "".join(parts) + "</div>"


class TableResult:
    """What every result shares: a table and a summary; ``to_dict()`` and ``save(dir)`` (the table as CSV,
    ``summary.json``, and whatever :meth:`_saved` adds)."""

    summary: dict[str, Any]
    _table_file = "pairs.csv"

    def _table(self) -> pd.DataFrame:
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        return dict(self.summary)

    def save(self, directory: str | Path) -> Path:
        """Write the table, ``summary.json`` (and for an audit the report) into ``directory``; returns it."""
        from .io import write_json, write_table
        from .runs import prepare_out_dir

        target = prepare_out_dir(directory)
        write_table(self._table(), target / self._table_file)
        write_json(self.summary, target / "summary.json")
        self._saved(target)
        return target

    def _saved(self, target: Path) -> None:
        """Called after :meth:`save` wrote the table and the summary."""

    def __rich__(self) -> Any:
        """The command's console tables, from :mod:`counterfair.console_view` (``rich.print(result)``); the table
        itself for a result without a view of its own."""
        from . import console_view

        if self._view is None:
            return console_view.frame_table(self._table(), type(self).__name__)
        return getattr(console_view, self._view)(self.summary)

    _view: str | None = None  # the name of the console_view function that renders the summary


class AuditResult(TableResult):
    """An audit: ``pairs`` (one row per original/counterfactual pair with both scores and a status), ``by_group``
    (per method and attribute: mean score change with its 95 % CI, flips), ``ctf_by_group`` (CTF gap per identity
    group), ``summary`` (everything, as ``summary.json``)."""

    _view = "audit_view"

    def __init__(self, pairs: pd.DataFrame, summary: dict[str, Any]) -> None:
        self.pairs = pairs
        self.summary = summary

    @property
    def by_group(self) -> pd.DataFrame:
        rows = [
            {
                "method": g["method"],
                "attribute": g["attribute"],
                "pairs": g["pairs"],
                "mean_change": g["score_change"]["mean"],
                "ci_low": g["score_change"]["ci_low"],
                "ci_high": g["score_change"]["ci_high"],
                "flips": g["flips"],
                "flip_rate": g["flip_rate"],
                "pairs_without_score": g.get("pairs_without_score", 0),
            }
            for g in self.summary["groups"]
        ]
        return pd.DataFrame(rows).set_index(["method", "attribute"]) if rows else pd.DataFrame()

    @property
    def ctf_gap(self) -> float | None:
        ctf = self.summary.get("ctf") or {}
        return ctf.get("ctf_gap")

    @property
    def ctf_by_group(self) -> pd.DataFrame:
        groups = (self.summary.get("ctf") or {}).get("by_group") or {}
        return pd.DataFrame.from_dict(groups, orient="index").rename_axis("group")

    @property
    def identity_effects(self) -> pd.DataFrame:
        """Identity gap, placebo gap and their difference with its 95 % CI per group (:mod:`counterfair.placebo`)."""
        groups = (self.summary.get("placebo") or {}).get("by_group") or {}
        return pd.DataFrame.from_dict(groups, orient="index").rename_axis("group")

    def check(self, rules: list[str]) -> dict[str, Any]:
        """The fairness gate's verdicts on ``rules`` (:mod:`counterfair.gate`); also kept in the summary."""
        from .gate import gate_pairs

        opts = self.summary.get("options", {})
        gate = gate_pairs(
            self.pairs,
            rules,
            seed=opts.get("seed", 0),
            n_resamples=opts.get("bootstrap", 2000),
            effects=self.summary.get("placebo"),
        )
        self.summary["gate"] = gate
        return gate

    def compare(self, baseline: Any, *, name: str = "baseline") -> pd.DataFrame:
        """This audit's classifier (B) against ``baseline`` (A) on the same pairs, per group
        (:mod:`counterfair.compare`): another ``AuditResult``, a run directory, or a classifier (anything
        :func:`~counterfair.as_classifier` takes) that scores these pairs."""
        from .compare import compare_pairs, comparison_table, rescore_pairs

        opts = self.summary.get("options", {})
        if not isinstance(baseline, AuditResult | str | Path):
            baseline = rescore_pairs(
                self.pairs, baseline, threshold=opts.get("threshold", 0.5), positive_label=opts.get("positive_label")
            )
        comparison = compare_pairs(
            baseline,
            self.pairs,
            names=(name, self.summary["classifier"]["spec"]),
            seed=opts.get("seed", 0),
            n_resamples=opts.get("bootstrap", 2000),
        )
        self.summary["comparison"] = comparison
        return comparison_table(comparison)

    def _table(self) -> pd.DataFrame:
        return self.pairs

    def _saved(self, target: Path) -> None:
        from .report import build_report

        build_report(target)  # report.html, report.md, plots/

    def _repr_html_(self) -> str:
        ok = self.pairs[self.pairs["status"] == "ok"] if not self.pairs.empty else self.pairs

        def histogram(ax: Any) -> bool:
            if ok.empty:
                return False
            for method, part in ok.groupby("method"):
                ax.hist(part["diff"], bins=30, alpha=0.6, label=str(method))
            ax.set_xlabel("score change, original → counterfactual")
            ax.legend()
            return True

        gap, unscored = self.ctf_gap, self.summary.get("pairs_without_score")
        line = f"classifier {self.summary['classifier']['spec']}; {len(self.pairs)} pairs"
        line += f"; CTF gap {gap:.3f}" if gap is not None else ""
        line += f"; {unscored} pairs without a score" if unscored else ""
        lines = [line]
        placebo = self.summary.get("placebo") or {}
        if placebo.get("identity_effect") is not None:
            lines.append(
                f"identity effect (CTF gap − placebo gap) {placebo['identity_effect']:.3f}; groups above the placebo: "
                + (", ".join(placebo["groups_exceeding_placebo"]) or "none")
            )
        tables = [
            ("by method and attribute", self.by_group),
            ("CTF gap by identity group", self.ctf_by_group),
            ("identity effect by group swapped in", self.identity_effects),
        ]
        return html_view("counterfair audit", lines, tables, [_figure_png(histogram)])

    def __repr__(self) -> str:
        return f"AuditResult({len(self.pairs)} pairs, classifier {self.summary['classifier']['spec']!r})"


class CTFResult(TableResult):
    """Counterfactual token fairness: ``pairs`` (every swap with both scores), ``ctf_gap``, ``by_group`` (per source
    term), ``by_direction`` (per source → target), ``summary``."""

    _view = "ctf_view"

    def __init__(self, pairs: pd.DataFrame, summary: dict[str, Any]) -> None:
        self.pairs = pairs
        self.summary = summary

    @property
    def ctf_gap(self) -> float | None:
        value = self.summary.get("ctf_gap")
        return None if value is None else float(value)

    @property
    def by_group(self) -> pd.DataFrame:
        terms = self.summary.get("by_source_term") or {}
        return pd.DataFrame.from_dict(terms, orient="index").rename_axis("source_term")

    @property
    def by_direction(self) -> pd.DataFrame:
        return pd.DataFrame(self.summary.get("by_direction") or [])

    def _table(self) -> pd.DataFrame:
        return self.pairs

    def _repr_html_(self) -> str:
        gap = self.ctf_gap
        lines = [f"CTF gap {gap:.3f}" if gap is not None else "no CTF gap", f"{len(self.pairs)} pairs"]
        if self.summary.get("pairs_without_score"):
            lines.append(
                f"{self.summary['pairs_without_score']} pairs have no score: the gap is over the scored pairs only, "
                f"{self.summary['incomplete_texts']['texts']} texts incomplete"
            )
        return html_view("counterfair CTF", lines, [("by source term", self.by_group.head(20))], [])

    def __repr__(self) -> str:
        return f"CTFResult(ctf_gap={self.ctf_gap}, {len(self.pairs)} pairs)"
