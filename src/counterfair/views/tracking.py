"""Log an audit to an experiment tracker (``audit --log-to mlflow``): the headline metrics, per-group gaps and
identity effects, the gate's verdicts, and the report as artifacts.

MLflow is an optional extra (``pip install 'counterfair[mlflow]'``, the ``mlflow-skinny`` client); the tracking
URI is ``--mlflow-uri``, else MLflow's own ``MLFLOW_TRACKING_URI``, else a local ``./mlruns`` folder (MLflow 3 keeps
its file store in maintenance mode and refuses it unless told; counterfair tells it only for that default, because
the client alone has no database driver for MLflow's preferred ``sqlite:`` store).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..analysis.measures import SLOT_MEASURES
from ..errors import ModelNotAvailable
from ..summaries import AuditSummary, typed

TRACKERS = ("mlflow",)
MLFLOW_PIP = "pip install 'counterfair[mlflow]'   (the mlflow-skinny client)"


def _key(text: str) -> str:
    """A metric name MLflow accepts (letters, digits, _ - . / and spaces)."""
    return re.sub(r"[^A-Za-z0-9_\-./ ]", "_", text)


def audit_metrics(summary: Mapping[str, Any] | AuditSummary) -> dict[str, float]:
    """The numbers worth tracking across runs, flat: overall and per group."""
    s = typed(summary, AuditSummary)
    out: dict[str, float] = {}

    def put(name: str, value: Any) -> None:
        if isinstance(value, int | float) and value == value:  # not NaN
            out[_key(name)] = float(value)

    if s.ctf:
        put("ctf_gap", s.ctf.value)
        put("ctf_gap.ci_high", s.ctf.ci_high)
        for group, entry in (s.ctf.by_group or {}).items():
            put(f"ctf_gap.{group}", entry.value)
    out |= effect_metrics(s.effects)
    for g in s.groups:
        put(f"mean_change.{g.method}.{g.attribute}", g.score_change.value)
        put(f"flip_rate.{g.method}.{g.attribute}", g.flip_rate)
    if s.gate:
        put("gate.exit_code", s.gate.exit_code)
        put("gate.failed_checks", len(s.gate.failed))
    return out


def effect_metrics(effects: Any, prefix: str = "") -> dict[str, float]:
    """The in-slot measures (identity effect, disparity, flip excess), overall and per group, with their intervals and
    whether each is material; ``prefix``: an LLM audit's outcome (``decision.``)."""
    out: dict[str, float] = {}

    def put(name: str, value: Any) -> None:
        if isinstance(value, int | float) and value == value:  # not NaN
            out[_key(prefix + name)] = float(value)

    for measure in SLOT_MEASURES:
        part = getattr(effects, measure) if effects else None
        if part is None or part.overall is None:
            continue
        for name, e in [("", part.overall), *((f".{g}", x) for g, x in (part.by_group or {}).items())]:
            put(f"{measure}{name}", e.value)
            put(f"{measure}{name}.ci_low", e.ci_low)
            put(f"{measure}{name}.ci_high", e.ci_high)
            put(f"{measure}{name}.material", e.finding == "material")
    if effects and effects.identity_effect:
        put("material_terms", sum(e.material for e in (effects.identity_effect.by_term or {}).values()))
    return out


def llm_audit_metrics(summary: Any) -> dict[str, float]:
    """An LLM audit's numbers worth tracking, flat: each outcome's in-slot measures (``decision.identity_effect``,
    ...), its mean, the failed variants and the gate."""
    out: dict[str, float] = {}
    for outcome, effects in (summary.effects or {}).items():
        out |= effect_metrics(effects, f"{outcome}.")
    for outcome, mean in (summary.outcome_means or {}).items():
        value = mean.get("mean") if isinstance(mean, Mapping) else None
        if isinstance(value, int | float) and value == value:
            out[_key(f"{outcome}.mean")] = float(value)
    out["failed_variants"] = float(summary.failed_variants)
    if summary.gate:
        out["gate.exit_code"] = float(summary.gate.exit_code)
        out["gate.failed_checks"] = float(len(summary.gate.failed))
    return out


