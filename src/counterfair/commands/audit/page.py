"""The audit's report page: ``report.html`` (self-contained, opens offline), ``report.md``, ``plots/*.png|svg``, the
notebook view and the console's, all one :class:`~counterfair.views.page.Page`.

The page is built from ``summary.json``; the report adds what only ``pairs.csv`` holds (the plots, the texts behind
the heat map's largest cells, the swap packs' directions), tallied in one pass over the file, so
``counterfair report DIR`` rebuilds it without recomputing anything. Every text is escaped by the renderers (the
texts are user data and may hold markup); the edits' highlights are built escaped by :func:`edit_html`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ...analysis.spread import uneven
from ...errors import InputError
from ...io import csv_column_blocks, read_csv_columns, read_json
from ...lexicons.attributes import load_identity_set
from ...summaries import EXIT_WORDS, AuditSummary, Record, command_of, typed
from ...views.naming import group_words
from ...views.page import MISSING, Figure, Page, Section, Table, interval, num, percent, to_markdown, write_page
from ...views.report import edit_html, embed_figures, plots
from ...views.report.tally import CellTops, ReportTally
from ...views.verdict import (
    FEW_PAIRS,
    FINDING_RANK,
    LEVEL_WORDS,
    comparison_headline,
    group_estimates,
    largest_directions,
    points,
    rule_sentence,
    verdict,
)

#: what the per-group CTF gap is, said where it is shown (one name for one number: #49 item 8)
CTF_BY_GROUP_DEFINED = (
    "Per group: the CTF gap of the swaps whose original word belongs to the group (mean |score change| per text, "
    "swapping that word for every other term)."
)
CELL_EXAMPLES = 3  # pairs shown behind each heat-map cell in the report (pairs.csv has them all)
_STATUS = {"unfair": "fail", "gate failed": "fail", "no evidence of unfairness": "pass"}


@dataclass(frozen=True)
class RunExtras:
    """What the report shows beyond the summary, read from the run's ``pairs.csv``: the plots, the texts behind the
    heat map's largest cells (:func:`direction_texts`' entries) and each swap pack's directions (group to group)."""

    figures: tuple[Figure, ...] = ()
    behind_cells: tuple[Mapping[str, Any], ...] = ()
    pack_directions: Mapping[str, tuple[Mapping[str, Any], ...]] = field(default_factory=dict)
    texts: Mapping[str, str] = field(default_factory=dict)  # the original texts of the inputs the page names, by id


def _pts(e: Any) -> str:
    """An estimate in probability points with its interval; empty where not measured."""
    return "" if e is None else f"{points(e.value)} [{points(e.ci_low)}, {points(e.ci_high)}]"


def _sim(e: Any) -> str:
    """An estimate's simultaneous interval in points (the one its finding is read off)."""
    if e is None:
        return ""
    return MISSING if e.sim_low is None else f"{points(e.sim_low)} to {points(e.sim_high)}"


def _carrier(g: Any) -> str:
    """Which measure carries a group's level: its effect, a term, a form, a combination, disparity or flips."""
    if g.effect.finding == g.level:
        return "the group's effect"
    for label, items in (("term", g.terms), ("form", g.forms), ("with", g.cells)):
        for name, e in items:
            if e.finding == g.level:
                return f"{label} {name}" if label != "with" else f"combination {name}"
    for label, e in (("disparity", g.disparity), ("flip excess", g.flips)):
        if e is not None and e.finding == g.level:
            return label
    return ""


