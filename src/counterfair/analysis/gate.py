"""The fairness gate: rules over an audit's metrics, verdicts with one meaning each, JUnit XML for CI systems.

A rule says when to *fail* — ``identity_effect > 0.05``, ``upper(ctf_gap[*]) > 0.1``,
``flip_rate[sexuality] >= 0.02``::

    [point|upper|lower(] METRIC [ [GROUP | *] ] [)] (> | >= | < | <=) NUMBER

* ``METRIC``: the in-slot measures (:mod:`counterfair.analysis.slots`: each identity slot filled with every identity
  term and every placebo word): ``identity_effect`` (a group's mean score with its terms minus with the placebo words,
  signed), ``term_effect`` (the same per term), ``form_effect`` and ``cell_effect`` (per word form, per combination
  with gender words), ``disparity`` (the spread across groups beyond the placebo words'), ``flip_excess`` (decision
  flips beyond the placebo words'); ``material(METRIC)`` reads each one's finding; ``ctf_gap`` (the CTF gap over
  identity swaps; groups are the source term's),
  ``flip_rate`` (share of identity swaps whose prediction flips at the audit's threshold; source term's groups).
  On labelled data (``counterfair bias``, ``audit --label-column``, ``suite run``): ``subgroup_auc``, ``bpsn_auc``,
  ``bnsp_auc``, ``pinned_auc`` (per group), ``overall_auc``, ``final_metric``, ``generalized_mean`` (its "groups" are
  ``subgroup_auc``, ``bpsn_auc``, ``bnsp_auc``), ``fped``, ``fned``; on a functional
  suite also ``accuracy`` (overall; groups: the functionalities) and ``target_accuracy`` (groups: the targets).
* the estimate compared: the point estimate (the default, or ``point(...)``), or the upper or lower bound of its
  95 % interval (``upper(...)``, ``lower(...)``: the percentile bootstrap for the gaps, its expanded form for the
  in-slot effects, Wilson's interval for a flip rate). ``upper(identity_effect) > 0.05`` fails unless the data show
  the effect is at most 0.05; ``lower(identity_effect) > 0.05`` fails only when they show it exceeds 0.05.
* no group: overall; ``[NAME]``: that group; ``[*]``: every group, one verdict each.

Each (rule, group) is ``pass``, ``fail``, or ``error`` (it could not be evaluated: no identity swap, no placebo,
an unknown group, an interval from too few texts: two for the gaps, six for the in-slot measures). Each check is of
one kind (:func:`check_kind`): ``material`` (a material finding, or a threshold crossed), ``inconclusive`` (a
``conclusive(...)`` check: the data could neither show nor rule out a material effect) or ``control`` (the audit's own
control, its neutral words, reacted: :mod:`counterfair.analysis.control`). The gate's verdict, and its exit code
(:data:`EXIT_CODES`), mean one thing each:

* ``fail`` (exit 1): a material finding, a threshold crossed, or a failed control;
* ``error`` (exit 2): a rule could not be evaluated (an unknown group, a metric the run lacks);
* ``inconclusive`` (exit 4): nothing failed but some group could not be settled either way (only ``conclusive``
  checks failed), or nothing was measured at all (no in-slot estimate has an interval: ``--allow-inconclusive`` passes
  inconclusive groups, never a run that measured nothing);
* ``pass`` (exit 0): every check passed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..editors.registry import swap_methods
from ..errors import ConfigError
from ..summaries import (
    EXIT_CODES,
    MIN_INTERVAL_TEXTS,
    BiasSummary,
    ControlFamily,
    Estimate,
    GapReport,
    GateCheck,
    GateMetric,
    GateMetrics,
    GateVerdict,
    SlotEffects,
    SlotEstimate,
    SlotMeasure,
    SuiteSummary,
    typed,
)
from .inference import UNSETTLED
from .measures import MEASURES, SLOT_MEASURES, names

#: the gate's metrics, from the measure table (:mod:`counterfair.analysis.measures`): the in-slot measures and the
#: swaps' paper-001 CTF gap and flip rate
COUNTERFACTUAL_METRICS = names("slot", "swap")
#: ``--fail-if default``: fail on every material finding of the in-slot measures (shown, by its simultaneous interval
#: over the whole test family, to be at least its measure's threshold in size), overall and per group as the table says
#: ... and on every family whose control failed (a neutral word stood out, or the two nulls disagree)
CONTROL_RULES = tuple(rule for m in MEASURES if m.family == "control" for rule in m.default_rules())
DEFAULT_RULES = tuple(rule for m in MEASURES if m.family == "slot" for rule in m.default_rules()) + CONTROL_RULES
#: ... and on every group whose effect is inconclusive (too few texts to show an effect or to rule a material one out;
#: or an effect of unresolved size), unless ``--allow-inconclusive``
CONCLUSIVE_RULES = ("conclusive(identity_effect[*])",)
#: measures whose groups exist only where the texts give them (forms, combinations): ``[*]`` over none is no check
SPARSE_METRICS = tuple(m.name for m in MEASURES if m.sparse)
#: the labelled-data metrics of ``counterfair bias`` (:mod:`counterfair.commands.bias.core`): per group and overall
BIAS_METRICS = names("bias")
#: a functional suite's (:mod:`counterfair.commands.suite.core`): accuracy overall and per functionality, per target
SUITE_METRICS = names("suite")
#: an LLM audit's response similarities (:mod:`counterfair.commands.llm_audit.similarity`), as ``METRIC.NAME``
LLM_METRICS = names("llm")
METRICS = names()
#: the kinds of check (:func:`check_kind`), as JUnit names each failure's type
CHECK_KINDS = ("material", "inconclusive", "control")
_OPS = {">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b}
_RULE = re.compile(
    r"^\s*(?:(?P<bound>point|upper|lower)\s*\(\s*)?(?P<metric>(?:[a-z_]+\.)?[a-z_]+)\s*(?:\[\s*(?P<group>[^\]]+?)\s*\])?\s*"
    r"(?P<close>\))?\s*(?P<op>>=|<=|>|<)\s*(?P<value>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$"
)
_MATERIAL_RULE = re.compile(
    r"^\s*(?P<kind>material|conclusive|control)\s*\(\s*(?P<metric>(?:[a-z_]+\.)?[a-z_]+)\s*"
    r"(?:\[\s*(?P<group>[^\]]+?)\s*\])?\s*\)\s*$"
)
MATERIAL_METRICS = names(material=True)  # the measures material() and conclusive() take


@dataclass(frozen=True)
class Rule:
    """One fail-if rule, parsed (:func:`parse_rule`)."""

    text: str
    metric: str
    group: str | None  # None: overall; "*": every group
    bound: str  # point | upper | lower
    op: str
    value: float

    def describe(self, group: str | None) -> str:
        where = f"[{group}]" if group else ""
        if self.bound in ("material", "conclusive", "control"):
            return f"{self.bound}({self.metric}{where})"
        estimate = {"point": "", "upper": "upper 95% bound of ", "lower": "lower 95% bound of "}[self.bound]
        return f"{estimate}{self.metric}{where} {self.op} {self.value:g}"


def _measure(metric: str) -> str:
    """The measure of a metric name: an LLM audit's metrics are named ``OUTCOME.MEASURE`` (``decision.identity_effect``:
    the identity effect on the decision rate, :mod:`counterfair.commands.llm_audit`)."""
    return metric.rpartition(".")[2]


def allowing_inconclusive(rules: Iterable[str]) -> list[str]:
    """The rules with ``default`` standing for the material rules alone (:data:`DEFAULT_RULES`): an inconclusive group
    passes (``--allow-inconclusive``)."""
    return [r for rule in rules for r in (DEFAULT_RULES if rule.strip().lower() == "default" else (rule,))]


def outcome_rules(rules: Iterable[str], outcomes: Sequence[str], similarities: Sequence[str] = ()) -> list[str]:
    """An LLM audit's rules: ``default`` stands for :data:`DEFAULT_RULES` and :data:`CONCLUSIVE_RULES` on every outcome
    measured (``material(decision.identity_effect[*])``, ...) and for ``material(METRIC.dissimilarity_excess)`` overall
    and per group for every response similarity; a rule without an outcome applies to each outcome."""
    out: list[str] = []
    for rule in rules:
        if rule.strip().lower() == "default":
            out += [r.replace("(", f"({o}.", 1) for o in outcomes for r in DEFAULT_RULES + CONCLUSIVE_RULES]
            llm_measures = [x for x in MEASURES if x.family == "llm"]
            out += [r for m in similarities for x in llm_measures for r in x.default_rules(f"{m}.")]
            continue
        parsed = parse_rule(rule)
        names = similarities if parsed.metric in LLM_METRICS else outcomes
        if "." in parsed.metric or parsed.metric not in MATERIAL_METRICS:
            out.append(rule)
        else:
            out += [re.sub(rf"\b{parsed.metric}\b", f"{o}.{parsed.metric}", rule, count=1) for o in names]
    return out


def parse_rule(text: str) -> Rule:
    """A :class:`Rule` from its text; a clear error for anything else. ``material(METRIC[GROUP])`` (no operator)
    fails where the in-slot measure's finding is material, ``conclusive(METRIC[GROUP])`` where it is inconclusive or
    detected without its size resolved (:func:`counterfair.analysis.inference.finding`)."""
    material = _MATERIAL_RULE.match(text)
    if material is not None:
        kind = material["kind"]
        if (kind == "control") != (_measure(material["metric"]) == "neutral_words"):  # the control's own rule
            raise ConfigError(f"rule {text!r}: the control is checked as control(neutral_words[FAMILY or *])")
        if _measure(material["metric"]) not in MATERIAL_METRICS:
            raise ConfigError(f"rule {text!r}: {kind}() takes an in-slot measure: {', '.join(MATERIAL_METRICS)}")
        return Rule(text.strip(), material["metric"], material["group"], kind, "is", 1.0)
    match = _RULE.match(text)
    if match is None or bool(match["bound"]) != bool(match["close"]):
        raise ConfigError(
            f"rule {text!r} is not METRIC[GROUP] OP NUMBER or material(METRIC[GROUP]), e.g. "
            "'material(identity_effect[*])', 'upper(ctf_gap[*]) > 0.1', 'flip_rate[sexuality] >= 0.02', or 'default'"
        )
    if _measure(match["metric"]) not in METRICS:
        raise ConfigError(f"rule {text!r}: unknown metric {match['metric']!r}; use one of {', '.join(METRICS)}")
    value = float(match["value"])
    if not math.isfinite(value):  # "1e309" reads as infinity, which no summary can record (JSON has no inf)
        raise ConfigError(f"rule {text!r}: {match['value']} is too large a number for a threshold")
    return Rule(text.strip(), match["metric"], match["group"], match["bound"] or "point", match["op"], value)


# ------------------------------------------------------------------------------------------------ metrics


def flip_estimate(flips: int, n: int) -> Estimate:
    """A flip rate as the gate reads it: the share of ``n`` pairs whose decision flipped, with its Wilson interval."""
    from ..metrics.fairness import wilson

    low, high = wilson(flips, n)
    return Estimate(value=flips / n if n else None, ci_low=low, ci_high=high, n=n)


def fairness_metrics(
    pairs: pd.DataFrame,
    *,
    seed: int = 0,
    n_resamples: int = 2000,
    effects: SlotEffects | Mapping[str, Any] | None = None,
    slots: pd.DataFrame | None = None,
    threshold: float = 0.5,
) -> GateMetrics:
    """Every gate metric from an audit's pairs table (``pairs.csv`` or ``AuditResult.pairs``): for each metric
    ``{"overall": entry, "by_group": {group: entry}}`` with entries ``value``, ``ci_low``, ``ci_high``, ``n``;
    ``None`` for a metric the pairs cannot give (no identity swap, no placebo). The in-slot measures
    (``identity_effect``, ``term_effect``, ``disparity``, ``flip_excess``) come from ``effects`` (the audit summary's
    ``effects``, not computed again) or else from the scored slot table ``slots`` (:mod:`counterfair.analysis.slots`,
    with ``threshold``)."""
    from ..metrics.fairness import gap_summary
    from .slots import slot_effects

    swaps = pairs
    packs: dict[str, GapReport] = {}
    if not pairs.empty:
        mask = pairs["method"].isin(swap_methods()) & (pairs["status"] == "ok")
        wanted = ["input_id", "score_orig", "score_cf", "diff", "flipped", "group"]
        if "attribute" in pairs.columns:  # the identity swaps; a pack's swaps (gender, names) have groups of their own
            identity = pairs["attribute"].isna() | (pairs["attribute"] == "identity")
            packs = _pack_reports(pairs.loc[mask & ~identity, ["attribute", *wanted]], seed, n_resamples)
            mask = mask & identity
        swaps = pairs.loc[mask, [c for c in wanted if c in pairs.columns]]  # not every column: an audit's are millions
    if effects is None and slots is not None and not slots.empty:
        effects = slot_effects(slots, threshold=threshold, seed=seed, n_resamples=n_resamples)
    if swaps.empty:
        return tallied_metrics(None, {}, effects)
    table = swaps.assign(label=np.nan, source_split="all", target_split="all", abs_diff=lambda d: d["diff"].abs())
    ctf = replace(  # the gap and its CI only, not ctf_report's breakdowns
        gap_summary(table, seed=seed, n_resamples=n_resamples),
        by_group={str(g): gap_summary(p, seed=seed, n_resamples=n_resamples) for g, p in table.groupby("group")},
    )
    flips: dict[str | None, list[int]] = {
        g: [int(part["flipped"].astype(bool).sum()), len(part)]
        for g, part in [(None, swaps), *((str(g), p) for g, p in swaps.groupby("group"))]
    }
    return tallied_metrics(ctf, flips, effects, packs)


def _pack_reports(swaps: pd.DataFrame, seed: int, n_resamples: int) -> dict[str, GapReport]:
    """Each swap pack's CTF gap with its groups' (``ctf_by_attribute`` as the audit reports it), from its pairs."""
    from ..metrics.fairness import gap_summary

    out: dict[str, GapReport] = {}
    table = swaps.assign(label=np.nan, source_split="all", target_split="all", abs_diff=lambda d: d["diff"].abs())
    for attribute, part in table.groupby("attribute"):
        by_group = {str(g): gap_summary(p, seed=seed, n_resamples=n_resamples) for g, p in part.groupby("group")}
        out[str(attribute)] = replace(gap_summary(part, seed=seed, n_resamples=n_resamples), by_group=by_group)
    return out


def tallied_metrics(
    ctf: GapReport | None,
    flips: Mapping[str | None, Sequence[int]],
    effects: SlotEffects | Mapping[str, Any] | None,
    packs: Mapping[str, GapReport] | None = None,
) -> GateMetrics:
    """The gate's counterfactual metrics from the identity CTF gap (``ctf``, with ``by_group``), the identity swaps'
    flips and scored pairs per group (``flips``, None: overall) and the in-slot ``effects``: what the audit tallied
    as its blocks went by, or what :func:`fairness_metrics` takes from a pairs table. ``packs``: each swap pack's CTF
    gap (``ctf_by_attribute``), whose groups join the CTF gap's as their family names them (``ctf_gap[gender_words:
    female]``, ``ctf_gap[names:black_male]``)."""
    out: GateMetrics = {m: None for m in COUNTERFACTUAL_METRICS}
    out |= effects_gate_metrics(effects)
    if ctf is None or not ctf.pairs:
        return out
    groups: dict[str, Estimate | None] = {g: e.estimate() for g, e in (ctf.by_group or {}).items()}
    out["ctf_gap"] = {"overall": ctf.estimate(), "by_group": groups | _pack_gaps(packs or {})}
    out["flip_rate"] = {
        "overall": flip_estimate(*flips[None]),
        "by_group": {g: flip_estimate(*flips[g]) for g in sorted(g for g in flips if g is not None)},
    }
    return out


def _pack_gaps(packs: Mapping[str, GapReport]) -> dict[str, Estimate | None]:
    """Each swap pack's CTF gap per group, named as its family names the group ("gender_words:female")."""
    from ..lexicons.attributes import load_swap_set
    from .families import family_of

    out: dict[str, Estimate | None] = {}
    for attribute, report in packs.items():
        if attribute == "identity":
            continue
        family = family_of(attribute, load_swap_set(attribute))
        out |= {f"{family}:{g}": e.estimate() for g, e in (report.by_group or {}).items()}
    return out


