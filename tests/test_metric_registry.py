"""Metric cards that carry their compute: the built-in text metrics, and a user's own metric registered with
``register_metric`` and computed, aggregated and recorded by ``evaluate`` like a built-in one."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np
import pytest

import counterfair as cf
from counterfair.errors import ConfigError
from counterfair.metrics import MetricCard, register_metric, unregister_metric
from counterfair.metrics.cards import CARDS, PairTexts


def _length_ratio(texts: PairTexts) -> dict[str, list[float]]:
    """Characters of the counterfactual per character of the original."""
    return {"length_ratio": [len(c) / len(o) for o, c in zip(texts.originals, texts.counterfactuals, strict=True)]}


LENGTH = MetricCard(
    "length_ratio",
    ("length_ratio",),
    "Characters of the counterfactual divided by characters of the original.",
    "> 0",
    "near 1 is a minimal edit",
    "written for this test",
    compute=_length_ratio,
)


@pytest.fixture
def length_metric() -> Iterator[MetricCard]:
    card = register_metric(LENGTH)
    yield card
    unregister_metric(card.name)


def test_a_registered_metric_is_computed_aggregated_and_recorded(length_metric: MetricCard) -> None:
    pairs = [("abcd", "abcdef"), ("", "x"), ("ab", "a")]
    result = cf.evaluate(pairs, metrics=["length_ratio", "distance"])
    # row 0: 6 / 4 = 1.5; row 1 has no original (skipped); row 2: 1 / 2 = 0.5
    assert result.rows["length_ratio"].tolist()[0] == 1.5 and result.rows["length_ratio"].tolist()[2] == 0.5
    assert np.isnan(result.rows["length_ratio"].tolist()[1])
    assert result.rows["distance"].tolist()[::2] == [1, 1]
    assert result.metrics.loc["length_ratio", "mean"] == pytest.approx(1.0)  # (1.5 + 0.5) / 2
    card = result.summary["cards"]["length_ratio"]
    assert card["computed_by"] == "card" and card["definition"].startswith("Characters of the counterfactual")
    assert result.summary["signatures"]["length_ratio"]["compute"].endswith("_length_ratio")
    assert result.summary["cards"]["distance"]["computed_by"] == "card"


def test_a_metric_that_returns_the_wrong_shape_fails_its_stage_not_the_run() -> None:
    def short(texts: PairTexts) -> dict[str, list[float]]:
        return {"short": [1.0]}  # one value, whatever the number of pairs

    register_metric(MetricCard("short", ("short",), "d", "r", "x", "test", compute=short))
    try:
        result = cf.evaluate([("a b", "a c"), ("d e", "d f")], metrics=["short", "distance"])
    finally:
        unregister_metric("short")
    [error] = result.summary["errors"]
    assert error == {
        "stage": "short",
        "error": "MetricError",
        "message": "metric short: column 'short' has 1 values for 2 pairs",
    }
    assert result.rows["status"].tolist() == ["partial", "partial"]
    assert result.rows["distance"].tolist() == [1, 1]  # the other metric is kept
    assert "short: stage failed (MetricError)" in result.rows["notes"].iloc[0]
    from rich.console import Console

    console = Console(record=True, width=200)
    console.print(result)  # what a user printing the result sees: the failed stage too
    shown = console.export_text()  # the page's note
    assert "stage short failed (MetricError: metric short: column 'short' has 1 values for 2 pairs)" in shown


def test_register_metric_refuses_what_it_cannot_compute(length_metric: MetricCard) -> None:
    with pytest.raises(ConfigError, match="exists already"):
        register_metric(LENGTH)
    with pytest.raises(ConfigError, match="needs a compute function or a model"):
        register_metric(MetricCard("nothing", ("nothing",), "d", "r", "x", "test"))
    with pytest.raises(ConfigError, match=r"columns \['bleu'\] are already written"):
        register_metric(MetricCard("my_bleu", ("bleu",), "d", "r", "x", "test", compute=_length_ratio))
    with pytest.raises(ConfigError, match="is not a registered metric of yours"):
        unregister_metric("distance")
    with pytest.raises(ConfigError, match="unknown metric 'lenght_ratio'"):
        cf.evaluate([("a", "b")], metrics=["lenght_ratio"])


@pytest.mark.parametrize("name", [n for n, card in CARDS.items() if card.compute is not None])
def test_every_computing_card_returns_one_value_per_pair_per_column(name: str) -> None:
    texts = PairTexts(["this is awful", "a calm evening"], ["this is fine", "a calm evening here"], [None, None])
    card = CARDS[name]
    values = card.compute(texts) if card.compute else {}
    assert set(values) == set(card.columns)
    assert all(len(values[c]) == 2 for c in card.columns)
    assert card.to_dict()["computed_by"] == "card" and card.signature is not None


def test_built_in_computes_by_hand() -> None:
    texts = PairTexts(["this is awful", "a calm evening"], ["this is fine", "a calm evening here"], [None, None])
    distance = CARDS["distance"].compute(texts) if CARDS["distance"].compute else {}
    # one word replaced of 3; one word added to 3
    assert list(distance["distance"]) == [1, 1] and list(distance["distance_norm"]) == pytest.approx([1 / 3, 1 / 3])
    assert texts.tokens("originals") == [["this", "is", "awful"], ["a", "calm", "evening"]]


def test_every_built_in_metric_is_a_card_that_computes_or_names_its_stage() -> None:
    from counterfair.commands.evaluate.stages import STAGES, stage_order
    from counterfair.metrics.cards import BUILT_IN, CARDS

    for name in BUILT_IN:
        card = CARDS[name]
        assert (card.compute is None) != (card.stage is None), name  # one way to be computed, not two or none
        assert card.stage is None or card.stage in stage_order(), name
        assert (card.model is not None) == (card.stage in ("perplexity", "bertscore")), name
    assert {CARDS[n].stage for n in ("flip", "prob_change")} == {"classifier"}  # one stage, the classifier once
    assert stage_order() == ["diversity", "classifier", "perplexity", "bertscore", "text_quality"]
    assert set(STAGES) == {"diversity", "classifier", "text_quality"}  # a model-scored metric is its card alone


@dataclass
class _Chars:
    """What the toy model returns: a value per text, why a text has none, and a note on long ones."""

    chars: np.ndarray
    reason: list[str | None]

    def row_failures(self) -> list[str | None]:
        return self.reason

    def row_notes(self) -> list[str | None]:
        return ["model_chars: over 2 characters after scaling" if c > 2 else None for c in self.chars]

    def notice(self) -> str | None:
        return f"model_chars: {sum(r is not None for r in self.reason)} texts refused"


class _CharModel:
    """A toy model metric: the counterfactual's characters times the evaluate option it is built with (the
    threshold), refusing the text "x"; counts how often it is built."""

    built = 0

    def __init__(self, scale: float) -> None:
        _CharModel.built += 1
        self.scale = scale

    def __call__(self, texts: list[str], progress: object = None) -> tuple[_Chars, dict[str, object]]:
        chars = np.array([np.nan if t == "x" else len(t) * self.scale for t in texts])
        reason = ["the model refuses 'x'" if t == "x" else None for t in texts]
        return _Chars(chars, reason), {"model": "chars", "scale": self.scale}


def test_a_model_scored_metric_is_one_card() -> None:
    """A metric a model computes pair by pair (as perplexity and BERTScore are) is its card's ModelScoring alone:
    evaluate builds the worker once from the options it names, writes its columns, each row's failure and note and
    the run's notice, and records its signature under its stage."""
    from counterfair.metrics.cards import ModelScoring

    card = MetricCard(
        "model_chars", ("model_chars",), "Characters times the threshold.", ">= 0", "none", "written for this test",
        model=ModelScoring(_CharModel, ("threshold",), {"chars": "model_chars"}),
    )  # fmt: skip
    registered = register_metric(card)
    try:
        assert registered.stage == "model_chars"
        _CharModel.built = 0
        result = cf.evaluate([("abcd", "abcdef"), ("ab", "x"), ("a b", "a c")], metrics=["model_chars"], threshold=0.5)
    finally:
        unregister_metric("model_chars")
    assert _CharModel.built == 1
    values = result.rows["model_chars"].tolist()
    assert values[0] == 3.0 and np.isnan(values[1]) and values[2] == 1.5
    notes = result.rows["notes"].fillna("").tolist()
    assert "the model refuses 'x'" in notes[1] and "over 2 characters" in notes[0] and "over 2" not in notes[2]
    assert result.summary["signatures"]["model_chars"] == {"model": "chars", "scale": 0.5}
    assert result.summary["cards"]["model_chars"]["computed_by"] == "evaluate stage"
    assert "model_chars: 1 texts refused" in result.summary["notices"]
    with pytest.raises(ConfigError, match=r"writes columns \['other'\] the card does not list"):
        register_metric(replace(card, model=ModelScoring(_CharModel, ("threshold",), {"chars": "other"})))
    with pytest.raises(ConfigError, match="stage 'perplexity' is another metric's"):
        register_metric(replace(card, stage="perplexity"))