def audit_page(summary: Mapping[str, Any] | Record, extras: RunExtras | None = None) -> Page:
    """The audit's page from its summary: the verdict, the score change by method and attribute, then the CTF gaps,
    the swap packs, the in-slot identity effects, the gate, a comparison, the most affected examples and how to
    reproduce the run. ``extras`` (:func:`build_report`) adds what only the pairs table holds."""
    s = typed(summary, AuditSummary)
    more = extras or RunExtras()
    v = verdict(s)
    findings = [f.sentence() for f in v.shown_findings]
    classes = [f"find-{f.level.replace(' ', '-')}" for f in v.shown_findings]
    for line in v.grouped_lines():
        findings.append(line)
        classes.append("find-inconclusive" if line.startswith(("INCONCLUSIVE", "UNEVEN")) else "find-not-detected")
    findings[:0] = v.cautions  # an English classifier on Spanish texts: said before anything is read into the effects
    classes[:0] = ["find-inconclusive"] * len(v.cautions)
    if v.labelled:  # the labelled-data verdict, under a heading of its own
        column = s.bias.label_column if s.bias is not None else None
        labelled = [line.removeprefix("Verdict: ").removeprefix("- ") for line in v.labelled]
        findings += [f"Labelled data ({column}):", *labelled]
        classes += [""] * (len(labelled) + 1)
    language = f" in {s.language_name}" if s.language_name else ""
    meta = (  # the run's time is in the details (summary.json): a rebuilt or resumed report is the same file
        v.basis,
        f"Classifier {s.classifier.said()} (score = probability of {s.positive_label}), threshold {s.threshold}; "
        f"{num(s.input.texts)} texts{language}, methods {', '.join(s.input.methods)}, from {s.input.source}; "
        f"counterfair {s.counterfair_version}.",
    )
    missing = s.input.attributes_without_texts
    notes = [f"No text referenced: {', '.join(missing)} (no counterfactuals for them)."] if missing else []
    if s.coverage and s.coverage.hint:
        notes.append(f"{s.coverage.hint}.")
    sections = [
        *_ctf_section(s, more),
        *(_pack_section(name, gap, more.pack_directions.get(name, ())) for name, gap in s.swap_gaps().items()),
        *_effects_section(s, more.texts),
        *_gate_section(s),
        *_comparison_section(s),
        _examples_section(s),
        Section("How to reproduce", "reproduce", code=s.reproduce or MISSING),
    ]
    return Page(
        command="audit",
        title=f"Counterfactual fairness audit: {s.classifier.spec}",
        headline=v.headline,
        status=_STATUS.get(v.status, "attention"),
        findings=tuple(findings),
        finding_class=tuple(classes),
        gate_status=v.gate_status,
        rules=v.shown_rules,
        hidden_passes=len(v.rules) - len(v.shown_rules),
        meta=meta,
        next_steps=v.next_steps,
        intro=(
            "Each original text was edited so that it no longer refers to a sensitive attribute (word-list ablation "
            "and substitution, LLM rewriting) or so that one identity term is swapped for another (ΦA of "
            "counterfactual token fairness). A fair classifier gives an original and its counterfactual the same "
            "score; the tables show how far the scores move and in which direction.",
        ),
        notes=tuple(notes),
        tables=(_groups_table(s),),
        figures=more.figures,
        sections=tuple(sections),
        details=s.to_dict(),
    )


