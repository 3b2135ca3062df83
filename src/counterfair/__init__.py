"""counterfair: counterfactual texts — generate them, measure them, audit classifiers with them.

Importing counterfair does no work: no model, file or network access; heavy modules load on first use.
"""

from __future__ import annotations

import warnings
from importlib import import_module
from typing import Any

from .errors import (
    ChecksumError,
    ClassifierError,
    ConfigError,
    CounterfairError,
    InputError,
    ModelNotAvailable,
    OutputError,
    SchemaError,
)
from .records import SCHEMA_VERSION, Candidate, Counterfactual, Edit

__version__ = "0.1.0"

# transformers' hub client imports tqdm.auto, which warns in red in a notebook without ipywidgets ("IProgress not
# found"); counterfair's own bars (counterfair.progress) fall back to text there, so the warning only alarms
warnings.filterwarnings("ignore", message="IProgress not found", module="tqdm")

_LAZY = {
    # the verbs
    "audit": "counterfair.core.audit",
    "ctf": "counterfair.core.ctf",
    "evaluate": "counterfair.core.evaluate",
    "generate": "counterfair.core.generate",
    "feedback": "counterfair.core.feedback",
    "evaluate_methods": "counterfair.shell.methods",
    "run_audit": "counterfair.shell.audit",
    "run_generate": "counterfair.shell.generate",
    "run_ctf": "counterfair.shell.ctf",
    "evaluate_pairs": "counterfair.shell.evaluate",
    "nli_revision_pairs": "counterfair.nli",
    "as_classifier": "counterfair.classifiers",
    "bias": "counterfair.core.bias",
    "suite": "counterfair.core.suite",
    "llm_audit": "counterfair.commands.llm_audit",
    "run_llm_audit": "counterfair.commands.llm_audit.shell",
    "open_run": "counterfair.commands.registry",
    # the options
    "AuditOptions": "counterfair.core.audit",
    "GenerateOptions": "counterfair.core.generate",
    "EvaluateOptions": "counterfair.core.evaluate",
    "FeedbackOptions": "counterfair.core.feedback",
    "CTFOptions": "counterfair.core.ctf",
    "BiasOptions": "counterfair.core.bias",
    "SuiteOptions": "counterfair.core.suite",
    "LLMAuditOptions": "counterfair.commands.llm_audit",
    # the results
    "AuditResult": "counterfair.results",
    "CTFResult": "counterfair.results",
    "EvaluationResult": "counterfair.core.evaluate",
    "FeedbackResult": "counterfair.core.feedback",
    "MethodComparison": "counterfair.core.methods",
    "BiasResult": "counterfair.results",
    "SuiteResult": "counterfair.results",
    "LLMAuditResult": "counterfair.commands.llm_audit",
}
__all__ = [
    "SCHEMA_VERSION",
    "AuditOptions",
    "AuditResult",
    "BiasOptions",
    "BiasResult",
    "CTFOptions",
    "CTFResult",
    "Candidate",
    "ChecksumError",
    "ClassifierError",
    "ConfigError",
    "Counterfactual",
    "CounterfairError",
    "Edit",
    "EvaluateOptions",
    "EvaluationResult",
    "FeedbackOptions",
    "FeedbackResult",
    "GenerateOptions",
    "InputError",
    "LLMAuditOptions",
    "LLMAuditResult",
    "MethodComparison",
    "ModelNotAvailable",
    "OutputError",
    "SchemaError",
    "SuiteOptions",
    "SuiteResult",
    "__version__",
    "as_classifier",
    "audit",
    "bias",
    "ctf",
    "editors",
    "evaluate",
    "evaluate_methods",
    "evaluate_pairs",
    "feedback",
    "generate",
    "llm_audit",
    "nli_revision_pairs",
    "open_run",
    "run_audit",
    "run_ctf",
    "run_generate",
    "run_llm_audit",
    "suite",
]


def __getattr__(name: str) -> Any:
    if name == "editors":
        return import_module("counterfair.editors")
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'counterfair' has no attribute {name!r}")


def __dir__() -> list[str]:
    """What tab completion offers: the public names (the lazy ones included)."""
    return sorted(__all__)
