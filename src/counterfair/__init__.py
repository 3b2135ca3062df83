"""counterfair: counterfactual texts — generate them, measure them, audit classifiers with them.

Importing counterfair does no work: no model, file or network access; heavy modules load on first use.
"""

from __future__ import annotations

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

_LAZY = {
    "as_classifier": "counterfair.classifiers",
    "audit": "counterfair._audit",
    "ctf": "counterfair._ctf",
    "evaluate": "counterfair._evaluate",
    "generate": "counterfair._generate",
    "feedback": "counterfair._feedback",
    "FeedbackResult": "counterfair._feedback",
    "AuditResult": "counterfair.results",
    "CTFResult": "counterfair.results",
    "EvaluationResult": "counterfair._evaluate",
    "AuditOptions": "counterfair._audit",
    "GenerateOptions": "counterfair._generate",
    "run_audit": "counterfair._audit",
    "run_generate": "counterfair._generate",
    "run_ctf": "counterfair._ctf",
    "evaluate_pairs": "counterfair._evaluate",
    "EvaluateOptions": "counterfair._evaluate",
    "evaluate_methods": "counterfair.methods",
    "MethodComparison": "counterfair.methods",
    "nli_revision_pairs": "counterfair.nli",
    "load_classifier": "counterfair.classifiers",
    "read_table": "counterfair.io",
    "write_table": "counterfair.io",
    "tokenize": "counterfair.text",
    "word_distance": "counterfair.text",
    "TermMatcher": "counterfair.text",
    "PerplexityScorer": "counterfair.metrics",
    "BERTScoreScorer": "counterfair.metrics",
    "MetricCard": "counterfair.metrics.cards",
    "PairTexts": "counterfair.metrics.cards",
    "register_metric": "counterfair.metrics.cards",
    "unregister_metric": "counterfair.metrics.cards",
    "editors": "counterfair.editors",
}

__all__ = [
    "SCHEMA_VERSION",
    "AuditOptions",
    "AuditResult",
    "BERTScoreScorer",
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
    "FeedbackResult",
    "GenerateOptions",
    "InputError",
    "MethodComparison",
    "MetricCard",
    "ModelNotAvailable",
    "OutputError",
    "PairTexts",
    "PerplexityScorer",
    "SchemaError",
    "TermMatcher",
    "__version__",
    "as_classifier",
    "audit",
    "ctf",
    "editors",
    "evaluate",
    "evaluate_methods",
    "evaluate_pairs",
    "feedback",
    "generate",
    "load_classifier",
    "nli_revision_pairs",
    "read_table",
    "register_metric",
    "run_audit",
    "run_ctf",
    "run_generate",
    "tokenize",
    "unregister_metric",
    "word_distance",
    "write_table",
]


def __getattr__(name: str) -> Any:
    if name == "editors":
        return import_module("counterfair.editors")
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'counterfair' has no attribute {name!r}")
