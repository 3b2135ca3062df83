"""``counterfair compare``'s report page: which groups B is fairer or less fair for than A, with intervals."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ...summaries import ComparisonSummary, Estimate, Record, typed
from ...views.page import Page, Table, interval, num
from ...views.verdict import comparison_headline


def compare_page(summary: Mapping[str, Any] | Record) -> Page:
    """``counterfair compare``'s report page: which groups B is fairer or less fair for than A, with intervals."""
    s = typed(summary, ComparisonSummary)
    headline, status = comparison_headline(s)
    return Page(
        command="compare",
        title="Two classifiers on the same pairs",
        headline=headline,
        status=status,
        findings=(
            f"B = {s.b}, A = {s.a}; {num(s.matched_pairs)} pairs in both (only in A: {num(s.pairs_only_in_a)}, only "
            f"in B: {num(s.pairs_only_in_b)}).",
        ),
        meta=(
            "Per text, the gap (the CTF gap; the disparity beyond placebo in the slot) under A and under B; B − A "
            "with a paired bootstrap interval and a paired permutation test: better = interval below 0 and p < 0.05, "
            "worse = above 0 and p < 0.05. In the slot: each side's findings as in its audit (material: shown to "
            "exceed 2 points after Holm's correction).",
        ),
        next_steps=("gate the new model on it: counterfair audit DATA --classifier NEW --baseline OLD --fail-if RULE",),
        tables=comparison_tables(s),
        details=s.to_dict(),
    )


def comparison_tables(s: ComparisonSummary) -> tuple[Table, ...]:
    """B − A per unit for each metric compared (this command's page, and an audit's with a baseline)."""
    from ...analysis.compare import comparison_table

    tables = []
    for m in s.metrics.by_metric():
        frame = comparison_table(s, m)
        rows = [
            {"unit": unit, "A": num(r["a"]), "B": num(r["b"]), "B − A [95% CI]": interval(
                Estimate(value=r["difference"], ci_low=r["ci_low"], ci_high=r["ci_high"])),
             "p": num(r["p_value"]), "verdict": r["verdict"]}
            for unit, r in frame.iterrows()
        ]  # fmt: skip
        title = {"ctf_gap": "CTF gap", "disparity": "Disparity beyond placebo (in the slot)"}.get(
            m, m.replace("_", " ")
        )
        tables.append(Table(f"{title}: B − A per group (negative: B is fairer)", pd.DataFrame(rows),
                            None, f"comparison-{m}", signed=("B − A [95% CI]",)))  # fmt: skip
    return tuple(tables)
