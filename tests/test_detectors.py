from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from counterfair.detectors import (
    KeywordDetector,
    KeywordLLMDetector,
    MLPDetector,
    load_detector,
    train_attribute_classifier,
)
from counterfair.editors.registry import resolve_detector
from counterfair.errors import ConfigError, InputError
from counterfair.lexicons.attributes import load_attribute

from .conftest import run_cli
from .fakes import ScriptedLLM


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
    with pytest.raises(ConfigError, match="keyword\\+llm detector needs an LLM"):
        load_detector("keyword+llm", load_attribute("islam"))


def _no_rewrites(text: str, attempt: int, i: int) -> str:
    raise AssertionError("the detector asked for a rewrite")


def test_keyword_llm_detector_asks_the_llm_only_where_no_term_occurs() -> None:
    llm = ScriptedLLM(_no_rewrites, judge=lambda text: 0.9 if "Eid" in text or "about" in text else 0.1)
    detector = load_detector("keyword+llm", load_attribute("islam"), llm=llm)
    assert isinstance(detector, KeywordLLMDetector)
    texts = [
        "The mosque is new.",
        "Sweets for everyone during Eid.",
        "The train is late.",
        "Sweets for everyone during Eid.",
    ]
    np.testing.assert_allclose(detector.reference_proba(texts), [1.0, 0.9, 0.1, 0.9])
    # three control questions first, then each distinct text without a term once
    assert llm.judged == [
        "The train left the station on time.",
        "She bought a new pair of running shoes.",
        "This text is about Muslims.",
        "Sweets for everyone during Eid.",
        "The train is late.",
    ]
    info = detector.info()
    assert info["detector"] == "keyword+llm" and info["mode"] == "logprobs"
    assert info["controls"]["This text is about Muslims."] == pytest.approx(0.9)
    detector.reference_proba(["Eid again."])
    assert llm.judged[-1] == "Eid again." and len(llm.judged) == 6  # the controls are asked once


def test_keyword_llm_detector_asks_with_a_worked_pair_about_another_group() -> None:
    detector = KeywordLLMDetector(ScriptedLLM(_no_rewrites), load_attribute("transgender"))
    turns = detector.classifier.conversation("He binds his chest.")
    assert [t["role"] for t in turns] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "about Hindus" in turns[1]["content"] and turns[1]["content"].endswith("Diwali.")
    assert [turns[2]["content"], turns[4]["content"]] == ["yes", "no"]
    assert turns[-1]["content"].startswith("Is the text below about transgender people, either by naming them")
    assert turns[-1]["content"].endswith("Text: He binds his chest.")


def test_keyword_llm_detector_refuses_an_llm_that_fails_its_controls() -> None:
    coin = ScriptedLLM(_no_rewrites, judge=lambda text: 0.41)  # what Qwen2.5-Coder-0.5B gives every text
    detector = load_detector("keyword+llm", load_attribute("lgbq"), llm=coin)
    assert detector.reference_proba(["The gay bar closed."]).tolist() == [1.0]  # a term: the LLM is not asked
    with pytest.raises(
        ConfigError,
        match=r"fails its control questions .*'The train left the station on time.': "
        r"0.41.*'This text is about gay people.': 0.41.*--detector keyword",
    ):
        detector.reference_proba(["His husband cooked."])


def test_auto_is_keyword_plus_llm_only_where_a_method_calls_the_llm() -> None:
    assert resolve_detector("auto", ["ablation", "substitution", "swap"]) == "keyword"
    assert resolve_detector("auto", ["ablation", "llm"]) == "keyword+llm"
    assert resolve_detector("auto", ["polyjuice"]) == "keyword"  # its own LM, not an instruction LLM
    assert resolve_detector("mlp:dir", ["llm"]) == "mlp:dir" and resolve_detector("keyword", ["llm"]) == "keyword"


class _Steps:
    """A progress hook that records what training announced and advanced."""

    def __init__(self) -> None:
        self.total = 0
        self.advanced = 0

    def start(self, description: str, total: int) -> None:
        self.total = total

    def advance(self, amount: int) -> None:
        self.advanced += amount


