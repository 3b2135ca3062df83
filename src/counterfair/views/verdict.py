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

from ..analysis.measures import MEASURES
from ..classifiers.kinds import UNSCORED_FILE, labels_caveat, language_caveat
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
from .naming import BY_PROBE, FAMILY_WORDS, PROBE, cell_words, form_words, group_words

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
    needed: int | None = None  # inconclusive: about how many texts would settle it
    #: inconclusive as the gate reads it (analysis.probes.gated_unsettled): what its conclusive() check fails on
    unsettled: bool = False

    def sentence(self) -> str:
        return f"{self.group} — {LEVEL_WORDS.get(self.level, self.level)}: " + "; ".join(self.parts) + "."


def _listed(findings: list[GroupFinding]) -> str:
    """Groups with their texts and the texts needed, those of one family of three or more groups in one entry
    ("names:* (8 groups, 3–4 texts)")."""
    families: dict[str, list[GroupFinding]] = {}
    for f in findings:
        families.setdefault(f.group.rpartition(":")[0] or f.group, []).append(f)
    parts = []
    for family, members in families.items():
        needed = max((f.needed for f in members if f.needed is not None), default=None)
        more = "" if needed is None else f", about {needed:,} needed"
        if len(members) >= 3 and ":" in members[0].group:
            low, high = min(f.texts for f in members), max(f.texts for f in members)
            count = f"{low}" if low == high else f"{low}–{high}"
            parts.append(f"{family}:* ({len(members)} groups, {count} texts{more})")
        else:
            for f in members:
                needs = "" if f.needed is None else f", about {f.needed:,} needed"
                parts.append(f"{f.group} ({f.texts} text{'' if f.texts == 1 else 's'}{needs})")
    return "; ".join(parts)