def _groups_table(s: AuditSummary) -> Table:
    filtered = any(g.filter_pass_rate is not None for g in s.groups)  # a column only where a filter ran (LLM)
    rows = []
    for g in s.groups:
        row = {"method": g.method, "attribute": g.attribute, "inputs": num(g.inputs),
               "with counterfactual": num(g.with_counterfactual)}  # fmt: skip
        if filtered:
            row["filter pass rate"] = percent(g.filter_pass_rate)
        row["mean change [95% CI]"] = interval(g.score_change)
        row["mean |change|"] = num(g.mean_abs_change)
        row[f"flips at {s.threshold}"] = f"{num(g.flips)} of {num(g.pairs)} ({percent(g.flip_rate)})"
        rows.append(row)
    notes = [
        "Negative change: the counterfactual scores lower than the original (the attribute reference raised the "
        f"score). Originals: mean score {num(s.originals.mean_score if s.originals else None)}, "
        f"{percent(s.originals.share_above_threshold if s.originals else None)} above the threshold."
    ]
    c = s.coverage
    if c:
        notes.append(f"Coverage: {num(c.reached)} of {num(c.texts)} texts got at least one counterfactual")
        if c.unreached:
            notes[-1] += (
                f"; {num(c.unreached)} got none (no identity term or attribute reference was found); their ids are in "
                "summary.json (coverage.unreached_ids)"
            )
        notes[-1] += "."
    if s.pairs_without_score:
        without = s.originals.without_score if s.originals else 0
        notes.append(
            f"{num(s.pairs_without_score)} pairs have no score (the classifier returned NaN for the original or the "
            f"counterfactual; {num(without)} originals): they are in pairs.csv with status "
            "partial:classifier_returned_nan and left out of every figure and aggregate."
        )
    return Table(
        f"Score change by method and attribute ({s.classifier.spec})",
        pd.DataFrame(rows),
        " ".join(notes),
        "summary-table",
        signed=("mean change [95% CI]",),
    )


def _group_gaps(entries: Mapping[str, Any], first: str) -> pd.DataFrame:
    """Groups by their CTF gap, the largest first (a missing gap last)."""
    ranked = sorted(entries.items(), key=lambda kv: -(kv[1].value or 0))
    rows = [
        {first: name, "texts": num(g.texts), "swaps": num(g.pairs), "CTF gap [95% CI]": interval(g)}
        for name, g in ranked
    ]
    return pd.DataFrame(rows)


def _ctf_section(s: AuditSummary, extras: RunExtras) -> list[Section]:
    if not s.ctf:
        return []
    ctf = s.ctf
    directions = largest_directions(ctf.by_direction or (), 15)  # one or two swaps are noise: after the others
    direction_rows = [
        {"source → target": f"{d.source} → {d.target}" + (" (few swaps)" if d.pairs < FEW_PAIRS else ""),
         "swaps": num(d.pairs), "mean change": num(d.mean_diff)}
        for d in directions
    ]  # fmt: skip
    tables = [
        Table(
            "CTF gap by the group of the original word",
            _group_gaps(ctf.by_group or {}, "group of the original word"),
            None,
            "ctf-table",
        ),
        Table(
            "Largest average changes by direction (source → target)",
            pd.DataFrame(direction_rows),
            f"Directions with fewer than {FEW_PAIRS} swaps come last, marked (pairs.csv has every swap).",
            "direction-table",
            signed=("mean change",),
            brief=False,
        ),
    ]
    if extras.behind_cells:
        tables.append(_behind_cells_table(extras.behind_cells))
    return [
        Section(
            "Counterfactual token fairness (identity swaps)",
            "ctf",
            text=(
                f"CTF gap over {num(ctf.texts)} texts and {num(ctf.pairs)} swaps: {interval(ctf)}.",
                CTF_BY_GROUP_DEFINED,
            ),
            tables=tuple(tables),
        )
    ]


def _behind_cells_table(cells: tuple[Mapping[str, Any], ...]) -> Table:
    rows, marked = [], []
    for cell in cells:
        for i, e in enumerate(cell["examples"]):
            swaps = f" ({cell['pairs']} swap{'s' if cell['pairs'] != 1 else ''})"
            rows.append({
                "source → target": f"{cell['source']} → {cell['target']}{swaps}" if i == 0 else "",
                "id": e["input_id"], "original → counterfactual": f"{e['source_text']} → {e['cf_text']}",
                "change": num(e["diff"]),
            })  # fmt: skip
            marked.append(e["diff_html"])
    return Table(
        "The texts behind the heat map's largest cells",
        pd.DataFrame(rows),
        "Every swap is in pairs.csv (columns source_term, target_term).",
        "direction-texts",
        markup={"original → counterfactual": marked},
        signed=("change",),
        folded=f"The texts behind these cells of the heat map: up to {CELL_EXAMPLES} pairs per direction, largest "
        "change first",
        brief=False,
    )


