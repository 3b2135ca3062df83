"""Human rating of counterfactuals (paper 000 §3.3, §4.3, App. C) and LLM judges (paper 004 §3.1.2)."""

from __future__ import annotations

from .store import EXPORT_COLUMNS, Rating, RatingStore, pairs_from_run

__all__ = ["EXPORT_COLUMNS", "Rating", "RatingStore", "pairs_from_run"]
