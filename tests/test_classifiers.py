from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from counterfair.classifiers import CachedClassifier, as_proba, load_classifier
from counterfair.errors import ClassifierError, ConfigError, InputError

from .fakes import answer_json, loopback

# --------------------------------------------------------------------------- validation


def test_as_proba_binary_scores_become_two_columns() -> None:
    got = as_proba([0.2, 0.9], 2, ["a", "b"], "t")
    np.testing.assert_allclose(got, [[0.8, 0.2], [0.1, 0.9]])


def test_as_proba_keeps_nan_rows_and_rejects_bad_shapes() -> None:
    got = as_proba([[0.5, 0.5], [np.nan, 0.2]], 2, ["a", "b"], "t")
    assert np.isnan(got[1]).all()
    np.testing.assert_allclose(got[0], [0.5, 0.5])
    outside = r"1 value outside \[0, 1\] \(its values run from 0 to inf; first: text 2 of the batch"
    with pytest.raises(ClassifierError, match=outside):
        as_proba([[0.5, 0.5], [np.inf, 0.0]], 2, ["a", "b"], "t")  # infinity is out of range, not a missing score
    with pytest.raises(ClassifierError, match=r"returned shape \(3, 2\) for 2 texts"):
        as_proba(np.zeros((3, 2)), 2, ["a", "b"], "t")
    with pytest.raises(ClassifierError, match="3 scores for 2 texts"):
        as_proba([0.1, 0.2, 0.3], 2, ["a", "b"], "t")
    with pytest.raises(ClassifierError, match="one score per text but has 3 labels"):
        as_proba([0.1, 0.2], 2, ["a", "b", "c"], "t")
    with pytest.raises(ClassifierError, match="apply a softmax"):
        as_proba([[2.0, -1.0]], 1, ["a", "b"], "t")
    with pytest.raises(ClassifierError, match="not numeric"):
        as_proba([["x", "y"]], 1, ["a", "b"], "t")


class _Counting:
    labels = ("neg", "pos")

    def __init__(self) -> None:
        self.seen: list[str] = []

    def predict_proba(self, texts: Any) -> np.ndarray:
        self.seen.extend(texts)
        return np.array([0.9 if "bad" in t else 0.1 for t in texts])


def test_cache_predicts_each_distinct_text_once() -> None:
    inner = _Counting()
    clf = CachedClassifier(inner, spec="counting", batch_size=2)
    first = clf.predict_proba(["bad a", "good", "bad a", "x"])
    second = clf.predict_proba(["good", "x", "new"])
    assert inner.seen == ["bad a", "good", "x", "new"]
    np.testing.assert_allclose(first[:, 1], [0.9, 0.1, 0.9, 0.1])
    np.testing.assert_allclose(second[:, 1], [0.1, 0.1, 0.1])
    assert clf.calls == 3  # batches of 2: [bad a, good], [x], [new]
    assert clf.predict_proba([]).shape == (0, 2)


def test_cache_keeps_finished_batches_when_the_classifier_fails() -> None:
    class Flaky(_Counting):
        def predict_proba(self, texts: Any) -> np.ndarray:
            if "boom" in texts:
                raise RuntimeError("backend exploded")
            return super().predict_proba(texts)

    inner = Flaky()
    clf = CachedClassifier(inner, spec="flaky", batch_size=1)
    with pytest.raises(ClassifierError, match=r"'flaky' failed .*RuntimeError: backend exploded.*1 texts finished"):
        clf.predict_proba(["ok", "boom"])
    assert clf.cached_texts == 1
    clf.predict_proba(["ok"])
    assert inner.seen == ["ok"]  # not predicted again