def compact(groups: list[str]) -> str:
    """Group names, those of one family of three or more in one entry ("names:* (8 groups)")."""
    families: dict[str, list[str]] = {}
    for g in groups:
        families.setdefault(g.rpartition(":")[0] or g, []).append(g)
    return ", ".join(
        f"{family}:* ({len(members)} groups)" if len(members) >= 3 and ":" in members[0] else ", ".join(members)
        for family, members in families.items()
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
    cautions: tuple[str, ...] = ()  # what limits every finding (a classifier made for another language's text)
    uneven: str = ""  # the estimates whose mean hides texts where the effect is larger (uneven_line)

    @property
    def shown_rules(self) -> tuple[tuple[str, str], ...]:
        """The checks to show: every one, or for a gate of many only those that did not pass."""
        if len(self.rules) <= MANY_RULES:
            return self.rules
        return tuple((v, sentence) for v, sentence in self.rules if v != "pass")

    @property
    def shown_findings(self) -> tuple[GroupFinding, ...]:
        """The groups with something found (material, detected, small): a sentence each; the inconclusive ones and
        those with no material effect are a line each (:meth:`grouped_lines`)."""
        return tuple(f for f in self.findings if f.level in ("material", "detected", "small"))

    def grouped_lines(self) -> list[str]:
        """The inconclusive groups in one line (each with its texts and about how many would settle it), then the
        groups with no material effect in one line (with the widest interval among them)."""
        out = []
        unsure = [f for f in self.findings if f.level == "inconclusive" and f.unsettled]
        if unsure:
            out.append(f"INCONCLUSIVE — too few texts to show or rule out a material effect: {_listed(unsure)}.")
        from ..analysis.probes import is_probe

        probed = [f for f in self.findings if f.level == "inconclusive" and not f.unsettled]
        natural = [f.group for f in probed if not is_probe(f.group)]
        thin = [f.group for f in probed if is_probe(f.group)]
        said = [f"too few natural slots, settled by their probes: {compact(natural)}"] if natural else []
        said += [f"probes too few to settle, their natural slots carry the check: {compact(thin)}"] if thin else []
        if said:
            out.append("; ".join(said) + ".")
        quiet = [f for f in self.findings if f.level == "not detected"]
        if quiet:
            widest = max((abs(b) for f in quiet for b in (f.ci_low, f.ci_high) if b is not None), default=0.0)
            out.append(
                f"no material effect — {compact([f.group for f in quiet])}: each shown within ±{points(widest, False)} "
                "points (simultaneous 95 % intervals), with the power to see 2 points."
            )
        return out + ([self.uneven] if self.uneven else [])

    def lines(self) -> list[str]:
        """The verdict as plain lines (report.md, the console, a CI log)."""
        out = [f"Verdict: {self.headline}", self.basis]
        out += [f"- {caution}" for caution in self.cautions]
        out += [f"- {f.sentence()}" for f in self.shown_findings]
        out += [f"- {line}" for line in self.grouped_lines()]
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


_METRIC_WORDS = {m.name: m.words for m in MEASURES}  # how a sentence names each measure (the measure table)
_BOUND_WORDS = {"point": "", "upper": "the upper bound of ", "lower": "the lower bound of "}
_OP_WORDS = {">": "above", ">=": "at or above", "<": "below", "<=": "at or below"}


def rule_sentence(check: GateCheck, rules: tuple[Mapping[str, Any], ...]) -> str:
    """A gate check as a sentence: "fail if the upper bound of sexuality's identity effect is above 0.05: 0.093 —
    fails"; an in-slot check in points with the simultaneous interval its finding was read off."""
    from ..analysis.gate import points_message

    outcome_word = {"fail": "fails", "pass": "passes"}.get(check.verdict, check.verdict)
    if check.estimate == "measured":  # the gate's own check that anything was measured
        return f"fail if nothing was measured: {check.message} — {outcome_word}"
    if check.estimate == "control":
        said = check.message.partition(": ")[2].rpartition(" → ")[0] or check.message
        family = FAMILY_WORDS.get(str(check.group).partition(":")[0], str(check.group))
        condition = f"fail if the control of {family} reacts (a neutral word stands out, or the nulls disagree)"
        return f"{condition}: {said} — {outcome_word}"
    rule = next((r for r in rules if r.get("text") == check.rule), {})
    outcome, _, measure = check.metric.rpartition(".")  # an LLM audit's outcome: "decision.identity_effect"
    on = (f" in {outcome} similarity" if measure == "dissimilarity_excess" else f" on the {outcome}") if outcome else ""
    subject = _METRIC_WORDS.get(measure, check.metric) + on
    owner = (
        f"{check.group}'s " if check.group not in (None, "*") else ("every group's " if check.group else "the overall ")
    )
    if check.estimate in ("material", "conclusive"):
        named = check.group not in (None, "*")
        if check.metric.endswith(("term_effect", "form_effect", "cell_effect")) and named:
            owner, subject = f'"{check.group}"', "effect" + on
            owner += " "
        wanted = "material" if check.estimate == "material" else "inconclusive (or detected, of unresolved size)"
        condition = f"fail if {owner}{subject} is {wanted}"
        if check.verdict == "error":
            return f"{condition}: could not be evaluated ({check.message})"
        shown = f"{points_message(check)}, {LEVEL_WORDS.get(check.finding or '', check.finding or '–')}"
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
    if effects is not None and effects.identity_effect is not None and effects.identity_effect.by_group:
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
    elif gate_status == "inconclusive" and status not in ("unfair", "inconclusive"):
        status = "gate inconclusive"
    if s.classifier.spec == BUILTIN_CLASSIFIER and not str(s.input.source or "").endswith(DEMO_FILE):
        headline = (
            f"for the built-in {BUILTIN_CLASSIFIER} classifier (a bag-of-words toxicity model; to audit your own, "
            "name it with --classifier, classifier= in Python): " + headline
        )
    untested = not_tested(s)
    if untested:
        basis += f" Not tested: {untested}."
        if status == "no evidence of unfairness":
            status = "not tested for every identity"
            headline = headline.rstrip(".") + f"; not tested: {untested}."
    labelled = tuple(bias_lines(s.bias, worst=3)) if s.bias is not None else ()
    caveats = [language_caveat(s.classifier.spec, str(s.options.get("language") or "") or None)]
    caveats.append(labels_caveat(bool(s.originals and s.originals.labels_only)))  # a classifier that gave 0/1 labels
    controls = control_lines(effects)
    if any(c.failed for c in ((effects.control or {}).values() if effects is not None else ())) and (
        status not in ("unfair", "gate failed")
    ):
        status = "control failed"
        headline = "the audit's own control reacted (see below): " + headline
    return Verdict(
        status,
        headline,
        findings,
        gate_status,
        rules,
        basis,
        _next_steps(s, findings),
        labelled,
        cautions=tuple(c for c in caveats if c) + controls,
        uneven=uneven_line(effects),
    )


def uneven_line(effects: Any, count: str = "text", shown: int = 3) -> str:
    """The groups and terms, not material, whose effect differs from text to text more than a neutral word's does, by
    more than the materiality threshold (:func:`counterfair.analysis.spread.uneven`), "" where none."""
    from ..analysis.spread import uneven

    limit = effects.material.get("identity_effect", 0.02) if effects is not None else 0.0
    said = []
    for name, e in uneven(effects, at_least=limit, hidden=True):
        where = ", ".join(f"{points(x.value)} in {count} {x.input_id}" for x in e.spread.largest[:2])
        said.append(f"{name} (mean {points(e.value)}, ±{points(e.spread.excess, False)} from text to text; {where})")
    if not said:
        return ""
    more = f" and {len(said) - shown} more" if len(said) > shown else ""
    return (
        "UNEVEN — the mean hides the texts where the effect lives (it differs from text to text by more than "
        f"{points(limit, False)} points beyond a neutral word's spread): {'; '.join(said[:shown])}{more}."
    )


def control_lines(effects: Any) -> tuple[str, ...]:
    """What the control check says where it found something (:mod:`counterfair.analysis.control`): per family, the
    neutral words that stood out and were left out of the baseline, and whether the control failed; none where every
    family's neutral words agreed."""
    out = []
    for family, c in (effects.control or {}).items() if effects is not None else ():
        if not c.standing_out and not c.failed:
            continue
        head = "CONTROL FAILED" if c.failed else "Control"
        out.append(f"{head} — {FAMILY_WORDS.get(family.partition(':')[0], family)}: {c.message}.")
    return tuple(out)


BUILTIN_CLASSIFIER = "profanity-check"  # what an audit scores when no classifier is named


def not_tested(s: AuditSummary) -> str:
    """The identity sets the texts name that the run did not measure, in words ("" when none)."""
    c = s.coverage
    if c is None:
        return ""
    parts = []
    if c.gender_untested:
        parts.append(f"gender words in {c.gender_untested} of {c.texts} texts (--attributes gender measures them)")
    if c.names_untested:
        parts.append(f"first names in {c.names_untested} of {c.texts} texts (--attributes names measures them)")
    if c.names_unplaced:
        seen = ", ".join(c.names_unplaced_seen[:5]) + (", ..." if len(c.names_unplaced_seen) > 5 else "")
        parts.append(
            f"first names the names pack lacks in {c.names_unplaced} of {c.texts} texts ({seen}: no group holds "
            "them; a names pack of your own measures them, --attributes gender,names,my_names.yaml)"
        )
    return "; ".join(parts)


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


LEVEL_WORDS = {
    "material": "MATERIAL",
    "detected": "detected, size unresolved",
    "inconclusive": "INCONCLUSIVE",
    "small": "detectable but small",
    "not detected": "no material effect",
}
FINDING_RANK = {"material": 0, "detected": 1, "inconclusive": 2, "small": 3, "not detected": 4}  # the strongest first


def group_level(estimates: list[Any], own: Any = None) -> str:
    """A group's level: the strongest finding among its estimates (its effect, terms, forms, combinations, disparity
    and flips), where only ``own`` (the group's identity effect: what the gate's ``conclusive(identity_effect[*])``
    reads) can make it inconclusive: a thin term, form, disparity or flip excess does not."""
    found = [e.finding for e in estimates if e is not None and e.finding and e.finding != "inconclusive"]
    if own is not None:
        found += [e.finding for e in own if e is not None and e.finding == "inconclusive"]
    return min(found, key=lambda f: FINDING_RANK.get(f, 5)) if found else "not detected"


@dataclass(frozen=True)
class GroupEstimates:
    """One identity group's in-slot estimates: its ``level`` (:func:`group_level`), its identity ``effect``, its
    ``terms``, ``forms`` and ``cells`` (combinations; each largest effect first), its ``disparity`` and ``flips``
    (None where not measured)."""

    group: str
    level: str
    effect: Any
    terms: tuple[tuple[str, Any], ...]
    disparity: Any
    flips: Any
    forms: tuple[tuple[str, Any], ...] = ()
    cells: tuple[tuple[str, Any], ...] = ()


def _largest(items: Any) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(items, key=lambda te: (FINDING_RANK.get(str(te[1].finding), 5), -abs(te[1].value or 0.0))))


