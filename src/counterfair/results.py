"""Typed results of the in-memory core: tables as DataFrames, the summary as a dict, a notebook view, ``save(dir)``.

Like fairlearn's ``MetricFrame``: read ``.by_group`` and the other tables instead of string keys of a summary.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from .jsontypes import JSONObject
from .summaries import AuditSummary, BiasSummary, CTFSummary, GateMetrics, Record, SuiteSummary

if TYPE_CHECKING:
    from .analysis.gate import Rule


def _figure_png(draw: Any) -> str | None:
    """A small matplotlib figure drawn by ``draw(ax)``, as an inline PNG tag (None if there is nothing to draw)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3))
    try:
        if draw(ax) is False:
            return None
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=90)
    finally:
        plt.close(fig)
    return f'<img alt="figure" src="data:image/png;base64,{base64.b64encode(buffer.getvalue()).decode()}">'


def html_view(title: str, lines: list[str], tables: list[tuple[str, pd.DataFrame]], figures: list[str | None]) -> str:
    parts = [f"<div><h4>{html.escape(title)}</h4>"]
    parts += [f"<p>{html.escape(line)}</p>" for line in lines]
    for caption, table in tables:
        if not table.empty:
            parts.append(f"<p><b>{html.escape(caption)}</b></p>{table.to_html(float_format=lambda v: f'{v:.3f}')}")
    parts += [f for f in figures if f]
    return "".join(parts) + "</div>"


def _frame(entries: Mapping[str, Record], index: str) -> pd.DataFrame:
    """Records by name as a table with their JSON columns (one row each)."""
    return pd.DataFrame.from_dict({k: v.to_dict() for k, v in entries.items()}, orient="index").rename_axis(index)


_COUNTS = ("n", "n_positive", "n_negative", "pairs", "texts", "flips", "pairs_without_score", "ci_low", "ci_high")


class GateResult(dict[str, Any]):
    """The fairness gate's verdicts (a dict, as ``summary.json`` stores them) that reads as a verdict table: the
    status, then each rule as a sentence, failed rules first. Its truth value is :attr:`passed`, so
    ``assert result.check("default")`` fails a test when a rule failed or could not be evaluated."""

    @property
    def passed(self) -> bool:
        """Whether every rule passed (none failed, none could not be evaluated)."""
        return self.get("verdict") == "pass"

    def __bool__(self) -> bool:
        return self.passed

    def _lines(self) -> list[str]:
        from .summaries import GateVerdict
        from .views.verdict import MANY_RULES, gate_rules

        status, rules = gate_rules(GateVerdict.from_dict(self))
        shown = rules if len(rules) <= MANY_RULES else tuple(r for r in rules if r[0] != "pass")
        more = [f"PASS  {len(rules) - len(shown)} more checks (every check: this dict's 'checks')"] if len(shown) < len(
            rules
        ) else []  # fmt: skip
        return [f"Fairness gate: {str(status).upper()}", *(f"{v.upper():5} {sentence}" for v, sentence in shown), *more]

    def __repr__(self) -> str:
        return "\n".join(self._lines())

    def _repr_html_(self) -> str:
        lines = self._lines()
        rows = "".join(
            f"<tr><td><b>{html.escape(line[:5].strip())}</b></td><td style='text-align:left'>{html.escape(line[6:])}"
            "</td></tr>"
            for line in lines[1:]
        )
        return f"<p><b>{html.escape(lines[0])}</b></p><table>{rows}</table>"