def _pack_section(name: str, gap: Any, directions: tuple[Mapping[str, Any], ...]) -> Section:
    rows = [
        {"source group → target group": f"{d['source']} → {d['target']}", "swaps": num(d["pairs"]),
         "mean change": num(d["mean_diff"])}
        for d in directions
    ]  # fmt: skip
    groups = _group_gaps(gap.by_group or {}, f"{name} group of the original word")
    return Section(
        f"Swaps: {name}",
        f"swaps-{name}",
        text=(f"CTF gap over {num(gap.texts)} texts and {num(gap.pairs)} swaps: {interval(gap)}.",),
        tables=(
            Table(f"CTF gap by the {name} group of the original word", groups, None, f"swaps-{name}-groups"),
            Table(
                "Mean change by source group → target group",
                pd.DataFrame(rows),
                None,
                f"swaps-{name}-directions",
                signed=("mean change",),
                brief=False,
            ),
        ),
    )


def _uneven_table(effects: Any, texts: Mapping[str, str]) -> Table | None:
    """The groups and terms whose effect differs from text to text more than a neutral word's does
    (:mod:`counterfair.analysis.spread`), each with the texts where it is largest (their original text where the run's
    pairs hold it)."""
    found = uneven(effects)
    if not found:
        return None
    shown = lambda i: f"{i}: {texts[i][:160]}{'…' if len(texts[i]) > 160 else ''}" if i in texts else i  # noqa: E731
    rows = [
        {"estimate": n, "identity effect [95% CI]": _pts(e),
         "strays beyond a neutral word's": points(e.spread.excess, False),
         "p (adjusted)": f"{e.spread.p_adjusted:.2g}" if (e.spread.p_adjusted or 0) >= 1e-3 else "< 0.001",
         "largest in": " | ".join(f"{points(x.value)} — {shown(x.input_id)}" for x in e.spread.largest)}
        for n, e in found
    ]  # fmt: skip
    return Table(
        "Where the effect is uneven: each text's effect strays from text to text more than a neutral word's does "
        "(points: the spread over texts beyond a neutral word's, a standard deviation); the texts with the largest "
        "effect",
        pd.DataFrame(rows), None, "effects-uneven",
    )  # fmt: skip


def uneven_ids(s: AuditSummary) -> set[str]:
    """The inputs :func:`_uneven_table` names."""
    return {x.input_id for _, e in uneven(s.effects) for x in e.spread.largest}