# ------------------------------------------------------------------------------------------------ verdicts


def _finite(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def _check(
    rule: Rule, group: str | None, entry: Estimate | None, siblings: Mapping[str, Estimate | None] | None = None
) -> GateCheck:
    check = GateCheck(
        rule=rule.text, metric=rule.metric, group=group, estimate=rule.bound, description=rule.describe(group)
    )
    if entry is None:
        return replace(check, message=f"{rule.metric}: no {group or 'overall'} value")
    check = replace(
        check, point=_finite(entry.value), ci_low=_finite(entry.ci_low), ci_high=_finite(entry.ci_high), n=entry.n
    )
    if rule.bound == "control":
        return _control(rule, group, entry, check)
    if rule.bound in ("material", "conclusive"):
        return _material(rule, group, entry, check, siblings or {})
    value = {"point": check.point, "upper": check.ci_high, "lower": check.ci_low}[rule.bound]
    check = replace(check, value=value)
    if value is None:
        why = "no value" if rule.bound == "point" else "no interval" + (f" (from {entry.n} texts)" if entry.n else "")
        return replace(check, message=f"{rule.describe(group)}: {why}")
    failed = _OPS[rule.op](value, rule.value)
    shown = f"{value:.4f}" + (
        f" (point {check.point:.4f})" if rule.bound != "point" and check.point is not None else ""
    )
    message = f"{rule.describe(group)}: {shown} → " + ("fails" if failed else "passes")
    return replace(check, verdict="fail" if failed else "pass", message=message)


def expand_rules(rules: Iterable[str | Rule]) -> list[Rule]:
    """The rules parsed, ``"default"`` standing for :data:`DEFAULT_RULES` and :data:`CONCLUSIVE_RULES`."""
    out: list[Rule] = []
    for rule in rules:
        if isinstance(rule, str) and rule.strip().lower() == "default":
            out += [parse_rule(r) for r in DEFAULT_RULES + CONCLUSIVE_RULES]
        else:
            out.append(rule if isinstance(rule, Rule) else parse_rule(rule))
    return out


def _material(
    rule: Rule, group: str | None, entry: Estimate, check: GateCheck, siblings: Mapping[str, Estimate | None]
) -> GateCheck:
    """A ``material(...)`` check (fails where the estimate's finding is material) or a ``conclusive(...)`` one (fails
    where it is inconclusive, or detected with its size unresolved, and its natural or probe sibling among the
    measure's groups, ``siblings``, does not settle it: :func:`counterfair.analysis.probes.gated_unsettled`). The
    message in probability points, with the simultaneous interval the finding was read off."""
    from .probes import gated_unsettled, is_probe, settled_by_probe

    e = entry if isinstance(entry, SlotEstimate) else SlotEstimate()  # only an in-slot estimate has a finding
    found = e.finding
    check = replace(
        check,
        value=check.point,
        sim_low=_finite(e.sim_low),
        sim_high=_finite(e.sim_high),
        mde=_finite(e.mde),
        texts_needed=e.texts_needed,
        p_adjusted=_finite(e.p_adjusted),
        p_material=_finite(e.p_material),
        finding=found,
    )
    if check.value is None or found is None:
        return replace(check, message=f"{rule.describe(group)}: no value")
    failed = found == "material"
    why = ""
    if rule.bound == "conclusive":
        failed = found in UNSETTLED
        if failed and group and group in siblings and not gated_unsettled(group, siblings):
            failed, probe = False, settled_by_probe(group, siblings)
            why = (
                f"; settled by its probe ({100 * (probe.value or 0.0):+.1f} points, {probe.finding})"
                if probe is not None
                else "; a probe: its natural group carries the check"
                if is_probe(group)
                else ""
            )
    message = f"{rule.describe(group)}: {points_message(check)}, {found}{why} → " + ("fails" if failed else "passes")
    return replace(check, verdict="fail" if failed else "pass", message=message)


def _control(rule: Rule, group: str | None, entry: Estimate, check: GateCheck) -> GateCheck:
    """A ``control(neutral_words[FAMILY])`` check: fails where a neutral word of the family stood out or its two
    nulls disagree (:mod:`counterfair.analysis.control`), naming the words."""
    if not isinstance(entry, ControlFamily):
        return replace(check, message=f"{rule.describe(group)}: no control check")
    failed = entry.failed
    message = f"{rule.describe(group)}: {entry.message} → " + ("fails" if failed else "passes")
    return replace(check, value=check.point, verdict="fail" if failed else "pass", message=message)


def points_message(check: GateCheck) -> str:
    """An in-slot estimate in probability points with the simultaneous interval its finding was read off, and, where
    the data could not settle it, the power: "+5.3 points (simultaneous 95 % interval +2.9 to +7.7)". An LLM audit's
    measures (``decision.identity_effect``) count prompts, a classifier audit's texts."""
    value, low, high, n = check.value, check.sim_low, check.sim_high, check.n
    unit = "prompt" if "." in check.metric else "text"
    shown = f"{100 * value:+.1f} points" if value is not None else "no value"
    if low is None or high is None:
        more = f"; about {check.texts_needed:,} would settle it" if check.texts_needed else ""
        return f"{shown} (no interval from {n} {unit}{'' if n == 1 else 's'}{more})"
    shown += f" (simultaneous 95 % interval {100 * low:+.1f} to {100 * high:+.1f}"
    if check.finding == "inconclusive" and check.mde is not None:
        shown += f"; smallest detectable {100 * check.mde:.1f} points over {n} {unit}s"
        if check.texts_needed:
            shown += f", about {check.texts_needed:,} would settle it"
    return shown + ")"


def evaluate_rules(
    rules: Iterable[str | Rule],
    metrics: Mapping[str, GateMetric | None],
    *,
    missing: str | None = None,
) -> GateVerdict:
    """Each rule's verdict (per group for ``[*]``), the gate's verdict and its exit code; ``missing``: why the
    counterfactual metrics are absent, when the caller knows better than "no identity swap"."""
    checks: list[GateCheck] = []
    parsed = expand_rules(rules)
    for rule in parsed:
        metric = metrics.get(rule.metric)
        if _measure(rule.metric) in SPARSE_METRICS and rule.group == "*" and not (metric and metric["by_group"]):
            continue  # no form or combination with enough texts to measure: nothing to check
        if metric is None:
            checks.append(_check(rule, rule.group, None))
            if rule.metric in BIAS_METRICS:
                why = "labelled data: counterfair bias, audit --label-column or suite run"
            elif rule.metric in SUITE_METRICS:
                why = "a functional suite: counterfair suite run"
            elif missing is not None:
                why = missing
            else:
                why = "no identity swap" + (
                    ", the placebo was off, or the pairs came without their run's slots.csv (an audit made before "
                    "counterfair measured in the slot: rerun it)"
                    if rule.metric in MATERIAL_METRICS
                    else ""
                )
            checks[-1] = replace(checks[-1], message=f"{rule.text}: the run has no {rule.metric} ({why})")
            continue
        if rule.group is None:
            checks.append(_check(rule, None, metric["overall"]))
        elif rule.group == "*":
            if not metric["by_group"]:
                checks.append(_check(rule, "*", None))
            checks += [_check(rule, g, e, metric["by_group"]) for g, e in sorted(metric["by_group"].items())]
        else:
            entry = metric["by_group"].get(rule.group)
            if entry is None:  # "black" for "Black": the one group of that spelling in any case
                same = [g for g in metric["by_group"] if g.casefold() == rule.group.casefold()]
                entry = metric["by_group"][same[0]] if len(same) == 1 else None
            checks.append(_check(rule, rule.group, entry, metric["by_group"]))
            if entry is None:
                known = ", ".join(sorted(metric["by_group"])) or "none"
                checks[-1] = replace(
                    checks[-1], message=f"{rule.text}: no group {rule.group!r} in this run (groups: {known})"
                )
    checks += _unmeasured(checks)
    verdict = gate_verdict(checks)
    return GateVerdict(
        rules=tuple(asdict(r) for r in parsed),
        checks=tuple(checks),
        verdict=verdict,
        exit_code=EXIT_CODES[verdict],
        failed=tuple(c.message for c in checks if c.verdict == "fail"),
        errors=tuple(c.message for c in checks if c.verdict == "error"),
    )


def check_kind(check: GateCheck) -> str:
    """What a check tests (:data:`CHECK_KINDS`): ``inconclusive`` for a ``conclusive(...)`` check (or the check that
    the run measured anything), ``control`` for a ``control(...)`` one, else ``material``."""
    if check.estimate in ("conclusive", "measured"):
        return "inconclusive"
    return "control" if check.estimate == "control" else "material"


def gate_verdict(checks: Sequence[GateCheck]) -> str:
    """The gate's verdict from its checks (the module's docstring): ``fail`` where a material or control check
    failed, else ``error`` where one could not be evaluated (or there is none), else ``inconclusive`` where a
    ``conclusive`` check failed, else ``pass``."""
    failed = {check_kind(c) for c in checks if c.verdict == "fail"}
    if failed - {"inconclusive"}:
        return "fail"
    if not checks or any(c.verdict == "error" for c in checks):
        return "error"
    return "inconclusive" if failed else "pass"


def _unmeasured(checks: Sequence[GateCheck]) -> list[GateCheck]:
    """A failing check where the gate has in-slot checks and not one of their estimates has an interval (every one
    over fewer than six texts or prompts): such a run measured nothing, and passes no gate, inconclusive allowed or
    not. None otherwise."""
    slot = [c for c in checks if c.estimate in ("material", "conclusive") and c.n is not None]
    if not slot or any(c.sim_low is not None for c in slot):
        return []
    unit = "prompts" if any("." in c.metric for c in slot) else "texts"
    most = max(c.n or 0 for c in slot)
    message = (
        f"nothing measured: none of the {len(slot)} in-slot estimates checked has an interval (each rests on fewer "
        f"than {MIN_INTERVAL_TEXTS} {unit}; the most: {most}), so no effect can be shown or ruled out"
    )
    description = "measured(in-slot estimates)"
    return [
        GateCheck(rule=description, metric="identity_effect", estimate="measured", description=description,
                  n=most, verdict="fail", message=message)
    ]  # fmt: skip


def with_unmeasured(verdict: GateVerdict, outcomes: Sequence[str], why: str) -> GateVerdict:
    """The verdict with a failing ``measured(OUTCOME)`` check (kind ``inconclusive``) for each outcome asked for that
    nothing measured (``why`` says what is missing): a rule meant for every outcome cannot pass one it never saw, so
    such a run exits 4 (``--allow-inconclusive`` or not), never 0."""
    if not outcomes:
        return verdict
    added = tuple(
        GateCheck(rule=f"measured({o})", metric=f"{o}.identity_effect", estimate="measured",
                  description=f"measured({o})", verdict="fail", message=f"measured({o}): not measured — {why}")
        for o in outcomes
    )  # fmt: skip
    checks = verdict.checks + added
    state = gate_verdict(checks)
    return replace(
        verdict,
        checks=checks,
        verdict=state,
        exit_code=EXIT_CODES[state],
        failed=verdict.failed + tuple(c.message for c in added),
    )


def gate_pairs(
    pairs: pd.DataFrame,
    rules: Sequence[str | Rule],
    *,
    seed: int = 0,
    n_resamples: int = 2000,
    effects: SlotEffects | Mapping[str, Any] | None = None,
    slots: pd.DataFrame | None = None,
    threshold: float = 0.5,
    extra: Mapping[str, GateMetric | None] | None = None,
) -> GateVerdict:
    """:func:`evaluate_rules` on the metrics of a pairs table (and its in-slot ``effects`` or ``slots``, and ``extra``
    metrics, e.g. an audit's bias metrics)."""
    parsed = expand_rules(rules)  # a bad rule fails before any bootstrap
    metrics = fairness_metrics(
        pairs, seed=seed, n_resamples=n_resamples, effects=effects, slots=slots, threshold=threshold
    )
    return evaluate_rules(parsed, {**metrics, **(extra or {})}, missing=unscored_swaps(pairs))


def unscored_swaps(pairs: pd.DataFrame) -> str | None:
    """Why a run with identity swaps has no counterfactual metric: every swap is without a score."""
    if pairs.empty or "status" not in pairs.columns:
        return None
    swaps = pairs[pairs["method"].isin(swap_methods())]
    if "attribute" in swaps.columns:
        swaps = swaps[swaps["attribute"].isna() | (swaps["attribute"] == "identity")]
    if swaps.empty or (swaps["status"] == "ok").any():
        return None
    return (
        f"all {len(swaps)} identity swaps are without a score (status {swaps['status'].iloc[0]}): the classifier "
        "returned NaN for them"
    )


def bias_gate_metrics(summary: Mapping[str, Any] | BiasSummary) -> GateMetrics:
    """The bias metrics as the fairness gate reads them (:func:`counterfair.analysis.gate.evaluate_rules`): per metric
    ``{"overall": entry, "by_group": {group: entry}}`` with entries ``value``, ``ci_low``, ``ci_high``, ``n``."""
    s = typed(summary, BiasSummary)
    groups = s.groups or {}
    out: GateMetrics = {
        m: {"overall": None, "by_group": {g: getattr(e, m) for g, e in groups.items()}}
        for m in ("subgroup_auc", "bpsn_auc", "bnsp_auc", "pinned_auc")
    }
    for name in ("overall_auc", "fped", "fned"):
        out[name] = {"overall": getattr(s, name), "by_group": {}}
    out["final_metric"] = {"overall": s.final_metric, "by_group": {}}
    if s.generalized_mean:  # generalized_mean[bpsn_auc] etc.
        means: dict[str, Estimate | None] = dict(s.generalized_mean)
        out["generalized_mean"] = {"overall": None, "by_group": means}
    return out


def suite_gate_metrics(summary: Mapping[str, Any] | SuiteSummary) -> GateMetrics:
    """A suite's metrics as the gate reads them: ``accuracy`` (overall; groups: the functionalities),
    ``target_accuracy`` (groups: the targets), and the bias metrics with the targets as groups."""
    s = typed(summary, SuiteSummary)
    out: GateMetrics = {
        "accuracy": {
            "overall": s.accuracy,
            "by_group": {f: c.accuracy for f, c in (s.functionalities or {}).items()},
        }
    }
    if s.targets:
        out["target_accuracy"] = {
            "overall": s.accuracy,
            "by_group": {t: c.accuracy for t, c in s.targets.items()},
        }
    if s.bias is not None:
        out |= bias_gate_metrics(s.bias)
    return out


def write_junit(
    gate: Mapping[str, Any] | GateVerdict,
    path: str | Path,
    *,
    suite: str = "counterfair fairness gate",
    properties: Mapping[str, str] | None = None,
) -> Path:
    """One JUnit test case per rule and group (a failure element for ``fail``, an error element for ``error``), the
    suite's ``properties`` first (:func:`counterfair.views.ci.junit_properties`: which counterfair, input and
    classifier)."""
    import xml.etree.ElementTree as ET

    checks = typed(gate, GateVerdict).checks
    root = ET.Element("testsuites")
    node = ET.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(checks)),
        failures=str(sum(c.verdict == "fail" for c in checks)),
        errors=str(sum(c.verdict == "error" for c in checks)),
    )
    if properties:
        props = ET.SubElement(node, "properties")
        for name, value in properties.items():
            ET.SubElement(props, "property", name=name, value=value)
    for check in checks:
        case = ET.SubElement(node, "testcase", classname=f"counterfair.{check.metric}", name=check.description)
        if check.verdict in ("fail", "error"):
            kind = "failure" if check.verdict == "fail" else "error"
            why = check_kind(check) if check.verdict == "fail" else "error"  # material, inconclusive or control
            ET.SubElement(case, kind, message=check.message, type=why).text = check.message
        else:
            ET.SubElement(case, "system-out").text = check.message
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(target, encoding="utf-8", xml_declaration=True)
    return target