def test_a_padded_model_gets_texts_of_like_length_together_and_the_answers_in_input_order() -> None:
    """#68: a model that pads each batch to its longest text (``sorts_by_length``) is handed the texts sorted by length,
    a batch cut before a text more than about half again as long as its first: a short text is never padded to a long
    one's length; results come back in the order asked."""

    class Padded(_Counting):
        sorts_by_length = True

        def __init__(self) -> None:
            super().__init__()
            self.batches: list[list[str]] = []

        def predict_proba(self, texts: Any) -> np.ndarray:
            self.batches.append(list(texts))
            return super().predict_proba(texts)

    short = [f"bad {i:02d}" for i in range(5)]  # 6 characters
    long = ["x" * 300 + str(i) for i in range(3)]  # 301
    inner = Padded()
    clf = CachedClassifier(inner, spec="padded", batch_size=4)
    texts = [long[0], short[0], short[1], long[1], short[2], short[3], long[2], short[4]]
    got = clf.predict_proba(texts)
    assert inner.batches == [short[:4], short[4:], long]  # 4 at most; no short text beside a long one
    np.testing.assert_allclose(got[:, 1], [0.1, 0.9, 0.9, 0.1, 0.9, 0.9, 0.1, 0.9])  # each text's own answer
    wide = CachedClassifier(Padded(), spec="padded", batch_size=64)
    wide.predict_proba(["y" * 2000 + str(i) for i in range(20)])  # 64 x 256 characters: 8 texts of 2,001
    assert [len(b) for b in wide.inner.batches] == [8, 8, 4]  # type: ignore[attr-defined]
    plain = _Counting()  # a model that does not pad: arrival order, batch_size at a time
    CachedClassifier(plain, spec="plain", batch_size=4).predict_proba(texts)
    assert plain.seen == texts


# --------------------------------------------------------------------------- adapters


def test_profanity_check_is_real() -> None:
    clf = load_classifier("profanity-check")
    p = clf.predict_proba(["have a lovely day", "you are a fucking idiot"])
    assert clf.labels == ["non-toxic", "toxic"]
    assert p[0, 1] < 0.2 < 0.8 < p[1, 1]
    np.testing.assert_allclose(p.sum(axis=1), 1.0)


def test_sklearn_pipeline(tmp_path: Path) -> None:
    import joblib
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    texts = ["good film", "great film", "bad film", "awful film"] * 5
    labels = ["pos", "pos", "neg", "neg"] * 5
    model = make_pipeline(CountVectorizer(), LogisticRegression()).fit(texts, labels)
    joblib.dump(model, tmp_path / "m.joblib")
    clf = load_classifier(f"sklearn:{tmp_path / 'm.joblib'}")
    assert clf.labels == ["neg", "pos"]
    p = clf.predict_proba(["great film", "awful film"])
    np.testing.assert_allclose(p, model.predict_proba(["great film", "awful film"]))
    assert clf.signature()["sha256"] is not None


def test_sklearn_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_classifier(f"sklearn:{tmp_path / 'missing.joblib'}")
    (tmp_path / "junk.joblib").write_bytes(b"not a model")
    clf = load_classifier(f"sklearn:{tmp_path / 'junk.joblib'}")
    with pytest.raises(ConfigError, match="cannot load as a scikit-learn model"):
        clf.predict_proba(["x"])


def test_hf_directory(tiny_hf_classifier_dir: Path) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    clf = load_classifier(f"hf:{tiny_hf_classifier_dir}")
    assert clf.labels == ["neg", "pos"]
    texts = ["a short text", "another one that is a little longer"]
    got = clf.predict_proba(texts)
    tok = AutoTokenizer.from_pretrained(tiny_hf_classifier_dir)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_hf_classifier_dir).eval()
    with torch.no_grad():
        expected = torch.softmax(model(**tok(texts, padding=True, return_tensors="pt")).logits, -1).numpy()
    np.testing.assert_allclose(got, expected, atol=1e-5)
    clf.predict_proba(["word " * 200])  # longer than 64 positions: truncated, counted
    assert clf.inner.truncated == 1  # type: ignore[attr-defined]
    clf.predict_proba(["word " * 62, "word " * 63, "a short one", "word " * 90])  # 62 + 2 special tokens fit
    assert clf.inner.truncated == 3  # type: ignore[attr-defined]
    slow = load_classifier(f"hf:{tiny_hf_classifier_dir}")  # a slow tokenizer keeps nothing of what it cut
    slow.inner._load()  # type: ignore[attr-defined]
    slow.inner._tokenizer = AutoTokenizer.from_pretrained(tiny_hf_classifier_dir, use_fast=False)  # type: ignore[attr-defined]
    np.testing.assert_allclose(slow.predict_proba(["word " * 63, *texts])[1:], expected, atol=1e-5)
    assert slow.inner.truncated == 1  # type: ignore[attr-defined]


