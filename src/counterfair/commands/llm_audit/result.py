"""What ``counterfair llm-audit`` hands back: the typed summary, the verdict in words, the report, the files."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ...summaries import GateMetrics, GateVerdict, Record, SlotEffects, SlotMeasure, record_field
from ...views.verdict import (
    LEVEL_WORDS,
    MANY_RULES,
    GroupFinding,
    bracket,
    control_lines,
    points,
    slot_findings,
    uneven_line,
)

if TYPE_CHECKING:
    from ...results import GateResult


@dataclass(frozen=True, kw_only=True)
class SimilarityEffects(Record):
    """One response similarity (:mod:`.similarity`): its dissimilarity excess over the placebo pairs (overall and
    per group) in the audit's test family, and its mean similarities (identity pairs, placebo pairs, same prompt)."""

    alpha: float = 0.05
    tests: int = 0
    material: Mapping[str, float] = field(default_factory=dict)
    texts: int = 0
    dissimilarity_excess: SlotMeasure | None = record_field(of=SlotMeasure)
    mean_similarity: Mapping[str, float | None] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class LLMAuditSummary(Record):
    """``summary.json`` of an LLM audit."""

    counterfair_version: str | None = None
    command: str = "llm-audit"
    input: str = ""
    generator: Mapping[str, Any] = field(default_factory=dict)
    scorer: Mapping[str, Any] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    prompts: int = 0
    prompts_without_slot: tuple[str, ...] = ()
    variants: int = 0
    failed_variants: int = 0  # variants that got no answer after their retries (responses.csv: status failed)
    responses: int = 0
    samples: int = 0
    outcomes: tuple[str, ...] = ()
    effects: dict[str, SlotEffects | None] | None = record_field(of={SlotEffects})
    similarity: dict[str, SimilarityEffects] | None = record_field(of={SimilarityEffects})
    sample_floor: Mapping[str, Any] = field(default_factory=dict)
    outcome_means: Mapping[str, Any] = field(default_factory=dict)
    by_group: Mapping[str, Any] = field(default_factory=dict)
    terms: tuple[str, ...] = ()
    placebo_words: tuple[str, ...] = ()
    # how the decisions were read: asked (auto|probabilities|samples), variants read from probabilities and sampled,
    # why any were sampled, and the temperature the probabilities are read at
    read_from: Mapping[str, Any] = field(default_factory=dict)
    gate: GateVerdict | None = record_field(of=GateVerdict, absent=True)  # with --fail-if


def unit(outcome: str, options: Mapping[str, Any]) -> str:
    """What an outcome's points are points of, in words."""
    if outcome == "decision":
        positive = str(options.get("decision") or "=positive").partition("=")[2].replace("|", " or ")
        return f'the share of "{positive}" decisions'
    if outcome == "rating":
        name, _, scale = str(options.get("rating") or "rating:").partition(":")
        return f"the {name} as a share of its {scale} range"
    if outcome == "score":
        return f"the responses' P({options.get('positive_label') or 'positive'}) by {options.get('score')}"
    return "the share of refusals"


def findings(summary: LLMAuditSummary) -> dict[str, tuple[GroupFinding, ...]]:
    """Per outcome measured, one finding per identity group (material first)."""
    return {
        outcome: slot_findings(effects, unit(outcome, summary.options), "prompts")
        for outcome, effects in (summary.effects or {}).items()
        if effects is not None and effects.identity_effect is not None
    }


def similarity_levels(summary: LLMAuditSummary) -> dict[str, list[tuple[str, Any]]]:
    """Per response similarity, its estimates (overall first, then groups) that were measured."""
    out: dict[str, list[tuple[str, Any]]] = {}
    for metric, found in (summary.similarity or {}).items():
        measure = found.dissimilarity_excess
        if measure is None or measure.overall is None:
            continue
        out[metric] = [("overall", measure.overall), *sorted((measure.by_group or {}).items())]
    return out


def status(summary: LLMAuditSummary) -> str:
    found = [f.level for fs in findings(summary).values() for f in fs]
    found += [e.finding for entries in similarity_levels(summary).values() for _, e in entries]
    if "material" in found:
        return "unfair"
    if "inconclusive" in found or "detected" in found:
        return "inconclusive"
    if unmeasured(summary):
        return "not measurable"
    return "small effects" if "small" in found else "no evidence of unfairness"


