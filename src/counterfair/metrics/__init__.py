"""Counterfactual metrics: pure functions (:mod:`.functional`) and model-backed scorers.

The scorers load their model on first use and reuse it: one :class:`PerplexityScorer` LM and one
:class:`BERTScoreScorer` encoder per configuration per process.
"""

from __future__ import annotations

from .bertscore import BERTScoreScorer
from .cards import CARDS, MetricCard, ModelScoring, PairTexts, register_metric, resolve_metrics, unregister_metric
from .functional import (
    bootstrap_ci,
    contrast_labels,
    diversity,
    flip_rate,
    flipped,
    grouped_summary,
    perplexity_from_nll,
    predicted_labels,
    prob_change,
    sentence_bleu,
    summarize,
    token_distances,
)
from .perplexity import PerplexityScorer

__all__ = [
    "CARDS",
    "BERTScoreScorer",
    "MetricCard",
    "ModelScoring",
    "PairTexts",
    "PerplexityScorer",
    "bootstrap_ci",
    "contrast_labels",
    "diversity",
    "flip_rate",
    "flipped",
    "grouped_summary",
    "perplexity_from_nll",
    "predicted_labels",
    "prob_change",
    "register_metric",
    "resolve_metrics",
    "sentence_bleu",
    "summarize",
    "token_distances",
    "unregister_metric",
]