class TableResult:
    """What every result shares: a table and a summary; ``to_dict()`` and ``save(dir)`` (the table as CSV,
    ``summary.json``, and whatever :meth:`_saved` adds)."""

    summary: dict[str, Any]
    _table_file = "pairs.csv"
    _summary_type: type[Record] = Record
    _default_rules = False  # whether the gate's "default" rule applies (the audit's in-slot findings)

    @property
    def typed_summary(self) -> Any:
        """The summary as a typed record (:mod:`counterfair.summaries`), read afresh from :attr:`summary`."""
        return self._summary_type.from_dict(self.summary)

    def _table(self) -> pd.DataFrame:
        raise NotImplementedError

    def to_dict(self) -> JSONObject:
        return dict(self.summary)

    def gate_metrics(self) -> GateMetrics:
        """Every metric this result gives the fairness gate (:mod:`counterfair.analysis.gate`), by name: per metric
        ``{"overall": entry, "by_group": {group: entry}}``, None where the run cannot give it. A result of a command
        without a gate (generate, evaluate, feedback, ctf) has none: an error naming the commands that do."""
        from .errors import ConfigError

        raise ConfigError(
            f"{type(self).__name__} has no fairness gate: the gate reads audit, bias, suite and llm-audit results"
        )

    def _gate_missing(self) -> str | None:
        """Why the run has no counterfactual metric at all (a rule on one then says so), or None."""
        return None

    def check(self, rules: str | Sequence[str | Rule]) -> GateResult:
        """The fairness gate's verdicts on ``rules`` (:mod:`counterfair.analysis.gate`; ``"default"``: every material
        in-slot finding fails) over :meth:`gate_metrics`; also kept in the summary. True when every rule passed."""
        from .analysis.gate import Rule, evaluate_rules, expand_rules, parse_rule

        given = [rules] if isinstance(rules, str) else rules
        # a bad rule fails before any work; "default" is the audit's (material in-slot findings)
        parsed = (
            expand_rules(given) if self._default_rules else [r if isinstance(r, Rule) else parse_rule(r) for r in given]
        )
        gate = evaluate_rules(parsed, self.gate_metrics(), missing=self._gate_missing())
        self.summary["gate"] = gate
        return GateResult(gate)

    def to_dataset(self) -> Any:
        """The result's table, as :attr:`pairs` or the notebook shows it, as a Hugging Face ``datasets.Dataset``
        (needs the ``hf`` extra: ``pip install 'counterfair[hf]'``)."""
        from . import extras

        extras.check([("to_dataset", ["hf"])])
        import datasets

        return datasets.Dataset.from_pandas(self._plain_table(), preserve_index=False)

    def _plain_table(self) -> pd.DataFrame:
        """The table as a notebook shows it (the saved CSV may hold JSON columns)."""
        return self._table()

    def difference(self) -> pd.Series:
        """Per metric, the largest minus the smallest value over the groups of :attr:`by_group`'s numeric point
        estimates (fairlearn's ``MetricFrame.difference()``, between groups)."""
        table = self._groups_for_difference()
        numeric = table.select_dtypes("number") if not table.empty else table
        keep = [c for c in numeric.columns if not str(c).endswith(("_low", "_high")) and c not in _COUNTS]
        return (numeric[keep].max() - numeric[keep].min()) if keep else pd.Series(dtype=float)

    def _groups_for_difference(self) -> pd.DataFrame:
        return getattr(self, "by_group", pd.DataFrame())

    def save(self, directory: str | Path) -> Path:
        """Write the table, ``summary.json`` (and for an audit the report) into ``directory``; returns it. The folder
        is new, empty, or counterfair's own (an earlier save, a run): a folder of other files is refused before any
        write (:func:`~counterfair.runs.prepare_save_dir`)."""
        from .io import write_json, write_table
        from .runs import prepare_save_dir, record_files

        target, foreign = prepare_save_dir(directory, what=type(self).__name__.removesuffix("Result").lower())
        write_table(self._table(), target / self._table_file)
        write_json(self.summary, target / "summary.json")
        self._saved(target)
        record_files(target, foreign)
        return target

    def _saved(self, target: Path) -> None:
        """Called after :meth:`save` wrote the table and the summary: the report of a command with a report page."""
        from .views.pages import write_report

        write_report(target)

    def __rich__(self) -> Any:
        """The command's console tables, from :mod:`counterfair.views.console` (``rich.print(result)``); the table
        itself for a result without a view of its own."""
        view = self._console()
        if view is None:
            from .views.console import frame_table

            return frame_table(self._table(), type(self).__name__)
        return view

    def _console(self) -> Any:
        """The command's own console view of the summary (:mod:`counterfair.views.console`); None: the table."""
        return None


