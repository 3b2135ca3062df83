"""``counterfair plan`` and ``cf.plan``: how many texts an audit needs, from a pilot run's own spread. Per group (and
per outcome of an LLM audit): the texts the pilot had, the smallest effect detectable over them (80 % power,
simultaneous over the pilot's test family: :mod:`counterfair.analysis.inference`) and about how many texts would
detect a target effect. A family measured over a share of the texts (the gender words, the first names) needs that
many texts *that name it*; the plan also says how many input texts that is at the pilot's mix."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ...analysis.inference import POWER, every_estimate, texts_needed
from ...errors import InputError
from ...summaries import AuditSummary, Record, SlotEffects, SlotEstimate, read_summary
from ..llm_audit.result import LLMAuditSummary


@dataclass(frozen=True)
class PlanRow:
    """One group's plan: its family, the pilot's texts naming it and the spread of its per-text effect, the smallest
    effect detectable now, the texts needed for the target (of the family) and the input texts that gives at the
    pilot's mix; ``None`` where the pilot had too few texts to estimate the spread."""

    group: str
    outcome: str | None
    family: str
    texts: int
    sd: float | None
    mde: float | None
    needed: int | None
    input_needed: int | None
    finding: str | None
    #: group (a group of any family: identity terms, gender words, first names, first names by probe), form (a term's
    #: or gender words' effect in one word form: "jewish@plural") or combination ("race_ethnicity&female"): a form's
    #: and a combination's texts are those that hold it, and its input texts scale by their share of the pilot
    level: str = "group"


@dataclass(frozen=True)
class PlanResult:
    """The plan of a pilot run: a row per group (:class:`PlanRow`), the target ``effect`` and ``power``, the pilot's
    test family size and input size, and whether its units are texts or prompts."""

    rows: tuple[PlanRow, ...]
    effect: float
    power: float
    tests: int
    pilot: int
    unit: str = "texts"

    @property
    def table(self) -> pd.DataFrame:
        return pd.DataFrame([vars(r) for r in self.rows])

    @property
    def needed(self) -> int | None:
        """Input texts (prompts) that would detect the target in every group with an estimated spread (forms and
        combinations are planned apart: :attr:`rows` holds them after the groups)."""
        known = [r.input_needed for r in self.rows if r.input_needed is not None and r.level == "group"]
        return max(known) if known else None

    def headline(self) -> str:
        if self.needed is None:
            return f"the pilot's {self.pilot} {self.unit} are too few to estimate the spread: run more first."
        groups = [r for r in self.rows if r.level == "group"]
        hardest = max((r for r in groups if r.input_needed is not None), key=lambda r: r.input_needed or 0)
        lacking = [r.group for r in groups if r.needed is None]
        more = f"; too few {self.unit} in the pilot to plan {', '.join(lacking)}" if lacking else ""
        return (
            f"to detect a {100 * self.effect:.1f}-point effect in every group ({100 * self.power:.0f} % power, "
            f"simultaneous over {self.tests} estimates): about {self.needed:,} {self.unit} at the pilot's "
            f"mix ({self.pilot} now); the hardest is {hardest.group} (about {hardest.needed:,} {self.unit} that name "
            f"it){more}."
        )

    def lines(self) -> list[str]:
        out = [f"Plan: {self.headline()}"]
        parts = [r for r in self.rows if r.level != "group"]
        if parts:
            planned = [r.input_needed for r in parts if r.input_needed is not None]
            most = f"; the hardest needs about {max(planned):,} {self.unit}" if planned else ""
            count = f"{len(parts)}, each over the {self.unit} that hold it"
            out.append(f"Forms and combinations ({count}) are planned apart{most}.")
        for r in sorted(self.rows, key=lambda r: (r.level != "group", -(r.input_needed or 0))):
            where = f" ({r.outcome})" if r.outcome else ""
            now = "–" if r.mde is None else f"{100 * r.mde:.1f}"
            need = "more than the pilot's, to estimate" if r.input_needed is None else f"about {r.input_needed:,}"
            count = f"{r.texts} {self.unit.rstrip('s') if r.texts == 1 else self.unit}"
            out.append(
                f"- {r.group}{where}: {count} name it now, smallest detectable effect {now} points; "
                f"{self.unit} needed at the pilot's mix: {need}"
            )
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def _repr_html_(self) -> str:
        from html import escape

        return f"<p><b>Plan:</b> {escape(self.headline())}</p>" + self.table.to_html(index=False)