def test_the_device_is_chosen_once_for_every_torch_model(
    tiny_hf_classifier_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#68: ``counterfair --device`` (``COUNTERFAIR_DEVICE``): auto takes a GPU torch sees, else the CPU; a GPU asked
    for and absent is exit 2 saying what torch sees, before the model's first prediction; a misspelt device is
    refused before any work."""
    import torch

    from counterfair.models import torch_device

    from .conftest import run_cli

    monkeypatch.delenv("COUNTERFAIR_DEVICE", raising=False)
    seen = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
    assert torch_device() == torch_device("auto") == seen and torch_device("cpu") == "cpu"
    monkeypatch.setenv("COUNTERFAIR_DEVICE", "cpu")
    assert torch_device() == "cpu"
    clf = load_classifier(f"hf:{tiny_hf_classifier_dir}")
    clf.predict_proba(["on the device the run chose"])
    assert clf.inner.device == "cpu"  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="expected auto, cpu, cuda, cuda:N or mps"):
        torch_device("gpu")
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("orig_text,gen_text\nI am a Muslim,I am a Christian\n")
    args = ["evaluate", str(pairs), "--metrics", "flip", "--classifier", f"hf:{tiny_hf_classifier_dir}", "-q"]
    bad = run_cli("--device", "gpu", *args, "--out", str(tmp_path / "a"))
    assert bad.returncode == 2 and "expected auto, cpu, cuda, cuda:N or mps" in bad.stderr
    far = run_cli("--device", "cuda:7", *args, "--out", str(tmp_path / "b"))
    if torch.cuda.device_count() < 8:
        assert far.returncode == 2 and "--device cuda:7: torch" in far.stderr and "CUDA" in far.stderr, far.stderr
    ok = run_cli("--device", "cpu", *args, "--out", str(tmp_path / "c"))
    assert ok.returncode == 0, ok.stderr


def test_dtype_runs_hf_classifiers_in_less_precision_kept_apart(
    tiny_hf_classifier_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#68: ``--dtype`` (``COUNTERFAIR_DTYPE``): float32 is today's path (signature and scores unchanged); bfloat16
    autocasts the forward pass, scores move by less than 0.05 on this tiny model but not by nothing, and its
    signature differs (no run or cached score mixes the two precisions); the summary and the page say where it ran;
    a misspelt precision is exit 2 before any work."""
    from counterfair.models import check_dtype_form

    from .conftest import run_cli

    monkeypatch.delenv("COUNTERFAIR_DTYPE", raising=False)
    monkeypatch.setenv("COUNTERFAIR_DEVICE", "cpu")
    monkeypatch.setenv("COUNTERFAIR_STORE", "off")
    texts = ["I am a Muslim and proud of it", "a short one", "the neighbours were kind to us all week long"]
    full = load_classifier(f"hf:{tiny_hf_classifier_dir}")
    p32 = full.predict_proba(texts)
    assert "dtype" not in full.signature() and full.runs_on() == "cpu in float32"
    monkeypatch.setenv("COUNTERFAIR_DTYPE", "bf16")
    half = load_classifier(f"hf:{tiny_hf_classifier_dir}")
    p16 = half.predict_proba(texts)
    assert half.signature()["dtype"] == "bfloat16" and half.identity() != full.identity()
    assert half.summary_info()["runs_on"] == "cpu in bfloat16"
    gap = float(np.max(np.abs(p16 - p32)))
    assert 0 < gap < 0.05, gap
    with pytest.raises(ConfigError, match="expected float32, bfloat16, float16"):
        check_dtype_form("float64")
    from counterfair.classifiers.remote import on_engine

    factory = on_engine(half, "ray").worker_factory  # a Ray actor builds the classifier in the driver's precision
    monkeypatch.delenv("COUNTERFAIR_DTYPE")
    assert factory is not None
    np.testing.assert_array_equal(factory()(texts), p16)
    assert "COUNTERFAIR_DTYPE" not in os.environ  # the worker's build left this process's environment as it was
    data = tmp_path / "texts.csv"
    data.write_text("text\nMy Muslim neighbour is kind.\nThe Jewish family next door cooks well.\n")
    args = ["audit", str(data), "--classifier", f"hf:{tiny_hf_classifier_dir}", "--methods", "swap", "-q"]
    bad = run_cli("--dtype", "double", *args, "--out", str(tmp_path / "bad"))
    assert bad.returncode == 2 and "--dtype 'double': expected float32, bfloat16, float16" in bad.stderr, bad.stderr
    assert not (tmp_path / "bad").exists()
    ok = run_cli("--device", "cpu", "--dtype", "bfloat16", *args, "--out", str(tmp_path / "ok"))
    assert ok.returncode == 0, ok.stderr
    summary = json.loads((tmp_path / "ok" / "summary.json").read_text())
    assert summary["classifier"]["dtype"] == "bfloat16" and summary["classifier"]["runs_on"] == "cpu in bfloat16"
    assert f"hf:{tiny_hf_classifier_dir} on cpu in bfloat16 (score" in (tmp_path / "ok" / "report.md").read_text()


def test_spacy_textcat(tmp_path: Path) -> None:
    import spacy
    from spacy.training import Example

    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    textcat = nlp.add_pipe("textcat")
    for label in ("POS", "NEG"):
        textcat.add_label(label)
    data = [("good great fine", {"POS": 1.0, "NEG": 0.0}), ("bad awful poor", {"POS": 0.0, "NEG": 1.0})] * 4
    examples = [Example.from_dict(nlp.make_doc(t), {"cats": c}) for t, c in data]
    nlp.initialize(lambda: examples)
    for _ in range(30):
        nlp.update(examples)
    nlp.to_disk(tmp_path / "tc")
    clf = load_classifier(f"spacy:{tmp_path / 'tc'}")
    assert clf.labels == ["POS", "NEG"]
    p = clf.predict_proba(["good great", "awful poor"])
    assert p[0, 0] > 0.5 > p[1, 0]
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-6)


