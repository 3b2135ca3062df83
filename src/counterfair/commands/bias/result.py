"""``counterfair bias``'s result: each text's row and the bias AUCs per group, with the gate."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ...results import TableResult
from ...summaries import BiasSummary, GateMetrics

if TYPE_CHECKING:
    pass


class BiasResult(TableResult[BiasSummary]):
    """Unintended bias on labelled data (:mod:`counterfair.commands.bias.core`): ``rows`` (each text's label, score and
    groups), ``by_group`` (subgroup, BPSN, BNSP and pinned AUC with intervals and counts), ``overall`` (overall AUC,
    the generalized means, the final metric, FPED, FNED), ``summary``."""

    def _saved(self, target: Path) -> None:
        from ...views.page import write_summary_page
        from .page import bias_page

        write_summary_page(target, bias_page)

    def _console(self) -> Any:
        from ...views.page import to_console
        from .page import bias_page

        return to_console(bias_page(self.summary))

    _table_file = "rows.csv"
    _summary_type = BiasSummary

    def __init__(self, rows: pd.DataFrame, summary: Mapping[str, Any] | BiasSummary) -> None:
        self.rows = rows
        self._keep_summary(summary)  # the record the core made, or a summary read

    def gate_metrics(self) -> GateMetrics:
        """The bias metrics as the gate reads them (overall and per group)."""
        from ...analysis.gate import bias_gate_metrics

        return bias_gate_metrics(self.typed_summary)

    @property
    def by_group(self) -> pd.DataFrame:
        records = []
        for group, g in (self.typed_summary.groups or {}).items():
            record: dict[str, Any] = {"group": group, "n": g.n, "n_positive": g.n_positive, "n_negative": g.n_negative}
            for metric in ("subgroup_auc", "bpsn_auc", "bnsp_auc", "pinned_auc"):
                estimate = getattr(g, metric)
                record |= {metric: estimate.value, f"{metric}_low": estimate.ci_low, f"{metric}_high": estimate.ci_high}
            records.append(record)
        return pd.DataFrame(records).set_index("group") if records else pd.DataFrame()

    @property
    def overall(self) -> pd.Series:
        s = self.typed_summary
        values = {"overall_auc": s.overall_auc.value, "final_metric": s.final_metric.value, "fped": s.fped.value}
        values |= {"fned": s.fned.value} | {f"power_mean_{k}": v.value for k, v in (s.generalized_mean or {}).items()}
        return pd.Series(values, dtype=float)

    def _table(self) -> pd.DataFrame:
        return self.rows

    def page(self) -> Any:
        """The report page (:mod:`.page`): ``report.html``, ``report.md`` and the notebook view."""
        from .page import bias_page

        return bias_page(self.summary)

    def _repr_html_(self) -> str:
        from ...views.page import to_notebook_html

        return to_notebook_html(self.page())

    def __repr__(self) -> str:
        s = self.typed_summary
        final = s.final_metric.value
        return f"BiasResult({len(self.rows)} texts, overall AUC {s.overall_auc.value}, final metric {final})"
