from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pytest

from counterfair.errors import ConfigError
from counterfair.llm import SamplingParams, load_llm
from counterfair.llm.hf import TransformersLLM
from counterfair.llm.openai_http import LLMServerError, OpenAIHTTPLLM

from .fakes import loopback


def test_load_llm_specs() -> None:
    assert type(load_llm("qwen2.5-coder-0.5b-instruct")).__name__ == "LlamaCppLLM"
    assert type(load_llm("http://127.0.0.1:1/v1")).__name__ == "OpenAIHTTPLLM"
    assert isinstance(load_llm("openai:http://h:8000#qwen"), OpenAIHTTPLLM)
    with pytest.raises(ConfigError, match="unknown LLM backend 'gpt' in 'gpt:4'; use llamacpp:, openai:, hf:"):
        load_llm("gpt:4")


class _Echo:
    """A backend of one's own: answers each conversation with its last message, reversed, n times."""

    model_id = "echo"

    def __init__(self, rest: str) -> None:
        self.rest = rest

    def chat(self, conversations: Any, params: SamplingParams) -> list[list[Any]]:
        from counterfair.llm import Completion

        return [[Completion(c[-1]["content"][::-1], "stop") for _ in range(params.n)] for c in conversations]

    def info(self) -> dict[str, Any]:
        return {"backend": "echo", "rest": self.rest}


def test_an_llm_backend_is_one_registry_entry() -> None:
    """#70: a backend is a registry entry (as a classifier kind is): registered, every command that takes an LLM
    spec can name it (here load_llm and llm-audit's generator), and what the commands ask of a backend (in this
    process? a server?) is its entry's, not its class name."""
    import counterfair as cf
    from counterfair.commands.llm_audit.generators import _is_server, load_generator
    from counterfair.llm import LLMBackend, llm_backends, register_llm_backend, unregister_llm_backend

    register_llm_backend(LLMBackend("echo", lambda rest, options: _Echo(rest), "echoes", in_process=True))  # type: ignore[arg-type,return-value]
    try:
        assert isinstance(load_llm("echo:anything"), _Echo) and load_llm("echo:x").rest == "x"  # type: ignore[attr-defined]
        assert list(llm_backends()) == ["llamacpp", "openai", "hf", "echo"]
        with pytest.raises(ConfigError, match="already registered"):
            register_llm_backend(LLMBackend("echo", lambda rest, options: _Echo(rest), "again"))  # type: ignore[arg-type,return-value]
        gen = load_generator("echo:m", grammar='root ::= "x"')
        assert gen.grammar == 'root ::= "x"'  # type: ignore[attr-defined]  # in process: its samples held to it
        assert _is_server("openai:http://h/v1#m") and not _is_server("echo:m") and not _is_server("callable:f.py:g")
        with pytest.raises(ConfigError, match="--timeout and --retries are for an openai"):
            load_generator("echo:m", timeout=5)
        result = cf.llm_audit(["A {group} applicant applies."], "echo:m", samples=2, bootstrap=50, few_prompts=True)
        assert result.summary.responses == 55 * 2 and result.summary.generator["model"] == "echo"  # 55 variants
    finally:
        unregister_llm_backend("echo")
    with pytest.raises(ConfigError, match="unknown LLM backend 'echo'"):
        load_llm("echo:x")


def test_transformers_prefix_reuse_gives_the_same_samples(tiny_lm_dir: Path) -> None:
    prefix = "one two three four five six seven eight nine ten " * 3
    prompts = [prefix + "alpha beta", prefix + "gamma delta epsilon"]
    params = SamplingParams(n=3, temperature=1.0, top_k=40, max_tokens=6, seed=11)
    reuse = TransformersLLM(str(tiny_lm_dir), reuse_prefix=True, parallel=1)  # one sequence at a time
    fresh = TransformersLLM(str(tiny_lm_dir), reuse_prefix=False, parallel=1)
    a, b = reuse.complete(prompts, params), fresh.complete(prompts, params)
    assert [[c.text for c in x] for x in a] == [[c.text for c in x] for x in b]
    assert len(a) == 2 and all(len(x) == 3 for x in a)
    assert len({c.text for c in a[0]}) > 1  # different seeds, different samples
    assert reuse.prompt_tokens_run < fresh.prompt_tokens_run  # the shared prefix ran once
    with pytest.raises(ConfigError, match="no chat template"):
        reuse.chat([[{"role": "user", "content": "hi"}]], params)


