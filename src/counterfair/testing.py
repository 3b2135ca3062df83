"""Hold a classifier to a fairness threshold in a project's own test suite::

    from counterfair.testing import assert_fair

    def test_toxicity_model_is_fair():
        assert_fair(my_model.predict_proba, pairs="tests/fairness-pairs.csv",
                    rules=["upper(identity_effect) > 0.05", "ctf_gap[*] > 0.1"])

``pairs`` is a frozen pair set (an audit's run directory or ``pairs.csv``, or a DataFrame): the classifier scores
the same counterfactual (and placebo) texts every time, so the test is reproducible and needs no spaCy or LLM.
Without ``pairs``, ``texts`` are audited from scratch (:func:`counterfair.audit`, with ``options``).
"""

from __future__ import annotations

from typing import Any

from .analysis.gate import gate_pairs


class FairnessGateFailed(AssertionError):
    """The classifier broke a rule (or a rule could not be evaluated); ``gate`` holds every check."""

    def __init__(self, message: str, gate: dict[str, Any]) -> None:
        super().__init__(message)
        self.gate = gate


def assert_fair(
    classifier: Any,
    texts: Any = None,
    *,
    rules: list[str],
    pairs: Any = None,
    threshold: float = 0.5,
    positive_label: str | None = None,
    seed: int = 0,
    bootstrap: int = 2000,
    **options: Any,
) -> dict[str, Any]:
    """Pass silently (returning the gate's checks) or raise :class:`FairnessGateFailed` naming each rule that
    failed, with its value, and each that could not be evaluated."""
    if not rules:
        raise ValueError("assert_fair needs at least one rule, e.g. rules=['identity_effect > 0.05']")
    if (pairs is None) == (texts is None):
        raise ValueError("give texts (audited now) or pairs (a frozen pair set), not both")
    if pairs is not None:
        from .analysis.compare import read_pairs, rescore_pairs

        scored = rescore_pairs(read_pairs(pairs), classifier, threshold=threshold, positive_label=positive_label)
    else:
        from .core.audit import audit

        result = audit(
            texts,
            classifier,
            threshold=threshold,
            positive_label=positive_label,
            seed=seed,
            bootstrap=bootstrap,
            **options,
        )
        scored = result.pairs
    gate = gate_pairs(scored, rules, seed=seed, n_resamples=bootstrap)
    if gate["verdict"] != "pass":
        lines = [f"counterfair fairness gate: {gate['verdict']}"]
        lines += [f"  failed: {m}" for m in gate["failed"]] + [f"  not evaluated: {m}" for m in gate["errors"]]
        raise FairnessGateFailed("\n".join(lines), gate)
    return gate