class AuditResult(TableResult):
    """An audit: ``pairs`` (one row per original/counterfactual pair with both scores and a status; the edits as plain
    columns), ``by_group`` (per method and attribute: mean score change with its 95 % CI, flips), ``ctf_by_group``
    (CTF gap per identity group), ``summary`` (everything, as ``summary.json``). ``raw_pairs`` is the table as
    ``pairs.csv`` holds it (the edits as JSON)."""

    def _console(self) -> Any:
        from .views.console import audit_view

        return audit_view(self.summary)

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
            from .analysis.compare import read_pairs

            self._raw_pairs = read_pairs(self.run_dir)
        return self._raw_pairs

    @property
    def slots(self) -> pd.DataFrame | None:
        """Every identity slot with each term and placebo word (:mod:`counterfair.analysis.slots`)."""
        if self._slots is None and self._from_run_dir:
            from .analysis.slots import read_slots

            self._slots = read_slots(self.run_dir)
        return self._slots

    @cached_property
    def pairs(self) -> pd.DataFrame:
        """The pairs with plain columns: ``edits`` (JSON in ``pairs.csv``) becomes ``removed`` and ``inserted`` (the
        edited spans' old and new text, " | " between several) and ``n_edits``."""
        return plain_edits(self.raw_pairs)

    @property
    def typed_summary(self) -> AuditSummary:
        return AuditSummary.from_dict(self.summary)

    @property
    def by_group(self) -> pd.DataFrame:
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
        for measure in ("identity_effect", "disparity", "flip_excess"):  # in the slot (counterfair.analysis.slots)
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
        return _frame((ctf.by_group if ctf else None) or {}, "group")

    @property
    def identity_effects(self) -> pd.DataFrame:
        """Per group, measured in the slot against neutral words (:mod:`counterfair.analysis.slots`): the identity
        effect (``value``, probability units, signed) with its 95 % CI, p-values and ``finding``."""
        effects = self.typed_summary.effects
        part = effects.identity_effect if effects is not None else None
        table = _frame((part.by_group if part else None) or {}, "group")
        return table.rename(columns={"value": "identity_effect"}) if not table.empty else table

    @property
    def term_effects(self) -> pd.DataFrame:
        """Per identity term, in the slot: its group, the mean score with the term and with a neutral word, the
        effect (``identity_effect``) with its 95 % CI, p-values and ``finding``; largest effect first."""
        effects = self.typed_summary.effects
        part = effects.identity_effect if effects is not None else None
        table = _frame((part.by_term if part else None) or {}, "term")
        if table.empty:
            return table
        table = table.rename(columns={"value": "identity_effect"})
        return table.reindex(table["identity_effect"].abs().sort_values(ascending=False).index)

    def gate_metrics(self) -> GateMetrics:
        """The gate's metrics: the identity swaps' (the tallies the run kept, or else computed from the pairs, with
        the summary's in-slot effects) and, with labelled data, the bias metrics."""
        from .analysis.gate import bias_gate_metrics, fairness_metrics

        s = self.typed_summary
        if self._tallied is not None:
            metrics = dict(self._tallied[0])
        else:
            metrics = fairness_metrics(
                self.raw_pairs,
                seed=s.options.get("seed", 0),
                n_resamples=s.options.get("bootstrap", 2000),
                effects=s.effects.to_dict() if s.effects is not None else None,
                slots=self.slots,
                threshold=s.threshold if s.threshold is not None else 0.5,
            )
        return {**metrics, **(bias_gate_metrics(s.bias.to_dict()) if s.bias is not None else {})}

    def _gate_missing(self) -> str | None:
        from .analysis.gate import unscored_swaps

        return self._tallied[1] if self._tallied is not None else unscored_swaps(self.raw_pairs)

    def compare(self, baseline: Any, *, name: str = "baseline") -> pd.DataFrame:
        """This audit's classifier (B) against ``baseline`` (A) on the same pairs, per group
        (:mod:`counterfair.analysis.compare`): another ``AuditResult``, a run directory, or a classifier (anything
        :func:`~counterfair.as_classifier` takes) that scores these pairs."""
        from .analysis.compare import compare_pairs, comparison_table, rescore_pairs
        from .analysis.slots import read_slots, rescore_slots

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
        self.summary["comparison"] = comparison
        return comparison_table(comparison)

    def _table(self) -> pd.DataFrame:
        return self.raw_pairs

    def _plain_table(self) -> pd.DataFrame:
        return self.pairs

    def _saved(self, target: Path) -> None:
        from .io import write_table
        from .views.report import build_report

        if self.slots is not None:
            write_table(self.slots, target / "slots.csv")

        build_report(target)  # report.html, report.md, plots/

    def _repr_html_(self) -> str:
        raw = self.raw_pairs
        ok = raw[raw["status"] == "ok"] if not raw.empty else raw

        def histogram(ax: Any) -> bool:
            if ok.empty:
                return False
            for method, part in ok.groupby("method"):
                ax.hist(part["diff"], bins=30, alpha=0.6, label=str(method))
            ax.set_xlabel("score change, original → counterfactual")
            ax.legend()
            return True

        from .views.verdict import verdict

        s = self.typed_summary
        v = verdict(s)
        head = [f"Verdict: {v.headline}", *(f.sentence() for f in v.findings)]
        head += [f"Fairness gate: {v.gate_status.upper()}"] if v.gate_status else []
        gap, unscored = self.ctf_gap, s.pairs_without_score
        line = f"classifier {s.classifier.spec}; {len(self.raw_pairs)} pairs"
        line += f"; CTF gap {gap:.3f}" if gap is not None else ""
        line += f"; {unscored} pairs without a score" if unscored else ""
        lines = [*head, line]
        terms = self.term_effects
        shown = terms[terms["finding"] != "not detected"] if not terms.empty else terms
        keep = [c for c in ("group", "score", "placebo_score", "identity_effect", "ci_low", "ci_high", "finding")
                if c in shown.columns]  # fmt: skip
        tables = [
            ("identity effect in the slot, by group (probability units)", self.identity_effects),
            ("terms with a detected effect", shown[keep] if not shown.empty else shown),
            ("by method and attribute", self.by_group),
            ("CTF gap by identity group", self.ctf_by_group),
        ]
        return html_view("counterfair audit", lines, tables, [_figure_png(histogram)])

    def __repr__(self) -> str:
        return f"AuditResult({len(self.raw_pairs)} pairs, classifier {self.typed_summary.classifier.spec!r})"

    def __str__(self) -> str:
        """The verdict first (``print(result)`` in a script), then what the result holds."""
        from .views.verdict import verdict

        return "\n".join([*verdict(self.typed_summary).lines(), repr(self)])


