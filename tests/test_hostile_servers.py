"""#35 item 9: the http: classifier and the openai: client against loopback servers that answer badly — a gzip bomb,
a body larger than any answer, a slow drip, JSON nested too deeply, choices of the wrong shape. Each ends in the
client's own error naming the server, with bounded memory and time; never a raw AttributeError or RecursionError."""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from counterfair.classifiers.adapters import HTTPClassifier
from counterfair.errors import ClassifierError
from counterfair.httpjson import MAX_BODY_BYTES
from counterfair.llm.base import SamplingParams
from counterfair.llm.openai_http import LLMServerError, OpenAIHTTPLLM

from .fakes import answer_json, loopback

BOMB = gzip.compress(b"[" + b" " * (MAX_BODY_BYTES + 1024) + b"]", compresslevel=9)  # ~33 MB inflated, ~33 KB sent


class _Hostile(BaseHTTPRequestHandler):
    mode = "bomb"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if self.mode == "bomb":
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(BOMB)))
            self.end_headers()
            self.wfile.write(BOMB)
        elif self.mode == "drip":
            self.end_headers()
            try:
                for _ in range(200):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.05)
            except (BrokenPipeError, ConnectionResetError):
                return
        else:
            body = {
                "nested": b"[" * 100_000 + b"]" * 100_000,
                "string_choices": json.dumps({"choices": ["a", "b"]}).encode(),
                "mixed_index": json.dumps(
                    {"choices": [{"index": "1", "text": "b"}, {"index": 0, "text": "a"}, {"index": None, "text": "c"}]}
                ).encode(),
                "message_string": json.dumps({"choices": [{"message": "hi"}]}).encode(),
                "labels_object": json.dumps({"scores": [0.1], "labels": {"a": 1}}).encode(),
            }[self.mode]
            self.end_headers()
            self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def hostile() -> Iterator[tuple[str, type[_Hostile]]]:
    handler = type("H", (_Hostile,), {"mode": "bomb"})
    with loopback(handler) as url:
        yield url, handler


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("bomb", "answered more than 32 MB; refused"),
        ("drip", "did not finish its answer within 1 s"),
        ("nested", "nested too deeply"),
        ("labels_object", "'labels' must be a list of names"),
    ],
)
def test_the_http_classifier_refuses_bad_answers(hostile: tuple[str, type[_Hostile]], mode: str, message: str) -> None:
    url, handler = hostile
    handler.mode = mode
    with pytest.raises(ClassifierError, match=message):
        HTTPClassifier(url, timeout=1.0, retries=0).predict_proba(["a text"])


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("bomb", "answered more than 32 MB; refused"),
        ("drip", "did not finish its answer within 1 s"),
        ("nested", "nested too deeply"),
        ("string_choices", "without a list of choices"),
        ("message_string", "a choice without 'message'"),
    ],
)
def test_the_llm_client_refuses_bad_answers(hostile: tuple[str, type[_Hostile]], mode: str, message: str) -> None:
    url, handler = hostile
    handler.mode = mode
    llm = OpenAIHTTPLLM(url, timeout=1.0, retries=0, n_per_request="off")
    call = llm.chat if mode == "message_string" else llm.complete
    prompt: Any = [[{"role": "user", "content": "x"}]] if mode == "message_string" else ["x"]
    with pytest.raises(LLMServerError, match=message):
        call(prompt, SamplingParams(n=1))


def test_choices_with_odd_indexes_keep_their_order(hostile: tuple[str, type[_Hostile]]) -> None:
    url, handler = hostile
    handler.mode = "mixed_index"
    out = OpenAIHTTPLLM(url, timeout=5.0, retries=0, n_per_request="off").complete(["x"], SamplingParams(n=1))
    assert [c.text for c in out[0]] == ["b"]  # no TypeError: an index that is not a number counts as 0 (a stable sort)


class _Busy(BaseHTTPRequestHandler):
    """Scores every text 0.3, after answering the first request HTTP 429 (``Retry-After: 0``)."""

    asked: list[int] = []  # noqa: RUF012 - one list per server class made by the test

    def do_POST(self) -> None:
        texts = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))["texts"]
        self.asked.append(len(texts))
        busy = len(self.asked) == 1
        if busy:
            answer_json(self, b'{"error": "slow down"}', status=429, headers={"Retry-After": "0"})
        else:
            answer_json(self, json.dumps({"scores": [0.3] * len(texts)}).encode())

    def log_message(self, *args: Any) -> None:
        return None


def test_a_classifiers_password_and_key_leave_the_process_nowhere(tmp_path: Path) -> None:
    """#87 B4 and B12: an http: classifier whose address holds a password with "@" and a key in its query, behind a
    server that first answers HTTP 429: the run retries and finishes, and neither secret is in anything written
    (run.json, summary.json, both reports, the MLflow store: params, run name, tags, meta.yaml) or printed."""
    pytest.importorskip("mlflow")
    import pandas as pd

    from .conftest import run_cli
    from .fakes import CONTEXTS

    handler = type("B", (_Busy,), {"asked": []})
    data = tmp_path / "texts.csv"
    pd.DataFrame({"text": [c.format(t) for c in CONTEXTS[:4] for t in ("gay", "Muslim")]}).to_csv(data, index=False)
    with loopback(handler) as url:
        secret = url.replace("http://", "http://auditor:p4ss@w0rd@") + "/score?api_key=SEKRETKEY&v=1"
        done = run_cli(
            "audit", str(data), "--classifier", f"http:{secret}", "--methods", "swap", "--out", str(tmp_path / "run"),
            "--log-to", "mlflow", "--mlflow-uri", (tmp_path / "mlruns").as_uri(), "-q", cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode in (0, 1, 4), done.stdout + done.stderr
    assert handler.asked[0] >= 1 and len(handler.asked) >= 2  # the 429 was retried
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".parquet" and p.name != "texts.csv"]
    assert any(p.name == "meta.yaml" for p in written) and any(p.name == "report.html" for p in written)
    for text in (done.stdout, done.stderr, *(p.read_text(errors="replace") for p in written)):
        assert "w0rd" not in text and "p4ss" not in text and "SEKRETKEY" not in text
    assert "auditor:***@" in (tmp_path / "run" / "run.json").read_text()


class _Rot13(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        texts = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))["texts"]
        answer_json(
            self, json.dumps({"scores": [0.25] * len(texts)}).encode(), content_type="application/json; charset=rot13"
        )

    def log_message(self, *args: Any) -> None:
        return None


def test_a_server_naming_a_charset_python_cannot_decode_bytes_with_is_read_as_utf8() -> None:
    """#87 B11: ``charset=rot13`` (a codec of str to str) made the client's decode raise LookupError: exit 3."""
    with loopback(_Rot13) as url:
        assert list(HTTPClassifier(url).predict_proba(["a", "b"])) == [0.25, 0.25]
