"""``counterfair suite``'s result: each case, accuracies per functionality and target, the bias AUCs by target."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ...results import TableResult
from ...summaries import GateMetrics, SuiteSummary
from ..bias.result import BiasResult

if TYPE_CHECKING:
    pass


class SuiteResult(TableResult[SuiteSummary]):
    """A functional test suite (:mod:`counterfair.commands.suite.core`): ``rows`` (each case with its label, score,
    prediction and whether it is correct), ``by_functionality`` and ``by_target`` (accuracy with Wilson intervals, worst
    first), ``bias`` (the bias AUCs with the targets as groups, a :class:`BiasResult`), ``overall``, ``summary``."""

    def _saved(self, target: Path) -> None:
        from ...views.page import write_summary_page
        from .page import suite_page

        write_summary_page(target, suite_page)

    def _console(self) -> Any:
        from ...views.page import to_console
        from .page import suite_page

        return to_console(suite_page(self.summary))

    _table_file = "rows.csv"
    _summary_type = SuiteSummary

    def __init__(self, rows: pd.DataFrame, summary: Mapping[str, Any] | SuiteSummary) -> None:
        self.rows = rows
        self._keep_summary(summary)  # the record the core made, or a summary read

    def gate_metrics(self) -> GateMetrics:
        """Accuracy per functionality and target, and the bias metrics with the targets as groups."""
        from ...analysis.gate import suite_gate_metrics

        return suite_gate_metrics(self.typed_summary)

    @staticmethod
    def _cells(cells: Mapping[str, Any] | None, index: str) -> pd.DataFrame:
        records = [
            {index: k, "n": c.n, "n_positive": c.n_positive, "accuracy": c.accuracy.value,
             "accuracy_low": c.accuracy.ci_low, "accuracy_high": c.accuracy.ci_high, "few": c.few}
            for k, c in (cells or {}).items()
        ]  # fmt: skip
        return pd.DataFrame(records).set_index(index) if records else pd.DataFrame()

    @property
    def by_functionality(self) -> pd.DataFrame:
        return self._cells(self.typed_summary.functionalities, "functionality")

    @property
    def by_target(self) -> pd.DataFrame:
        return self._cells(self.typed_summary.targets, "target")

    def _groups_for_difference(self) -> pd.DataFrame:
        return self.by_functionality[["accuracy"]] if not self.by_functionality.empty else pd.DataFrame()

    @property
    def overall(self) -> pd.Series:
        s = self.typed_summary
        values = {"accuracy": s.accuracy.value, "accuracy_low": s.accuracy.ci_low, "accuracy_high": s.accuracy.ci_high}
        if s.bias is not None:
            values |= {"overall_auc": s.bias.overall_auc.value, "final_metric": s.bias.final_metric.value}
        return pd.Series(values, dtype=float)

    @property
    def bias(self) -> BiasResult | None:
        """The bias AUCs with the targets as groups (None for a suite without targets)."""
        s = self.typed_summary
        if s.bias is None:
            return None
        members = {f"group:{t}": (self.rows["target"] == t).astype(int) for t in (s.bias.groups or {})}
        rows = self.rows[["case_id", "label", "score"]].rename(columns={"case_id": "input_id"}).assign(**members)
        return BiasResult(
            rows,
            replace(s.bias, keys=None, command="bias", classifier=s.classifier, positive_label=s.positive_label,
                    threshold=s.threshold, membership="suite targets"),
        )  # fmt: skip

    def page(self) -> Any:
        from .page import suite_page

        return suite_page(self.summary)

    def _table(self) -> pd.DataFrame:
        return self.rows

    def _repr_html_(self) -> str:
        from ...views.page import to_notebook_html

        return to_notebook_html(self.page())

    def __repr__(self) -> str:
        s = self.typed_summary
        functionalities = len(s.functionalities or {})
        return f"SuiteResult({len(self.rows)} cases, accuracy {s.accuracy.value}, {functionalities} functionalities)"
