"""The answer first: an audit's verdict in plain words, shared by the HTML report, report.md, the console and the
notebook view.

Is the classifier fair, for whom, how sure are we, and what to look at next — from the typed summary alone:

* per identity group swapped in, the placebo-controlled identity effect (CTF gap minus placebo gap) with its 95 %
  interval, and whether that interval lies above 0 (the effect exceeds what any edit of that kind does);
* the fairness gate, when rules were given: its status and each rule written as a sentence with the value compared;
* without a placebo, the CTF gap and its interval (the identity effect needs the placebo);
* what to look at next.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..summaries import AuditSummary, GateCheck, GateVerdict, IdentityEffect, Record, typed

FEW_PAIRS = 5  # a swap direction resting on fewer swaps comes after the others in "largest" lists, marked


def largest_directions(directions: Any, limit: int) -> list[Any]:
    """Swap directions by the size of their mean change, those with at least :data:`FEW_PAIRS` swaps first (the rest
    follow, to be marked "few swaps" by the view)."""
    return sorted(directions, key=lambda d: (d.pairs < FEW_PAIRS, -abs(d.mean_diff or 0.0)))[:limit]


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.3f}"


@dataclass(frozen=True)
class GroupFinding:
    """One identity group: its identity effect with the interval, and whether the interval lies above 0."""

    group: str
    effect: float | None
    ci_low: float | None
    ci_high: float | None
    texts: int
    exceeds_placebo: bool

    def sentence(self) -> str:
        where = "above the placebo" if self.exceeds_placebo else "not shown to exceed the placebo"
        return (
            f"{self.group}: identity effect {_signed(self.effect)} [{_num(self.ci_low)}, {_num(self.ci_high)}] over "
            f"{self.texts} texts — {where}"
        )


@dataclass(frozen=True)
class Verdict:
    """What a reader needs first: ``status`` (``unfair``, ``no evidence of unfairness``, ``gate failed``, ...), a
    ``headline`` sentence, per-group ``findings`` (largest effect first), the gate's ``rules`` as sentences, and
    ``next_steps``."""

    status: str
    headline: str
    findings: tuple[GroupFinding, ...]
    gate_status: str | None
    rules: tuple[tuple[str, str], ...]  # (verdict, sentence)
    basis: str
    next_steps: tuple[str, ...]
    labelled: tuple[str, ...] = ()  # with a label column: the labelled-data bias verdict (bias_lines)

    def lines(self) -> list[str]:
        """The verdict as plain lines (report.md, the console, a CI log)."""
        out = [f"Verdict: {self.headline}", self.basis]
        out += [f"- {f.sentence()}" for f in self.findings]
        out += [
            f"Labelled data — {line.removeprefix('Verdict: ')}" if i == 0 else line
            for i, line in enumerate(self.labelled)
        ]
        if self.gate_status is not None:
            out.append(f"Fairness gate: {self.gate_status.upper()}")
            out += [f"- {verdict.upper()}: {sentence}" for verdict, sentence in self.rules]
        out += [f"Next: {step}" for step in self.next_steps]
        return out


_METRIC_WORDS = {
    "accuracy": "accuracy",
    "target_accuracy": "accuracy",
    "identity_effect": "identity effect",
    "ctf_gap": "CTF gap",
    "flip_rate": "flip rate",
    "subgroup_auc": "subgroup AUC",
    "bpsn_auc": "BPSN AUC",
    "bnsp_auc": "BNSP AUC",
    "pinned_auc": "pinned AUC",
    "overall_auc": "AUC",
    "final_metric": "final metric",
    "fped": "false positive equality difference",
    "fned": "false negative equality difference",
}
_BOUND_WORDS = {"point": "", "upper": "the upper bound of ", "lower": "the lower bound of "}
_OP_WORDS = {">": "above", ">=": "at or above", "<": "below", "<=": "at or below"}


def rule_sentence(check: GateCheck, rules: tuple[Mapping[str, Any], ...]) -> str:
    """A gate check as a sentence: "fail if the upper bound of sexuality's identity effect is above 0.05: 0.093 —
    fails"."""
    rule = next((r for r in rules if r.get("text") == check.rule), {})
    subject = _METRIC_WORDS.get(check.metric, check.metric)
    owner = (
        f"{check.group}'s " if check.group not in (None, "*") else ("every group's " if check.group else "the overall ")
    )
    op = _OP_WORDS.get(str(rule.get("op")), str(rule.get("op", "")))
    threshold = rule.get("value")
    condition = f"fail if {_BOUND_WORDS.get(check.estimate, '')}{owner}{subject} is {op} {threshold:g}".rstrip()
    if check.verdict == "error":
        return f"{condition}: could not be evaluated ({check.message})"
    outcome = {"fail": "fails", "pass": "passes"}.get(check.verdict, check.verdict)
    return f"{condition}: {_num(check.value)} — {outcome}"