class BiasResult(TableResult):
    """Unintended bias on labelled data (:mod:`counterfair.core.bias`): ``rows`` (each text's label, score and
    groups), ``by_group`` (subgroup, BPSN, BNSP and pinned AUC with intervals and counts), ``overall`` (overall AUC,
    the generalized means, the final metric, FPED, FNED), ``summary``."""

    def _console(self) -> Any:
        from .views.console import bias_view

        return bias_view(self.summary)

    _table_file = "rows.csv"
    _summary_type = BiasSummary

    def __init__(self, rows: pd.DataFrame, summary: Mapping[str, Any]) -> None:
        self.rows = rows
        self.summary = dict(summary)  # a summary the core built (a TypedDict) or read

    @property
    def typed_summary(self) -> BiasSummary:
        return BiasSummary.from_dict(self.summary)

    def gate_metrics(self) -> GateMetrics:
        """The bias metrics as the gate reads them (overall and per group)."""
        from .analysis.gate import bias_gate_metrics

        return bias_gate_metrics(self.typed_summary)

    @property
    def by_group(self) -> pd.DataFrame:
        records = []
        for group, g in (self.typed_summary.groups or {}).items():
            record: dict[str, Any] = {"group": group, "n": g.n, "n_positive": g.n_positive, "n_negative": g.n_negative}
            for metric in ("subgroup_auc", "bpsn_auc", "bnsp_auc", "pinned_auc"):
                estimate = getattr(g, metric)
                record |= {metric: estimate.value, f"{metric}_low": estimate.ci_low, f"{metric}_high": estimate.ci_high}
            records.append(record)
        return pd.DataFrame(records).set_index("group") if records else pd.DataFrame()

    @property
    def overall(self) -> pd.Series:
        s = self.typed_summary
        values = {"overall_auc": s.overall_auc.value, "final_metric": s.final_metric.value, "fped": s.fped.value}
        values |= {"fned": s.fned.value} | {f"power_mean_{k}": v.value for k, v in (s.generalized_mean or {}).items()}
        return pd.Series(values, dtype=float)

    def _table(self) -> pd.DataFrame:
        return self.rows

    def page(self) -> Any:
        """The report page (:mod:`counterfair.views.pages`): ``report.html``, ``report.md`` and the notebook view."""
        from .views.pages import bias_page

        return bias_page(self.summary)

    def _repr_html_(self) -> str:
        from .views.page import to_notebook_html

        return to_notebook_html(self.page())

    def __repr__(self) -> str:
        s = self.typed_summary
        final = s.final_metric.value
        return f"BiasResult({len(self.rows)} texts, overall AUC {s.overall_auc.value}, final metric {final})"