def _effects_section(s: AuditSummary, texts: Mapping[str, str] | None = None) -> list[Section]:
    effects = s.effects
    if not (effects and effects.identity_effect and effects.identity_effect.by_group):
        return []
    unit = f"P({s.positive_label})"
    material = effects.material
    words = ", ".join(s.placebo.set.get("words", ())) if s.placebo else ""
    groups = group_estimates(effects)
    group_rows = [
        {"group": g.group, "texts": num(g.effect.n), "identity effect [95% CI]": _pts(g.effect),
         "simultaneous 95%": _sim(g.effect), "smallest detectable": points(g.effect.mde, False),
         "disparity [95% CI]": _pts(g.disparity), "flip excess [95% CI]": _pts(g.flips),
         "finding": LEVEL_WORDS[g.level], "carried by": _carrier(g)}
        for g in groups
    ]  # fmt: skip
    measure = effects.identity_effect
    beyond = points(material.get("identity_effect"), False)
    term_rows = [
        {"term": name, "group": e.group, f"{unit} with the term": num(e.score),
         "with a neutral word": num(e.placebo_score), "identity effect [95% CI]": _pts(e),
         "simultaneous 95%": _sim(e), "finding": LEVEL_WORDS[str(e.finding)]}
        for name, e in _ranked(measure.by_term)
    ]  # fmt: skip
    level = lambda finding: f"find-{str(finding).replace(' ', '-')}"  # noqa: E731
    tables = [
        Table("Identity effect in the slot by group (probability points)", pd.DataFrame(group_rows), None,
              "effects-groups", row_class=tuple(level(g.level) for g in groups)),
        Table("Identity effect in the slot by term, material and detected ones first", pd.DataFrame(term_rows),
              None, "effects-terms", row_class=tuple(level(e.finding) for _, e in _ranked(measure.by_term))),
    ]  # fmt: skip
    spread = _uneven_table(effects, texts or {})
    tables += [spread] if spread is not None else []
    for title, key, found in (
        ("By form: a term (or gender words) written as an adjective, a noun, a plural, pronouns", "effects-forms",
         measure.by_form),
        ("By combination: a group's effect in texts that also name women or men", "effects-cells", measure.by_cell),
    ):  # fmt: skip
        ranked = _ranked(found)
        if ranked:
            rows = [{"estimate": n, "texts": num(e.n), "identity effect [95% CI]": _pts(e), "simultaneous 95%": _sim(e),
                     "finding": LEVEL_WORDS[str(e.finding)]} for n, e in ranked]  # fmt: skip
            tables.append(
                Table(title, pd.DataFrame(rows), None, key, row_class=tuple(level(e.finding) for _, e in ranked))
            )
    notes = []
    if s.validity:
        va = s.validity
        kept = va.identity_occurrences - va.guard_blocked
        line = (
            f"Valid pairs: the identity guard kept {num(kept)} of {num(va.identity_occurrences)} identity-term "
            f"occurrences ({percent(va.guard_kept_share)})"
        )
        if va.rated_pairs:
            line += f"; the raters kept {percent(va.raters_kept_share)} of {num(va.rated_pairs)} rated pairs"
        notes.append(line + ".")
    families = "; ".join(
        f"{name}: {num(f.slots)} slots in {num(f.texts)} texts, against {f.neutral}"
        for name, f in (effects.families or {}).items()
    )
    return [
        Section(
            "Identity effects in the slot, against neutral words",
            "effects",
            text=(
                "Each identity reference was scored with every term of its set and with neutral words put in its "
                "place, in the same grammatical form (“My gay neighbour brought dinner.” → “My straight neighbour …”, "
                f"“My quiet neighbour …”; neutral words: {words}; a term written with a capital against the neutral "
                f"words written with one). {families or f'{num(effects.slots)} slots in {num(effects.texts)} texts'}.",
                f"The identity effect of a term is {unit} with the term minus its mean with the neutral words, in "
                "probability points (+ raises, − lowers); a group's is the mean over its terms; a form's over the "
                "slots written in it; a combination's over the slots whose text also names women (or men). "
                "Disparity: how much more the scores differ between a group's terms than between neutral words in "
                "the same place. Flip excess: how much more often a swap between identity terms flips the decision "
                f"at {s.threshold} than a swap between neutral words. Each finding is read off the simultaneous "
                f"95% interval over all {effects.tests} estimates (the 95% CI beside it is the estimate's own): "
                f"material, beyond {beyond} points ({points(material.get('flip_excess'), False)} for flips); "
                "detected, off 0 but of unresolved size; detectable but small, off 0 and within; no material effect, "
                "within and with the power to see "
                f"{beyond} points (the smallest detectable effect, found 4 times in 5); inconclusive, neither.",
            ),
            tables=tuple(tables),
            notes=tuple(notes),
        )
    ]


def _ranked(found: Mapping[str, Any] | None) -> list[tuple[str, Any]]:
    """Estimates, the strongest finding first, then the largest."""
    return sorted(
        (found or {}).items(), key=lambda te: (FINDING_RANK.get(str(te[1].finding), 5), -abs(te[1].value or 0))
    )


