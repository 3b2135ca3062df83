"""Each command's report page (:class:`~counterfair.views.page.Page`) from its typed summary (and its table where the
page shows rows): the verdict first, then the tables, worst first."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..summaries import (
    BiasSummary,
    ComparisonSummary,
    CTFSummary,
    Estimate,
    FeedbackSummary,
    GenerateSummary,
    Record,
    SuiteCell,
    SuiteSummary,
    typed,
)
from .page import MISSING, Figure, Page, Table, interval, num
from .verdict import FEW_PAIRS, gate_rules, largest_directions, slot_findings

_BIAS_METRICS = (
    ("subgroup_auc", "subgroup AUC"),
    ("bpsn_auc", "BPSN AUC"),
    ("bnsp_auc", "BNSP AUC"),
    ("pinned_auc", "pinned AUC"),
)


def _status(gate_status: str | None, attention: bool) -> str:
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


def _below(estimates: Mapping[str, Any], overall: Any) -> list[str]:
    """Names whose whole 95 % interval lies below the overall value (a functionality at [0.269, 0.425] against an
    overall 0.436 is listed; it was not when its upper bound had to fall below the overall value's lower bound)."""
    if overall is None or overall.value is None:
        return []
    return [k for k, e in estimates.items() if e.ci_high is not None and e.ci_high < overall.value]


def bias_page(summary: Mapping[str, Any] | Record) -> Page:
    """``counterfair bias``'s report page."""
    from .verdict import bias_findings

    s = typed(summary, BiasSummary)
    parts = bias_findings(s, worst=3)
    gate_status, rules = gate_rules(s.gate)
    groups = s.groups or {}
    weak = set(_below({g: e.bpsn_auc for g, e in groups.items()}, s.overall_auc))
    weak |= set(_below({g: e.bnsp_auc for g, e in groups.items()}, s.overall_auc))
    lowest = {g: min(v for v in (groups[g].bpsn_auc.value, groups[g].bnsp_auc.value) if v is not None) for g in weak}
    ranked = sorted(weak, key=lambda g: (lowest[g], g))  # the lowest AUC first
    findings = [parts.means, parts.equality, *parts.lowest]
    if ranked:
        findings.insert(
            0,
            "Groups whose BPSN or BNSP AUC lies below the overall AUC with its whole 95% interval: "
            + ", ".join(ranked),
        )
    input_ = s.extra.get("input", {})
    meta = (
        f"Classifier {s.classifier.spec} (score = probability of {s.positive_label}); {num(input_.get('texts'))} "
        f"texts from {input_.get('source', MISSING)}; groups from {s.membership}; counterfair "
        f"{s.extra.get('counterfair_version', MISSING)}.",
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
        status=_status(gate_status, bool(ranked)),
        findings=tuple(f.removeprefix("- ") for f in findings),
        gate_status=gate_status,
        rules=rules,
        meta=meta,
        next_steps=tuple(steps),
        tables=(
            Table("Per group, lowest BPSN AUC first", bias_table(s), _AUC_NOTE, "groups"),
            Table("Overall", _overall_table(s), None, "overall"),
        ),
        notes=(parts.without,) if parts.without else (),
        details=s.to_dict(),
    )


_AUC_NOTE = (
    "Subgroup AUC: the texts that mention the group. BPSN: the group's non-toxic texts against the other toxic ones "
    "(low: false positives for the group). BNSP: the group's toxic texts against the other non-toxic ones (low: false "
    "negatives). Pinned AUC: a sample of the group's texts pinned to an equal-size sample of all texts."
)


# ------------------------------------------------------------------------------------------------ suites


def _cell_row(name: str, c: SuiteCell, *, first: str) -> dict[str, Any]:
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
    weak = _below({f: c.accuracy for f, c in functionalities.items()}, s.accuracy)
    n = s.extra.get("input", {}).get("cases", s.accuracy.n)
    head = f"accuracy {interval(s.accuracy)} over {num(n)} cases"
    if weak:
        head += f"; functionalities whose whole 95% interval lies below the overall accuracy: {', '.join(weak)}."
    else:
        head += "; no functionality is significantly below the overall accuracy."
    return head, weak


def suite_page(summary: Mapping[str, Any] | Record, *, worst: int = 5) -> Page:
    """``counterfair suite run``'s report page."""
    from .verdict import bias_findings

    s = typed(summary, SuiteSummary)
    headline, weak = suite_headline(s)
    gate_status, rules = gate_rules(s.gate)
    functionalities, targets = s.functionalities or {}, s.targets or {}
    findings = ["Worst functionalities:"] + [_cell_sentence(f, c) for f, c in list(functionalities.items())[:worst]]
    if targets:
        findings += ["Worst targets:"] + [_cell_sentence(t, c) for t, c in list(targets.items())[:3]]
    if s.bias is not None:
        background = s.extra.get("input", {}).get("without_target")
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
                            _AUC_NOTE, "bias"))  # fmt: skip
    input_ = s.extra.get("input", {})
    meta = (
        f"Classifier {s.classifier.spec} (score = probability of {s.positive_label}, threshold {s.threshold}); "
        f"{num(input_.get('cases'))} cases ({num(input_.get('positive'))} hateful) from "
        f"{input_.get('source', MISSING)}; counterfair {s.extra.get('counterfair_version', MISSING)}.",
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
        status=_status(gate_status, bool(weak)),
        findings=tuple(findings),
        gate_status=gate_status,
        rules=rules,
        meta=meta,
        next_steps=tuple(steps),
        tables=tuple(tables),
        details=s.to_dict(),
    )


