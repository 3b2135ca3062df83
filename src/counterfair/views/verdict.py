"""The answer first: an audit's verdict in plain words, shared by the HTML report, report.md, the console and the
notebook view.

Is the classifier fair, for whom, how sure are we, and what to look at next — from the typed summary alone:

* per identity group, measured in the slot against neutral words (:mod:`counterfair.analysis.slots`): the group's
  signed effect in probability points with its 95 % interval, the terms that drive it, its disparity and flip excess,
  and whether any of them is material, detectable but small, or not detected (Holm-corrected over every estimate);
* the fairness gate, when rules were given: its status and each rule written as a sentence with the value compared;
* without a placebo, the CTF gap and its interval (the in-slot measures need the placebo words);
* what to look at next.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..summaries import (
    DEMO_FILE,
    MIN_INTERVAL_TEXTS,
    AuditSummary,
    ComparisonSummary,
    GateCheck,
    GateVerdict,
    Record,
    typed,
)

MANY_RULES = 12  # a gate with more checks lists only those that did not pass, and counts the rest
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
    """One identity group: its ``level`` (material, small, not detected: the strongest finding among its effect,
    terms, disparity and flips), its identity effect with the interval, and the sentence's ``parts``."""

    group: str
    level: str
    effect: float | None
    ci_low: float | None
    ci_high: float | None
    texts: int
    parts: tuple[str, ...] | list[str] = ()

    def sentence(self) -> str:
        return f"{self.group} — {LEVEL_WORDS.get(self.level, self.level)}: " + "; ".join(self.parts) + "."


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

    @property
    def shown_rules(self) -> tuple[tuple[str, str], ...]:
        """The checks to show: every one, or for a gate of many only those that did not pass."""
        if len(self.rules) <= MANY_RULES:
            return self.rules
        return tuple((v, sentence) for v, sentence in self.rules if v != "pass")

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
            shown = self.shown_rules
            out += [f"- {verdict.upper()}: {sentence}" for verdict, sentence in shown]
            if len(shown) < len(self.rules):
                out.append(f"- PASS: {len(self.rules) - len(shown)} more checks (every check: summary.json's gate)")
        out += [f"Next: {step}" for step in self.next_steps]
        return out


