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
    "audit": "counterfair.commands.audit.core",
    "ctf": "counterfair.commands.ctf.core",
    "evaluate": "counterfair.commands.evaluate.core",
    "generate": "counterfair.commands.generate.core",
    "feedback": "counterfair.commands.feedback.core",
    "evaluate_methods": "counterfair.commands.methods.shell",
    "run_audit": "counterfair.commands.audit.shell",
    "run_generate": "counterfair.commands.generate.shell",
    "run_ctf": "counterfair.commands.ctf.shell",
    "evaluate_pairs": "counterfair.commands.evaluate.shell",
    "nli_revision_pairs": "counterfair.nli",
    "as_classifier": "counterfair.classifiers",
    "bias": "counterfair.commands.bias.core",
    "suite": "counterfair.commands.suite.core",
    "llm_audit": "counterfair.commands.llm_audit",
    "run_llm_audit": "counterfair.commands.llm_audit.shell",
    "open_run": "counterfair.commands.registry",
    "plan": "counterfair.commands.plan.core",
    # the options
    "AuditOptions": "counterfair.commands.audit.options",
    "GenerateOptions": "counterfair.commands.generate.options",
    "EvaluateOptions": "counterfair.commands.evaluate.options",
    "FeedbackOptions": "counterfair.commands.feedback.core",
    "CTFOptions": "counterfair.commands.ctf.core",
    "BiasOptions": "counterfair.commands.bias.core",
    "SuiteOptions": "counterfair.commands.suite.core",
    "LLMAuditOptions": "counterfair.commands.llm_audit",
    # the results
    "AuditResult": "counterfair.commands.audit.result",
    "CTFResult": "counterfair.commands.ctf.result",
    "EvaluationResult": "counterfair.commands.evaluate.core",
    "FeedbackResult": "counterfair.commands.feedback.core",
    "MethodComparison": "counterfair.commands.methods.core",
    "BiasResult": "counterfair.commands.bias.result",
    "SuiteResult": "counterfair.commands.suite.result",
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
    "plan",
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