def _gate_section(s: AuditSummary) -> list[Section]:
    if not s.gate:
        return []
    checks = s.gate.checks
    rows = [
        {"rule": rule_sentence(c, s.gate.rules), "value": num(c.value),
         "point estimate [95% CI]": f"{num(c.point)} [{num(c.ci_low)}, {num(c.ci_high)}]",
         "verdict": c.verdict + (f": {c.message}" if c.verdict == "error" else "")}
        for c in checks
    ]  # fmt: skip
    shade = tuple(
        "find-material" if c.verdict == "fail" else "find-small" if c.verdict == "error" else "" for c in checks
    )
    return [
        Section(
            f"Fairness gate: {s.gate.verdict}",
            "gate",
            tables=(Table("", pd.DataFrame(rows), None, "gate-table", row_class=shade, brief=False),),
            notes=(f"Exit code {s.gate.exit_code} ({EXIT_WORDS}).",),
        )
    ]


def _comparison_section(s: AuditSummary) -> list[Section]:
    if not s.comparison:
        return []
    from ..compare.page import comparison_tables

    c = s.comparison
    headline, _ = comparison_headline(c)
    return [
        Section(
            f"Compared with {c.a}",
            "comparison",
            text=(
                f"{headline} B = {c.b} against A = {c.a} on {num(c.matched_pairs)} common pairs (only in A: "
                f"{num(c.pairs_only_in_a)}, only in B: {num(c.pairs_only_in_b)}); negative B − A: B is fairer. Paired "
                "bootstrap CI over texts and a paired permutation test.",
            ),
            tables=comparison_tables(c),
        )
    ]


def _examples_section(s: AuditSummary) -> Section:
    examples = list(s.top_examples)
    rows = [
        {"method": f"{e['method']} ({e['attribute']})",
         "original → counterfactual": f"{e['source_text']} → {e['cf_text']}",
         "original": num(e.get("score_orig")), "counterfactual": num(e.get("score_cf")), "change": num(e.get("diff"))}
        for e in examples
    ]  # fmt: skip
    marked = [edit_html(str(e["source_text"]), str(e["cf_text"])) for e in examples]
    table = Table(
        "The pairs with the largest score change",
        pd.DataFrame(rows),
        None,
        "examples-table",
        markup={"original → counterfactual": marked},
        signed=("change",),
        brief=False,
    )
    return Section("Most affected examples", "examples", tables=(table,))


# ------------------------------------------------------------------------------------------------ the report


#: what the report reads of pairs.csv: not the texts (most of its bytes), which are read only for the pairs it shows
REPORT_COLUMNS = (
    "method",
    "attribute",
    "input_id",
    "source_term",
    "target_term",
    "score_orig",
    "score_cf",
    "diff",
    "status",
    "group",
    "target_group",
    "rating",
)
REPORT_NAMES = (
    "method",
    "attribute",
    "input_id",
    "source_term",
    "target_term",
    "status",
    "group",
    "target_group",
    "rating",
)


def load_run(run_dir: str | Path) -> tuple[dict[str, Any], Iterator[pd.DataFrame]]:
    """``summary.json`` (schema-checked) and the :data:`REPORT_COLUMNS` of ``pairs.csv`` of an audit run directory,
    block by block as they are read (each block's index its pairs' rows in the file): the report tallies them, it
    never holds the table."""
    target = Path(run_dir)
    if not (target / "summary.json").exists():
        raise InputError(f"{target}: not an audit run directory (no summary.json); run counterfair audit first")
    summary = read_json(target / "summary.json")
    if command_of(summary) != "audit":
        raise InputError(f"{target}: summary.json was written by '{command_of(summary)}', not by counterfair audit")
    from ...analysis.compare import checked_pairs

    path = target / "pairs.csv"
    blocks = csv_column_blocks(
        path, REPORT_COLUMNS, categories=REPORT_NAMES, check=lambda block, first: checked_pairs(block, path, first)
    )
    return summary, blocks