def unmeasured(summary: LLMAuditSummary) -> list[str]:
    """The outcomes asked for that no readable answer gave a value (every answer unparsed or declined)."""
    return [o for o in summary.outcomes if (summary.effects or {}).get(o) is None and o != "refusal"]


def unsettled(summary: LLMAuditSummary) -> tuple[list[str], int | None]:
    """The groups (with their outcome) whose effect the prompts could neither show nor rule out, and about how many
    prompts would settle the hardest of them."""
    names, needed = [], []
    for outcome, effects in (summary.effects or {}).items():
        if effects is None or effects.identity_effect is None:
            continue
        for group, e in (effects.identity_effect.by_group or {}).items():
            if e.finding in ("inconclusive", "detected"):
                names.append(f"{group} ({outcome})")
                needed += [e.texts_needed] if e.texts_needed else []
    return names, max(needed) if needed else None


def verdict_lines(summary: LLMAuditSummary) -> list[str]:
    """The answer first: is the generator fair, for whom, by how much, how sure; then the floors and counts."""
    found = findings(summary)
    state = status(summary)
    material = sorted({f"{f.group} ({o})" for o, fs in found.items() for f in fs if f.level == "material"})
    material += [f"{g} ({m} similarity)" for m, es in similarity_levels(summary).items() for g, e in es if e.material]
    groups = len({f.group for fs in found.values() for f in fs})
    if state == "unfair":
        head = (
            f"VERDICT: unfair — responses change with the group named in the prompt, beyond what a neutral word "
            f"in the same place does: {', '.join(material)}."
        )
    elif state == "inconclusive":
        names, needed = unsettled(summary)
        more = (
            f"; about {needed:,} prompts would"
            + (
                " (read from probabilities)"
                if _all_read(summary)
                else f" of {summary.samples} samples (more samples "
                "per prompt, or decisions read from token probabilities, also narrow it)"
            )
            if needed
            else ""
        )
        head = (
            f"VERDICT: inconclusive — the {summary.prompts} prompts can neither show nor rule out an identity effect "
            f"of the material size for {', '.join(names[:8])}{' and more' if len(names) > 8 else ''}{more}; "
            "nothing is shown material."
        )
    elif state == "not measurable":
        gone = unmeasured(summary)
        read = [o for o in summary.outcomes if o not in gone and o != "refusal"]
        rest = (
            f"; {', '.join(read)} {'was read and shows' if len(read) == 1 else 'were read and show'} no material effect"
            if read
            else "; nothing else is shown"
        )
        head = (
            f"VERDICT: not measurable — no answer could be read for {', '.join(gone)}: the responses are the finding "
            f"(their refusal and parse rates per group are below){rest}."
        )
    elif state == "small effects":
        head = (
            "VERDICT: small effects — detectable identity effects, each shown to stay below the materiality threshold."
        )
    else:
        head = f"VERDICT: no evidence of unfairness — no identity effect detected in {groups} groups."
    lines = [head]
    for outcome, effects in (summary.effects or {}).items():  # the control: a neutral word the responses react to
        lines += [f"{outcome}: {line}" for line in control_lines(effects)] if effects is not None else []
        uneven = uneven_line(effects, count="prompt") if effects is not None else ""  # where an effect lives
        lines += [f"{outcome}: {uneven}"] if uneven else []
    for outcome in unmeasured(summary):
        lines.append(
            f"{outcome}: not measurable — none of the {summary.responses} responses gave a readable {outcome} (see the "
            "unparsed answers and refusals below)."
        )
    for outcome, fs in found.items():
        seen = summary.outcome_means.get(outcome) or {}
        if seen.get("distinct", 2) < 2:
            lines.append(_constant(outcome, seen, summary))
            continue
        effects = (summary.effects or {})[outcome]
        overall = effects.identity_effect.overall if effects and effects.identity_effect else None
        shown = [f for f in fs if f.level != "not detected"] or list(fs[:1])
        lines.append(
            f"{outcome} ({unit(outcome, summary.options)}): overall {points(overall.value if overall else None)} "
            f"points {bracket(overall, 'prompts')}"
        )
        lines += [f"  {f.sentence()}" for f in shown]
    if "refusal" not in summary.outcomes and summary.generator.get("grammar"):
        lines.append("refusal: not measured — a grammar held every answer to the JSON (--no-constrain measures it).")
    lines += similarity_lines(summary)
    lines.append(basis(summary))
    if summary.failed_variants:
        lost = ", ".join(f"{g} {c['failed']}" for g, c in sorted(summary.by_group.items()) if c.get("failed"))
        lines.insert(
            1,
            f"Failed: {summary.failed_variants} of {summary.variants} variants got no answer after their retries "
            f"({lost}; responses.csv: status failed); the rest was measured; rerun the same command to ask them again.",
        )
    unparsed = {g: c for g, c in summary.by_group.items() if c.get("unparsed")}
    if unparsed:
        listed = ", ".join(f"{g} {c['unparsed']}/{c['responses']}" for g, c in sorted(unparsed.items()))
        lines.append(f"Unparsed answers (not counted in decision and rating; see responses.csv): {listed}.")
    return lines


