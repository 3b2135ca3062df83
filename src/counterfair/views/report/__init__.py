"""The audit report: ``report.html`` (self-contained, opens offline), ``report.md``, ``plots/*.png|svg``.

Built only from ``summary.json`` and ``pairs.csv`` of a run directory, so ``counterfair report DIR`` rebuilds it
without recomputing anything. Every text is HTML-escaped (the texts are user data and may hold markup).
"""

from __future__ import annotations

import base64
import html
import json
import math
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ...errors import InputError
from ...io import atomic_open, csv_column_blocks, read_csv_columns, read_json
from ...lexicons.attributes import load_identity_set
from ...summaries import AuditSummary, command_of, typed
from ..verdict import LEVEL_WORDS, group_estimates, points, rule_sentence, verdict
from . import plots
from .tally import CellTops, ReportTally

HIGHLIGHT_TOKENS = 20_000  # a changed stretch longer than this (words, both sides) is shown whole, not diffed
CONTEXT_WORDS = 30  # unchanged words shown around each edit; longer unchanged runs are elided


#: what the per-group CTF gap is, said where it is shown (one name for one number: #49 item 8)
CTF_BY_GROUP_DEFINED = (
    "Per group: the CTF gap of the swaps whose original word belongs to the group (mean |score change| per text, "
    "swapping that word for every other term)."
)


def edit_html(original: str, counterfactual: str) -> str:
    """Word-level diff: removed words in ``<del>``, added ones in ``<ins>``; everything escaped.

    Linear in the texts' length: the common prefix and suffix are cut off first, only the changed middle is diffed
    (rapidfuzz's word-level Levenshtein, the distance counterfair reports), a middle longer than
    :data:`HIGHLIGHT_TOKENS` is shown as one deletion and one insertion, and unchanged runs longer than twice
    :data:`CONTEXT_WORDS` are elided ("… 1,234 words …"). One long text can no longer hang a report."""
    a, b = original.split(), counterfactual.split()
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    mid_a, mid_b = a[head : len(a) - tail], b[head : len(b) - tail]
    parts = [_equal(a[:head], first=True)] if head else []
    if len(mid_a) + len(mid_b) > HIGHLIGHT_TOKENS:  # too long to diff: one deletion and one insertion, elided
        parts += _changed(mid_a, mid_b, elide=True)
    else:
        from rapidfuzz.distance import Levenshtein

        for op in Levenshtein.opcodes(mid_a, mid_b):
            if op.tag == "equal":
                parts.append(_equal(mid_a[op.src_start : op.src_end]))
            else:
                parts += _changed(mid_a[op.src_start : op.src_end], mid_b[op.dest_start : op.dest_end])
    if tail:
        parts.append(_equal(a[len(a) - tail :], last=True))
    return " ".join(p for p in parts if p)


def _changed(removed: list[str], added: list[str], *, elide: bool = False) -> list[str]:
    def shown(words: list[str]) -> str:
        if not elide or len(words) <= 2 * CONTEXT_WORDS:
            return html.escape(" ".join(words))
        middle = f'</del><span class="elided"> … {len(words) - 2 * CONTEXT_WORDS:,} words … </span><del>'
        return html.escape(" ".join(words[:CONTEXT_WORDS])) + middle + html.escape(" ".join(words[-CONTEXT_WORDS:]))

    out = [f"<del>{shown(removed)}</del>"] if removed else []
    return out + ([f"<ins>{shown(added).replace('</del>', '</ins>').replace('<del>', '<ins>')}</ins>"] if added else [])


def _equal(words: list[str], *, first: bool = False, last: bool = False) -> str:
    """Unchanged words, with the middle of a long run elided (all of it before the first edit or after the last)."""
    keep = CONTEXT_WORDS
    if len(words) <= (keep if first or last else 2 * keep):
        return html.escape(" ".join(words))
    gap = f'<span class="elided">… {len(words) - (keep if first or last else 2 * keep):,} words …</span>'
    if first:
        return gap + " " + html.escape(" ".join(words[-keep:]))
    if last:
        return html.escape(" ".join(words[:keep])) + " " + gap
    return html.escape(" ".join(words[:keep])) + " " + gap + " " + html.escape(" ".join(words[-keep:]))


