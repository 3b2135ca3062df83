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
    effects = s.effects
    for measure in ("identity_effect", "disparity", "flip_excess"):  # the in-slot measures, overall and per group
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
    for g in s.groups:
        put(f"mean_change.{g.method}.{g.attribute}", g.score_change.value)
        put(f"flip_rate.{g.method}.{g.attribute}", g.flip_rate)
    if s.gate:
        put("gate.exit_code", s.gate.exit_code)
        put("gate.failed_checks", len(s.gate.failed))
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
    import os

    mlflow = check_tracker(to)
    uri = uri or os.environ.get("MLFLOW_TRACKING_URI")
    if not uri or uri.startswith(("file:", "./", "/")) or "://" not in uri:
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    mlflow.set_tracking_uri(uri or Path("mlruns").resolve().as_uri())
    mlflow.set_experiment(experiment)
    target = Path(run_dir)
    s = typed(summary, AuditSummary)
    options = s.options
    with mlflow.start_run(run_name=f"audit {s.classifier.spec}") as run:
        mlflow.log_params(
            {
                "classifier": s.classifier.spec,
                "methods": ",".join(s.input.methods),
                "texts": s.input.texts,
                "threshold": s.threshold,
                "placebo": options.get("placebo"),
                "identities": options.get("identities") or "dixon50",
                "seed": options.get("seed"),
                "counterfair_version": s.counterfair_version,
            }
        )
        mlflow.log_metrics(audit_metrics(s))
        if s.gate:
            mlflow.set_tags({"gate.verdict": s.gate.verdict, "gate.rules": " | ".join(r["text"] for r in s.gate.rules)})
            mlflow.log_dict(s.gate.to_dict(), "gate.json")
        for name in ("report.html", "report.md", "summary.json"):
            if (target / name).exists():
                mlflow.log_artifact(str(target / name))
        return str(run.info.run_id)