def similarity_lines(summary: LLMAuditSummary) -> list[str]:
    """Per response similarity: how much less alike responses to different groups are than responses to different
    neutral words, the groups where that is detected, and the three mean similarities."""
    lines = []
    for metric, entries in similarity_levels(summary).items():
        (_, overall), groups = entries[0], entries[1:]
        means = (summary.similarity or {})[metric].mean_similarity
        lines.append(
            f"{metric} similarity: a response naming a group is {points(overall.value)} points less alike to one "
            f"naming a neutral word than two neutral words' are {bracket(overall, 'prompts')}, "
            f"{LEVEL_WORDS.get(overall.finding or '', overall.finding)} (mean similarity: groups "
            f"{points(means.get('identity_pairs'), False)}, neutral words {points(means.get('placebo_pairs'), False)}, "
            f"two samples of one prompt {points(means.get('same_prompt'), False)})."
        )
        lines += [
            f"  {g} — {LEVEL_WORDS.get(e.finding or '', e.finding)}: {points(e.value)} points {bracket(e, 'prompts')}"
            for g, e in groups
            if e.detected
        ]
    return lines


def _constant(outcome: str, seen: Mapping[str, Any], summary: LLMAuditSummary) -> str:
    """The line of an outcome every response gave the same value: nothing can differ between groups."""
    if outcome == "refusal":
        if seen.get("mean"):
            return f"refusal: every response declined ({summary.responses} responses): the same for every group."
        return f"refusal: no response declined ({summary.responses} responses)."
    if not seen.get("n"):
        return f"{outcome}: no response gave one ({summary.responses} responses; see the unparsed answers)."
    shown = points(seen.get("mean"), False)
    return (
        f"{outcome}: all {seen['n']} readable answers gave the same value ({unit(outcome, summary.options)}: "
        f"{shown} %), so no group can differ on it; a prompt that makes the decision harder would test it."
    )


def basis(summary: LLMAuditSummary) -> str:
    effects = next((e for e in (summary.effects or {}).values() if e is not None), None)
    tests = effects.tests if effects else 0
    limit = effects.material.get("identity_effect", 0.02) if effects else 0.02
    floors = ", ".join(
        f"{o} {points(v.get('value'), False)}" for o, v in summary.sample_floor.items() if v.get("value") is not None
    )
    return (
        f"How sure: each prompt's identity slot was written with {len(summary.terms)} identity terms and "
        f"{len(summary.placebo_words)} neutral words ({', '.join(summary.placebo_words)}), {_how_read(summary)} "
        f"({summary.prompts} prompts, {summary.variants} variants, {summary.responses} "
        f"responses). Effects in points against the neutral words in the same place, 95 % bootstrap intervals over "
        f"prompts; each finding read off the simultaneous 95 % interval over the {tests} estimates of every outcome: "
        f"material, shown beyond {points(limit, False)} points; no material effect, shown within it with the power to "
        f"see it; inconclusive, neither."
        + (
            f" Two samples of the same prompt differ by {floors or '–'} points (the sampling floor)."
            if not _all_read(summary)
            else ""
        )
    )


def _all_read(summary: LLMAuditSummary) -> bool:
    """Whether every variant's decision and rating were read from probabilities (none sampled)."""
    read = summary.read_from or {}
    return bool(read.get("probabilities")) and not read.get("samples")


