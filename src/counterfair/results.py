"""What every command's result shares: tables as DataFrames, the summary as a dict, a notebook view, ``save(dir)``,
the gate (``check``). Each command's result class lives in its slice (``counterfair.commands.<name>``: ``AuditResult``
in ``commands/audit/result.py``, ...).

Like fairlearn's ``MetricFrame``: read ``.by_group`` and the other tables instead of string keys of a summary.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import pandas as pd

from .jsontypes import JSONObject
from .summaries import GateMetrics, Record

if TYPE_CHECKING:
    from .analysis.gate import Rule

S = TypeVar("S", bound=Record)


def frame_of(entries: Mapping[str, Record], index: str) -> pd.DataFrame:
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


class TableResult(Generic[S]):
    """What every result shares: a table and a summary; ``to_dict()`` and ``save(dir)`` (the table as CSV,
    ``summary.json``, and whatever :meth:`_saved` adds)."""

    summary: dict[str, Any]
    _table_file = "pairs.csv"
    _summary_type: type[S]
    _default_rules = False  # whether the gate's "default" rule applies (the audit's in-slot findings)
    _typed: tuple[tuple[Any, ...], S] | None = None

    def _keep_summary(self, summary: Mapping[str, Any] | S) -> None:
        """Keep the summary as the dict users read (:attr:`summary`): a record the core made as its JSON object (NaN
        written None, as ``summary.json`` has it), a summary read as it is."""
        from .writing import nan_to_none

        self.summary = nan_to_none(summary.to_dict()) if isinstance(summary, Record) else dict(summary)

    def _summary_state(self) -> tuple[Any, ...]:
        """What tells whether :attr:`summary` changed since it was typed: the dict and each of its sections, by
        identity (a section set or replaced, as :meth:`check` and a comparison do, reads the summary again; a value
        changed inside a section in place does not)."""
        return (id(self.summary), tuple(self.summary), tuple(map(id, self.summary.values())))

    @property
    def typed_summary(self) -> S:
        """The summary as a typed record (:mod:`counterfair.summaries`): the core's own, or read from :attr:`summary`
        once and again only after a section of it was set or replaced."""
        state = self._summary_state()
        if self._typed is None or self._typed[0] != state:
            self._typed = (state, self._summary_type.from_dict(self.summary))
        return self._typed[1]

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

    def check(self, rules: str | Sequence[str | Rule], *, allow_inconclusive: bool = False) -> GateResult:
        """The fairness gate's verdicts on ``rules`` (:mod:`counterfair.analysis.gate`; ``"default"``: every material
        in-slot finding fails, and every group whose effect is inconclusive unless ``allow_inconclusive``) over
        :meth:`gate_metrics`; also kept in the summary. True when every rule passed."""
        from .analysis.gate import Rule, allowing_inconclusive, evaluate_rules, expand_rules, parse_rule

        given: Sequence[str | Rule] = [rules] if isinstance(rules, str) else rules
        if allow_inconclusive:
            given = [r for rule in given for r in (allowing_inconclusive([rule]) if isinstance(rule, str) else [rule])]
        # a bad rule fails before any work; "default" is the audit's (material in-slot findings)
        parsed = (
            expand_rules(given) if self._default_rules else [r if isinstance(r, Rule) else parse_rule(r) for r in given]
        )
        gate = evaluate_rules(parsed, self.gate_metrics(), missing=self._gate_missing()).to_dict()
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
        from .runs import prepare_save_dir, record_files
        from .writing import write_json, write_table

        target, foreign = prepare_save_dir(directory, what=type(self).__name__.removesuffix("Result").lower())
        write_table(self._table(), target / self._table_file)
        write_json(self.summary, target / "summary.json")
        self._saved(target)
        record_files(target, foreign)
        return target

    def _saved(self, target: Path) -> None:
        """Called after :meth:`save` wrote the table and the summary: a command with a report page writes it here."""

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
