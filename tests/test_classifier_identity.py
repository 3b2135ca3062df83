"""as_classifier: every kind of classifier a user has, each with an identity that changes when what it runs changes;
a run directory never mixes two classifiers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from counterfair.classifiers import as_classifier, load_classifier
from counterfair.commands.audit.options import AuditOptions, demo_path
from counterfair.commands.audit.shell import run_audit
from counterfair.errors import ConfigError

TEXTS = ["a gay man", "a nice day"]


@pytest.fixture
def tiny_dir(tiny_hf_classifier_dir: Path) -> Path:
    """conftest's 1-layer BERT classifier (labels neg, pos)."""
    return tiny_hf_classifier_dir


def test_a_function_with_labels() -> None:
    clf = as_classifier(lambda texts: np.array([0.9 if "gay" in t else 0.1 for t in texts]), labels=["ok", "toxic"])
    assert clf.labels == ["ok", "toxic"]
    np.testing.assert_allclose(clf.predict_proba(TEXTS), [[0.1, 0.9], [0.9, 0.1]])
    assert clf.spec.startswith("python:") and clf.spec.endswith("<lambda>")
    assert clf.identity() is not None and not clf.cli_spec


def test_a_function_identity_follows_its_code_and_the_values_it_uses() -> None:
    def make(threshold: float):
        return lambda texts: np.full(len(texts), threshold)

    assert as_classifier(make(0.5)).identity() == as_classifier(make(0.5)).identity()
    assert as_classifier(make(0.5)).identity() != as_classifier(make(0.9)).identity()
    assert (
        as_classifier(lambda texts: np.zeros(len(texts))).identity()
        != as_classifier(lambda texts: np.ones(len(texts))).identity()
    )


def test_an_identity_that_cannot_be_pinned_says_why() -> None:
    import threading

    lock = threading.Lock()

    def guarded(texts: list[str]) -> np.ndarray:
        with lock:
            return np.zeros(len(texts))

    clf = as_classifier(guarded)
    assert clf.identity() is None
    assert "cannot pickle" in clf.signature()["unstable_reason"]


def test_a_scikit_learn_pipeline_and_a_function_that_uses_it() -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    train = ["good film", "bad film", "nice film", "awful film"]
    model = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(train, ["pos", "neg", "pos", "neg"])
    clf = as_classifier(model)
    assert clf.labels == ["neg", "pos"]
    assert clf.predict_proba(["good"])[0, 1] > 0.5
    wrapped = as_classifier(lambda texts: model.predict_proba(texts)[:, 1])
    before = (clf.identity(), wrapped.identity())
    model.fit(train, ["neg", "pos", "neg", "pos"])  # refitted: the same objects now run something else
    after = (as_classifier(model).identity(), as_classifier(lambda texts: model.predict_proba(texts)[:, 1]).identity())
    assert before[0] != after[0] and before[1] != after[1]


def test_an_object_with_labels_and_predict_proba() -> None:
    class Keyword:
        labels = ("no", "yes")

        def __init__(self, word: str) -> None:
            self.word = word

        def predict_proba(self, texts: list[str]) -> np.ndarray:
            return np.array([[0.0, 1.0] if self.word in t else [1.0, 0.0] for t in texts])

    clf = as_classifier(Keyword("gay"))
    assert clf.predict_proba(TEXTS)[:, 1].tolist() == [1.0, 0.0]
    assert clf.identity() != as_classifier(Keyword("nice")).identity()


def test_transformers_pipeline_model_tokenizer_and_local_directory(tiny_dir: Path) -> None:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

    by_dir = as_classifier(str(tiny_dir))
    assert by_dir.labels == ["neg", "pos"] and by_dir.cli_spec
    expected = by_dir.predict_proba(TEXTS)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_dir)
    tokenizer = AutoTokenizer.from_pretrained(tiny_dir)
    by_pair = as_classifier((model, tokenizer))
    by_pipe = as_classifier(pipeline("text-classification", model=model, tokenizer=tokenizer, device="cpu"))
    for clf in (by_pair, by_pipe):
        assert clf.labels == ["neg", "pos"]
        np.testing.assert_allclose(clf.predict_proba(TEXTS), expected, atol=1e-5)
    assert by_pair.identity() == as_classifier((model, tokenizer)).identity()
    import torch

    with torch.no_grad():
        model.classifier.bias.add_(1.0)  # other weights: another classifier
    assert as_classifier((model, tokenizer)).identity() != by_pair.identity()