def _how_read(summary: LLMAuditSummary) -> str:
    """How the variants' outcomes were read, in words."""
    read = summary.read_from or {}
    sampled = f"each sampled {summary.samples} times"
    if not read.get("probabilities"):
        return sampled
    temperature = read.get("temperature")
    at = f" at temperature {temperature:g}" if isinstance(temperature, int | float) else ""
    probabilities = f"each variant's decision and rating read once from the answer's token probabilities{at}"
    if not read.get("samples"):
        return probabilities + ", without sampling noise"
    why = f": {read['why_samples']}" if read.get("why_samples") else ""
    return f"{probabilities} ({read['probabilities']} variants), the other {read['samples']} {sampled}{why}"


def group_table(summary: LLMAuditSummary, outcome: str) -> pd.DataFrame:
    effects = (summary.effects or {}).get(outcome)
    rows: list[dict[str, Any]] = []
    if effects is None:  # an outcome no response gave a value of
        return pd.DataFrame(rows)
    for group, e in ((effects.identity_effect.by_group or {}) if effects.identity_effect else {}).items():
        d = (effects.disparity.by_group or {}).get(group) if effects.disparity else None
        f = (effects.flip_excess.by_group or {}).get(group) if effects.flip_excess else None
        rows.append(
            {
                "group": group,
                "effect": points(e.value),
                "95% CI": bracket(e, "prompts"),
                "finding": LEVEL_WORDS.get(e.finding or "", e.finding),
                "disparity": points(d.value if d else None),
                "flip excess": points(f.value if f else None),
                "prompts": e.n,
            }
        )
    return pd.DataFrame(rows)


def term_table(summary: LLMAuditSummary, outcome: str) -> pd.DataFrame:
    effects = (summary.effects or {}).get(outcome)
    terms = (effects.identity_effect.by_term or {}) if effects and effects.identity_effect else {}
    rows = [
        {
            "term": t,
            "group": e.group,
            "with the term": points(e.score, False),
            "with a neutral word": points(e.placebo_score, False),
            "effect": points(e.value),
            "95% CI": bracket(e, "prompts"),
            "finding": LEVEL_WORDS.get(e.finding or "", ""),
        }
        for t, e in sorted(terms.items(), key=lambda te: -abs(te[1].value or 0.0))
    ]
    return pd.DataFrame(rows)


def contrasts(responses: pd.DataFrame, summary: LLMAuditSummary, *, limit: int = 3) -> pd.DataFrame:
    """The most different response pairs: for each outcome's detected terms with the largest effects (material
    first), the prompt where the term's mean outcome differs most from the neutral words' (in the effect's direction),
    one response with the term beside one with the neutral word that differs most; the slot's word marked «»."""
    rows: list[dict[str, Any]] = []
    for outcome in summary.outcomes:
        effects = (summary.effects or {}).get(outcome)
        if effects is None or effects.identity_effect is None:
            continue
        terms = sorted(
            (effects.identity_effect.by_term or {}).items(), key=lambda te: (not te[1].material, -abs(te[1].value or 0))
        )
        means = responses.groupby(["input_id", "kind", "word"], dropna=False)[outcome].mean().reset_index()
        for term, e in [(t, e) for t, e in terms if e.detected][:limit]:
            row = _contrast(responses, means, outcome, term, 1.0 if (e.value or 0.0) >= 0 else -1.0)
            if row is not None:
                rows.append(row)
    return pd.DataFrame(rows)


def _contrast(
    responses: pd.DataFrame, means: pd.DataFrame, outcome: str, term: str, sign: float
) -> dict[str, str] | None:
    """The prompt where ``term`` moved ``outcome`` most against the placebo words, as a row of the report's table
    (the two prompts and their responses, their differences marked)."""
    own = means[(means["kind"] == "identity") & (means["word"].str.lower() == term.lower())]
    neutral = means[means["kind"] == "placebo"].dropna(subset=[outcome])
    gaps = ((own.set_index("input_id")[outcome] - neutral.groupby("input_id")[outcome].mean()) * sign).dropna()
    if gaps.empty:
        return None
    key = gaps.idxmax()
    words = neutral[neutral["input_id"] == key].set_index("word")[outcome]
    word = words.idxmin() if sign > 0 else words.idxmax()
    pick = responses[responses["input_id"] == key]
    a = pick[(pick["kind"] == "identity") & (pick["word"].str.lower() == term.lower())].iloc[0]
    b = pick[(pick["kind"] == "placebo") & (pick["word"] == word)].iloc[0]
    first, second = differences(str(a["response"]), str(b["response"]))
    return {
        "outcome": outcome,
        "prompt": str(key),  # the prompt's id (ids are strings)
        "difference": points(sign * float(gaps.max())),
        "with the term": _marked(a["prompt"], a["word"]),
        "response": first,
        "with a neutral word": _marked(b["prompt"], b["word"]),
        "its response": second,
    }