def _num(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    return f"{value:+.{digits}f}" if isinstance(value, float) and value < 0 else f"{value:.{digits}f}"


def _pct(value: Any) -> str:
    return "–" if value is None or (isinstance(value, float) and not math.isfinite(value)) else f"{100 * value:.1f}%"


def _sign(value: Any) -> str:
    if not isinstance(value, int | float) or not math.isfinite(value) or abs(value) < 1e-9:
        return ""
    return "pos" if value > 0 else "neg"


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
    target = Path(run_dir)
    summary, blocks = load_run(target)
    s = AuditSummary.from_dict(summary)
    from ..verdict import FEW_PAIRS, largest_directions

    by_direction = (s.ctf.by_direction if s.ctf else None) or ()
    directions = largest_directions(by_direction, 15)  # one or two swaps are noise: after the others, marked
    pairs = ReportTally.of(blocks, directions, CELL_EXAMPLES)  # one pass over pairs.csv; unscored pairs left out
    plot_dir = target / "plots"
    identities = load_identity_set(s.options.get("identities"))
    by_group = sorted(identities.terms, key=lambda t: (identities.group_of(t), t))
    threshold = s.threshold if s.threshold is not None else 0.5
    made = [
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
    figures = embed_figures(made)
    examples = [{**e, "diff_html": edit_html(str(e["source_text"]), str(e["cf_text"]))} for e in s.top_examples]
    ctf_groups = _largest((s.ctf.by_group if s.ctf else None) or {})
    behind_cells = _cell_examples(_with_texts(pairs.tops.tops(), lambda rows: pair_texts(target, rows)))
    swap_packs = _swap_pack_sections(s, pairs)
    terms = (s.effects.identity_effect.by_term if s.effects and s.effects.identity_effect else None) or {}
    effect_terms = sorted(
        terms.items(), key=lambda te: (_FINDING_ORDER.get(str(te[1].finding), 3), -abs(te[1].value or 0))
    )
    notes = []
    missing = list(s.input.attributes_without_texts)
    if missing:
        notes.append(f"No text referenced: {', '.join(missing)} (no counterfactuals for them).")
    page = render(
        "report.html.j2",
        s=s,
        verdict=verdict(s),
        rule_sentence=rule_sentence,
        effect_terms=effect_terms,
        level_words=LEVEL_WORDS,
        unit=f"P({s.positive_label})",
        pts=points,
        figures=figures,
        examples=examples,
        ctf_groups=ctf_groups,
        ctf_by_group_defined=CTF_BY_GROUP_DEFINED,
        directions=directions,
        behind_cells=behind_cells,
        cell_examples=CELL_EXAMPLES,
        few_pairs=FEW_PAIRS,
        swap_packs=swap_packs,
        notes=notes,
        signatures=json.dumps(s.signatures, indent=1, default=str)[:20000],
        options=json.dumps(s.options, indent=1),
    )
    write_page(page, target / "report.html")
    with atomic_open(target / "report.md", "w", encoding="utf-8") as handle:
        handle.write(markdown(s))
    return {"html": target / "report.html", "markdown": target / "report.md", "plots": plot_dir}


CELL_EXAMPLES = 3  # pairs shown behind each heat-map cell in the report (pairs.csv has them all)


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
                "diff_html": edit_html(str(row["source_text"]), str(row["cf_text"])),
            }
            for row in top.to_dict("records")
        ]
        found.append({"source": d.source, "target": d.target, "pairs": d.pairs, "examples": examples})
    return found


def embed_figures(made: list[tuple[str, str, dict[str, str] | None]]) -> list[dict[str, str]]:
    """(name, caption, paths from a plot function) -> what the templates show: the PNG inline, a link to the SVG."""
    figures = []
    for name, caption, paths in made:
        if paths is None:
            continue
        png = base64.b64encode(Path(paths["png"]).read_bytes()).decode("ascii")
        figures.append({"name": name, "caption": caption, "png": png, "svg": f"plots/{name}.svg"})
    return figures