def group_estimates(effects: Any) -> list[GroupEstimates]:
    """Every identity group's in-slot estimates, material groups first, then by the size of the group's effect: the
    one reading of a summary's ``effects`` section behind the verdict, the console table and the report."""
    measure = effects.identity_effect
    terms = measure.by_term or {}
    forms = measure.by_form or {}
    cells = measure.by_cell or {}
    out = []
    for group, effect in (measure.by_group or {}).items():
        own = _largest((t, e) for t, e in terms.items() if e.group == group)
        mine = {t for t, _ in own} | {group}
        own_forms = _largest((f, e) for f, e in forms.items() if f.rpartition("@")[0] in mine)
        own_cells = _largest((c, e) for c, e in cells.items() if c.partition("&")[0] == group)
        disparity = (effects.disparity.by_group or {}).get(group) if effects.disparity else None
        flips = (effects.flip_excess.by_group or {}).get(group) if effects.flip_excess else None
        level = group_level([effect, disparity, flips, *(e for _, e in own + own_forms + own_cells)], own=[effect])
        out.append(GroupEstimates(group, level, effect, own, disparity, flips, own_forms, own_cells))
    # natural slots first at each level: the user's own texts before what a probe wrote into them
    return sorted(out, key=lambda g: (FINDING_RANK.get(g.level, 5), g.group.partition(":")[0].endswith("_probe"),
                                      -abs(g.effect.value or 0.0), g.group))  # fmt: skip