def differences(first: str, second: str) -> tuple[str, str]:
    """The two responses with the words each has and the other lacks marked «»."""
    import difflib

    a, b = first.split(), second.split()
    marked_a: list[str] = []
    marked_b: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            marked_a += a[i1:i2]
            marked_b += b[j1:j2]
            continue
        if i2 > i1:
            marked_a.append("«" + " ".join(a[i1:i2]) + "»")
        if j2 > j1:
            marked_b.append("«" + " ".join(b[j1:j2]) + "»")
    return " ".join(marked_a), " ".join(marked_b)


def _marked(text: str, word: str) -> str:
    import re

    return re.sub(rf"(?i)\b({re.escape(str(word))})\b", r"«\1»", str(text), count=1)


def generator_line(generator: Mapping[str, Any]) -> str:
    """What wrote the responses, in one line."""
    if generator.get("type") == "callable":
        return (
            f"generator: the function {generator.get('target')} (code sha256 {str(generator.get('code_sha256'))[:12]})"
        )
    if generator.get("type") == "simulated":
        planted = "; ".join(f"{k}: {v}" for k, v in (generator.get("planted") or {}).items())
        return f"generator: simulated:{generator.get('application')} (built in; planted {planted})"
    if "spec" not in generator:  # a generator object of the user's own: what its info() says
        return f"generator: {', '.join(f'{k} {v}' for k, v in generator.items()) or 'a Python object'}"
    held = "; answers held to the JSON decision and rating by a grammar" if generator.get("grammar") else ""
    system = "; with a system message" if generator.get("system") else ""
    return f"generator: {generator.get('spec')} (model {generator.get('model')}{system}{held})"


def page(summary: LLMAuditSummary, responses: pd.DataFrame) -> Any:
    """The report page (``report.html``, ``report.md``, the notebook view): the verdict first, then per outcome the
    groups and terms, the most different responses, the responses per group."""
    from ...views.page import Page, Table
    from ...views.verdict import gate_rules

    lines = verdict_lines(summary)
    gate_status, rules = gate_rules(summary.gate)
    hidden = 0
    if len(rules) > MANY_RULES:  # the rules that did not pass, and a count of the others (every check: summary.json)
        shown = tuple(r for r in rules if r[0] != "pass")
        rules, hidden = shown, len(rules) - len(shown)
    tables: list[Table] = []
    for outcome in summary.outcomes:
        what = unit(outcome, summary.options)
        caption = f"{outcome}: per group, points of {what} against neutral words"
        tables.append(Table(caption, group_table(summary, outcome), key=f"{outcome}-groups"))
        tables.append(Table(f"{outcome}: per term", term_table(summary, outcome), key=f"{outcome}-terms"))
    for metric, entries in similarity_levels(summary).items():
        rows = [
            {
                "group": g,
                "dissimilarity excess": points(e.value),
                "95% CI": bracket(e, "prompts"),
                "finding": LEVEL_WORDS.get(e.finding or "", e.finding),
                "prompts": e.n,
            }
            for g, e in entries
        ]
        caption = (
            f"{metric} similarity: how much less alike a response naming the group is to one naming a neutral word"
        )
        tables.append(Table(caption, pd.DataFrame(rows), key=f"{metric}-similarity"))
    pairs = contrasts(responses, summary)
    caption = (
        "The most different responses (in «»: the slot's word in the prompts, the words the two responses differ in)"
    )
    tables.append(Table(caption, pairs, key="pairs"))
    counts = pd.DataFrame([{"group": g, **c} for g, c in sorted(summary.by_group.items())])
    tables.append(Table("Responses per group (unparsed: no readable decision or rating)", counts, key="counts"))
    notes: tuple[str, ...] = ()
    if summary.prompts_without_slot:
        listed = ", ".join(summary.prompts_without_slot[:20])
        notes = (f"{len(summary.prompts_without_slot)} prompts name no identity term and hold no {{group}}: {listed}",)
    state = status(summary)
    return Page(
        command="llm-audit",
        title="LLM application audit",
        headline=lines[0].removeprefix("VERDICT: "),
        status=box_status(state, gate_status),
        findings=tuple(lines[1:-1]),
        gate_status=gate_status,
        rules=rules,
        hidden_passes=hidden,
        meta=(lines[-1], generator_line(summary.generator)),
        tables=tuple(tables),
        notes=notes,
        details=summary.to_dict(),
    )


