"""BERTScore through bert-score, checked against a direct computation of its definition."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from counterfair.metrics.bertscore import BERTScoreScorer

from .conftest import minilm_dir

pytestmark = pytest.mark.model


def _by_definition(candidate: str, reference: str) -> tuple[float, float, float]:
    """Greedy cosine matching of layer-6 MiniLM token embeddings (Zhang et al. 2020).

    As in bert-score: [CLS] and [SEP] get weight 0 in the averages but stay in the matrix, so another token's
    best match may be one of them.
    """
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(minilm_dir())
    model = AutoModel.from_pretrained(minilm_dir()).eval()

    def embed(text: str) -> torch.Tensor:
        enc = tok(text, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**enc, output_hidden_states=True).hidden_states[6][0]
        return hidden / hidden.norm(dim=-1, keepdim=True)

    c, r = embed(candidate), embed(reference)
    sim = c @ r.T
    precision = float(sim.max(dim=1).values[1:-1].mean())  # average over real tokens only
    recall = float(sim.max(dim=0).values[1:-1].mean())
    return precision, recall, 2 * precision * recall / (precision + recall)


def test_matches_definition() -> None:
    cands = ["The referee was a complete novice.", "I loved the soup."]
    refs = ["The referee was a complete idiot and ruined the match.", "I loved the soup, but the bread was stale."]
    got = BERTScoreScorer().score(cands, refs)
    for i in range(2):
        p, r, f = _by_definition(cands[i], refs[i])
        assert got.precision[i] == pytest.approx(p, abs=1e-4)
        assert got.recall[i] == pytest.approx(r, abs=1e-4)
        assert got.f1[i] == pytest.approx(f, abs=1e-4)
    # a candidate that is a shortened reference: each of its tokens has a close match -> P > R
    assert got.precision[1] > got.recall[1]
    assert not got.truncated.any()


def test_identical_texts_score_one_and_long_texts_are_flagged() -> None:
    long_text = "word " * 600
    got = BERTScoreScorer().score(["same words here", long_text], ["same words here", long_text])
    np.testing.assert_allclose([got.precision[0], got.recall[0], got.f1[0]], 1.0, atol=1e-5)
    assert got.truncated.tolist() == [False, True]


def test_scorer_is_loaded_once() -> None:
    a, b = BERTScoreScorer(), BERTScoreScorer()
    assert a.scorer() is b.scorer()
    sig = a.signature()
    assert sig["model"] == "all-minilm-l6-v2"
    assert sig["num_layers"] == 6
    assert sig["rescale_with_baseline"] is False