def test_transformers_batched_sampling_gives_each_text_its_own_samples(tiny_lm_dir: Path) -> None:
    """#68: the hf: backend samples every prompt's n samples together (prompts left-padded, each prompt run once,
    finished sequences dropped); each sample draws from its own generator, so the candidates are those of sampling one
    at a time, whichever texts share the batch, with stop strings and greedy decoding as before."""
    prefix = "one two three four five six seven eight nine ten " * 3
    prompts = [prefix + "alpha beta", "short", prefix + "gamma delta epsilon", "a b c d e f g"]
    params = SamplingParams(n=4, temperature=1.0, top_k=40, max_tokens=8, seed=11)

    def texts(llm: TransformersLLM, these: list[str], how: SamplingParams) -> list[list[tuple[str, str]]]:
        return [[(c.text, c.finish_reason) for c in x] for x in llm.complete(these, how)]

    one = TransformersLLM(str(tiny_lm_dir), parallel=1)
    batched = TransformersLLM(str(tiny_lm_dir), parallel=16)
    expected = texts(one, prompts, params)
    assert texts(batched, prompts, params) == expected and len({t for x in expected for t, _ in x}) >= 12
    assert texts(TransformersLLM(str(tiny_lm_dir), parallel=4), prompts, params) == expected  # one prompt a batch
    assert texts(batched, prompts[2:], params) == expected[2:]  # other neighbours, the same samples
    assert batched.prompt_tokens_run < 2 * one.prompt_tokens_run  # a prompt ran once for its 4 samples
    greedy = SamplingParams(n=2, temperature=0, max_tokens=6)
    assert texts(batched, prompts, greedy) == texts(one, prompts, greedy)
    stop = expected[0][0][0].split()[1][:3]  # a piece of the first sample's second word: it stops there
    stopped = SamplingParams(n=4, temperature=1.0, top_k=40, max_tokens=8, seed=11, stop=(stop,))
    got = texts(batched, prompts, stopped)
    assert got == texts(one, prompts, stopped) and got[0][0] == (expected[0][0][0].split(stop)[0], "stop")
    assert batched.info()["parallel"] == 16


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
    with loopback(handler) as url:
        yield url, handler


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
    from counterfair.llm.base import default_threads
    from counterfair.llm.llamacpp import LlamaCppLLM

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