def render(template: str, **context: Any) -> str:
    """A report template rendered with HTML escaping of every value (texts are user data)."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(
        loader=FileSystemLoader(Path(__file__).parent / "templates"), autoescape=select_autoescape(["j2", "html"])
    )
    return env.get_template(template).render(num=_num, pct=_pct, sign=_sign, **context)


def write_page(page: str, path: Path) -> None:
    with atomic_open(path, "w", encoding="utf-8") as handle:
        handle.write(page)


def _largest(entries: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """Groups by their value (a CTF gap, an identity effect), the largest first; a missing value last."""
    return sorted(entries.items(), key=lambda kv: -(kv[1].value or 0))


def _swap_pack_sections(s: AuditSummary, pairs: ReportTally) -> list[dict[str, Any]]:
    """One section per swap pack of the audit (gender, names, nationality, a user's): its CTF gap per group of the
    source term and the mean change per (source group -> target group)."""
    out = []
    packs = pairs.packs.table()
    for name, ctf in s.swap_gaps().items():
        table = packs.loc[packs["attribute"] == name].reset_index(drop=True)
        directions = [
            {
                "source": str(r["group"]),
                "target": str(r["target_group"]),
                "pairs": int(r["size"]),
                "mean_diff": r["mean"],
            }
            for r in table.sort_values("mean", key=abs, ascending=False).to_dict("records")
        ]
        out.append({"name": name, "ctf": ctf, "groups": _largest(ctf.by_group or {}), "directions": directions[:20]})
    return out


_FINDING_ORDER = {"material": 0, "small": 1, "not detected": 2}


def markdown(summary: Mapping[str, Any] | AuditSummary) -> str:
    """A short Markdown summary for CI logs."""
    s = typed(summary, AuditSummary)
    lines = [
        f"# counterfair audit: {s.classifier.spec}",
        "",
        *verdict(s).lines(),
        "",
        f"{s.input.texts} texts{f' in {s.language_name}' if s.language_name else ''}, methods "
        f"{', '.join(s.input.methods)}, "
        f"score = P({s.positive_label}), threshold {s.threshold}.",
        "",
        "| method | attribute | with counterfactual | mean change [95% CI] | mean abs change | flips |",
        "|---|---|---|---|---|---|",
    ]
    for g in s.groups:
        change = g.score_change
        lines.append(
            f"| {g.method} | {g.attribute} | {g.with_counterfactual} of {g.inputs} | "
            f"{_num(change.value)} [{_num(change.ci_low)}, {_num(change.ci_high)}] | "
            f"{_num(g.mean_abs_change)} | {g.flips} of {g.pairs} |"
        )
    if s.ctf:
        ctf = s.ctf
        lines += [
            "",
            f"CTF gap (identity swaps): **{_num(ctf.value)}** [{_num(ctf.ci_low)}, {_num(ctf.ci_high)}] "
            f"over {ctf.texts} texts.",
            "",
            CTF_BY_GROUP_DEFINED,
            "",
            "| group of the original word | CTF gap |",
            "|---|---|",
        ]
        lines += [f"| {name} | {_num(g.value)} |" for name, g in _largest(ctf.by_group or {})]
    for name, pack in s.swap_gaps().items():
        lines += ["", f"CTF gap ({name} swaps): **{_num(pack.value)}** over {pack.texts} texts.", ""]
        lines += ["| group of the original word | CTF gap |", "|---|---|"]
        lines += [f"| {g} | {_num(e.value)} |" for g, e in sorted((pack.by_group or {}).items())]
    effects = s.effects
    if effects and effects.identity_effect and effects.identity_effect.by_group:
        lines += [
            "",
            f"In the slot, against {effects.placebo_words} neutral words ({effects.slots} slots in {effects.texts} "
            f"texts; probability points of P({s.positive_label}); Holm over {effects.tests} estimates):",
            "",
            "| group | identity effect [95% CI] | disparity | flip excess | finding |",
            "|---|---|---|---|---|",
        ]
        for row in group_estimates(effects):
            e, d, x = row.effect, row.disparity, row.flips
            lines.append(
                f"| {row.group} | {points(e.value)} [{points(e.ci_low)}, {points(e.ci_high)}] | "
                f"{points(d.value if d else None)} | {points(x.value if x else None)} | {LEVEL_WORDS[row.level]} |"
            )
        detected = [(t, e) for t, e in (effects.identity_effect.by_term or {}).items() if e.detected]
        if detected:
            lines += ["", "| term | identity effect [95% CI] | finding |", "|---|---|---|"]
            for t, e in sorted(detected, key=lambda te: -abs(te[1].value or 0.0)):
                interval = f"[{points(e.ci_low)}, {points(e.ci_high)}]"
                lines.append(f"| {t} | {points(e.value)} {interval} | {LEVEL_WORDS[str(e.finding)]} |")
    if s.gate:
        lines += ["", f"Fairness gate: **{s.gate.verdict}** (exit {s.gate.exit_code})", ""]
        lines += [f"- {c.verdict.upper()}: {c.message}" for c in s.gate.checks]
    if s.coverage:
        lines += ["", f"Coverage: {s.coverage.reached} of {s.coverage.texts} texts got a counterfactual."]
        if s.coverage.hint:
            lines.append(f"{s.coverage.hint}.")
    lines += ["", f"Reproduce: `{s.reproduce}`", ""]
    from ...text import md_text

    return "\n".join(md_text(line) for line in lines)