def slot_findings(effects: Any, unit: str, count: str = "texts") -> tuple[GroupFinding, ...]:
    """One finding per identity group, material ones first: the group's effect, the terms, forms and combinations
    that drive it (with the simultaneous intervals their labels were read off), its disparity and flip excess where
    detected, and, where the data could not settle it, how many texts would. ``unsettled`` as the gate's
    ``conclusive(...)`` reads it (:func:`counterfair.analysis.probes.gated_unsettled`)."""
    from ..analysis.probes import gated_unsettled

    families = effects.families or {}
    groups = effects.identity_effect.by_group or {}
    return tuple(
        GroupFinding(
            g.group, g.level, g.effect.value, g.effect.sim_low, g.effect.sim_high, g.effect.n or 0,
            _group_parts(g, unit, effects.material.get("identity_effect", 0.02), families, count),
            g.effect.texts_needed,
            gated_unsettled(g.group, groups),
        )
        for g in group_estimates(effects)
    )  # fmt: skip


def simultaneous(e: Any, count: str = "texts") -> str:
    """``(simultaneous 95 % interval +1.2 to +3.4)`` in points, or why there is none."""
    if e is None or e.sim_low is None or e.sim_high is None:
        n = getattr(e, "n", None)
        return f"(too few {count} for an interval: {n})" if n is not None else "(no interval)"
    return f"(simultaneous 95 % interval {points(e.sim_low)} to {points(e.sim_high)})"


def _bounds(e: Any) -> str:
    return "no interval" if e.sim_low is None else f"{points(e.sim_low)} to {points(e.sim_high)}"


def _neutral(group: str, families: Mapping[str, Any]) -> str:
    """What the group's effect is measured against."""
    found = families.get(group.rpartition(":")[0] or "identity")
    return found.neutral if found is not None and found.neutral else "a neutral word in the same place"


