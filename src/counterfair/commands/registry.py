"""The run kinds: for each command that writes run directories (by the name its ``summary.json`` records), its options
dataclass, what opens a finished run as the command's result object, and what rebuilds its report. ``counterfair
report``, ``counterfair check`` and :func:`open_run` loop over this table instead of asking each command by name; a
command that writes runs adds its line here, beside its line in the command registry
(:mod:`counterfair.command_registry`).

Every entry is imported only when a run of that command is opened: the table itself loads nothing."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError


def _load(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def _csv(run_dir: Path, name: str) -> Any:
    """A run's table as its result holds it (without the file's ``schema_version`` column)."""
    import pandas as pd

    table = pd.read_csv(run_dir / name)
    return table.drop(columns="schema_version", errors="ignore")


@dataclass(frozen=True)
class RunKind:
    """One command: ``name`` as its summary records it, ``options`` its options dataclass (``module:Class``; None for
    a command without one), ``opens`` its result from a run directory and the summary read there (None: no result
    object to open), ``reports`` its report rebuilt in the run directory (the files it wrote, by kind), ``page`` and
    ``figures`` the slice's report page (``module:function``) for a command whose report is a page."""

    name: str
    options: str | None
    opens: Callable[[Path, dict[str, Any]], Any] | None
    reports: Callable[[Path], dict[str, Path]]
    page: str | None = None  # module:function building its report page from the summary (views.page.Page)
    figures: str | None = None  # module:function drawing the page's plots from the run directory

    def options_class(self) -> type[Any] | None:
        return _load(self.options) if self.options else None


def _audit(run_dir: Path, summary: dict[str, Any]) -> Any:
    from .audit.result import AuditResult

    return AuditResult(None, summary, run_dir=run_dir)


def _ctf(run_dir: Path, summary: dict[str, Any]) -> Any:
    from .ctf.result import CTFResult

    return CTFResult(None, summary, run_dir=run_dir)


def _bias(run_dir: Path, summary: dict[str, Any]) -> Any:
    from .bias.result import BiasResult

    return BiasResult(_csv(run_dir, "rows.csv"), summary)


def _suite(run_dir: Path, summary: dict[str, Any]) -> Any:
    from .suite.result import SuiteResult

    return SuiteResult(_csv(run_dir, "rows.csv"), summary)


def _feedback(run_dir: Path, summary: dict[str, Any]) -> Any:
    from .feedback.core import FeedbackResult

    return FeedbackResult(_csv(run_dir, "steps.csv"), summary)


def _generate(run_dir: Path, summary: dict[str, Any]) -> Any:
    from .generate.core import GenerateResult

    return GenerateResult(run_dir / "candidates.csv", None, summary)  # its tables read when first asked for


def _evaluate(run_dir: Path, summary: dict[str, Any]) -> Any:
    from .evaluate.core import EvaluationResult
    from .evaluate.page import evaluation_rows

    return EvaluationResult(evaluation_rows(run_dir), summary, run_dir)


def _llm_audit(run_dir: Path, summary: dict[str, Any]) -> Any:
    from .llm_audit.result import read_run

    return read_run(run_dir)


def _audit_report(run_dir: Path) -> dict[str, Path]:
    from .audit.page import build_report

    return build_report(run_dir)


def _page_report(run_dir: Path) -> dict[str, Path]:
    from ..views.page import write_page

    page = page_of(run_dir)
    if page is None:  # every command given this builder names its page in the table below
        raise InputError(f"{run_dir}: no report page for this run's command")
    return write_page(page, run_dir)


def _evaluation_report(run_dir: Path) -> dict[str, Path]:
    from .evaluate.page import build_evaluation_report

    return build_evaluation_report(run_dir)


def _llm_audit_report(run_dir: Path) -> dict[str, Path]:
    from ..views.page import write_page
    from .llm_audit.result import page, read_run

    run = read_run(run_dir)
    return write_page(page(run.summary, run.responses), run_dir)