def plan(source: Any, *, effect: float = 0.02, power: float = POWER) -> PlanResult:
    """The plan (:class:`PlanResult`) from a pilot: an audit's or LLM audit's run directory, its result, or its
    summary record. ``effect``: the target, in probability units (0.02: 2 points)."""
    if not 0.0 < effect < 1.0:
        raise InputError(f"effect {effect}: give it in probability units between 0 and 1 (0.02 is 2 points)")
    summary = _summary_of(source)
    if isinstance(summary, LLMAuditSummary):
        parts = [
            (o, e, e.texts / summary.prompts if summary.prompts else 1.0)
            for o, e in (summary.effects or {}).items()
            if e is not None  # an outcome no response gave a value of: nothing to plan from
        ]
        return _plan(parts, {}, summary.prompts, effect, power, "prompts")
    if not isinstance(summary, AuditSummary) or summary.effects is None:
        raise InputError("the pilot has no in-slot effects to plan from (an audit or LLM audit with identity slots)")
    pilot = summary.input.texts if summary.input is not None and summary.input.texts else summary.effects.texts
    families = {name: f.texts / pilot for name, f in (summary.effects.families or {}).items() if pilot}
    return _plan([(None, summary.effects, 1.0)], families, pilot, effect, power, "texts")


def _plan(
    parts: Iterable[tuple[str | None, SlotEffects | None, float]],
    shares: dict[str, float],
    pilot: int,
    effect: float,
    power: float,
    unit: str,
) -> PlanResult:
    rows, tests = [], 0
    for outcome, effects, share in parts:
        if effects is None or effects.identity_effect is None:
            continue
        # every estimate the pilot has, with an interval or not: the family a fuller run tests (a pilot too small for
        # intervals has none in its own family)
        tests = max(tests, effects.tests, len(every_estimate(effects)))
        for group, e in (effects.identity_effect.by_group or {}).items():
            family = group.rpartition(":")[0] or "identity"
            rows.append(_row(group, outcome, family, e, tests, effect, power, shares.get(family, share)))
        measure = effects.identity_effect
        for level, table in (("form", measure.by_form), ("combination", measure.by_cell)):
            for name, e in (table or {}).items():  # over the texts (prompts) that hold it: its share of the pilot's
                family = name.partition("@" if level == "form" else "&")[0].rpartition(":")[0] or "identity"
                held = (e.n or 0) / pilot if pilot else 0.0
                rows.append(_row(name, outcome, family, e, tests, effect, power, held, level=level))
    if not rows:
        raise InputError("the pilot has no in-slot effects to plan from (no identity slot, or the placebo was off)")
    return PlanResult(tuple(rows), effect, power, tests, pilot, unit)


def _row(
    group: str,
    outcome: str | None,
    family: str,
    e: SlotEstimate,
    tests: int,
    effect: float,
    power: float,
    share: float,
    *,
    level: str = "group",
) -> PlanRow:
    needed = texts_needed(e.sd, max(tests, 1), effect, power=power) if e.sd is not None else None
    scaled = max(needed, math.ceil(needed / share)) if needed is not None and share > 0 else None
    return PlanRow(group, outcome, family, int(e.n or 0), e.sd, e.mde, needed, scaled, e.finding, level)


def _summary_of(source: Any) -> Record:
    """A pilot's summary record: given, a result's, or a run directory's ``summary.json``."""
    if isinstance(source, Record):
        return source
    typed = getattr(source, "typed_summary", None) or getattr(source, "summary", None)
    if isinstance(typed, Record):
        return typed
    path = Path(source)
    if not (path / "summary.json").is_file() and not path.is_file():
        raise InputError(f"{source}: no summary.json (give an audit's or LLM audit's run directory)")
    found = read_summary(path)
    if type(found) is Record and found.extra.get("command") == "llm-audit":  # a command read_summary has no record of
        return LLMAuditSummary.from_dict(found.to_dict())
    return found