def _group_parts(
    g: GroupEstimates, unit: str, limit: float, families: Mapping[str, Any], count: str = "texts"
) -> list[str]:
    """The sentence of one group: what carries its level (material terms, forms or combinations with their
    simultaneous intervals, largest first), then the group's mean against its neutral, the power where inconclusive,
    the terms detected but small, the disparity and the flips where detected."""
    effect = g.effect
    neutral = _neutral(g.group, families)
    parts: list[str] = []
    carriers = [(f'naming "{t.removeprefix(PROBE)}"' + BY_PROBE * t.startswith(PROBE), e) for t, e in g.terms]
    carriers += [(form_words(f), e) for f, e in g.forms]
    carriers += [(cell_words(c), e) for c, e in g.cells]
    for level in ("material", "detected"):
        chosen = [(w, e) for w, e in carriers if e.finding == level]
        if chosen and not parts:  # the strongest finding: its first driver in full
            (words, e), rest = chosen[0], chosen[1:DRIVERS]
            lead = f"{words} {_moves(e.value)} {unit} by {points(abs(e.value or 0.0), False)} points"
            lead += f" {simultaneous(e, count)}"
            lead += "".join(f", {w.removeprefix('naming ')} {points(x.value)} ({_bounds(x)})" for w, x in rest)
            parts.append(lead + (f" and {len(chosen) - DRIVERS} more" if len(chosen) > DRIVERS else ""))
        elif chosen:
            listed = ", ".join(
                f"{w.removeprefix('naming ')} {points(x.value)} ({_bounds(x)})" for w, x in chosen[:DRIVERS]
            )
            parts.append(f"{LEVEL_WORDS[level]}: {listed}")
    what = group_words(g.group)
    if g.terms and len(g.terms) > 1:
        what = f"the group (its {_terms(len(g.terms))} on average)"
    if effect.value is None:
        parts.append(f"no value for {what}")
    elif parts and g.terms:  # its drivers said in full: the group's average briefly
        parts[0] += f" compared with {neutral}"
        parts.append(f"its {_terms(len(g.terms))} on average {points(effect.value)} ({_bounds(effect)})")
    else:
        shown = f"{points(abs(effect.value), False)} points {simultaneous(effect, count)}"
        parts.append(f"naming {what} {_moves(effect.value)} {unit} by {shown} compared with {neutral}")
    if effect.finding == "inconclusive":
        parts.append(power_words(effect, limit, count))
    elif effect.finding == "not detected" and effect.mde:
        parts.append(f"an effect of {points(effect.mde, False)} points would have been found 4 times in 5")
    elif effect.finding == "not detected" and effect.mde == 0:
        parts.append("the scores did not move with it in any text")
    small = [(w, e) for w, e in carriers if e.finding == "small"]
    if small:
        parts.append(
            "detectable but small: "
            + ", ".join(f"{w.removeprefix('naming ')} {points(x.value)}" for w, x in small[:DRIVERS])
        )
    if g.disparity is not None and g.disparity.detected:
        parts.append(
            f"its terms' scores differ by {points(g.disparity.value, False)} points more than neutral words' do "
            f"({_bounds(g.disparity)})"
        )
    if g.flips is not None and g.flips.detected:
        parts.append(
            f"its swaps flip the decision {points(g.flips.value, False)} points more often than swaps between neutral "
            f"words ({_bounds(g.flips)})"
        )
    return parts


def power_words(e: Any, limit: float, unit: str = "texts") -> str:
    """Why an estimate is inconclusive, and what would settle it."""
    if e.sim_low is None or e.mde is None:
        return f"too few {unit} for an interval ({e.n or 0}): inconclusive"
    need = f"; about {e.texts_needed:,} {unit} would" if e.texts_needed else ""
    return (
        f"inconclusive: too few {unit} to detect {points(limit, False)} points — the smallest effect detectable over "
        f"these {e.n} {unit} is {points(e.mde, False)} points{need}"
    )


DRIVERS = 4  # terms, forms or combinations named per group in a finding


def _terms(n: int) -> str:
    return f"{n} term" if n == 1 else f"{n} terms"


def _moves(value: float | None) -> str:
    return "raises" if (value or 0.0) >= 0 else "lowers"


