"""Hold a classifier to a fairness threshold in a project's own test suite::

    from counterfair.testing import assert_fair

    def test_toxicity_model_is_fair():
        assert_fair(my_model.predict_proba, pairs="tests/fairness-run", rules="default")

``rules="default"`` is the documented default gate (every material in-slot finding fails:
:data:`counterfair.analysis.gate.DEFAULT_RULES`); a list of rules names its own (``"material(term_effect[gay])"``,
``"upper(ctf_gap[*]) > 0.1"``). ``pairs`` is a frozen pair set (an audit's run directory, an ``AuditResult``, its
``pairs.csv`` or a DataFrame): the classifier scores the same counterfactual and placebo texts every time, so the
test is reproducible and needs no spaCy or LLM; the in-slot measures need the run directory (its ``slots.csv``) or
the ``AuditResult``.
Without ``pairs``, ``texts`` are audited from scratch (:func:`counterfair.audit`, with ``options``).

Labelled data too: with ``labels`` (one gold label per text) the rules may name the bias metrics of
:func:`counterfair.bias` (``"lower(bpsn_auc[*]) < 0.8"``, ``"final_metric < 0.9"``); with ``cases`` (a functional suite
in HateCheck's layout, or ``"counterfair-templates"`` for the built-in one) the suite's ``accuracy[*]``,
``target_accuracy[*]`` and its bias metrics::

    assert_fair(model.predict_proba, cases="counterfair-templates", rules=["lower(accuracy[*]) < 0.6"])
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .results import GateResult
from .summaries import GateMetrics


class FairnessGateFailed(AssertionError):
    """The classifier broke a rule (or a rule could not be evaluated); ``gate`` holds every check."""

    def __init__(self, message: str, gate: GateResult) -> None:
        super().__init__(message)
        self.gate = gate


def assert_fair(
    classifier: Any,
    texts: Any = None,
    *,
    rules: str | list[str],
    pairs: Any = None,
    labels: Any = None,
    cases: Any = None,
    threshold: float = 0.5,
    positive_label: str | None = None,
    seed: int = 0,
    bootstrap: int = 2000,
    **options: Any,
) -> GateResult:
    """Pass silently (returning the gate's checks) or raise :class:`FairnessGateFailed` naming each rule that
    failed, with its value, and each that could not be evaluated. Each rule's metric is computed from what gives it:
    counterfactual metrics from ``pairs`` or an audit of ``texts``, bias metrics from ``texts`` with ``labels`` (or
    from ``cases``), suite metrics from ``cases``; with none of them, ``classifier`` may be a finished run (its
    directory or its result, an ``llm-audit``'s too), whose gate is read as ``counterfair check`` reads it."""
    from .analysis.gate import COUNTERFACTUAL_METRICS, evaluate_rules, expand_rules

    if not rules:
        raise ValueError("assert_fair needs at least one rule, e.g. rules='default' or ['material(term_effect[*])']")
    if pairs is not None and texts is not None:
        raise ValueError("give texts (audited now) or pairs (a frozen pair set), not both")
    if labels is not None and texts is None:
        raise ValueError("labels go with texts: one gold label per text")
    if pairs is None and texts is None and cases is None:
        if _finished_run(classifier):  # a run directory or a result (an llm-audit's too): its own gate, no rescoring
            return _run_gate(classifier, rules)
        raise ValueError(
            "give texts, pairs (a frozen pair set) or cases (a functional suite), or a finished run's directory or "
            "result in place of the classifier"
        )
    parsed = expand_rules([rules] if isinstance(rules, str) else rules)  # a bad rule fails before any work
    _check_options(options)
    common = {"threshold": threshold, "positive_label": positive_label, "seed": seed, "bootstrap": bootstrap}
    metrics: dict[str, Any] = {}
    if cases is not None:
        metrics |= _suite_metrics(classifier, cases, common)
    if labels is not None:
        metrics |= _bias_metrics(classifier, texts, labels, common, options)
    if pairs is not None or (texts is not None and any(r.metric in COUNTERFACTUAL_METRICS for r in parsed)):
        metrics |= _counterfactual_metrics(classifier, texts, pairs, common, options)
    return _passed(GateResult(evaluate_rules(parsed, metrics).to_dict()))


def _passed(gate: GateResult) -> GateResult:
    """``gate``, or :class:`FairnessGateFailed` naming each rule that failed and each that could not be evaluated."""
    if gate["verdict"] != "pass":
        lines = [f"counterfair fairness gate: {gate['verdict']}"]
        lines += [f"  failed: {m}" for m in gate["failed"]] + [f"  not evaluated: {m}" for m in gate["errors"]]
        raise FairnessGateFailed("\n".join(lines), gate)
    return gate


def _finished_run(thing: Any) -> bool:
    from pathlib import Path

    if isinstance(thing, str | Path):
        return (Path(thing) / "summary.json").is_file()
    return hasattr(thing, "check") and hasattr(thing, "summary")


def _run_gate(run: Any, rules: str | list[str]) -> GateResult:
    """A finished run's gate on ``rules`` (``counterfair check``'s), raising :class:`FairnessGateFailed` as
    :func:`assert_fair` does."""
    from pathlib import Path

    from .commands.registry import open_run

    result = open_run(run) if isinstance(run, str | Path) else run
    return _passed(result.check(rules))


def _check_options(options: dict[str, Any]) -> None:
    """``options`` go to the audit or to the bias metrics: one neither knows is named (with a "did you mean")."""
    from dataclasses import fields

    from .commands.audit.options import AuditOptions
    from .commands.bias.core import BiasOptions
    from .records import check_option_names

    check_option_names(options, {f.name for f in fields(AuditOptions)} | {f.name for f in fields(BiasOptions)})


def _counterfactual_metrics(
    classifier: Any, texts: Any, pairs: Any, common: dict[str, Any], options: dict[str, Any]
) -> GateMetrics:
    from .analysis.gate import fairness_metrics

    slots = None
    if pairs is not None:
        from .analysis.compare import read_pairs, rescore_pairs
        from .analysis.slots import read_slots, rescore_slots

        frozen = read_slots(pairs) if not isinstance(pairs, pd.DataFrame) else None
        scored = rescore_pairs(read_pairs(pairs), classifier, threshold=common["threshold"],
                               positive_label=common["positive_label"])  # fmt: skip
        if frozen is not None:  # the in-slot measures need the run's slots.csv (a run directory or an AuditResult)
            slots = rescore_slots(frozen, classifier, positive_label=common["positive_label"])
    else:
        from .commands.audit.core import audit

        result = audit(texts, classifier, **common, **options)
        scored, slots = result.raw_pairs, result.slots
    return fairness_metrics(
        scored, seed=common["seed"], n_resamples=common["bootstrap"], slots=slots, threshold=common["threshold"]
    )


def _bias_metrics(
    classifier: Any, texts: Any, labels: Any, common: dict[str, Any], options: dict[str, Any]
) -> GateMetrics:
    from .commands.bias.core import BiasOptions, bias

    known = set(BiasOptions.__dataclass_fields__)
    return bias(texts, labels, classifier, **common, **{k: v for k, v in options.items() if k in known}).gate_metrics()


def _suite_metrics(classifier: Any, cases: Any, common: dict[str, Any]) -> GateMetrics:
    from .commands.suite.core import BUILTIN, suite

    source = None if isinstance(cases, str) and cases == BUILTIN else cases
    return suite(source, classifier, **common).gate_metrics()
