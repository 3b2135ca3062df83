"""The audit's result: its pairs, per-group changes, CTF gaps, in-slot identity effects, verdict and gate."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ...analysis.measures import SLOT_MEASURES
from ...results import TableResult, frame_of
from ...summaries import AuditSummary, GateMetrics

if TYPE_CHECKING:
    from ...views.page import Page


class AuditResult(TableResult[AuditSummary]):
    """An audit: ``pairs`` (one row per original/counterfactual pair with both scores and a status; the edits as plain
    columns), ``by_group`` (per identity group: the effect in points, its intervals, the finding), ``by_method`` (per
    method and attribute: mean score change with its 95 % CI, flips), ``ctf_by_group``
    (CTF gap per identity group), ``summary`` (everything, as ``summary.json``). ``raw_pairs`` is the table as
    ``pairs.csv`` holds it (the edits as JSON)."""

    def _console(self) -> Any:
        from ...views.page import to_console
        from .page import audit_page

        return to_console(audit_page(self.summary))

    _summary_type = AuditSummary
    _default_rules = True

    def __init__(
        self,
        pairs: pd.DataFrame | None,
        summary: Mapping[str, Any],
        slots: pd.DataFrame | None = None,
        *,
        run_dir: str | Path | None = None,
        tallied: tuple[GateMetrics, str | None] | None = None,
    ) -> None:
        """``pairs`` None: read from ``run_dir``'s ``pairs.csv`` (and the slots from its ``slots.csv``) when first
        asked for, as :func:`~counterfair.run_audit` returns it: a run's tables may be millions of rows. ``tallied``:
        the identity swaps' gate metrics as the run tallied them, and why it has none (the gate then needs no
        pairs)."""
        self._tallied = tallied
        self.report_page: Page | None = None  # the page report.html was written from, as the run ended
        self._raw_pairs = pairs
        self.summary = dict(summary)  # a summary the core built (a TypedDict) or read
        self._slots = slots
        self.run_dir = None if run_dir is None else Path(run_dir)
        self._from_run_dir = pairs is None  # the tables are the run directory's, read when first asked for
        if pairs is None and run_dir is None:
            raise ValueError("AuditResult: give the pairs or the run directory that holds them")

    @property
    def raw_pairs(self) -> pd.DataFrame:
        """The pairs as ``pairs.csv`` holds them (the edits as JSON)."""
        if self._raw_pairs is None:
            from ...analysis.compare import read_pairs

            self._raw_pairs = read_pairs(self.run_dir)
        return self._raw_pairs

    @property
    def slots(self) -> pd.DataFrame | None:
        """Every identity slot with each term and placebo word (:mod:`counterfair.analysis.slots`)."""
        if self._slots is None and self._from_run_dir:
            from ...analysis.slots import read_slots

            self._slots = read_slots(self.run_dir)
        return self._slots

    @cached_property
    def pairs(self) -> pd.DataFrame:
        """The pairs with plain columns: ``edits`` (JSON in ``pairs.csv``) becomes ``removed`` and ``inserted`` (the
        edited spans' old and new text, " | " between several) and ``n_edits``."""
        return plain_edits(self.raw_pairs)

    @property
    def by_group(self) -> pd.DataFrame:
        """One row per identity group, as a fairlearn user reads ``by_group``: the identity effect in probability
        points (signed: + raises P(positive label)) with its 95 % interval and the simultaneous interval the finding
        is read off, the texts it rests on and the finding, the largest effect first (the table per method and
        attribute is :attr:`by_method`)."""
        effects = self.typed_summary.effects
        part = effects.identity_effect if effects is not None else None

        def points(value: float | None) -> float:
            return float("nan") if value is None else round(100 * value, 2)

        rows = {
            group: {
                "effect_points": points(e.value),
                "ci_low": points(e.ci_low),
                "ci_high": points(e.ci_high),
                "simultaneous_low": points(e.sim_low),
                "simultaneous_high": points(e.sim_high),
                "texts": e.n,
                "finding": e.finding,
            }
            for group, e in ((part.by_group if part else None) or {}).items()
            if e is not None
        }
        if not rows:
            return pd.DataFrame()
        table = pd.DataFrame.from_dict(rows, orient="index").rename_axis("group")
        return table.reindex(table["effect_points"].abs().sort_values(ascending=False, na_position="last").index)

    @property
    def by_method(self) -> pd.DataFrame:
        """Per method and attribute: the pairs, the mean score change with its 95 % CI, flips and the flip rate."""
        rows = [
            {
                "method": g.method,
                "attribute": g.attribute,
                "pairs": g.pairs,
                "mean_change": g.score_change.value,
                "ci_low": g.score_change.ci_low,
                "ci_high": g.score_change.ci_high,
                "flips": g.flips,
                "flip_rate": g.flip_rate,
                "pairs_without_score": g.pairs_without_score,
            }
            for g in self.typed_summary.groups
        ]
        return pd.DataFrame(rows).set_index(["method", "attribute"]) if rows else pd.DataFrame()

    @property
    def ctf_gap(self) -> float | None:
        ctf = self.typed_summary.ctf
        return ctf.value if ctf else None

    @property
    def overall(self) -> pd.Series:
        """The overall figures: CTF gap and identity effect with their 95 % intervals, pairs, flips."""
        s = self.typed_summary
        values: dict[str, Any] = {"pairs": len(self.raw_pairs), "flips": sum(g.flips or 0 for g in s.groups)}
        if s.ctf is not None:
            values |= {"ctf_gap": s.ctf.value, "ctf_gap_low": s.ctf.ci_low, "ctf_gap_high": s.ctf.ci_high}
        for measure in SLOT_MEASURES:  # in the slot (counterfair.analysis.slots)
            part = getattr(s.effects, measure) if s.effects is not None else None
            if part is not None and part.overall is not None:
                e = part.overall
                values |= {measure: e.value, f"{measure}_low": e.ci_low, f"{measure}_high": e.ci_high}
        return pd.Series(values, dtype=float)

    def _groups_for_difference(self) -> pd.DataFrame:
        """The identity groups: CTF gap and identity effect per group."""
        effects, gaps = self.identity_effects, self.ctf_by_group
        table = pd.DataFrame(index=sorted(set(effects.index) | set(gaps.index)))
        if "identity_effect" in effects:
            table["identity_effect"] = effects["identity_effect"]
        if "ctf_gap" in gaps:
            table["ctf_gap"] = gaps["ctf_gap"]
        return table

    @property
    def ctf_by_group(self) -> pd.DataFrame:
        ctf = self.typed_summary.ctf
        return frame_of((ctf.by_group if ctf else None) or {}, "group")

    @property
    def identity_effects(self) -> pd.DataFrame:
        """Per group, measured in the slot against neutral words (:mod:`counterfair.analysis.slots`): the identity
        effect (``value``, probability units, signed) with its 95 % CI, p-values and ``finding``."""
        effects = self.typed_summary.effects
        part = effects.identity_effect if effects is not None else None
        table = frame_of((part.by_group if part else None) or {}, "group")
        return table.rename(columns={"value": "identity_effect"}) if not table.empty else table

    @property
    def term_effects(self) -> pd.DataFrame:
        """Per identity term, in the slot: its group, the mean score with the term and with a neutral word, the
        effect (``identity_effect``) with its 95 % CI, p-values and ``finding``; largest effect first."""
        effects = self.typed_summary.effects
        part = effects.identity_effect if effects is not None else None
        table = frame_of((part.by_term if part else None) or {}, "term")
        if table.empty:
            return table
        table = table.rename(columns={"value": "identity_effect"})
        return table.reindex(table["identity_effect"].abs().sort_values(ascending=False).index)

    def gate_metrics(self) -> GateMetrics:
        """The gate's metrics: the identity swaps' (the tallies the run kept, or else computed from the pairs, with
        the summary's in-slot effects) and, with labelled data, the bias metrics."""
        from ...analysis.gate import bias_gate_metrics, fairness_metrics

        s = self.typed_summary
        if self._tallied is not None:
            metrics = dict(self._tallied[0])
        else:
            metrics = fairness_metrics(
                self.raw_pairs,
                seed=s.options.get("seed", 0),
                n_resamples=s.options.get("bootstrap", 2000),
                effects=s.effects,
                slots=self.slots,
                threshold=s.threshold if s.threshold is not None else 0.5,
            )
        return {**metrics, **(bias_gate_metrics(s.bias) if s.bias is not None else {})}

    def _gate_missing(self) -> str | None:
        from ...analysis.gate import unscored_swaps

        return self._tallied[1] if self._tallied is not None else unscored_swaps(self.raw_pairs)

    def compare(self, baseline: Any, *, name: str = "baseline") -> pd.DataFrame:
        """This audit's classifier (B) against ``baseline`` (A) on the same pairs, per group
        (:mod:`counterfair.analysis.compare`): another ``AuditResult``, a run directory, or a classifier (anything
        :func:`~counterfair.as_classifier` takes) that scores these pairs."""
        from ...analysis.compare import compare_pairs, comparison_table, rescore_pairs
        from ...analysis.slots import read_slots, rescore_slots

        s = self.typed_summary
        opts = s.options
        theirs: pd.DataFrame | None = None
        if isinstance(baseline, AuditResult):
            theirs = baseline.slots
        elif isinstance(baseline, str | Path):
            theirs = read_slots(baseline)
        else:
            if self.slots is not None:
                theirs = rescore_slots(self.slots, baseline, positive_label=opts.get("positive_label"))
            baseline = rescore_pairs(
                self.raw_pairs,
                baseline,
                threshold=opts.get("threshold", 0.5),
                positive_label=opts.get("positive_label"),
            )
        comparison = compare_pairs(
            baseline,
            self.raw_pairs,
            names=(name, s.classifier.spec),
            seed=opts.get("seed", 0),
            n_resamples=opts.get("bootstrap", 2000),
            slots=(theirs, self.slots),
            threshold=s.threshold if s.threshold is not None else 0.5,
        )
        self.summary["comparison"] = comparison.to_dict()
        return comparison_table(comparison)

    def _table(self) -> pd.DataFrame:
        return self.raw_pairs

    def _plain_table(self) -> pd.DataFrame:
        return self.pairs

    def _saved(self, target: Path) -> None:
        from ...writing import write_table
        from .page import build_report

        if self.slots is not None:
            write_table(self.slots, target / "slots.csv")

        build_report(target)  # report.html, report.md, plots/

    def _repr_html_(self) -> str:
        """The notebook view: the report page's verdict and the first rows of its tables."""
        from ...views.page import to_notebook_html
        from .page import audit_page

        return to_notebook_html(audit_page(self.summary))

    def __repr__(self) -> str:
        return f"AuditResult({len(self.raw_pairs)} pairs, classifier {self.typed_summary.classifier.spec!r})"

    def __str__(self) -> str:
        """The verdict first (``print(result)`` in a script), then what the result holds."""
        from ...views.verdict import verdict

        return "\n".join([*verdict(self.typed_summary).lines(), repr(self)])


def plain_edits(pairs: pd.DataFrame) -> pd.DataFrame:
    """``pairs`` with its ``edits`` column (a JSON list of {start, end, old, new}) as plain columns: ``removed``,
    ``inserted`` (the spans' old and new text, " | " between several) and ``n_edits``."""
    import json

    if "edits" not in pairs.columns:
        return pairs
    parsed = [json.loads(e) if isinstance(e, str) and e else [] for e in pairs["edits"]]
    out = pairs.drop(columns=["edits"])
    at = list(pairs.columns).index("edits")
    out.insert(at, "n_edits", [len(e) for e in parsed])
    out.insert(at, "inserted", [" | ".join(str(x.get("new", "")) for x in e) for e in parsed])
    out.insert(at, "removed", [" | ".join(str(x.get("old", "")) for x in e) for e in parsed])
    return out