def test_callable_module_and_file(helper_module: str, tmp_path: Path) -> None:
    clf = load_classifier(f"callable:{helper_module}:keyword")
    assert clf.labels == ["good", "bad"]
    np.testing.assert_allclose(clf.predict_proba(["awful", "nice"])[:, 1], [0.9, 0.2])
    three = load_classifier(f"callable:{helper_module}:three_way")
    p = three.predict_proba(["yes", "no"])
    assert three.labels == ["0", "1", "2"]
    np.testing.assert_allclose(p[1], [0.1, 0.3, 0.6])
    file_clf = load_classifier(f"callable:{tmp_path / 'cf_helpers.py'}:keyword")
    np.testing.assert_allclose(file_clf.predict_proba(["awful"])[:, 1], [0.9])


def test_callable_errors(helper_module: str) -> None:
    with pytest.raises(ConfigError, match="cannot import 'no_such_module_xyz'"):
        load_classifier("callable:no_such_module_xyz:f").predict_proba(["x"])
    with pytest.raises(ConfigError, match="has no function 'nope'"):
        load_classifier(f"callable:{helper_module}:nope").predict_proba(["x"])
    with pytest.raises(ClassifierError, match=r"returned shape \(2, 2\) for 1 texts"):
        load_classifier(f"callable:{helper_module}:wrong_shape").predict_proba(["x"])
    with pytest.raises(ClassifierError, match="softmax"):
        load_classifier(f"callable:{helper_module}:logits").predict_proba(["x"])


