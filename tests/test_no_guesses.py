"""No silent guesses (#31): a positive label that is not obvious is an error naming the labels and the option, evaluate
computes no flip rate from a classifier nobody named, rate init records a swap's real groups, and an unknown metric
gets a "did you mean"."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import counterfair as cf
from counterfair.commands.evaluate.options import EvaluateOptions
from counterfair.labels import positive_index

from .conftest import run_cli

TRAIN = ["you are an idiot", "have a lovely day", "shut up, stupid", "thanks for the help", "gay people are vile"]


def _model(classes: list[str]) -> object:
    y = [classes[0], classes[1], classes[0], classes[1], classes[0]]
    return make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(TRAIN, y)


def test_the_positive_label_is_read_from_the_names_or_asked_for() -> None:
    # classes sort as ['hate', 'nontoxic']: the second label used to be taken, so the audit scored P(nontoxic)
    clf = cf.as_classifier(_model(["hate", "nontoxic"]))
    assert list(clf.labels) == ["hate", "nontoxic"] and positive_index(clf.labels, None) == 0
    result = cf.bias(["you are an idiot", "a lovely day"], [1, 0], clf, bootstrap=0)
    assert result.typed_summary.positive_label == "hate"
    named = {("0", "1"): "1", ("NEGATIVE", "POSITIVE"): "POSITIVE", ("nothate", "hate"): "hate"}
    named |= {("LABEL_0", "LABEL_1"): "LABEL_1", ("neutral", "toxic"): "toxic", ("non-toxic", "toxic"): "toxic"}
    for labels, positive in named.items():
        assert labels[positive_index(labels, None)] == positive
    for labels in (("a", "b"), ("toxic", "hate"), ("x", "1", "0")):
        with pytest.raises(cf.ConfigError, match="--positive-label"):
            positive_index(labels, None)
    unclear = cf.as_classifier(_model(["alpha", "beta"]))
    with pytest.raises(cf.ConfigError, match=r"labels \['alpha', 'beta'\] do not say which one is positive"):
        cf.audit(["I am a gay man."], unclear, methods=["swap"])
    assert cf.audit(["I am a gay man."], unclear, methods=["swap"], positive_label="alpha").typed_summary


@pytest.mark.slow
def test_evaluate_computes_no_flip_rate_from_a_classifier_nobody_named(tmp_path: Path) -> None:
    pairs = [("The film was wonderful.", "The film was dreadful."), ("A fine cast.", "A poor cast.")]
    quiet = cf.evaluate(pairs, metrics=None)
    assert "flip" not in quiet.summary["options"]["metrics"] and "flipped" not in quiet.metrics.index
    assert any("no classifier was named" in n for n in quiet.summary["notices"])
    with pytest.raises(cf.ConfigError, match="flip need a classifier: name it with --classifier"):
        EvaluateOptions(metrics=["flip", "distance"])
    flips = cf.evaluate(pairs, metrics=["flip"], classifier=lambda t: np.array(["dreadful" in x for x in t], float))
    assert flips.metrics.loc["flipped", "mean"] == pytest.approx(0.5)
    data = tmp_path / "pairs.csv"
    pd.DataFrame(pairs, columns=["orig_text", "gen_text"]).to_csv(data, index=False)
    done = run_cli("evaluate", str(data), "--metrics", "flip,distance", "--out", str(tmp_path / "ev"))
    assert done.returncode == 2 and "--classifier" in done.stderr and not (tmp_path / "ev" / "rows.csv").exists()


def test_rate_init_records_a_swaps_groups(tmp_path: Path) -> None:
    from counterfair.commands.generate.options import GenerateOptions
    from counterfair.commands.generate.shell import run_generate
    from counterfair.rating import pairs_from_run

    texts = pd.DataFrame({"text": ["My gay neighbour grows tomatoes.", "I pray at the mosque on Friday."]})
    run_generate(texts, tmp_path / "gen", GenerateOptions(attribute="islam", methods=["ablation", "swap"]))
    pairs = pairs_from_run(tmp_path / "gen")
    swaps = pairs[pairs["method"] == "swap"]
    assert len(swaps) == 1 and swaps["attribute"].iloc[0].startswith("sexuality → ")
    assert "islam" not in set(swaps["attribute"]) and set(pairs.loc[pairs["method"] == "ablation", "attribute"]) == {
        "islam"
    }


def test_an_unknown_metric_gets_a_did_you_mean() -> None:
    with pytest.raises(cf.ConfigError, match="unknown metric 'flp'; did you mean 'flip'"):
        EvaluateOptions(metrics=["flp"], classifier="profanity-check")