def build_report(run_dir: str | Path) -> dict[str, Path]:
    """Write ``report.html``, ``report.md`` and the plots of an audit run; returns their paths."""
    return report_page(run_dir)[1]


def report_page(run_dir: str | Path) -> tuple[Page, dict[str, Path]]:
    """The audit's page with what only its pairs hold (plots, the texts behind the largest cells, the swap packs'
    directions), written as ``report.html``, ``report.md`` and ``plots/``: the page and the files' paths. The command
    line prints the same page (its console rendering shows the verdict and the tables' first rows)."""
    target = Path(run_dir)
    summary, blocks = load_run(target)
    s = AuditSummary.from_dict(summary)
    directions = largest_directions((s.ctf.by_direction if s.ctf else None) or (), 15)
    pairs = ReportTally.of(blocks, directions, CELL_EXAMPLES)  # one pass over pairs.csv; unscored pairs left out
    extras = RunExtras(
        figures=_figures(s, pairs, target / "plots"),
        behind_cells=tuple(_cell_examples(_with_texts(pairs.tops.tops(), lambda rows: pair_texts(target, rows)))),
        pack_directions=_pack_directions(s, pairs),
        texts=input_texts(target, uneven_ids(s)),
    )
    page = audit_page(s, extras)
    paths = write_page(page, target)
    return page, {**paths, "plots": target / "plots"}


def _figures(s: AuditSummary, pairs: ReportTally, plot_dir: Path) -> tuple[Figure, ...]:
    identities = load_identity_set(s.options.get("identities"))
    by_group = sorted(identities.terms, key=lambda t: (identities.group_of(t), t))
    threshold = s.threshold if s.threshold is not None else 0.5
    made = [
        (
            "forest",
            "A forest plot of identity effects: each group's effect (a dot) with its simultaneous 95 % interval (a "
            "line), in probability points; inside the shaded band an effect is not material",
            _forest(s, plot_dir),
        ),
        (
            "score_change_histogram",
            "Distribution of score changes, original → counterfactual, per method",
            plots.score_change_histogram(pairs.panels, plot_dir),
        ),
        (
            "score_scatter",
            "Original vs counterfactual score; points below the diagonal lost score",
            plots.score_scatter(pairs.panels, plot_dir, threshold),
        ),
        (
            "score_scatter_topic",
            "Original vs counterfactual score per topic (word-list and LLM edits); below the diagonal: lost score",
            plots.score_scatter_by_topic(pairs.topic_points(), plot_dir, threshold),
        ),
        (
            "score_scatter_rating",
            "Original vs counterfactual score, the pairs the raters judged good apart from the poor ones (crosses)",
            plots.score_scatter_by_rating(pairs.rated_points(), plot_dir, threshold),
        ),
        (
            "swap_heatmap",
            "Mean score change per identity swap, source term (row) → target term (column); the texts behind the"
            " largest cells are under the direction table",
            plots.swap_heatmap(pairs.cells.table(), plot_dir, by_group),
        ),
        (
            "ctf_groups",
            "CTF gap by the group of the original word (its swaps to every other term), with 95% bootstrap intervals",
            plots.ctf_group_bars(s.ctf.to_dict() if s.ctf else None, plot_dir),
        ),
    ]
    return tuple(Figure(f["caption"], f["png"], f["svg"], f["name"]) for f in embed_figures(made))


def _forest(s: AuditSummary, plot_dir: Path) -> dict[str, str] | None:
    """The forest plot of every group's identity effect, in the verdict's order (:func:`plots.forest_plot`)."""
    effects = s.effects
    if not (effects and effects.identity_effect and effects.identity_effect.by_group):
        return None
    rows = [
        (group_words(g.group), g.effect.value, g.effect.sim_low, g.effect.sim_high, g.level)
        for g in group_estimates(effects)
        if g.effect.value is not None
    ]
    limit = effects.material.get("identity_effect", 0.02)
    return plots.forest_plot(rows, limit, plot_dir, f"P({s.positive_label})")