def _findings(effects: Mapping[str, IdentityEffect]) -> tuple[GroupFinding, ...]:
    found = [
        GroupFinding(g, e.value, e.ci_low, e.ci_high, e.texts, bool(e.exceeds_placebo)) for g, e in effects.items()
    ]
    return tuple(sorted(found, key=lambda f: (not f.exceeds_placebo, -(f.effect or 0.0), f.group)))


def gate_rules(gate: GateVerdict | None) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    """The gate's status and each check as (verdict, sentence): failed rules first, then those that could not be
    evaluated, then the passed ones."""
    if gate is None:
        return None, ()
    order = {"fail": 0, "error": 1}
    checks = sorted(gate.checks, key=lambda c: order.get(c.verdict, 2))
    return gate.verdict, tuple((c.verdict, rule_sentence(c, gate.rules)) for c in checks)


def verdict(summary: Mapping[str, Any] | Record) -> Verdict:
    """The verdict of an audit summary (``summary.json`` or ``AuditResult.typed_summary``)."""
    s = typed(summary, AuditSummary)
    gate_status, rules = gate_rules(s.gate)
    placebo = s.placebo
    if placebo is not None and placebo.value is not None and placebo.by_group:
        findings = _findings(placebo.by_group)
        above = [f.group for f in findings if f.exceeds_placebo]
        if above:
            status = "unfair"
            headline = (
                f"the classifier's scores change with the identity mentioned, beyond a placebo edit, for "
                f"{', '.join(above)} ({len(above)} of {len(findings)} groups)."
            )
        else:
            status = "no evidence of unfairness"
            groups = len(findings)
            headline = (
                f"no identity group's effect exceeds the placebo ({groups} groups; every 95% interval reaches 0)."
            )
        basis = (
            f"Identity effect = CTF gap − placebo gap, 95% bootstrap intervals over texts; overall "
            f"{_signed(placebo.value)} [{_num(placebo.ci_low)}, {_num(placebo.ci_high)}] over {placebo.texts} texts."
        )
    elif s.ctf is not None and s.ctf.value is not None:
        findings, status = (), "no placebo"
        headline = (
            f"CTF gap {_num(s.ctf.value)} [{_num(s.ctf.ci_low)}, {_num(s.ctf.ci_high)}] over identity swaps; "
            "without the placebo control the part due to the identity cannot be separated from the edit itself."
        )
        basis = f"Mean |score change| per text over {s.ctf.texts} texts with identity swaps."
    else:
        findings, status = (), "no identity swaps"
        headline = "no text got an identity swap, so there is no identity effect to report."
        basis = "Only the attribute methods' score changes are below."
    if gate_status == "fail":
        status = "gate failed"
    labelled = tuple(bias_lines(s.bias, worst=3)) if s.bias is not None else ()
    return Verdict(status, headline, findings, gate_status, rules, basis, _next_steps(s, findings), labelled)


@dataclass(frozen=True)
class BiasFindings:
    """The labelled-data verdict in parts: ``headline``, ``means`` (the generalized means), ``lowest`` (per BPSN and
    BNSP, a title line and the lowest groups), ``equality`` (FPED, FNED), ``without`` (groups without values)."""

    headline: str
    means: str
    lowest: tuple[str, ...]
    equality: str
    without: str | None


