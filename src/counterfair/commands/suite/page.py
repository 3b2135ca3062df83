"""``counterfair suite``'s report page and console view: the worst functionalities and cells first, the bias AUCs
by target."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ...summaries import Record, SuiteCell, SuiteSummary, typed
from ...views.page import MISSING, Page, Table, interval, num
from ...views.verdict import gate_rules
from ..bias.page import AUC_NOTE, below, bias_table, page_status


def _cell_row(name: str, c: SuiteCell, *, first: str) -> dict[str, str]:
    failed = None if c.accuracy.value is None else round(c.n * (1 - c.accuracy.value))
    return {
        first: name + (" (few cases)" if c.few else ""),
        "cases": num(c.n),
        "hateful cases": num(c.n_positive),
        "accuracy [95% CI]": interval(c.accuracy),
        "failed": num(failed),
    }


def _cell_sentence(name: str, c: SuiteCell) -> str:
    few = ", few cases" if c.few else ""
    labels = "hateful" if c.n_positive == c.n else "non-hateful" if c.n_positive == 0 else "mixed"
    return f"{name}: accuracy {interval(c.accuracy)} over {c.n} cases ({labels}{few})"


def suite_headline(s: SuiteSummary) -> tuple[str, list[str]]:
    """The suite's headline and the functionalities significantly below the overall accuracy."""
    functionalities = s.functionalities or {}
    weak = below({f: c.accuracy for f, c in functionalities.items()}, s.accuracy)
    n = s.input.get("cases", s.accuracy.n)
    head = f"accuracy {interval(s.accuracy)} over {num(n)} cases"
    if weak:
        head += f"; functionalities whose whole 95% interval lies below the overall accuracy: {', '.join(weak)}."
    else:
        head += "; no functionality is significantly below the overall accuracy."
    return head, weak


def suite_page(summary: Mapping[str, Any] | Record, *, worst: int = 5) -> Page:
    """``counterfair suite run``'s report page."""
    from ...views.verdict import bias_findings

    s = typed(summary, SuiteSummary)
    headline, weak = suite_headline(s)
    gate_status, rules = gate_rules(s.gate)
    functionalities, targets = s.functionalities or {}, s.targets or {}
    findings = ["Worst functionalities:"] + [_cell_sentence(f, c) for f, c in list(functionalities.items())[:worst]]
    if targets:
        findings += ["Worst targets:"] + [_cell_sentence(t, c) for t, c in list(targets.items())[:3]]
    if s.bias is not None:
        background = s.input.get("without_target")
        behind = (
            f" ({num(background)} cases without a target are background in every group's AUCs)" if background else ""
        )
        findings += [f"Bias AUCs with the targets as groups{behind}:", bias_findings(s.bias).headline]
    tables = [
        Table(
            "Per functionality, worst first",
            pd.DataFrame([_cell_row(f, c, first="functionality") for f, c in functionalities.items()]),
            "Accuracy: the share of cases whose prediction (score ≥ threshold) matches the gold label; Wilson's 95% "
            "interval.",
            "functionalities",
        )
    ]
    if targets:
        tables.append(
            Table(
                "Per target, worst first",
                pd.DataFrame([_cell_row(t, c, first="target") for t, c in targets.items()]),
                None,
                "targets",
            )
        )
    if s.cells:
        rows = [_cell_row(f"{c.functionality} × {c.target}", c, first="functionality × target") for c in s.cells]
        tables.append(Table("Worst cells (functionality × target)", pd.DataFrame(rows[:20]), None, "cells"))
    if s.bias is not None:
        tables.append(Table("Bias AUCs per target, lowest BPSN AUC first", bias_table(s.bias, group="target"),
                            AUC_NOTE, "bias"))  # fmt: skip
    input_ = s.input
    meta = (
        f"Classifier {s.classifier.said()} (score = probability of {s.positive_label}, threshold {s.threshold}); "
        f"{num(input_.get('cases'))} cases ({num(input_.get('positive'))} hateful) from "
        f"{input_.get('source', MISSING)}; counterfair {s.counterfair_version or MISSING}.",
    )
    steps = []
    if weak:
        steps.append(f"read the failed cases of {weak[0]} (rows.csv: correct = 0)")
    if s.gate is None:
        steps.append("make it a CI check: --fail-if 'lower(accuracy[*]) < 0.8'")
    return Page(
        command="suite",
        title="Functional test suite",
        headline=headline,
        status=page_status(gate_status, bool(weak)),
        findings=tuple(findings),
        gate_status=gate_status,
        rules=rules,
        meta=meta,
        next_steps=tuple(steps),
        tables=tuple(tables),
        details=s.to_dict(),
    )