class _Handler(BaseHTTPRequestHandler):
    mode = "scores"

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        texts = body["texts"]
        if self.mode == "down":
            self.send_response(503)
            self.end_headers()
            return
        if self.mode == "redirect":
            self.send_response(307)
            self.send_header("Location", "http://elsewhere.example/predict")
            self.end_headers()
            return
        if self.mode == "garbage":
            payload = b"<html>oops</html>"
        elif self.mode == "infinity":
            payload = b'{"scores": [' + b", ".join(b"Infinity" if "buy" in t else b"0.1" for t in texts) + b"]}"
        elif self.mode == "sum18":
            payload = json.dumps({"probabilities": [[0.9, 0.9] if "buy" in t else [0.5, 0.5] for t in texts]}).encode()
        elif self.mode == "multilabel":
            payload = json.dumps(
                {"multi_label": True, "labels": ["toxic", "insult"], "probabilities": [[0.9, 0.9] for _ in texts]}
            ).encode()
        elif self.mode == "probabilities":
            payload = json.dumps(
                {"labels": ["ham", "spam"], "probabilities": [[0.3, 0.7] if "buy" in t else [0.8, 0.2] for t in texts]}
            ).encode()
        else:
            payload = json.dumps({"scores": [0.75 if "buy" in t else 0.05 for t in texts]}).encode()
        answer_json(self, payload)

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def server() -> Iterator[tuple[str, type[_Handler]]]:
    handler = type("Handler", (_Handler,), {"mode": "scores"})
    with loopback(handler) as url:
        yield f"{url}/predict", handler


def test_http_classifier(server: tuple[str, type[_Handler]]) -> None:
    url, handler = server
    clf = load_classifier(f"http:{url}")
    np.testing.assert_allclose(clf.predict_proba(["buy now", "hello"])[:, 1], [0.75, 0.05])
    handler.mode = "probabilities"
    clf2 = load_classifier(url)
    assert clf2.labels == ["ham", "spam"]
    np.testing.assert_allclose(clf2.predict_proba(["buy"])[0], [0.3, 0.7])


def test_http_classifier_failures(server: tuple[str, type[_Handler]]) -> None:
    url, handler = server
    handler.mode = "garbage"
    with pytest.raises(ClassifierError, match="did not answer JSON"):
        load_classifier(f"http:{url}").predict_proba(["x"])
    handler.mode = "down"
    clf = load_classifier(f"http:{url}")
    clf.inner.retries = 1  # type: ignore[attr-defined]
    with pytest.raises(ClassifierError, match="failed after 2 tries: HTTP 503"):
        clf.predict_proba(["x"])
    handler.mode = "redirect"
    with pytest.raises(ClassifierError, match=r"HTTP 307, a redirect to http://elsewhere.example/predict"):
        load_classifier(f"http:{url}").predict_proba(["x"])
    handler.mode = "infinity"
    outside = r"1 value outside \[0, 1\] \(its values run from 0.1 to inf; first: text 2 of the batch"
    with pytest.raises(ClassifierError, match=outside):
        load_classifier(f"http:{url}").predict_proba(["hello", "buy now"])
    handler.mode = "sum18"
    with pytest.raises(ClassifierError, match=r"text 2 of the batch sum to 1.8, not 1 \(1 rows like it\)"):
        load_classifier(f"http:{url}").predict_proba(["hello", "buy now"])
    handler.mode = "multilabel"  # declared multi-label rows need not sum to 1
    np.testing.assert_allclose(load_classifier(f"http:{url}").predict_proba(["buy"]), [[0.9, 0.9]])
    dead = load_classifier("http:127.0.0.1:9")  # nothing listens on the discard port
    dead.inner.retries = 0  # type: ignore[attr-defined]
    with pytest.raises(ClassifierError, match="failed after 1 tries"):
        dead.predict_proba(["x"])