def _slot_headline(effects: Any, findings: tuple[GroupFinding, ...], unit: str) -> tuple[str, str, str]:
    by_level: dict[str, list[str]] = {}
    for f in findings:
        by_level.setdefault(f.level, []).append(f.group)
    limit = effects.material.get("identity_effect", 0.02)
    flips = effects.material.get("flip_excess", 0.05)
    # the groups the gate's conclusive(identity_effect[*]) fails on, no more: their own effect is unsettled
    unsettled = [f.group for f in findings if f.unsettled and f.level != "material"]
    if by_level.get("material"):
        material = by_level["material"]
        status = "unfair"
        headline = (
            f"material identity effects for {', '.join(material)} ({len(material)} of {len(findings)} groups): "
            f"naming the group, one of its terms or forms, instead of its neutral in the same place moves {unit} by "
            f"more than {points(limit, False)} points (shown by simultaneous 95 % intervals over the "
            f"{effects.tests} estimates), or its swaps flip the decision more than {points(flips, False)} points more "
            "often."
        )
        if unsettled:
            headline += f" Inconclusive for {compact(unsettled)}."
    elif unsettled:
        status = "inconclusive"
        headline = (
            f"inconclusive for {compact(unsettled)}: the data neither show an effect beyond "
            f"{points(limit, False)} points nor rule one out (more texts naming them would); nothing material "
            f"elsewhere ({len(findings) - len(unsettled)} of {len(findings)} groups)."
        )
    elif by_level.get("small"):
        status = "small effects"
        headline = (
            f"detectable but small identity effects for {', '.join(by_level['small'])} (shown to stay within "
            f"{points(limit, False)} points); nothing material."
        )
    else:
        status = "no evidence of unfairness"
        widest = max((abs(b) for f in findings for b in (f.ci_low, f.ci_high) if b is not None), default=None)
        groups = f"{len(findings)} group" + ("" if len(findings) == 1 else "s")
        bound = f": group effects beyond ±{points(widest, False)} points are ruled out" if widest is not None else ""
        headline = f"no material identity effect in {groups} over {effects.texts} texts{bound}."
    return status, headline, _basis(effects, unit, limit, flips)


def _basis(effects: Any, unit: str, limit: float, flips: float) -> str:
    """How the effects were measured: each family's texts and neutral, the test family, what the labels mean."""
    families = effects.families or {}
    if families:
        said = "; ".join(
            f"{FAMILY_WORDS.get(name.partition(':')[0], name)}: {_many(f.slots, 'slot')} in {_many(f.texts, 'text')}, "
            f"against {f.neutral}"
            for name, f in families.items()
        )
    else:
        said = (
            f"identity terms: {effects.slots} slots in {effects.texts} texts, against {effects.placebo_words} neutral "
            "words"
        )
    overall = effects.identity_effect.overall
    overall_words = f" Overall (identity terms) {points(overall.value)} {simultaneous(overall)}." if overall else ""
    thin = [
        name for table in (effects.identity_effect.by_form or {}, effects.identity_effect.by_cell or {})
        for name, e in table.items() if e.sim_low is None
    ]  # fmt: skip
    thin_words = (
        f" Too few texts (under {MIN_INTERVAL_TEXTS}) to measure {len(thin)} forms and combinations." if thin else ""
    )
    family = (
        f"the estimate's simultaneous 95 % interval over the {effects.tests} estimates (Bonferroni)"
        if effects.tests
        else f"the estimate's simultaneous 95 % interval, which none has: none rests on {MIN_INTERVAL_TEXTS} texts"
    )
    return (
        f"Each identity reference was scored with every term of its set and with neutral words in its place — {said}."
        f" Effects in probability points of {unit}; each label is read off {family}: material, beyond "
        f"{points(limit, False)} points "
        f"({points(flips, False)} for flips); detectable but small, shown within; no material effect, shown within "
        f"with the power to see {points(limit, False)}; inconclusive, neither.{overall_words}{thin_words}"
    )


def _many(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


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
        why = UNSCORED_FILE if s.classifier.spec.startswith("scores:") else "the classifier returned NaN"
        steps.append(f"{s.pairs_without_score} pairs have no score ({why})")
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
    for metric in s.metrics.by_metric():
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