_METRIC_WORDS = {
    "accuracy": "accuracy",
    "target_accuracy": "accuracy",
    "identity_effect": "identity effect",
    "term_effect": "term effect",
    "disparity": "disparity beyond placebo",
    "flip_excess": "flip excess",
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
    if check.estimate == "material":
        condition = f"fail if {owner}{subject} is material"
        if check.metric == "term_effect" and check.group not in (None, "*"):
            condition = f'fail if the effect of "{check.group}" is material'
        if check.verdict == "error":
            return f"{condition}: could not be evaluated ({check.message})"
        found = check.finding or "–"
        shown = f"{points(check.value)} points {bracket(check)}, {found}"
        return f"{condition}: {shown} — " + {"fail": "fails", "pass": "passes"}.get(check.verdict, check.verdict)
    op = _OP_WORDS.get(str(rule.get("op")), str(rule.get("op", "")))
    threshold = rule.get("value")
    condition = f"fail if {_BOUND_WORDS.get(check.estimate, '')}{owner}{subject} is {op} {threshold:g}".rstrip()
    if check.verdict == "error":
        return f"{condition}: could not be evaluated ({check.message})"
    outcome = {"fail": "fails", "pass": "passes"}.get(check.verdict, check.verdict)
    return f"{condition}: {_num(check.value)} — {outcome}"


def gate_rules(gate: GateVerdict | None) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    """The gate's status and each check as (verdict, sentence): failed rules first, then those that could not be
    evaluated, then the passed ones."""
    if gate is None:
        return None, ()
    order = {"fail": 0, "error": 1}
    checks = sorted(gate.checks, key=lambda c: order.get(c.verdict, 2))
    return gate.verdict, tuple((c.verdict, rule_sentence(c, gate.rules)) for c in checks)


def verdict(summary: Mapping[str, Any] | Record) -> Verdict:
    """The verdict of an audit summary (``summary.json`` or ``AuditResult.typed_summary``): from the in-slot measures
    (:mod:`counterfair.analysis.slots`) where the run has them, else from the CTF gap alone."""
    s = typed(summary, AuditSummary)
    gate_status, rules = gate_rules(s.gate)
    effects = s.effects
    findings: tuple[GroupFinding, ...] = ()
    if effects is not None and effects.identity_effect is not None and effects.identity_effect.overall is not None:
        findings = slot_findings(effects, _unit(s))
        status, headline, basis = _slot_headline(effects, findings, _unit(s))
    elif s.ctf is not None and s.ctf.value is not None:
        status = "no placebo"
        headline = (
            f"CTF gap {_num(s.ctf.value)} [{_num(s.ctf.ci_low)}, {_num(s.ctf.ci_high)}] over identity swaps; "
            "without placebo words in the same place the part due to the identity cannot be separated from the edit "
            "itself (this run has no in-slot measures: rerun it with the placebo on)."
        )
        basis = f"Mean |score change| per text over {s.ctf.texts} texts with identity swaps."
    else:
        status = "no identity swaps"
        headline = "no text got an identity swap, so there is no identity effect to report."
        basis = "Only the attribute methods' score changes are below."
    if gate_status == "fail":
        status = "gate failed"
    if s.classifier.spec == BUILTIN_CLASSIFIER and not str(s.input.source or "").endswith(DEMO_FILE):
        headline = (
            f"for the built-in {BUILTIN_CLASSIFIER} classifier (a bag-of-words toxicity model; to audit your own, "
            "name it with --classifier, classifier= in Python): " + headline
        )
    if s.coverage is not None and s.coverage.gender_untested:
        basis += (
            f" Not tested: {s.coverage.gender_untested} of {s.coverage.texts} texts name gender words (women, men, "
            "he, she and the like) that this run did not swap; --attributes gender swaps them."
        )
    labelled = tuple(bias_lines(s.bias, worst=3)) if s.bias is not None else ()
    return Verdict(status, headline, findings, gate_status, rules, basis, _next_steps(s, findings), labelled)


BUILTIN_CLASSIFIER = "profanity-check"  # what an audit scores when no classifier is named


def _unit(s: AuditSummary) -> str:
    return f"P({s.positive_label or 'positive'})"


def points(value: float | None, signed: bool = True) -> str:
    if value is None:
        return "–"
    return f"{100 * value:+.1f}" if signed else f"{100 * value:.1f}"


def bracket(e: Any, unit: str = "texts") -> str:
    """``[+1.2, +3.4]`` in points; where the estimate has no interval, why: ``(no interval from 3 texts)``."""
    if e is None or e.ci_low is None or e.ci_high is None:
        count = getattr(e, "n", None)
        return f"(no interval from {count} {unit.rstrip('s') if count == 1 else unit})" if count else "(no interval)"
    return f"[{points(e.ci_low)}, {points(e.ci_high)}]"


LEVEL_WORDS = {"material": "MATERIAL", "small": "detectable but small", "not detected": "not detected"}
FINDING_RANK = {"material": 0, "small": 1, "not detected": 2}  # the strongest first


def group_level(estimates: list[Any]) -> str:
    found = [e.finding for e in estimates if e is not None and e.finding]
    return min(found, key=lambda f: FINDING_RANK.get(f, 3)) if found else "not detected"


@dataclass(frozen=True)
class GroupEstimates:
    """One identity group's in-slot estimates: its ``level`` (the strongest finding among them), its identity
    ``effect``, its ``terms`` (largest effect first), its ``disparity`` and ``flips`` (None where not measured)."""

    group: str
    level: str
    effect: Any
    terms: tuple[tuple[str, Any], ...]
    disparity: Any
    flips: Any


def group_estimates(effects: Any) -> list[GroupEstimates]:
    """Every identity group's in-slot estimates, material groups first, then by the size of the group's effect: the
    one reading of a summary's ``effects`` section behind the verdict, the console table and the report."""
    terms = effects.identity_effect.by_term or {}
    out = []
    for group, effect in (effects.identity_effect.by_group or {}).items():
        own = sorted(((t, e) for t, e in terms.items() if e.group == group), key=lambda te: -abs(te[1].value or 0.0))
        disparity = (effects.disparity.by_group or {}).get(group) if effects.disparity else None
        flips = (effects.flip_excess.by_group or {}).get(group) if effects.flip_excess else None
        level = group_level([effect, disparity, flips, *(e for _, e in own)])
        out.append(GroupEstimates(group, level, effect, tuple(own), disparity, flips))
    return sorted(out, key=lambda g: (FINDING_RANK.get(g.level, 3), -abs(g.effect.value or 0.0), g.group))


def slot_findings(effects: Any, unit: str) -> tuple[GroupFinding, ...]:
    """One finding per identity group, material ones first: the group's effect, the terms that drive it (material or
    detected, largest first), its disparity and flip excess where detected."""
    return tuple(
        GroupFinding(
            g.group, g.level, g.effect.value, g.effect.ci_low, g.effect.ci_high, g.effect.n or 0,
            _group_parts(g.effect, list(g.terms), g.disparity, g.flips, unit),
        )
        for g in group_estimates(effects)
    )  # fmt: skip


def _group_parts(effect: Any, own: list[tuple[str, Any]], disparity: Any, flips: Any, unit: str) -> list[str]:
    """The sentence of one group: its material terms with intervals (largest first), then the group's mean, the
    terms detected but small, the disparity and the flips where detected."""
    material = [(t, e) for t, e in own if e.material]
    small = [(t, e) for t, e in own if e.finding == "small"]
    average = f"{points(effect.value)} {bracket(effect)}"
    if material:
        (first, e), rest = material[0], material[1:DRIVERS]
        lead = (
            f'naming "{first}" {_moves(e.value)} {unit} by {points(abs(e.value or 0.0), False)} points '
            f"{bracket(e)} compared with a neutral word in the same place"
        )
        lead += "".join(f', "{t}" {points(x.value)} {bracket(x)}' for t, x in rest)
        lead += f" and {len(material) - DRIVERS} more terms" if len(material) > DRIVERS else ""
        parts = [lead, f"its {_terms(len(own))} on average {average}"]
    else:
        parts = [
            f"naming the group (its {_terms(len(own))} on average) {_moves(effect.value)} {unit} by "
            f"{points(abs(effect.value or 0.0), False)} points {bracket(effect)} compared with a neutral word"
        ]
    if small:
        parts.append("detectable but small: " + ", ".join(f'"{t}" {points(x.value)}' for t, x in small[:DRIVERS]))
    if disparity is not None and disparity.detected:
        parts.append(f"its terms' scores differ by {points(disparity.value, False)} points more than neutral words' do")
    if flips is not None and flips.detected:
        parts.append(
            f"its swaps flip the decision {points(flips.value, False)} points more often than swaps between neutral "
            "words"
        )
    return parts


DRIVERS = 4  # terms named per group in a finding


def _terms(n: int) -> str:
    return f"{n} term" if n == 1 else f"{n} terms"


def _moves(value: float | None) -> str:
    return "raises" if (value or 0.0) >= 0 else "lowers"


def _slot_headline(effects: Any, findings: tuple[GroupFinding, ...], unit: str) -> tuple[str, str, str]:
    material = [f.group for f in findings if f.level == "material"]
    small = [f.group for f in findings if f.level == "small"]
    limit = effects.material.get("identity_effect", 0.02)
    flips = effects.material.get("flip_excess", 0.05)
    overall = effects.identity_effect.overall
    if material:
        status = "unfair"
        headline = (
            f"material identity effects for {', '.join(material)} ({len(material)} of {len(findings)} groups): "
            f"naming the group, or one of its terms, instead of a neutral word in the same place moves {unit} by more "
            f"than {points(limit, False)} points (shown at 95 % confidence after correcting for the {effects.tests} "
            f"tests), or its swaps flip the decision more than {points(flips, False)} points more often."
        )
    elif small:
        status = "small effects"
        headline = (
            f"detectable but small identity effects for {', '.join(small)} (not shown to exceed "
            f"{points(limit, False)} points); nothing material."
        )
    else:
        status = "no evidence of unfairness"
        bounded = [f for f in findings if f.ci_low is not None and f.ci_high is not None]
        unbounded = [f.group for f in findings if f not in bounded]
        widest = max((abs(b) for f in bounded for b in (f.ci_low, f.ci_high) if b is not None), default=None)
        bound = f"; group effects beyond ±{points(widest, False)} points are ruled out" if widest is not None else ""
        if unbounded:
            bound += f" for {', '.join(f.group for f in bounded)}" if bounded else ""
            bound += (
                f"; too few texts to rule an effect out{'' if not bounded else ' for ' + ', '.join(unbounded)} (an "
                f"interval needs {MIN_INTERVAL_TEXTS} texts that name the group)"
            )
        groups = f"{len(findings)} group" + ("" if len(findings) == 1 else "s")
        headline = f"no identity effect detected in {groups} over {effects.texts} texts{bound}."
    basis = (
        f"Each identity occurrence was scored with every identity term and {effects.placebo_words} neutral words in "
        f"its place ({effects.slots} slots in {effects.texts} texts). Effects in probability points of {unit}, "
        f"95% bootstrap intervals over texts; overall {points(overall.value)} {bracket(overall)}. Tests "
        f"Holm-corrected over {effects.tests} estimates; material: shown to exceed {points(limit, False)} points "
        f"({points(flips, False)} for flips); small: shown to differ from 0, not to exceed that."
    )
    return status, headline, basis


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
    above = [f.group for f in findings if f.level == "material"]
    if above:
        steps.append(f"read the most affected examples and the swap directions for {above[0]}")
        steps.append("compare a mitigated model on the same pairs (--baseline, counterfair compare)")
    if s.coverage and s.coverage.unreached:
        steps.append(f"{s.coverage.unreached} of {s.coverage.texts} texts got no counterfactual (coverage below)")
    if s.pairs_without_score:
        steps.append(f"{s.pairs_without_score} pairs have no score (the classifier returned NaN)")
    if s.gate is None and findings:
        steps.append("make it a CI check: --fail-if default")
    return tuple(steps)


def in_slot_words(effects: Any) -> str:
    """One side's in-slot findings in a phrase: the material groups with the largest material term, or the largest
    effect when nothing is material."""
    findings = slot_findings(effects, "P")
    material = [f.group for f in findings if f.level == "material"]
    terms = effects.identity_effect.by_term or {}
    top = max(terms.items(), key=lambda te: abs(te[1].value or 0.0), default=None)
    largest = f'largest term "{top[0]}" {100 * (top[1].value or 0.0):+.1f} points ({top[1].finding})' if top else ""
    disparity = effects.disparity.overall if effects.disparity else None
    flips = effects.flip_excess.overall if effects.flip_excess else None
    rest = ", ".join(
        f"{name} {100 * e.value:+.1f}"
        for name, e in (("disparity", disparity), ("flip excess", flips))
        if e and e.value is not None
    )
    head = f"material for {', '.join(material)}" if material else "nothing material"
    return f"{head}; {largest}; {rest}".strip("; ")


def comparison_headline(s: ComparisonSummary) -> tuple[str, str]:
    """Every measure of a comparison in one headline: each side's in-slot findings, and per paired metric the units
    where B is fairer or less fair than A; ``fail`` when B is worse anywhere or has more material groups than A."""
    parts, worse_any, better_any = [], False, False
    if s.effects and "a" in s.effects and "b" in s.effects:
        a, b = s.effects["a"], s.effects["b"]
        parts.append(f"in the slot, A: {in_slot_words(a)}; B: {in_slot_words(b)}")
        count = [sum(f.level == "material" for f in slot_findings(e, "P")) for e in (a, b)]
        worse_any |= count[1] > count[0]
        better_any |= count[1] < count[0]
    for metric in s.metrics:
        verdicts = s.verdicts(metric)
        better = sorted(u for u, v in verdicts.items() if v == "better")
        worse = sorted(u for u, v in verdicts.items() if v == "worse")
        name = {"ctf_gap": "CTF gap", "disparity": "disparity"}.get(metric, metric)
        if worse or better:
            said = ([f"lower under B for {', '.join(better)}"] if better else []) + (
                [f"higher under B for {', '.join(worse)}"] if worse else []
            )
            parts.append(f"{name} " + " and ".join(said))
        else:
            parts.append(f"{name}: no evidence of a difference")
        worse_any |= bool(worse)
        better_any |= bool(better)
    status = "fail" if worse_any else "pass" if better_any else "neutral"
    lead = (
        "B is less fair than A" if worse_any else "B is fairer than A" if better_any else "No evidence that B differs"
    )
    return f"{lead}: " + "; ".join(parts) + ".", status