def test_scores_file(tmp_path: Path) -> None:
    path = tmp_path / "scores.csv"
    path.write_text('text,score\n"I am a gay man.",0.95\nhello,0.01\n', encoding="utf-8")
    clf = load_classifier(f"scores:{path}")
    p = clf.predict_proba(["I am a gay man.", "hello", "never scored"])
    np.testing.assert_allclose(p[:2, 1], [0.95, 0.01])
    assert np.isnan(p[2]).all()  # no made-up score
    assert clf.inner.missing == 1  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("text\nx\n", "missing column 'score'"),
        ("text,score\nx,high\n", "row 2: score 'high' is not a number"),
        ("text,score\nx,1.5\n", r"row 2: score '1.5' is not in \[0, 1\]"),
        ("text,score\nx,0.1\ny,0.2\nx,0.3\n", "rows 2 and 4 give the same text different scores"),
        ("text,score\n,0.1\n", "row 2 has no text"),
    ],
)
def test_scores_file_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "s.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        load_classifier(f"scores:{path}").predict_proba(["x"])


def test_unknown_specs() -> None:
    with pytest.raises(ConfigError, match="unknown classifier spec 'perspective'"):
        load_classifier("perspective")
    with pytest.raises(ConfigError, match="unknown classifier kind 'torch'"):
        load_classifier("torch:/x")
    with pytest.raises(ConfigError, match="not a transformers directory"):
        load_classifier("hf:/nonexistent")


class _LogprobLLM:
    """An LLM whose backend gives first-token log-probabilities, fixed per text."""

    model_id = "logprob-fake"

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.asked: list[list[str]] = []

    def answer_logprobs(self, conversations: Any, answers: Any) -> list[list[float]]:
        self.asked.append(list(answers))
        return [self.table[c[-1]["content"].rsplit("Comment: ", 1)[1]] for c in conversations]

    def info(self) -> dict[str, Any]:
        return {"backend": "fake"}


def test_llm_classifier_from_first_token_logprobs() -> None:
    import math

    from counterfair.classifiers.llm import LLMClassifier

    # spellings in order no, No, yes, Yes: P(no-answer) = 0.5 + 0.1, P(yes-answer) = 0.2 + 0.1 -> 0.6/0.9, 0.3/0.9
    llm = _LogprobLLM({"a": [math.log(0.5), math.log(0.1), math.log(0.2), math.log(0.1)], "b": [-math.inf] * 4})
    clf = LLMClassifier(llm)  # type: ignore[arg-type]
    proba = clf.predict_proba(["a", "b"])
    assert clf.mode == "logprobs" and llm.asked == [["no", "No", "yes", "Yes"]]
    assert proba[0].tolist() == pytest.approx([2 / 3, 1 / 3])
    assert np.isnan(proba[1]).all()  # neither answer among the likely first tokens: no score, not a guess


def test_llm_classifier_from_samples_where_no_logprobs() -> None:
    from counterfair.classifiers.llm import LLMClassifier
    from tests.fakes import ScriptedLLM

    replies = {"x": ["yes", "No.", "maybe", "Yes, it is"], "y": ["hmm"] * 4}
    llm = ScriptedLLM(lambda text, attempt, i: replies[text][i], judge=None)
    llm._text_of = lambda messages: messages[-1]["content"].rsplit("Comment: ", 1)[1]  # type: ignore[method-assign]
    clf = LLMClassifier(llm, samples=4)  # type: ignore[arg-type]
    proba = clf.predict_proba(["x", "y"])
    assert clf.mode == "samples" and clf.labels == ("non-toxic", "toxic")
    assert proba[0].tolist() == pytest.approx([1 / 3, 2 / 3])  # 1 no, 2 yes, "maybe" not counted
    assert np.isnan(proba[1]).all()


