from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from counterfair.attributes import load_attribute
from counterfair.detectors import KeywordDetector, MLPDetector, load_detector, train_attribute_classifier
from counterfair.errors import ConfigError, InputError


def test_keyword_detector() -> None:
    detector = KeywordDetector(load_attribute("islam"))
    np.testing.assert_array_equal(
        detector.reference_proba(["The imam at the MOSQUE", "An islamist group", "A quiet church", "Islamabad"]),
        [1.0, 1.0, 0.0, 0.0],
    )


def _synthetic_identities() -> pd.DataFrame:
    """A small CivilComments-Identities-like set written for this test: identity scores in [0, 1]."""
    islam = [
        "the imam at our mosque",
        "she wears a hijab",
        "reading the quran",
        "Muslims in my town",
        "Ramadan fasting at the mosque",
        "the Islamic community centre",
    ]
    jewish = [
        "the rabbi at our synagogue",
        "a Jewish family",
        "lighting the menorah at Hanukkah",
        "Jews in my town",
        "the Torah reading on Saturday",
        "a kosher bakery",
    ]
    neutral = [
        "the bus was late again",
        "my garden needs rain",
        "the council raised taxes",
        "a new bakery opened",
        "the football match was dull",
        "my neighbours have a dog",
    ]
    frames = [
        "I read an article about {}.",
        "People keep talking about {}.",
        "Yesterday I saw {}.",
        "{} was in the news.",
        "Nobody mentioned {} at the meeting.",
        "My friend told me about {}.",
    ]
    rows = []
    for group, (muslim, jew) in ((islam, (0.9, 0.0)), (jewish, (0.0, 0.8)), (neutral, (0.0, 0.0))):
        for phrase, frame in itertools.product(group, frames):
            rows.append({"comment_text": frame.format(phrase), "muslim": muslim, "jewish": jew})
    return pd.DataFrame(rows)


def test_train_mlp_detector(tmp_path: Path) -> None:
    result = train_attribute_classifier(
        _synthetic_identities(), tmp_path / "clf", label_columns=["muslim", "jewish"], epochs=30, batch_size=32
    )
    config = json.loads((tmp_path / "clf" / "config.json").read_text())
    assert config["hidden"] == 2048 and config["labels"] == ["muslim", "jewish"]
    assert config["training"]["lr"] == 1e-3 and config["training"]["weight_decay"] == 2e-3
    assert (tmp_path / "clf" / "model.safetensors").exists()
    assert result.metrics["val_rows"] == 11
    assert all(entry["f1"] >= 0.8 for entry in result.metrics["validation"].values())
    # sentences it never saw
    detector = MLPDetector(tmp_path / "clf", attribute=load_attribute("islam"))
    assert detector.label == "muslim"
    p = detector.reference_proba(["The imam led Friday prayers.", "It rained all weekend in the valley."])
    assert p[0] > 0.5 > p[1]
    both = MLPDetector(tmp_path / "clf").predict_all(["A rabbi read from the Torah."])
    assert both[0, 1] > both[0, 0]
    assert isinstance(load_detector(f"mlp:{tmp_path / 'clf'}#jewish", load_attribute("islam")), MLPDetector)


def test_training_bad_input(tmp_path: Path) -> None:
    frame = pd.DataFrame({"comment_text": ["a", "b"], "muslim": [0.0, "lots"]})
    with pytest.raises(InputError, match="row 1, column 'muslim': 'lots' is not a number"):
        train_attribute_classifier(frame, tmp_path / "x", label_columns=["muslim"])
    with pytest.raises(InputError, match="has no positive example"):
        train_attribute_classifier(
            pd.DataFrame({"comment_text": ["a", "b"], "muslim": [0.1, 0.2]}), tmp_path / "x", label_columns=["muslim"]
        )
    with pytest.raises(InputError, match="row 1 has no text"):
        train_attribute_classifier(
            pd.DataFrame({"comment_text": ["a", None], "muslim": [0.9, 0.2]}), tmp_path / "x", label_columns=["muslim"]
        )
    train_attribute_classifier(_synthetic_identities(), tmp_path / "y", label_columns=["jewish"], epochs=1)
    with pytest.raises(ConfigError, match="none of its labels"):
        MLPDetector(tmp_path / "y", attribute=load_attribute("lgbq"))


def test_unknown_detector() -> None:
    with pytest.raises(ConfigError, match="unknown detector"):
        load_detector("regex", load_attribute("islam"))
    with pytest.raises(ConfigError, match="needs an LLM"):
        load_detector("llm", load_attribute("islam"))