RUNS: dict[str, RunKind] = {
    spec.name: spec
    for spec in (
        RunKind("audit", "counterfair.commands.audit.options:AuditOptions", _audit, _audit_report),
        RunKind(
            "ctf",
            "counterfair.commands.ctf.core:CTFOptions",
            _ctf,
            _page_report,
            page="counterfair.commands.ctf.page:ctf_page",
        ),
        RunKind(
            "bias",
            "counterfair.commands.bias.core:BiasOptions",
            _bias,
            _page_report,
            page="counterfair.commands.bias.page:bias_page",
        ),
        RunKind(
            "suite",
            "counterfair.commands.suite.core:SuiteOptions",
            _suite,
            _page_report,
            page="counterfair.commands.suite.page:suite_page",
        ),
        RunKind(
            "generate",
            "counterfair.commands.generate.options:GenerateOptions",
            _generate,
            _page_report,
            page="counterfair.commands.generate.page:generate_page",
        ),
        RunKind("evaluate", "counterfair.commands.evaluate.options:EvaluateOptions", _evaluate, _evaluation_report),
        RunKind("evaluate-methods", "counterfair.commands.evaluate.options:EvaluateOptions", None, _evaluation_report),
        RunKind(
            "feedback",
            "counterfair.commands.feedback.core:FeedbackOptions",
            _feedback,
            _page_report,
            page="counterfair.commands.feedback.page:feedback_page",
            figures="counterfair.commands.feedback.page:feedback_figures",
        ),
        RunKind("llm-audit", "counterfair.commands.llm_audit.core:LLMAuditOptions", _llm_audit, _llm_audit_report),
        RunKind("compare", None, None, _page_report, page="counterfair.commands.compare.page:compare_page"),
    )
}


def run_command(run_dir: str | Path) -> tuple[RunKind, dict[str, Any]]:
    """The command that wrote ``run_dir`` and the summary it wrote there; a clear error for a folder that is not a
    finished counterfair run."""
    from ..io import read_json
    from ..summaries import command_of

    target = Path(run_dir)
    if not (target / "summary.json").is_file():
        raise InputError(f"{target}: not a finished counterfair run (no summary.json); finish or resume the run first")
    summary = read_json(target / "summary.json")
    name = command_of(summary)
    if name not in RUNS:
        raise InputError(
            f"{target}/summary.json: written by {name!r}, not by one of counterfair's commands ({', '.join(RUNS)})"
        )
    return RUNS[str(name)], summary


def open_run(run_dir: str | Path) -> Any:
    """A finished run directory as its command's result object (``AuditResult``, ``BiasResult``, ``CTFResult``, ...):
    ``.summary``, its tables (read from the folder when first asked for), ``.check(rules)`` where the command has a
    gate, and the notebook view, as the run returned them."""
    spec, summary = run_command(run_dir)
    if spec.opens is None:
        raise InputError(
            f"{run_dir}: a {spec.name} run has no result object to open; its summary.json and report.html are the "
            "outputs (a method comparison: open each method's evaluation folder)"
        )
    return spec.opens(Path(run_dir), summary)


def rebuild_report(run_dir: str | Path) -> dict[str, Path]:
    """The report of a finished run rebuilt in its folder, without recomputing (the files written, by kind)."""
    spec, _ = run_command(run_dir)
    return spec.reports(Path(run_dir))


def page_of(run_dir: str | Path) -> Any:
    """The report page (:class:`counterfair.views.page.Page`) of a finished run whose command's report is a page, from
    the summary written there (None for a command with a report of its own: audit, evaluate, llm-audit)."""
    from ..views.page import summary_page

    spec, _ = run_command(run_dir)
    if spec.page is None:
        return None
    return summary_page(run_dir, _load(spec.page), _load(spec.figures) if spec.figures else None)