class SuiteResult(TableResult):
    """A functional test suite (:mod:`counterfair.core.suite`): ``rows`` (each case with its label, score, prediction
    and whether it is correct), ``by_functionality`` and ``by_target`` (accuracy with Wilson intervals, worst first),
    ``bias`` (the bias AUCs with the targets as groups, a :class:`BiasResult`), ``overall``, ``summary``."""

    def _console(self) -> Any:
        from .views.console import suite_view

        return suite_view(self.summary)

    _table_file = "rows.csv"
    _summary_type = SuiteSummary

    def __init__(self, rows: pd.DataFrame, summary: Mapping[str, Any]) -> None:
        self.rows = rows
        self.summary = dict(summary)  # a summary the core built (a TypedDict) or read

    def gate_metrics(self) -> GateMetrics:
        """Accuracy per functionality and target, and the bias metrics with the targets as groups."""
        from .analysis.gate import suite_gate_metrics

        return suite_gate_metrics(self.typed_summary)

    @property
    def typed_summary(self) -> SuiteSummary:
        return SuiteSummary.from_dict(self.summary)

    @staticmethod
    def _cells(cells: Mapping[str, Any] | None, index: str) -> pd.DataFrame:
        records = [
            {index: k, "n": c.n, "n_positive": c.n_positive, "accuracy": c.accuracy.value,
             "accuracy_low": c.accuracy.ci_low, "accuracy_high": c.accuracy.ci_high, "few": c.few}
            for k, c in (cells or {}).items()
        ]  # fmt: skip
        return pd.DataFrame(records).set_index(index) if records else pd.DataFrame()

    @property
    def by_functionality(self) -> pd.DataFrame:
        return self._cells(self.typed_summary.functionalities, "functionality")

    @property
    def by_target(self) -> pd.DataFrame:
        return self._cells(self.typed_summary.targets, "target")

    def _groups_for_difference(self) -> pd.DataFrame:
        return self.by_functionality[["accuracy"]] if not self.by_functionality.empty else pd.DataFrame()

    @property
    def overall(self) -> pd.Series:
        s = self.typed_summary
        values = {"accuracy": s.accuracy.value, "accuracy_low": s.accuracy.ci_low, "accuracy_high": s.accuracy.ci_high}
        if s.bias is not None:
            values |= {"overall_auc": s.bias.overall_auc.value, "final_metric": s.bias.final_metric.value}
        return pd.Series(values, dtype=float)

    @property
    def bias(self) -> BiasResult | None:
        """The bias AUCs with the targets as groups (None for a suite without targets)."""
        s = self.typed_summary
        if s.bias is None:
            return None
        members = {f"group:{t}": (self.rows["target"] == t).astype(int) for t in (s.bias.groups or {})}
        rows = self.rows[["case_id", "label", "score"]].rename(columns={"case_id": "input_id"}).assign(**members)
        context = {"command": "bias", "classifier": s.classifier.to_dict(), "positive_label": s.positive_label,
                   "threshold": s.threshold, "membership": "suite targets"}  # fmt: skip
        return BiasResult(rows, {**context, **s.bias.to_dict()})

    def page(self) -> Any:
        from .views.pages import suite_page

        return suite_page(self.summary)

    def _table(self) -> pd.DataFrame:
        return self.rows

    def _repr_html_(self) -> str:
        from .views.page import to_notebook_html

        return to_notebook_html(self.page())

    def __repr__(self) -> str:
        s = self.typed_summary
        functionalities = len(s.functionalities or {})
        return f"SuiteResult({len(self.rows)} cases, accuracy {s.accuracy.value}, {functionalities} functionalities)"