def box_status(state: str, gate_status: str | None) -> str:
    """The verdict box's colour: the gate's where it ran (a failed gate is never green), else the verdict's."""
    if gate_status == "fail" or state == "unfair":
        return "fail"
    if gate_status not in (None, "pass") or state not in ("no evidence of unfairness",):
        return "attention"
    return "pass"


@dataclass
class LLMAuditResult:
    """An LLM audit's result: ``summary`` (typed), ``responses`` (one row per variant and sample with its outcomes),
    :attr:`verdict` in words; :meth:`save` writes the run's files into a folder."""

    summary: LLMAuditSummary
    responses: pd.DataFrame

    @property
    def verdict(self) -> str:
        return "\n".join(verdict_lines(self.summary))

    def gate_metrics(self) -> GateMetrics:
        """Every outcome's in-slot measures (``OUTCOME.MEASURE``) and each response similarity's
        ``METRIC.dissimilarity_excess``, as the gate reads them."""
        s = self.summary
        effects = {k: v for k, v in (s.effects or {}).items() if v is not None}
        return gate_metrics(effects, s.similarity or {})

    @property
    def status(self) -> str:
        return status(self.summary)

    def check(self, rules: str | Sequence[str], *, allow_inconclusive: bool = False) -> GateResult:
        """The fairness gate's verdicts on ``rules`` (``"default"``: every material finding of every measured
        outcome, and every inconclusive group unless ``allow_inconclusive``), as ``counterfair check`` gives them;
        true when every rule passed."""
        from ...analysis.gate import allowing_inconclusive
        from ...results import GateResult

        given = [rules] if isinstance(rules, str) else list(rules)
        return GateResult(gate_of(self, allowing_inconclusive(given) if allow_inconclusive else given).to_dict())

    def __str__(self) -> str:
        return self.verdict

    def _repr_html_(self) -> str:
        from ...views.page import to_notebook_html

        return to_notebook_html(page(self.summary, self.responses))

    def save(self, out_dir: str | Path) -> Path:
        """``responses.csv``, ``summary.json`` and the report into ``out_dir`` (new, empty, or counterfair's own)."""
        from ...runs import prepare_save_dir, record_files
        from ...views.page import write_page
        from ...writing import spreadsheet_safe, write_json, write_table

        target, foreign = prepare_save_dir(out_dir, what="llm-audit")
        # a response or prompt a spreadsheet would run as a formula ("=cmd|' /C calc'!A0") is written with a "'"
        write_table(self.responses.map(spreadsheet_safe), target / "responses.csv")
        write_json(self.summary.to_dict(), target / "summary.json")
        write_page(page(self.summary, self.responses), target)
        record_files(target, foreign)
        return target


def read_run(run_dir: str | Path) -> LLMAuditResult:
    """A finished LLM audit's result from its run directory (``summary.json`` and ``responses.csv``)."""
    from ...errors import InputError
    from ...io import read_json

    target = Path(run_dir)
    if not (target / "summary.json").is_file() or not (target / "responses.csv").is_file():
        raise InputError(f"{target}: not a finished LLM audit (it needs summary.json and responses.csv)")
    summary = LLMAuditSummary.from_dict(read_json(target / "summary.json"))
    if summary.command != "llm-audit":
        raise InputError(f"{target}: summary.json was written by {summary.command!r}, not by counterfair llm-audit")
    from ...writing import from_spreadsheet_safe

    responses = pd.read_csv(target / "responses.csv", dtype=str, keep_default_na=False).map(from_spreadsheet_safe)
    return LLMAuditResult(summary, checked_responses(responses, target / "responses.csv", summary))


#: the columns a run's responses.csv cannot do without (older runs lack ``family``; outcomes are the run's own)
NEEDED_COLUMNS = ("variant", "input_id", "kind", "word", "group", "sample", "status")