def check_tracker(to: str) -> Any:
    """The tracker's client module; a clear error for an unknown tracker or a missing client (before any work)."""
    if to not in TRACKERS:
        from ..errors import ConfigError

        raise ConfigError(f"--log-to {to}: unknown tracker; use one of {', '.join(TRACKERS)}")
    try:
        import mlflow
    except ImportError as err:
        raise ModelNotAvailable("--log-to mlflow needs the MLflow client", pip=MLFLOW_PIP) from err
    return mlflow


def log_audit(
    summary: Mapping[str, Any] | AuditSummary,
    run_dir: str | Path,
    *,
    to: str = "mlflow",
    uri: str | None = None,
    experiment: str = "counterfair",
) -> str:
    """Log one audit run; returns the tracker's run id."""
    s = typed(summary, AuditSummary)
    options = s.options
    params = {
        "classifier": s.classifier.spec,
        "methods": ",".join(s.input.methods),
        "texts": s.input.texts,
        "threshold": s.threshold,
        "placebo": options.get("placebo"),
        "identities": options.get("identities") or "dixon50",
        "seed": options.get("seed"),
        "counterfair_version": s.counterfair_version,
    }
    return log_run(run_dir, f"audit {s.classifier.spec}", params, audit_metrics(s), s.gate, to, uri, experiment)


def log_llm_audit(
    summary: Any, run_dir: str | Path, *, to: str = "mlflow", uri: str | None = None, experiment: str = "counterfair"
) -> str:
    """Log one LLM audit run (``llm-audit --log-to mlflow``); returns the tracker's run id."""
    options = summary.options
    generator = str(summary.generator.get("spec") or summary.generator.get("target") or "callable")
    params = {
        "generator": generator,
        "prompts": summary.prompts,
        "variants": summary.variants,
        "samples": summary.samples,
        "outcomes": ",".join(summary.outcomes),
        "scenario": options.get("scenario"),
        "identities": options.get("identities") or "default",
        "seed": options.get("seed"),
    }
    metrics = llm_audit_metrics(summary)
    return log_run(run_dir, f"llm-audit {generator}", params, metrics, summary.gate, to, uri, experiment)


def log_run(
    run_dir: str | Path,
    name: str,
    params: Mapping[str, Any],
    metrics: Mapping[str, float],
    gate: Any,
    to: str,
    uri: str | None,
    experiment: str,
) -> str:
    """One run into the tracker: its parameters, metrics, the gate's verdict (tags and ``gate.json``) and the report
    files as artifacts; returns the tracker's run id (for a file store, with the line that reads it back)."""
    import os

    mlflow = check_tracker(to)
    uri = uri or os.environ.get("MLFLOW_TRACKING_URI")
    file_store = not uri or uri.startswith(("file:", "./", "/")) or "://" not in uri
    if file_store:
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    uri = uri or Path("mlruns").resolve().as_uri()
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment(experiment)
    target = Path(run_dir)
    from ..redact import redact, redacted

    with mlflow.start_run(run_name=redact(name)) as run:  # a classifier's URL may hold a password or a key
        mlflow.log_params(redacted(dict(params)))
        mlflow.log_metrics(dict(metrics))
        if gate:
            tags = {"gate.verdict": gate.verdict, "gate.rules": " | ".join(r["text"] for r in gate.rules)}
            mlflow.set_tags(redacted(tags))
            mlflow.log_dict(redacted(gate.to_dict()), "gate.json")
        for file in ("report.html", "report.md", "summary.json"):
            if (target / file).exists():
                mlflow.log_artifact(str(target / file))
    if not file_store:
        return str(run.info.run_id)
    # MLflow 3 reads a file store back only when told (its UI and client refuse it otherwise): the line that does
    return f"{run.info.run_id} (to read it: MLFLOW_ALLOW_FILE_STORE=true mlflow ui --backend-store-uri {redact(uri)})"