def test_paper_schedule_defaults() -> None:
    # paper 000 App. A.3: 36k steps of batch 256 and 20k sampled negatives are what a call without options runs
    import inspect

    from counterfair.detectors import _schedule

    params = inspect.signature(train_attribute_classifier).parameters
    assert params["steps"].default is None and params["epochs"].default is None
    assert params["negatives"].default == 20_000 and params["batch_size"].default == 256
    # 35,000 texts / 256 = 137 batches per pass; 36,000 steps = 262.8 passes
    assert _schedule(None, None, 35_000, 256) == (
        36_000,
        {"schedule": "steps", "steps": 36_000, "epochs_equivalent": 262.8},
    )
    assert _schedule(None, 2, 100, 32) == (8, {"schedule": "epochs", "epochs": 2})  # 2 x ceil(100/32)
    with pytest.raises(ConfigError, match="either steps or epochs"):
        _schedule(10, 2, 100, 32)
    with pytest.raises(ConfigError, match="at least 1"):
        _schedule(0, None, 100, 32)
    # checked before the data is read: a file that does not exist is never reached
    with pytest.raises(ConfigError, match="either steps or epochs"):
        train_attribute_classifier("no-such-file.csv", "unused", label_columns=["muslim"], steps=5, epochs=1)
    with pytest.raises(ConfigError, match="negatives must be 0 or more"):
        train_attribute_classifier("no-such-file.csv", "unused", label_columns=["muslim"], negatives=-1)


def test_batches_cycle_through_shuffled_passes() -> None:
    from counterfair.detectors import _batches

    batches = list(_batches(np.arange(5), 2, 4, np.random.default_rng(0)))
    assert [len(b) for b in batches] == [2, 2, 1, 2]  # one pass of 5 rows in 3 batches, then the next pass starts
    assert sorted(np.concatenate(batches[:3]).tolist()) == [0, 1, 2, 3, 4]


def test_negative_sampling_and_steps(tmp_path: Path) -> None:
    # 108 texts: 36 with muslim > 0.5, 72 with no positive label (36 jewish-only, 36 neutral) for label "muslim"
    hook = _Steps()
    result = train_attribute_classifier(
        _synthetic_identities(),
        tmp_path / "clf",
        label_columns=["muslim"],
        negatives=10,
        steps=7,
        batch_size=32,
        progress=hook,
    )
    assert result.metrics["negatives"] == {"available": 72, "kept": 10}
    # 36 + 10 = 46 rows, 5 (10 %) for validation, 41 to train on
    assert (result.metrics["train_rows"], result.metrics["val_rows"]) == (41, 5)
    assert result.metrics["steps"] == 7 and (hook.total, hook.advanced) == (7, 7)
    training = json.loads((tmp_path / "clf" / "config.json").read_text())["training"]
    # ceil(41 / 32) = 2 batches per pass: 7 steps are 3.5 passes
    assert training["schedule"] == "steps" and training["epochs_equivalent"] == 3.5 and training["negatives"] == 10
    everything = train_attribute_classifier(
        _synthetic_identities(), tmp_path / "all", label_columns=["muslim"], negatives=None, epochs=1
    )
    assert everything.metrics["negatives"] == {"available": 72, "kept": 72}
    assert everything.metrics["steps"] == 1  # ceil(97 / 256)


@pytest.mark.slow
def test_train_attribute_cli(tmp_path: Path) -> None:
    data = tmp_path / "identities.csv"
    _synthetic_identities().to_csv(data, index=False)

    def train(out: str, *options: str) -> Any:
        return run_cli(
            "train-attribute", str(data), "--label-columns", "muslim", "--out", str(tmp_path / out), *options
        )

    done = train("clf", "--steps", "5", "--negatives", "10", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "trained 5 steps on 41 texts (10 of 72 without a label)" in " ".join(done.stdout.split())
    assert MLPDetector(tmp_path / "clf").config["training"]["steps"] == 5
    bad = train("x", "--negatives", "some")
    assert bad.returncode == 2 and "'some' is neither a positive number nor 'all'" in " ".join(bad.stderr.split())
    both = train("y", "--steps", "5", "--epochs", "1")
    assert both.returncode == 2 and "either steps or epochs" in " ".join((both.stdout + both.stderr).split())
    assert not (tmp_path / "y" / "model.safetensors").exists()