#: the commands whose report is a :class:`Page` built from the summary alone, by the command that wrote it
PAGES = {"bias": bias_page, "suite": suite_page}


def write_report(run_dir: Any) -> dict[str, Any] | None:
    """``report.html`` and ``report.md`` of a run directory whose command has a page (None for another command),
    from the summary as written: the run writes the same report ``counterfair report`` rebuilds."""
    from .page import write_page

    page = page_of(run_dir)
    return write_page(page, run_dir) if page is not None else None


def page_of(run_dir: Any) -> Page | None:
    """The report page of a run directory written by a command in :data:`PAGES` (None for another command)."""
    from pathlib import Path

    from ..errors import InputError
    from ..summaries import read_summary

    target = Path(run_dir)
    if not (target / "summary.json").exists():
        raise InputError(f"{target}: not a counterfair run directory (no summary.json)")
    s = read_summary(target)
    command = s.extra.get("command") or getattr(s, "command", None) or ""
    builder = PAGES.get(command)
    if builder is None:
        return None
    page = builder(s)
    draw = FIGURES.get(command)
    return dataclasses.replace(page, figures=draw(target)) if draw is not None else page


def _feedback_figures(run_dir: Any) -> tuple[Figure, ...]:
    """Paper 002's per-step box plots of minimality and perplexity, from the run's ``steps.csv``."""
    from pathlib import Path

    from ..io import read_table
    from .report import embed_figures, plots

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


# ------------------------------------------------------------------------------------ ctf, generate, feedback


def _gap(e: Any) -> str:
    return interval(Estimate(value=e.value, ci_low=e.ci_low, ci_high=e.ci_high))