class _Recording(BaseHTTPRequestHandler):
    """A server that answers after ``delay`` seconds and records how many requests were in flight at once.
    ``n_ok``: it honours ``n``; prompts containing "bad" always fail (HTTP 500), "flaky" fails once (503)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    delay = 0.2
    n_ok = False
    lock = threading.Lock()
    in_flight = 0
    peak = 0
    barrier: threading.Barrier | None = None  # when set, a request is answered only once that many are in flight
    seen: ClassVar[list[dict[str, Any]]] = []

    def _answer(self, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        cls = type(self)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with cls.lock:
            cls.in_flight += 1
            cls.peak = max(cls.peak, cls.in_flight)
            cls.seen.append(body)
            flaky_before = sum("flaky" in b["prompt"] for b in cls.seen) > 1
        time.sleep(cls.delay)
        if cls.barrier is not None:
            try:
                cls.barrier.wait(timeout=10)
            except threading.BrokenBarrierError:
                return self._answer(500, {"error": "fewer requests in flight than the barrier waits for"})
        with cls.lock:
            cls.in_flight -= 1
        prompt = body["prompt"]
        if "bad" in prompt:
            return self._answer(500, {"error": "boom"})
        if "flaky" in prompt and not flaky_before:
            return self._answer(503, {"error": "busy"})
        n = body.get("n", 1) if cls.n_ok else 1
        seed = body.get("seed")
        choices = [{"index": i, "text": f"{prompt}:{seed}:{i}", "finish_reason": "stop"} for i in range(n)]
        return self._answer(200, {"choices": choices})

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def recording() -> Iterator[tuple[str, type[_Recording]]]:
    handler = type("R", (_Recording,), {"seen": [], "in_flight": 0, "peak": 0, "lock": threading.Lock()})
    with loopback(handler) as url:
        yield url, handler


def test_http_client_keeps_requests_in_flight_and_answers_in_order(recording: tuple[str, type[_Recording]]) -> None:
    url, handler = recording
    handler.delay, handler.barrier = 0.0, threading.Barrier(8)  # each answer waits until 8 requests are in flight
    llm = OpenAIHTTPLLM(url, concurrency=8, n_per_request="off", retries=0)
    prompts = ["p0", "p1", "p2", "p3"]
    out = llm.complete(prompts, SamplingParams(n=4, seed=10))  # a client with fewer in flight fails here
    assert len(handler.seen) == 16  # one request per sample, in two full rounds of 8
    assert handler.peak == 8  # never more than the concurrency
    assert [[c.text for c in row] for row in out] == [[f"{p}:{10 + i}:0" for i in range(4)] for p in prompts]


def test_http_client_asks_n_samples_in_one_request_where_the_server_can(
    recording: tuple[str, type[_Recording]],
) -> None:
    url, handler = recording
    handler.n_ok, handler.delay = True, 0.0
    llm = OpenAIHTTPLLM(url)
    out = llm.complete(["a", "b", "c"], SamplingParams(n=3, seed=7))
    assert len(handler.seen) == 3 and all(body["n"] == 3 for body in handler.seen)  # the probe's answer is used
    assert [c.text for c in out[2]] == ["c:7:0", "c:7:1", "c:7:2"]
    # a server that answers one choice whatever n says: one request per sample from then on, seeds seed + i
    handler.n_ok = False
    fallback = OpenAIHTTPLLM(url)
    again = fallback.complete(["a", "b"], SamplingParams(n=2, seed=7))
    assert fallback._n_supported is False
    assert [[c.text for c in row] for row in again] == [["a:7:0", "a:8:0"], ["b:7:0", "b:8:0"]]


def test_http_failed_request_is_retried_then_reported_for_its_input_only(
    recording: tuple[str, type[_Recording]],
) -> None:
    from counterfair.llm.openai_http import LLMRequestsFailed

    url, handler = recording
    handler.delay = 0.0
    llm = OpenAIHTTPLLM(url, concurrency=4, retries=2, backoff=0.01, n_per_request="off")
    with pytest.raises(LLMRequestsFailed, match="1 of 3 inputs") as caught:
        llm.complete(["ok", "bad", "flaky"], SamplingParams(n=2, seed=1))
    failed = caught.value
    assert list(failed.failures) == [1] and "HTTP 500" in failed.failures[1]
    assert sum("bad" in b["prompt"] for b in handler.seen) >= 3  # tried 1 + 2 retries before giving up
    assert failed.completed[1] is None
    assert [c.text for c in failed.completed[0] or []] == ["ok:1:0", "ok:2:0"]
    assert [c.text for c in failed.completed[2] or []] == ["flaky:1:0", "flaky:2:0"]  # 503 once, then answered


def test_sample_all_counts_samples_for_any_backend() -> None:
    from counterfair.llm import sample_all
    from tests.fakes import ScriptedLLM

    class Counter:
        total = 0

        def start(self, description: str, total: int) -> None:
            return None

        def advance(self, amount: int) -> None:
            self.total += amount

    hook = Counter()
    llm = ScriptedLLM(lambda text, attempt, i: "{x}")  # no progress parameter: advanced when the call returns
    messages = [[{"role": "user", "content": "Text: {a}"}], [{"role": "user", "content": "Text: {b}"}]]
    out = sample_all(llm, messages, SamplingParams(n=3), chat=True, progress=hook)
    assert len(out) == 2 and hook.total == 6


def test_ask_until_parsed_asks_again_only_the_unparsed() -> None:
    from counterfair.llm.base import ask_until_parsed
    from tests.fakes import ScriptedLLM

    llm = ScriptedLLM(lambda text, attempt, i: "yes" if text == "a" or llm.batches > 1 else "???")
    questions = [[{"role": "user", "content": "Q {a}"}], [{"role": "user", "content": "Q {b}"}]]
    answers = ask_until_parsed(llm, questions, lambda raw: raw if raw == "yes" else None, retries=2, max_tokens=4)
    assert answers == [("yes", ["yes"]), ("yes", ["???", "yes"])]
    assert [(c["text"], c["temperature"]) for c in llm.calls] == [("a", 0.0), ("b", 0.0), ("b", 0.7)]


def test_prompt_lookup_drafting_is_for_the_sequential_path_only() -> None:
    """#36: llama.cpp's prompt-lookup decoding drafts for one sequence; with parallel sampling it is refused."""
    from counterfair.errors import ConfigError
    from counterfair.llm.llamacpp import LlamaCppLLM

    with pytest.raises(ConfigError, match="sequential path only: use parallel=1"):
        LlamaCppLLM("qwen2.5-coder-0.5b-instruct", draft=10, parallel=16)
    assert LlamaCppLLM("qwen2.5-coder-0.5b-instruct", draft=10, parallel=1).draft == 10


