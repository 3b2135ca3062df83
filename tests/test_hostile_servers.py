"""#35 item 9: the http: classifier and the openai: client against loopback servers that answer badly — a gzip bomb,
a body larger than any answer, a slow drip, JSON nested too deeply, choices of the wrong shape. Each ends in the
client's own error naming the server, with bounded memory and time; never a raw AttributeError or RecursionError."""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from counterfair.classifiers.adapters import HTTPClassifier
from counterfair.errors import ClassifierError
from counterfair.httpjson import MAX_BODY_BYTES
from counterfair.llm.base import SamplingParams
from counterfair.llm.openai_http import LLMServerError, OpenAIHTTPLLM

from .fakes import loopback

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