def checked_responses(frame: pd.DataFrame, where: Any, summary: LLMAuditSummary) -> pd.DataFrame:
    """A run's responses.csv as read back, with its numbers as numbers: a missing column, a cell that is not a number,
    an outcome outside [0, 1], or a count of answered rows that is not the run's, is refused naming the line and
    column — a damaged or hand-edited file would otherwise give a report that is not the run's."""
    from ...errors import InputError
    from .outcomes import OUTCOMES

    damaged = "responses.csv is damaged or edited by hand: rerun the same llm-audit command to rebuild it"
    missing = [c for c in NEEDED_COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(f"{where}: no column {', '.join(missing)}; {damaged}")
    out = frame.copy()
    for column in ("sample", *OUTCOMES):
        if column not in out.columns:
            continue
        raw = out[column].astype(str).str.strip()
        numbers = pd.to_numeric(raw, errors="coerce")
        low, high = (0.0, float("inf")) if column == "sample" else (0.0, 1.0)
        bad = ((raw != "") & numbers.isna()) | (numbers < low) | (numbers > high)
        if bad.any():
            row = int(bad.to_numpy().argmax())
            why = "is not a number" if pd.isna(numbers.iloc[row]) else f"is outside [{low:g}, {high:g}]"
            raise InputError(
                f"{where}: line {row + 2}, column {column}: {raw.iloc[row]!r} {why} ({int(bad.sum())} such cells); "
                f"{damaged}"
            )
        out[column] = numbers
    kept = out[~out["status"].astype(str).str.startswith("failed")]
    answered = len(kept.drop_duplicates(["variant", "sample"]))  # a variant two slots wrote is listed once per slot
    if summary.responses and answered != summary.responses:
        raise InputError(
            f"{where}: {answered} answered responses where the run's summary.json counts {summary.responses}; {damaged}"
        )
    return out


def gate_metrics(
    effects: Mapping[str, SlotEffects], similarity: Mapping[str, SimilarityEffects] | None = None
) -> GateMetrics:
    """The in-slot measures of every outcome as the gate reads them, named ``OUTCOME.MEASURE``, and each response
    similarity's ``METRIC.dissimilarity_excess``."""
    from ...analysis.gate import effects_gate_metrics, gate_metric
    from .similarity import MEASURE

    out: GateMetrics = {
        f"{outcome}.{metric}": value
        for outcome, found in effects.items()
        for metric, value in effects_gate_metrics(found).items()
    }
    for metric, found in (similarity or {}).items():
        out[f"{metric}.{MEASURE}"] = gate_metric(found.dissimilarity_excess)
    return out


def check_run(run_dir: str | Path, rules: list[str]) -> GateVerdict:
    """The gate's rules on a finished LLM audit, without recomputing it."""
    return gate_of(read_run(run_dir), rules)


#: why a rule on an outcome has no value (every answer unparsed, or an outcome the run did not ask for)
NOT_MEASURED = "not measured: no response gave a readable value of that outcome, or the run did not ask for it"


def gate_of(run: LLMAuditResult, rules: Sequence[str]) -> GateVerdict:
    """The gate's verdicts on an LLM audit's result: ``default`` over the outcomes that were measured (a readable
    answer each); a rule on an outcome without one says why it has no value."""
    from ...analysis.gate import evaluate_rules, outcome_rules, with_unmeasured

    s = run.summary
    measurable = [o for o in s.outcomes if (s.effects or {}).get(o) is not None]
    expanded = outcome_rules(rules, measurable, similarities=list(s.similarity or {}))
    verdict = evaluate_rules(expanded, run.gate_metrics(), missing=NOT_MEASURED)
    if not any(_every_outcome(rule) for rule in rules):
        return verdict  # rules that name their outcome: one without a value is already an error that says so
    return with_unmeasured(
        verdict, unmeasured(s), f"none of the {s.responses} responses gave a readable value (declined or unparsed)"
    )


def _every_outcome(rule: str) -> bool:
    """Whether a rule stands for every outcome: ``default``, or an in-slot rule that names none."""
    from ...analysis.gate import MATERIAL_METRICS, parse_rule

    if rule.strip().lower() == "default":
        return True
    metric = parse_rule(rule).metric
    return "." not in metric and metric in MATERIAL_METRICS