def test_http_retries_are_said_and_concurrency_counts_sequences(recording: tuple[str, type[_Recording]]) -> None:
    """#69 item 9: each retry is said (it was silent until the last failed), and ``concurrency`` counts sequences:
    a request of n samples is n of the server's slots (32 requests of 5 samples overran a 4-slot server)."""
    url, handler = recording
    handler.delay = 0.0
    llm = OpenAIHTTPLLM(url, concurrency=4, retries=2, backoff=0.01, n_per_request="off")
    with pytest.warns(RuntimeWarning, match=r"HTTP 503.*trying again in 0.01 s \(retry 1 of 2\)"):
        llm.complete(["flaky"], SamplingParams(n=1, seed=1))
    handler.n_ok, handler.delay, handler.peak = True, 0.05, 0
    grouped = OpenAIHTTPLLM(url, concurrency=6, n_per_request="on")
    out = grouped.complete([f"p{i}" for i in range(6)], SamplingParams(n=3, seed=0))
    assert all(len(row) == 3 for row in out) and all(b.get("n") == 3 for b in handler.seen[-6:])
    assert handler.peak == 2  # 6 sequences: two requests of 3 samples in flight, never more


class _Redirect(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.send_response(307)
        self.send_header("Location", "https://bob:HIDDEN@elsewhere.example/v1/completions")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        return None


def test_http_redirect_is_named_and_not_followed() -> None:
    """#69 item 7: a redirect read as "not JSON: ''"; it is said as a redirect, where it points (credentials
    redacted), and not followed (the API key would go with it)."""
    from counterfair.llm.openai_http import LLMServerError

    with loopback(_Redirect) as url:
        llm = OpenAIHTTPLLM(url, retries=0, n_per_request="off")
        with pytest.raises(LLMServerError, match=r"redirects \(HTTP 307\) to https://bob:\*\*\*@elsewhere") as caught:
            llm._post("/completions", {"prompt": "x"})
    assert "HIDDEN" not in str(caught.value) and "does not follow redirects" in str(caught.value)
