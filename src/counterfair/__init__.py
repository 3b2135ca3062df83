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
from .records import SCHEMA_VERSION, Candidate, Counterfactual, Edit, Example

__version__ = "0.1.0"

_LAZY = {
    "evaluate_pairs": "counterfair.evaluate",
    "EvaluateOptions": "counterfair.evaluate",
    "load_classifier": "counterfair.classifiers",
    "read_table": "counterfair.io",
    "write_table": "counterfair.io",
    "tokenize": "counterfair.text",
    "word_distance": "counterfair.text",
    "TermMatcher": "counterfair.text",
    "PerplexityScorer": "counterfair.metrics",
    "BERTScoreScorer": "counterfair.metrics",
}

__all__ = [
    "SCHEMA_VERSION",
    "BERTScoreScorer",
    "Candidate",
    "ChecksumError",
    "ClassifierError",
    "ConfigError",
    "Counterfactual",
    "CounterfairError",
    "Edit",
    "EvaluateOptions",
    "Example",
    "InputError",
    "ModelNotAvailable",
    "OutputError",
    "PerplexityScorer",
    "SchemaError",
    "TermMatcher",
    "__version__",
    "evaluate_pairs",
    "load_classifier",
    "read_table",
    "tokenize",
    "word_distance",
    "write_table",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'counterfair' has no attribute {name!r}")