class CTFResult(TableResult):
    """Counterfactual token fairness: ``pairs`` (every swap with both scores), ``ctf_gap``, ``by_group`` (per source
    term), ``by_direction`` (per source → target), ``summary``."""

    def _console(self) -> Any:
        from .views.console import ctf_view

        return ctf_view(self.summary)

    _summary_type = CTFSummary

    def __init__(
        self, pairs: pd.DataFrame | None, summary: Mapping[str, Any], *, run_dir: str | Path | None = None
    ) -> None:
        """``pairs`` None: read from ``run_dir``'s ``pairs.csv`` when first asked for (as :func:`~counterfair.run_ctf`
        returns it: the columns the file keeps)."""
        self._pairs = pairs
        self.summary = dict(summary)  # a summary the core built (a TypedDict) or read
        self.run_dir = None if run_dir is None else Path(run_dir)
        if pairs is None and run_dir is None:
            raise ValueError("CTFResult: give the pairs or the run directory that holds them")

    @property
    def pairs(self) -> pd.DataFrame:
        if self._pairs is None:
            self._pairs = pd.read_csv(Path(str(self.run_dir)) / "pairs.csv", dtype={"input_id": str})
        return self._pairs

    @property
    def typed_summary(self) -> CTFSummary:
        return CTFSummary.from_dict(self.summary)

    @property
    def ctf_gap(self) -> float | None:
        value = self.typed_summary.value
        return None if value is None else float(value)

    @property
    def by_group(self) -> pd.DataFrame:
        return _frame(self.typed_summary.by_source_term or {}, "source_term")

    @property
    def by_direction(self) -> pd.DataFrame:
        return pd.DataFrame([d.to_dict() for d in self.typed_summary.by_direction or ()])

    def _table(self) -> pd.DataFrame:
        return self.pairs

    def _repr_html_(self) -> str:
        gap = self.ctf_gap
        lines = [f"CTF gap {gap:.3f}" if gap is not None else "no CTF gap", f"{len(self.pairs)} pairs"]
        s = self.typed_summary
        if s.pairs_without_score:
            lines.append(
                f"{s.pairs_without_score} pairs have no score: the gap is over the scored pairs only, "
                f"{s.incomplete_texts['texts']} texts incomplete"
            )
        return html_view("counterfair CTF", lines, [("by source term", self.by_group.head(20))], [])

    def __repr__(self) -> str:
        return f"CTFResult(ctf_gap={self.ctf_gap}, {len(self.pairs)} pairs)"


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
