"""Perplexity against an independent, unbatched computation on a small real LM."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from counterfair.metrics.perplexity import PerplexityScorer, plan_windows


def _manual_nll(model_dir: Path, ids: list[int], starts: dict[int, int]) -> tuple[float, int]:
    """Sum of -log p(ids[j] | ids[starts[j]:j]) computed one target at a time, no batching or padding."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    total = 0.0
    with torch.no_grad():
        for j, start in starts.items():
            context = torch.tensor([ids[start:j]])
            logits = model(input_ids=context).logits[0, -1]
            total -= float(torch.log_softmax(logits.double(), dim=-1)[ids[j]])
    return total, len(starts)


def test_matches_manual_computation_with_padding(tiny_lm_dir: Path) -> None:
    from transformers import AutoTokenizer

    texts = ["a short one", "a somewhat longer sentence that needs padding in its batch", "x"]
    scorer = PerplexityScorer(str(tiny_lm_dir), token_budget=64)
    result = scorer.score(texts)
    tok = AutoTokenizer.from_pretrained(tiny_lm_dir)
    for i, text in enumerate(texts):
        ids = tok(text)["input_ids"]
        nll, n = _manual_nll(tiny_lm_dir, ids, {j: 0 for j in range(1, len(ids))})
        assert result.n_tokens[i] == n
        assert result.nll[i] == pytest.approx(nll, rel=1e-4)
        assert result.perplexity[i] == pytest.approx(math.exp(nll / n), rel=1e-4)
        assert result.reason[i] is None


def test_batch_composition_does_not_change_values(tiny_lm_dir: Path) -> None:
    texts = [f"sentence number {i} " * (i + 1) for i in range(6)]
    together = PerplexityScorer(str(tiny_lm_dir), token_budget=512).score(texts).perplexity
    alone = [PerplexityScorer(str(tiny_lm_dir), token_budget=8).score([t]).perplexity[0] for t in texts]
    np.testing.assert_allclose(together, alone, rtol=1e-4)


def test_sliding_window_by_hand(tiny_lm_dir: Path) -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_lm_dir)
    text = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
    ids = tok(text)["input_ids"]
    assert len(ids) == 18  # [CLS] + 16 words + [SEP]
    # window 8, stride 4: windows [0,8) [4,12) [8,16) [12,18). Tokens 1-7 see context from 0, 8-11 from 4,
    # 12-15 from 8, 16-17 from 12.
    starts = {j: 0 for j in range(1, 8)} | {j: 4 for j in range(8, 12)}
    starts |= {j: 8 for j in range(12, 16)} | {j: 12 for j in range(16, 18)}
    nll, n = _manual_nll(tiny_lm_dir, ids, starts)
    result = PerplexityScorer(str(tiny_lm_dir), window=8, stride=4).score([text])
    assert result.n_tokens[0] == n == 17
    assert result.nll[0] == pytest.approx(nll, rel=1e-4)


def test_long_text_is_never_truncated(tiny_lm_dir: Path) -> None:
    # max_position_embeddings of the tiny LM is 256: a 400-token text goes through the sliding window
    text = " ".join(["word"] * 400)
    result = PerplexityScorer(str(tiny_lm_dir)).score([text])
    assert result.n_tokens[0] == 401  # 400 words + [SEP], every one scored
    assert np.isfinite(result.perplexity[0])


def test_empty_and_too_long_texts_get_reasons(tiny_lm_dir: Path) -> None:
    result = PerplexityScorer(str(tiny_lm_dir), max_tokens=50).score(["   ", "fine text", "w " * 100])
    assert math.isnan(result.perplexity[0])
    assert "empty" in (result.reason[0] or "")
    assert np.isfinite(result.perplexity[1])
    assert result.reason[1] is None
    assert math.isnan(result.perplexity[2])
    assert result.reason[2] == "too long: 101 tokens > max_tokens 50 (raise --ppl-max-tokens)"


def test_invalid_options() -> None:
    with pytest.raises(ValueError, match="stride"):
        PerplexityScorer(window=8, stride=8)
    with pytest.raises(ValueError, match="positive"):
        PerplexityScorer(max_tokens=0)


@given(n=st.integers(min_value=2, max_value=300), window=st.integers(min_value=2, max_value=64), data=st.data())
def test_plan_windows_scores_every_position_once(n: int, window: int, data: st.DataObject) -> None:
    stride = data.draw(st.integers(min_value=1, max_value=window - 1))
    scored: list[int] = []
    for begin, end, score_from in plan_windows(n, window=window, stride=stride):
        assert end - begin <= window
        assert begin < score_from <= end  # each scored token has at least one token of context
        scored.extend(range(score_from, end))
    assert scored == list(range(1, n))


@pytest.mark.model
def test_gemma_prefers_fluent_text_and_is_batch_invariant() -> None:
    scorer = PerplexityScorer()  # gemma-3-270m, from its package
    fluent = "The weather was lovely, so we walked along the river after lunch."
    scrambled = "River lunch the lovely after walked, along so weather we was the."
    batched = scorer.score([fluent, scrambled])
    single = scorer.score([fluent])
    assert batched.perplexity[0] < batched.perplexity[1] / 5
    assert batched.perplexity[0] == pytest.approx(single.perplexity[0], rel=1e-3)
    sig = scorer.signature()
    assert sig["model"] == "gemma-3-270m"
    assert sig["model_sha256"] == "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"


def test_chunked_vocabulary_loss_equals_the_whole_logits(tiny_lm_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """#36: the loss over scored positions only, a few rows of vocabulary logits at a time (bounded memory), gives
    the values of the whole-logits path."""
    from counterfair.metrics import perplexity as module

    texts = ["the cat sat on the mat", "a dog", "w " * 40, "fine text with several words in it"]
    chunked = module.PerplexityScorer(str(tiny_lm_dir), token_budget=64, use_store=False)
    assert module._body_and_head(chunked.lm().model)[0] is not None  # the tiny LM takes the chunked path
    monkeypatch.setattr(module, "LOGIT_CHUNK", 3)
    small_chunks = chunked.score(texts).perplexity
    monkeypatch.setattr(module, "_body_and_head", lambda model: (None, None))
    whole = module.PerplexityScorer(str(tiny_lm_dir), token_budget=64, use_store=False).score(texts).perplexity
    np.testing.assert_allclose(small_chunks, whole, rtol=1e-5)