def test_llm_classifier_reads_top_logprobs_from_a_server() -> None:
    import math

    class Server(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            assert body["logprobs"] is True and body["max_tokens"] == 1
            toxic = "idiot" in body["messages"][-1]["content"]
            top = [{"token": "Yes", "logprob": math.log(0.9 if toxic else 0.2)},
                   {"token": "No", "logprob": math.log(0.1 if toxic else 0.8)}]  # fmt: skip
            choice = {"message": {"content": "Yes"}, "logprobs": {"content": [{"token": "Yes", "top_logprobs": top}]}}
            payload = json.dumps({"choices": [choice]}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            return None

    with loopback(Server) as url:
        clf = load_classifier(f"llm-classifier:openai:{url}/v1")
        proba = clf.predict_proba(["you idiot", "nice day"])
        assert proba[:, 1].tolist() == pytest.approx([0.9, 0.2])
        assert clf.store is None  # a server's model can change behind its URL: not cached across runs


def test_progress_counts_texts_already_scored() -> None:
    """#31: ctf's classifier bar stayed at 0/1697 when every text came from the cache: known texts count as done."""
    from counterfair.classifiers import as_classifier

    clf = as_classifier(lambda texts: [0.5] * len(texts), labels=["no", "yes"], batch_size=2)
    done: list[int] = []
    clf.predict_proba(["a", "b", "c"], on_batch=done.append)
    assert done == [2, 1]
    done.clear()
    clf.predict_proba(["a", "b", "c", "d", "a"], on_batch=done.append)  # three known, one new, a duplicate
    assert done == [3, 1] and sum(done) == len({"a", "b", "c", "d"})


def test_a_bare_path_gets_the_spec_it_most_likely_means(tmp_path: Path) -> None:
    """#49 item 2: `--classifier model.joblib` answered that it needs counterfair[metrics] (2.2 GB to follow)."""
    from counterfair.needs import classifier_extras

    hf_dir = tmp_path / "bert"
    hf_dir.mkdir()
    (hf_dir / "config.json").write_text("{}")
    for given, meant in (
        ("model.joblib", "sklearn:model.joblib"),
        ("scores.csv", "scores:scores.csv"),
        ("mine.py", "callable:mine.py:FUNCTION"),
        (str(hf_dir), f"hf:{hf_dir}"),
    ):
        assert classifier_extras(given) == ()  # no extra is asked for before the spec is understood
        with pytest.raises(ConfigError, match=re.escape(f"did you mean {meant}")):
            load_classifier(given)
    with pytest.raises(ConfigError, match="use one of: profanity-check"):
        load_classifier("no-such-thing")


def test_a_missing_extra_that_needs_torch_says_to_pin_it_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """#49 item 3: the pip line lacked the torch pin that avoids several GB of CUDA packages."""
    from counterfair import extras

    real = extras._importable
    monkeypatch.setattr(extras, "_importable", lambda module: module != "torch" and real(module))
    err = extras.MissingExtra({"metrics": ["classifier 'hf:x'"]})
    assert "install it with: pip install torch==2.13.0 && pip install 'counterfair[metrics]'" in str(err)
    assert "needs counterfair[metrics] (the extra for perplexity" in str(err)
    assert extras.pip_line(["rate"]) == "pip install 'counterfair[rate]'"  # no torch in the rating app


def test_booleans_are_no_probabilities() -> None:
    """#87 B12: a classifier (or an http: server's JSON) answering true/false was read as 1.0 and 0.0."""
    for raw in ([0.2, True], [True, False], np.array([True, False]), [[False, True], [0.5, 0.5]]):
        with pytest.raises(ClassifierError, match="returned booleans"):
            as_proba(raw, 2, ["0", "1"], "mine")
    assert as_proba([0.0, 1.0], 2, ["0", "1"], "mine")[:, 1].tolist() == [0.0, 1.0]


def test_a_gpu_asked_for_and_absent_is_refused_whatever_the_classifier(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#87 B12: ``--device cuda`` with a callable: classifier exited 0 on a machine with no GPU (the device asked for
    was ignored in silence); a bad ``COUNTERFAIR_DEVICE`` was reported as ``--device``."""
    import torch

    from .conftest import run_cli

    clf = tmp_path / "clf.py"
    clf.write_text("def score(texts):\n    return [0.3 for _ in texts]\n")
    data = tmp_path / "t.csv"
    data.write_text("text\nMy gay neighbour waved.\nSome people are straight.\n")
    args = ["audit", str(data), "--classifier", f"callable:{clf}:score", "--methods", "swap", "-q"]
    if not torch.cuda.is_available():
        done = run_cli("--device", "cuda", *args, "--out", str(tmp_path / "a"))
        assert done.returncode == 2 and "--device cuda: torch" in done.stderr and "no CUDA device" in done.stderr
        assert not (tmp_path / "a").exists()
    monkeypatch.setenv("COUNTERFAIR_DEVICE", "gpu0")
    done = run_cli(*args, "--out", str(tmp_path / "b"))
    assert done.returncode == 2 and "COUNTERFAIR_DEVICE='gpu0' (in the environment)" in done.stderr


def test_a_module_in_the_working_directory_is_found_and_ranges_are_said_as_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#83 item 4: ``callable:myclf:fn`` with myclf.py where the user stands failed to import (a console script's
    path holds its own folder); a value outside [0, 1] is reported with the real range and a hint that suits it."""
    import sys

    (tmp_path / "myclf_here.py").write_text(
        "def score(texts):\n    return [0.25 for _ in texts]\n\n"
        "def compound(texts):\n    return [-0.5 if 'bad' in t else 0.8 for t in texts]\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    monkeypatch.chdir(tmp_path)
    clf = load_classifier("callable:myclf_here:score")
    np.testing.assert_allclose(clf.predict_proba(["x"])[:, 1], [0.25])
    with pytest.raises(ClassifierError) as raised:
        load_classifier("callable:myclf_here:compound").predict_proba(["good", "bad one", "bad two"])
    said = str(raised.value)
    assert "2 values outside [0, 1]" in said and "from -0.5 to 0.8" in said and "(score + 1) / 2" in said
    with pytest.raises(ConfigError, match=r"FILE\.py:FUNCTION"):
        load_classifier("callable:not_here_either:f").predict_proba(["x"])


def test_vader_needs_its_lexicon_alone_and_every_kind_is_documented(monkeypatch: pytest.MonkeyPatch) -> None:
    """#83 item 2: ``--classifier vader`` asked for the whole metrics extra (torch, transformers, ...) where only
    vaderSentiment is imported; an extra is now checked for the modules a choice imports. Every classifier kind the
    registry holds has its row in docs/reference/classifiers.md (vader had none)."""
    from counterfair import extras
    from counterfair.classifiers.kinds import spec_forms
    from counterfair.extras import MissingExtra
    from counterfair.needs import classifier_extras

    monkeypatch.setattr(extras, "_importable", lambda module: module == "vaderSentiment")  # no torch here
    extras.check([("classifier 'vader'", classifier_extras("vader"))])
    with pytest.raises(MissingExtra, match=r"counterfair\[metrics\]"):
        extras.check([("classifier 'hf:DIR'", classifier_extras("hf:some/dir"))])
    monkeypatch.setattr(extras, "_importable", lambda module: False)
    with pytest.raises(MissingExtra, match="classifier 'vader' needs counterfair"):
        extras.check([("classifier 'vader'", classifier_extras("vader"))])
    with pytest.raises(KeyError, match="no module"):
        extras.check([("x", ("metrics:nonesuch",))])
    page = (Path(__file__).resolve().parents[1] / "docs" / "reference" / "classifiers.md").read_text()
    for form in spec_forms().split(", "):
        assert f"| `{form.split(':')[0]}" in page, form