def test_a_hub_id_from_the_local_cache(tiny_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache populated here in the hub's layout (models--OWNER--NAME/snapshots/REV, refs/main); no network."""
    revision = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--someone--tiny-toxic"
    shutil.copytree(tiny_dir, repo / "snapshots" / revision)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as hub_constants

    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    clf = as_classifier("someone/tiny-toxic")
    assert clf.labels == ["neg", "pos"]
    assert clf.signature()["hub_id"] == "someone/tiny-toxic" and clf.signature()["revision"] == revision
    np.testing.assert_allclose(clf.predict_proba(TEXTS), as_classifier(str(tiny_dir)).predict_proba(TEXTS), atol=1e-6)
    with pytest.raises(ConfigError, match="'someone/absent' is not in the local cache"):
        as_classifier("someone/absent")


def test_bad_inputs_to_as_classifier(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot make a classifier from a int"):
        as_classifier(3)
    with pytest.raises(ConfigError, match="neither a transformers directory"):
        as_classifier(str(tmp_path))
    with pytest.raises(ConfigError, match="labels= applies to Python functions"):
        as_classifier("profanity-check", labels=["a", "b"])


# ---- run directories: one classifier per directory --------------------------------------------------------------


@pytest.mark.slow
def test_rerun_with_another_classifier_object_is_refused_and_a_new_directory_scores_it(tmp_path: Path) -> None:
    """The bug of the issue: a constant-0.5 function after profanity-check into the same directory reported
    profanity-check's scores."""
    options = AuditOptions(methods=["ablation", "substitution"])
    first = run_audit(demo_path(), tmp_path / "run", options, classifier=load_classifier("profanity-check")).summary
    assert any(g["score_change"]["mean"] not in (0.0, None) for g in first["groups"])
    half = as_classifier(lambda texts: np.full(len(texts), 0.5))
    with pytest.raises(ConfigError, match="holds an audit that differs in: classifier"):
        run_audit(demo_path(), tmp_path / "run", options, classifier=half)
    second = run_audit(demo_path(), tmp_path / "other", options, classifier=half).summary
    assert {g["score_change"]["mean"] for g in second["groups"]} == {0.0}
    assert second["classifier"]["spec"].endswith("<lambda>") and "Python object" in second["reproduce"]
    again = run_audit(
        demo_path(), tmp_path / "other", options, classifier=as_classifier(lambda t: np.full(len(t), 0.5))
    ).summary
    assert again["groups"] == second["groups"]  # the same function again: the run resumes


def test_an_edited_callable_file_or_scores_file_is_another_classifier(tmp_path: Path) -> None:
    code = tmp_path / "m.py"
    code.write_text("import numpy as np\ndef f(texts):\n    return np.full(len(texts), 0.1)\n")
    options = AuditOptions(methods=["ablation"], classifier=f"callable:{code}:f")
    run_audit(demo_path(), tmp_path / "run", options)
    code.write_text("import numpy as np\ndef f(texts):\n    return np.full(len(texts), 0.9)\n")
    with pytest.raises(ConfigError, match="differs in: classifier"):
        run_audit(demo_path(), tmp_path / "run", options)
    texts = pd.read_csv(demo_path())["text"].tolist()
    scores = tmp_path / "s.csv"
    pd.DataFrame({"text": texts, "score": 0.2}).to_csv(scores, index=False)
    options = AuditOptions(methods=["swap"], classifier=f"scores:{scores}", identities="muslim,christian")
    run_audit(demo_path(), tmp_path / "s", options)
    assert json.loads((tmp_path / "s" / "run.json").read_text())["classifier"]
    pd.DataFrame({"text": texts, "score": 0.7}).to_csv(scores, index=False)  # the same path, other scores
    with pytest.raises(ConfigError, match="differs in: classifier"):
        run_audit(demo_path(), tmp_path / "s", options)


def test_an_unpinnable_classifier_cannot_resume(tmp_path: Path) -> None:
    import threading

    lock = threading.Lock()

    def guarded(texts: list[str]) -> np.ndarray:
        with lock:
            return np.full(len(texts), 0.3)

    options = AuditOptions(methods=["ablation"])
    run_audit(demo_path(), tmp_path, options, classifier=as_classifier(guarded))
    with pytest.raises(ConfigError, match=r"identity cannot be pinned down .*cannot pickle"):
        run_audit(demo_path(), tmp_path, options, classifier=as_classifier(guarded))