def ctf_page(summary: Mapping[str, Any] | Record) -> Page:
    """``counterfair ctf``'s report page: the gap, per source term and split, the directions (few swaps marked)."""
    s = typed(summary, CTFSummary)
    terms = s.by_source_term or {}
    ranked = sorted(terms.items(), key=lambda kv: (-(kv[1].value or 0.0), kv[0]))
    solid = [(t, e) for t, e in ranked if e.texts >= 2]
    findings = []
    splits = [f"{name} terms {_gap(e)} ({e.texts} texts)" for name, e in (s.by_split or {}).items() if e.texts]
    if splits:
        findings.append("By term split: " + "; ".join(splits) + ".")
    labels = [f"{name} {_gap(e)} ({e.texts} texts)" for name, e in (s.by_label or {}).items() if e.texts]
    if labels:
        findings.append("By gold label: " + "; ".join(labels) + ".")
    findings.append("Largest gaps by source term (terms in at least 2 texts):")
    findings += [f"{t}: {_gap(e)} over {e.texts} texts, {e.pairs} swaps" for t, e in solid[:5]]
    input_ = s.extra.get("input", {})
    meta = [
        f"Classifier {s.classifier.spec} (score = probability of {s.extra.get('positive_label', MISSING)}); "
        f"{num(input_.get('texts'))} texts from {input_.get('source', MISSING)}, {num(s.texts)} with identity terms; "
        f"counterfair {s.extra.get('counterfair_version', MISSING)}.",
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
         "CTF gap [95% CI]": _gap(e)}
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
            f"CTF gap {_gap(s)} over {num(s.texts)} texts and {num(s.pairs)} identity swaps; not placebo-controlled "
            "(counterfair audit separates the identity's part from the edit's)."
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
            f"Input {s.extra.get('input', MISSING)}; counterfair {s.extra.get('counterfair_version', MISSING)}. "
            "BLEU and BERTScore compare each counterfactual with its original (paper 000's ranking).",
            *detector_note(s.options.get("detector")),
        ),
        next_steps=("score a classifier on these pairs: counterfair audit, or counterfair evaluate",),
        tables=(Table("Per method", pd.DataFrame(rows), None, "methods"),),
        details=s.to_dict(),
    )


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
    return Page(
        command="feedback",
        title="Counterfactuals of counterfactuals",
        headline=(
            f"{s.editor.name} fed its own output: {shown} (inc@k: the mean growth of the edit distance from one "
            "application to the next; above 0 the editor missed a smaller edit it could have made)."
        ),
        findings=tuple(findings),
        meta=(
            f"Editor {s.editor.name}, classifier {s.classifier.spec}; counterfair "
            f"{s.extra.get('counterfair_version', MISSING)}. inc@n, flip-rate@n and perplexity@n: paper 002.",
        ),
        tables=(Table("Per step", pd.DataFrame(rows), None, "steps"),),
        details=s.to_dict(),
    )


def evaluation_verdict(table: pd.DataFrame, classifier: str | None) -> tuple[str, tuple[str, ...]]:
    """The headline and lines above an evaluation report's table (one method, or several compared, one row each):
    the flip rate first (what a counterfactual is for), then closeness (distance, BLEU) and fluency (perplexity)."""
    rows = table.to_dict(orient="records")
    flips = [r for r in rows if r.get("flip_rate") is not None and r.get("flip_rate") == r.get("flip_rate")]
    if flips:
        best = max(flips, key=lambda r: r["flip_rate"])
        headline = (
            f"{best['method']} flips {100 * best['flip_rate']:.1f}% of {classifier}'s predictions"
            + (f", the most of {len(rows)} methods" if len(rows) > 1 else "")
            + "."
        )
    else:
        headline = "no flip rate: no classifier was named (--classifier); closeness and fluency only."
    lines = []
    for r in rows:
        parts = [f"{title} {num(r.get(key))}" for key, title in _EVALUATION_WORDS if key in r]
        lines.append(f"{r['method']}: " + ", ".join(parts))
    return headline, tuple(lines)


_EVALUATION_WORDS = (
    ("flip_rate", "flip rate"),
    ("distance", "distance"),
    ("bleu", "BLEU"),
    ("bertscore_f1", "BERTScore F1"),
    ("perplexity", "perplexity"),
)


def _in_slot_words(effects: Any) -> str:
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
        parts.append(f"in the slot, A: {_in_slot_words(a)}; B: {_in_slot_words(b)}")
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


def compare_page(summary: Mapping[str, Any] | Record) -> Page:
    """``counterfair compare``'s report page: which groups B is fairer or less fair for than A, with intervals."""
    from ..analysis.compare import comparison_table

    s = typed(summary, ComparisonSummary)
    headline, status = comparison_headline(s)
    tables = []
    for m in s.metrics:
        frame = comparison_table(s.to_dict(), m)
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
                            None, m))  # fmt: skip
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
        tables=tuple(tables),
        details=s.to_dict(),
    )


PAGES |= {"ctf": ctf_page, "generate": generate_page, "feedback": feedback_page, "compare": compare_page}
#: plots a command's page draws from its run directory (beside the summary)
FIGURES: dict[str, Any] = {"feedback": _feedback_figures}
