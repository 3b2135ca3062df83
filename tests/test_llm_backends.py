from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from counterfair.errors import ConfigError
from counterfair.llm import SamplingParams, load_llm
from counterfair.llm.hf import TransformersLLM
from counterfair.llm.openai_http import LLMServerError, OpenAIHTTPLLM


def test_load_llm_specs() -> None:
    assert type(load_llm("qwen2.5-coder-0.5b-instruct")).__name__ == "LlamaCppLLM"
    assert type(load_llm("http://127.0.0.1:1/v1")).__name__ == "OpenAIHTTPLLM"
    assert isinstance(load_llm("openai:http://h:8000#qwen"), OpenAIHTTPLLM)
    with pytest.raises(ConfigError, match="unknown LLM backend 'gpt'"):
        load_llm("gpt:4")


def test_transformers_prefix_reuse_gives_the_same_samples(tiny_lm_dir: Path) -> None:
    prefix = "one two three four five six seven eight nine ten " * 3
    prompts = [prefix + "alpha beta", prefix + "gamma delta epsilon"]
    params = SamplingParams(n=3, temperature=1.0, top_k=40, max_tokens=6, seed=11)
    reuse = TransformersLLM(str(tiny_lm_dir), reuse_prefix=True)
    fresh = TransformersLLM(str(tiny_lm_dir), reuse_prefix=False)
    a, b = reuse.complete(prompts, params), fresh.complete(prompts, params)
    assert [[c.text for c in x] for x in a] == [[c.text for c in x] for x in b]
    assert len(a) == 2 and all(len(x) == 3 for x in a)
    assert len({c.text for c in a[0]}) > 1  # different seeds, different samples
    assert reuse.prompt_tokens_run < fresh.prompt_tokens_run  # the shared prefix ran once
    with pytest.raises(ConfigError, match="no chat template"):
        reuse.chat([[{"role": "user", "content": "hi"}]], params)


class _Server(BaseHTTPRequestHandler):
    mode = "ok"
    seen: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append({"path": self.path, **body})
        if self.mode == "slow":
            time.sleep(1.5)
        if self.mode == "down":
            self.send_response(502)
            self.end_headers()
            return
        if self.mode == "garbage":
            payload = b"not json at all"
        elif self.path.endswith("/chat/completions"):
            text = body["messages"][-1]["content"].upper()
            payload = json.dumps(
                {"choices": [{"message": {"content": "{" + text + "}"}, "finish_reason": "stop"}]}
            ).encode()
        else:
            payload = json.dumps(
                {"choices": [{"text": f"seed={body.get('seed')}", "finish_reason": "length"}]}
            ).encode()
        self.send_response(200)
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def server() -> Iterator[tuple[str, type[_Server]]]:
    handler = type("H", (_Server,), {"mode": "ok", "seen": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", handler
    httpd.shutdown()


def test_openai_http_client(server: tuple[str, type[_Server]]) -> None:
    url, handler = server
    llm = OpenAIHTTPLLM(url, model="m")
    out = llm.complete(["hello"], SamplingParams(n=2, seed=5, max_tokens=7, top_k=40))
    assert [c.text for c in out[0]] == ["seed=5", "seed=6"]
    assert out[0][0].finish_reason == "length"
    first = handler.seen[0]
    assert first["path"] == "/v1/completions" and first["top_k"] == 40 and first["max_tokens"] == 7
    chat = llm.chat([[{"role": "user", "content": "abc"}]], SamplingParams(n=1))
    assert chat[0][0].text == "{ABC}"


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("down", "failed after 2 tries: HTTP 502"),
        ("garbage", "not JSON"),
        ("slow", "no answer within 1 s"),
    ],
)
def test_openai_http_failures(server: tuple[str, type[_Server]], mode: str, message: str) -> None:
    url, handler = server
    handler.mode = mode
    llm = OpenAIHTTPLLM(url, timeout=1.0, retries=1)
    with pytest.raises(LLMServerError, match=message):
        llm.complete(["x"], SamplingParams())


def test_openai_http_nothing_listening() -> None:
    llm = OpenAIHTTPLLM("http://127.0.0.1:9/v1", retries=0, timeout=2.0)
    with pytest.raises(LLMServerError, match="cannot connect"):
        llm.chat([[{"role": "user", "content": "x"}]], SamplingParams())


def test_llamacpp_threads_default_to_the_usable_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    from counterfair.llm.llamacpp import LlamaCppLLM, default_threads

    monkeypatch.delenv("COUNTERFAIR_LLM_THREADS", raising=False)
    assert LlamaCppLLM().n_threads == len(os.sched_getaffinity(0))
    assert LlamaCppLLM(n_threads=1).n_threads == 1
    monkeypatch.setenv("COUNTERFAIR_LLM_THREADS", "3")
    assert default_threads() == 3
    monkeypatch.setenv("COUNTERFAIR_LLM_THREADS", "many")
    with pytest.raises(ConfigError, match="COUNTERFAIR_LLM_THREADS"):
        default_threads()


def test_ray_workers_limit_llama_threads_to_their_share(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from counterfair.engine import _limit_threads
    from counterfair.llm.llamacpp import LlamaCppLLM

    monkeypatch.setenv("COUNTERFAIR_LLM_THREADS", "")  # restored after the test
    torch_threads = torch.get_num_threads()
    try:
        _limit_threads(1)
        assert LlamaCppLLM().n_threads == 1
    finally:
        torch.set_num_threads(torch_threads)