def bias_findings(summary: Mapping[str, Any] | Record, *, worst: int = 5) -> BiasFindings:
    from ..summaries import BiasSummary

    s = typed(summary, BiasSummary)
    groups = s.groups or {}
    overall = s.overall_auc
    headline = (
        f"overall AUC {_num(overall.value)} [{_num(overall.ci_low)}, {_num(overall.ci_high)}]"
        f", final metric {_num(s.final_metric.value)} [{_num(s.final_metric.ci_low)}, {_num(s.final_metric.ci_high)}]"
        " (0.25 × overall AUC + 0.75 × the mean of the generalized means; 1 is "
        "perfect)."
    )
    means = (
        "Generalized means (p = −5): "
        + ", ".join(
            f"{k} {_num(v.value)} [{_num(v.ci_low)}, {_num(v.ci_high)}]" for k, v in (s.generalized_mean or {}).items()
        )
        + "."
    )
    lowest: list[str] = []
    for metric, meaning in (
        ("bpsn_auc", "non-toxic texts about the group score like toxic ones (false positives)"),
        ("bnsp_auc", "toxic texts about the group score like non-toxic ones (false negatives)"),
    ):
        ranked = sorted(
            ((g, getattr(e, metric)) for g, e in groups.items() if getattr(e, metric).value is not None),
            key=lambda item: item[1].value if item[1].value is not None else 1.0,
        )[:worst]
        if ranked:
            lowest.append(f"Lowest {metric.replace('_auc', '').upper()} AUC — {meaning}:")
            lowest += [
                f"- {g}: {_num(e.value)} [{_num(e.ci_low)}, {_num(e.ci_high)}], {groups[g].n} texts "
                f"({groups[g].n_positive} toxic)"
                for g, e in ranked
            ]
    equality = (
        f"Equality differences at {s.threshold}: FPED {_num(s.fped.value)} [{_num(s.fped.ci_low)}, "
        f"{_num(s.fped.ci_high)}], FNED {_num(s.fned.value)} [{_num(s.fned.ci_low)}, {_num(s.fned.ci_high)}]."
    )
    without = None
    if s.groups_without_values:
        without = "Without values: " + "; ".join(f"{g} ({', '.join(groups[g].notes)})" for g in s.groups_without_values)
    return BiasFindings(headline, means, tuple(lowest), equality, without)


def bias_lines(summary: Mapping[str, Any] | Record, *, worst: int = 5) -> list[str]:
    """The labelled-data verdict, plain lines: the overall and final metric, then the groups with the lowest BPSN and
    BNSP AUC (their intervals and counts), the equality differences, and the groups without values named."""
    from ..summaries import BiasSummary

    s = typed(summary, BiasSummary)
    parts = bias_findings(s, worst=worst)
    out = [f"Verdict: {parts.headline}", parts.means, *parts.lowest, parts.equality]
    if parts.without:
        out.append(parts.without)
    gate_status, rules = gate_rules(s.gate)
    if gate_status is not None:
        out[1:1] = [f"Fairness gate: {gate_status.upper()}"] + [f"- {v.upper()}: {sentence}" for v, sentence in rules]
    return out


def _next_steps(s: AuditSummary, findings: tuple[GroupFinding, ...]) -> tuple[str, ...]:
    steps = []
    above = [f.group for f in findings if f.exceeds_placebo]
    if above:
        steps.append(f"read the most affected examples and the swap directions for {above[0]}")
        steps.append("compare a mitigated model on the same pairs (--baseline, counterfair compare)")
    if s.coverage and s.coverage.unreached:
        steps.append(f"{s.coverage.unreached} of {s.coverage.texts} texts got no counterfactual (coverage below)")
    if s.pairs_without_score:
        steps.append(f"{s.pairs_without_score} pairs have no score (the classifier returned NaN)")
    if s.gate is None and findings:
        steps.append("make it a CI check: --fail-if 'upper(identity_effect[*]) > 0.05'")
    return tuple(steps)
