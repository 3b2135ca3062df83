"""``counterfair generate``'s report page: per method, coverage, still referencing, BLEU and BERTScore."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ...summaries import GenerateSummary, Record, typed
from ...views.page import MISSING, Page, Table, interval, num

_DETECTOR_NOTES = {
    "keyword": 'the attribute\'s word list only, so a text that alludes to the group without naming it ("during Eid") '
    "counts as not referencing it",
    "keyword+llm": "the attribute's word list, then the run's LLM asked whether a rewrite that every other filter "
    "passed names or alludes to the group",
    "llm": "the run's LLM asked paper 000's rater question (explicit, implicit or no reference)",
}


def detector_note(detector: Any) -> tuple[str, ...]:
    """The report's sentence on what judged "still referencing" (none for a run that records no detector)."""
    if not isinstance(detector, str):
        return ()
    how = _DETECTOR_NOTES.get(detector, "a trained classifier" if detector.startswith("mlp:") else None)
    return (f'"Still referencing" is judged by the {detector} attribute detector' + (f": {how}." if how else "."),)


def generate_page(summary: Mapping[str, Any] | Record) -> Page:
    """``counterfair generate``'s report page: per method, coverage, still referencing, BLEU and BERTScore."""
    s = typed(summary, GenerateSummary)
    methods = s.methods or {}
    attribute = s.options.get("attribute", MISSING)
    rows, findings = [], []
    for name, m in methods.items():
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(m.status.items(), key=lambda kv: -kv[1]))
        rows.append(
            {"method": name, "inputs": num(m.inputs), "with counterfactual": num(m.share_with_counterfactual),
             "still referencing": num(m.share_still_referencing), "BLEU [95% CI]": interval(m.bleu),
             "BERTScore F1 [95% CI]": interval(m.bertscore_f1), "statuses": statuses}
        )  # fmt: skip
        share = m.share_with_counterfactual
        findings.append(
            f"{name}: {num(None if share is None else 100 * share, 0)}% of {m.inputs} inputs got a counterfactual; "
            f"BLEU {num(m.bleu.value)}, BERTScore F1 {num(m.bertscore_f1.value)}"
        )
    best = max(methods.items(), key=lambda kv: kv[1].share_with_counterfactual or 0.0, default=None)
    headline = (
        f"counterfactuals for the attribute {attribute} by {len(methods)} method{'' if len(methods) == 1 else 's'}"
    )
    if best is not None:
        share = best[1].share_with_counterfactual
        headline += f"; {best[0]} reaches the most inputs ({num(None if share is None else 100 * share, 0)}%)."
    return Page(
        command="generate",
        title="Counterfactual texts",
        headline=headline,
        findings=tuple(findings),
        meta=(
            f"Input {s.input or MISSING}; counterfair {s.counterfair_version or MISSING}. "
            "BLEU and BERTScore compare each counterfactual with its original (paper 000's ranking).",
            *detector_note(s.options.get("detector")),
        ),
        next_steps=("score a classifier on these pairs: counterfair audit, or counterfair evaluate",),
        tables=(Table("Per method", pd.DataFrame(rows), None, "methods"),),
        details=s.to_dict(),
    )
