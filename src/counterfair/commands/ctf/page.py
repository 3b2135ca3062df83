"""``counterfair ctf``'s report page: the gap, per source term and split, the directions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ...summaries import CTFSummary, Record, typed
from ...views.page import MISSING, Page, Table, interval, num
from ...views.verdict import FEW_PAIRS, largest_directions


def ctf_page(summary: Mapping[str, Any] | Record) -> Page:
    """``counterfair ctf``'s report page: the gap, per source term and split, the directions (few swaps marked)."""
    s = typed(summary, CTFSummary)
    terms = s.by_source_term or {}
    ranked = sorted(terms.items(), key=lambda kv: (-(kv[1].value or 0.0), kv[0]))
    solid = [(t, e) for t, e in ranked if e.texts >= 2]
    findings = []
    splits = [f"{name} terms {interval(e)} ({e.texts} texts)" for name, e in (s.by_split or {}).items() if e.texts]
    if splits:
        findings.append("By term split: " + "; ".join(splits) + ".")
    labels = [f"{name} {interval(e)} ({e.texts} texts)" for name, e in (s.by_label or {}).items() if e.texts]
    if labels:
        findings.append("By gold label: " + "; ".join(labels) + ".")
    findings.append("Largest gaps by source term (terms in at least 2 texts):")
    findings += [f"{t}: {interval(e)} over {e.texts} texts, {e.pairs} swaps" for t, e in solid[:5]]
    input_ = s.input
    meta = [
        f"Classifier {s.classifier.said()} (score = probability of {s.positive_label or MISSING}); "
        f"{num(input_.get('texts'))} texts from {input_.get('source', MISSING)}, {num(s.texts)} with identity terms; "
        f"counterfair {s.counterfair_version or MISSING}.",
        "CTF gap (Garg et al. 2019, paper 001): mean over texts of the mean |score change| over the text's swaps; "
        "percentile bootstrap interval over texts.",
    ]
    if s.swap:
        meta.insert(0, f"Swap: {s.swap.get('described')}.")
    notes = []
    if s.pairs_without_score:
        notes.append(f"{s.pairs_without_score} pairs have no score; the gap is over the scored pairs only.")
    notes += [str(n) for n in s.identities.get("overlapping_terms", [])]
    term_rows = [
        {"source term": t + ("" if e.texts >= 2 else " (one text)"), "texts": num(e.texts), "swaps": num(e.pairs),
         "CTF gap [95% CI]": interval(e)}
        for t, e in ranked
    ]  # fmt: skip
    direction_rows = [
        {"source → target": f"{d.source} → {d.target}" + (" (few swaps)" if d.pairs < FEW_PAIRS else ""),
         "swaps": num(d.pairs), "mean change": num(d.mean_diff), "mean |change|": num(d.mean_abs_diff)}
        for d in largest_directions(s.by_direction or (), 30)
    ]  # fmt: skip
    return Page(
        command="ctf",
        title="Counterfactual token fairness",
        headline=(
            f"CTF gap {interval(s)} over {num(s.texts)} texts and {num(s.pairs)} identity swaps; not "
            "placebo-controlled (counterfair audit separates the identity's part from the edit's)."
        ),
        findings=tuple(findings),
        meta=tuple(meta),
        next_steps=("the identity effect over a placebo: counterfair audit DATA --methods swap",),
        tables=(
            Table("Per source term, largest gap first", pd.DataFrame(term_rows), None, "terms"),
            Table(
                "Directions with the largest mean change",
                pd.DataFrame(direction_rows),
                f"Directions with fewer than {FEW_PAIRS} swaps come last, marked; pairs.csv has every swap.",
                "directions",
            ),
        ),
        notes=tuple(notes),
        details=s.to_dict(),
    )
