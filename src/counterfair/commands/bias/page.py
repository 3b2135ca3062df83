"""``counterfair bias``'s report page (HTML, Markdown, the notebook) from its typed summary: groups whose AUCs lie
below the overall AUC first."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ...summaries import BiasSummary, Record, typed
from ...views.page import MISSING, Page, Table, interval, num
from ...views.verdict import gate_rules

_BIAS_METRICS = (
    ("subgroup_auc", "subgroup AUC"),
    ("bpsn_auc", "BPSN AUC"),
    ("bnsp_auc", "BNSP AUC"),
    ("pinned_auc", "pinned AUC"),
)


def page_status(gate_status: str | None, attention: bool) -> str:
    if gate_status in ("fail", "error"):
        return "fail"
    if attention:
        return "attention"
    return "pass" if gate_status == "pass" else "neutral"


def bias_table(s: BiasSummary, *, group: str = "group") -> pd.DataFrame:
    """Per group its counts and four AUCs with intervals, the lowest BPSN AUC first; a group without values last,
    with the reason."""
    groups = s.groups or {}
    order = sorted(groups, key=lambda g: (groups[g].bpsn_auc.value is None, groups[g].bpsn_auc.value or 0.0, g))
    rows = []
    for g in order:
        e = groups[g]
        row: dict[str, Any] = {group: g, "texts": num(e.n), "toxic": num(e.n_positive)}
        row |= {title: interval(getattr(e, metric)) for metric, title in _BIAS_METRICS}
        row["notes"] = "; ".join(e.notes) or ""
        rows.append(row)
    return pd.DataFrame(rows)


def _overall_table(s: BiasSummary) -> pd.DataFrame:
    rows = [
        ("overall AUC", interval(s.overall_auc), "all texts"),
        ("final metric", interval(s.final_metric), "0.25 × overall AUC + 0.75 × mean of the three generalized means"),
    ]
    rows += [
        (
            f"generalized mean of {k.replace('_', ' ')}",
            interval(v),
            f"power mean over groups, p = {s.generalized_mean_power}",
        )
        for k, v in (s.generalized_mean or {}).items()
    ]
    rows += [
        ("FPED", interval(s.fped), f"Σ over groups |FPR − FPR(group)| at {s.threshold}"),
        ("FNED", interval(s.fned), f"Σ over groups |FNR − FNR(group)| at {s.threshold}"),
    ]
    return pd.DataFrame(rows, columns=["metric", "value [95% CI]", "meaning"])


def below(estimates: Mapping[str, Any], overall: Any) -> list[str]:
    """Names whose whole 95 % interval lies below the overall value (a functionality at [0.269, 0.425] against an
    overall 0.436 is listed; it was not when its upper bound had to fall below the overall value's lower bound)."""
    if overall is None or overall.value is None:
        return []
    return [k for k, e in estimates.items() if e.ci_high is not None and e.ci_high < overall.value]


def bias_page(summary: Mapping[str, Any] | Record) -> Page:
    """``counterfair bias``'s report page."""
    from ...views.verdict import bias_findings

    s = typed(summary, BiasSummary)
    parts = bias_findings(s, worst=3)
    gate_status, rules = gate_rules(s.gate)
    groups = s.groups or {}
    weak = set(below({g: e.bpsn_auc for g, e in groups.items()}, s.overall_auc))
    weak |= set(below({g: e.bnsp_auc for g, e in groups.items()}, s.overall_auc))
    lowest = {g: min(v for v in (groups[g].bpsn_auc.value, groups[g].bnsp_auc.value) if v is not None) for g in weak}
    ranked = sorted(weak, key=lambda g: (lowest[g], g))  # the lowest AUC first
    findings = [parts.means, parts.equality, *parts.lowest]
    if ranked:
        findings.insert(
            0,
            "Groups whose BPSN or BNSP AUC lies below the overall AUC with its whole 95% interval: "
            + ", ".join(ranked),
        )
    input_ = s.input
    meta = (
        f"Classifier {s.classifier.said()} (score = probability of {s.positive_label}); {num(input_.get('texts'))} "
        f"texts from {input_.get('source', MISSING)}; groups from {s.membership}; counterfair "
        f"{s.counterfair_version or MISSING}.",
        "Borkan et al. 2019 (subgroup, BPSN, BNSP AUC; generalized mean; final metric), Dixon et al. 2018 (pinned AUC, "
        "equality differences); percentile bootstrap intervals.",
    )
    steps = []
    if ranked:
        steps.append(
            f"read the texts of {ranked[0]} the classifier ranks wrongly (rows.csv: label, score, group:{ranked[0]})"
        )
    if s.gate is None:
        steps.append("make it a CI check: --fail-if 'lower(bpsn_auc[*]) < 0.8' --fail-if 'final_metric < 0.9'")
    return Page(
        command="bias",
        title="Unintended bias on labelled data",
        headline=parts.headline,
        status=page_status(gate_status, bool(ranked)),
        findings=tuple(f.removeprefix("- ") for f in findings),
        gate_status=gate_status,
        rules=rules,
        meta=meta,
        next_steps=tuple(steps),
        tables=(
            Table("Per group, lowest BPSN AUC first", bias_table(s), AUC_NOTE, "groups"),
            Table("Overall", _overall_table(s), None, "overall"),
        ),
        notes=(parts.without,) if parts.without else (),
        details=s.to_dict(),
    )


AUC_NOTE = (
    "Subgroup AUC: the texts that mention the group. BPSN: the group's non-toxic texts against the other toxic ones "
    "(low: false positives for the group). BNSP: the group's toxic texts against the other non-toxic ones (low: false "
    "negatives). Pinned AUC: a sample of the group's texts pinned to an equal-size sample of all texts."
)
