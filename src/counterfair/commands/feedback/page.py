"""``counterfair feedback``'s report page: inc@n and the per-step means, the per-step box plots (paper 002)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ...summaries import FeedbackSummary, Record, typed
from ...views.page import MISSING, Figure, Page, Table, num


def feedback_page(summary: Mapping[str, Any] | Record) -> Page:
    """``counterfair feedback``'s report page: inc@n and the per-step means (paper 002)."""
    s = typed(summary, FeedbackSummary)
    inc = {k: v for k, v in s.inconsistency.items() if v is not None}
    steps = s.steps or {}
    rows = [
        {"step": k, "texts": num(e.texts), "minimality": num(e.minimality), "flip rate": num(e.flip_rate),
         "probability": num(e.probability), "ppl (base)": num(e.ppl_base), "ppl (fine)": num(e.ppl_fine),
         "inc@step": num(s.inconsistency.get(f"inc@{k}")), "mean words": num(e.mean_words)}
        for k, e in steps.items()
    ]  # fmt: skip
    shown = ", ".join(f"{k} {num(v)}" for k, v in inc.items()) or "no inc@n (fewer than two steps)"
    findings = [f"step {k}: {num(e.texts)} texts, flip rate {num(e.flip_rate)}, minimality {num(e.minimality)}"
                for k, e in steps.items()]  # fmt: skip
    findings.append(f"The inputs: {num(s.mean_words_by_step.get('0'), 1)} words on average (per step: mean words).")
    return Page(
        command="feedback",
        title="Counterfactuals of counterfactuals",
        headline=(
            f"{s.editor.name} fed its own output: {shown} (inc@k: the mean growth of the edit distance from one "
            "application to the next; above 0 the editor missed a smaller edit it could have made)."
        ),
        findings=tuple(findings),
        meta=(
            f"Editor {s.editor.name}, classifier {s.classifier.said()}; counterfair "
            f"{s.counterfair_version or MISSING}. inc@n, flip-rate@n and perplexity@n: paper 002.",
        ),
        tables=(Table("Per step", pd.DataFrame(rows), None, "steps"),),
        details=s.to_dict(),
    )


def feedback_figures(run_dir: Any) -> tuple[Figure, ...]:
    """Paper 002's per-step box plots of minimality and perplexity, from the run's ``steps.csv``."""
    from pathlib import Path

    from ...io import read_table
    from ...views.report import embed_figures, plots

    run_dir = Path(run_dir)
    steps_file = run_dir / "steps.csv"
    if not steps_file.exists():
        return ()
    steps = read_table(steps_file, allow_empty=True)
    made = [
        (
            "feedback_steps",
            "Per step: words changed from the previous step (minimality) and perplexity, over the texts (paper 002)",
            plots.feedback_step_boxes(steps, run_dir / "plots"),
        )
    ]
    return tuple(Figure(f["caption"], f["png"], f["svg"], f["name"]) for f in embed_figures(made))