def _pack_directions(s: AuditSummary, pairs: ReportTally) -> dict[str, tuple[Mapping[str, Any], ...]]:
    """Each swap pack's mean change per (source group -> target group), the largest first (20 shown)."""
    packs = pairs.packs.table()
    out: dict[str, tuple[Mapping[str, Any], ...]] = {}
    for name in s.swap_gaps():
        table = packs.loc[packs["attribute"] == name].reset_index(drop=True)
        rows = table.sort_values("mean", key=abs, ascending=False).to_dict("records")[:20]
        out[name] = tuple(
            {
                "source": str(r["group"]),
                "target": str(r["target_group"]),
                "pairs": int(r["size"]),
                "mean_diff": r["mean"],
            }
            for r in rows
        )
    return out


def input_texts(run_dir: Path, ids: set[str]) -> dict[str, str]:
    """The original texts of these inputs, from a run's ``pairs.csv`` (read a block at a time; none where it lacks
    them)."""
    found: dict[str, str] = {}
    path = run_dir / "pairs.csv"
    if not ids or not path.exists():
        return found
    for block in csv_column_blocks(path, ("input_id", "source_text")):
        for key, text in zip(block["input_id"].astype(str), block["source_text"], strict=True):
            if key in ids and key not in found and isinstance(text, str):
                found[key] = text
        if len(found) == len(ids):
            break
    return found


def pair_texts(run_dir: Path, rows: list[int]) -> pd.DataFrame:
    """The original and counterfactual texts of the pairs in these rows of a run's ``pairs.csv``."""
    return read_csv_columns(run_dir / "pairs.csv", ("source_text", "cf_text"), rows=sorted(rows))


def direction_texts(
    pairs: pd.DataFrame,
    directions: list[Any],
    per_cell: int = CELL_EXAMPLES,
    *,
    texts_of: Callable[[list[int]], pd.DataFrame] | None = None,
) -> list[dict[str, Any]]:
    """The texts behind heat-map cells: for each listed swap direction (source term → target term), its pairs with
    the largest score changes (original → counterfactual, edits highlighted), largest first. ``texts_of(rows)``:
    the ``source_text`` and ``cf_text`` of those index labels, where ``pairs`` lacks them (read from the file for
    the few pairs shown)."""
    needed = {"method", "source_term", "target_term", "diff"}
    if texts_of is None:
        needed |= {"source_text", "cf_text"}
    if not directions or not needed <= set(pairs.columns):
        return []
    tops = CellTops(directions, per_cell)
    tops.add(pairs)
    return _cell_examples(_with_texts(tops.tops(), texts_of))


def _with_texts(
    tops: list[tuple[Any, pd.DataFrame]], texts_of: Callable[[list[int]], pd.DataFrame] | None
) -> list[tuple[Any, pd.DataFrame]]:
    if texts_of is None or not tops:
        return tops
    texts = texts_of([int(i) for _, top in tops for i in top.index])[["source_text", "cf_text"]]
    return [(d, top.join(texts)) for d, top in tops]


def _cell_examples(tops: list[tuple[Any, pd.DataFrame]]) -> list[dict[str, Any]]:
    found = []
    for d, top in tops:
        examples = [
            {
                "input_id": str(row.get("input_id", "")),
                "diff": float(row["diff"]),
                "source_text": str(row["source_text"]),
                "cf_text": str(row["cf_text"]),
                "diff_html": edit_html(str(row["source_text"]), str(row["cf_text"])),
            }
            for row in top.to_dict("records")
        ]
        found.append({"source": d.source, "target": d.target, "pairs": d.pairs, "examples": examples})
    return found


def markdown(summary: Mapping[str, Any] | AuditSummary) -> str:
    """``report.md`` of an audit from its summary alone (what a CI log shows)."""
    return to_markdown(audit_page(summary))