# ------------------------------------------------------------------------------------------------ the in-slot measures


def effects_gate_metrics(effects: SlotEffects | Mapping[str, Any] | None) -> GateMetrics:
    """The in-slot measures (the record, or its JSON as ``summary.json`` holds it) as the gate reads them:
    ``identity_effect`` (groups of every family), ``term_effect`` (its "groups" are the terms; overall is the identity
    effect's), ``form_effect`` (term or group @ form), ``cell_effect`` (group & the text's gender words),
    ``disparity`` and ``flip_excess`` (groups); each entry with ``value``, its intervals, ``n``, the power and the
    ``finding``."""
    found = typed(effects, SlotEffects) if effects else None
    if found is None or found.identity_effect is None:
        return {}
    out: GateMetrics = {measure: gate_metric(getattr(found, measure)) for measure in SLOT_MEASURES}
    out["neutral_words"] = {"overall": None, "by_group": dict(found.control or {})}
    identity = out["identity_effect"]
    overall = identity["overall"] if identity is not None else None
    for metric, key in (("term_effect", "by_term"), ("form_effect", "by_form"), ("cell_effect", "by_cell")):
        out[metric] = {"overall": overall, "by_group": dict(getattr(found.identity_effect, key) or {})}
    return out


def gate_metric(part: SlotMeasure | None) -> GateMetric:
    """One in-slot measure (``overall``, ``by_group``) as the gate reads it."""
    if part is None:
        return {"overall": None, "by_group": {}}
    return {"overall": part.overall, "by_group": dict(part.by_group or {})}
