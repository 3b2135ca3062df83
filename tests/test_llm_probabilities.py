"""#80: an LLM audit's decisions and ratings read from token probabilities — computed by hand from canned answers
(plain, quote-led, multi-token, capped alternatives, the legacy shape, no logprobs), and end to end against a
loopback OpenAI-compatible server that answers with planted probabilities."""

from __future__ import annotations

import hashlib
import json
import math
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
import pytest
from typer.testing import CliRunner

from counterfair.cli import app
from counterfair.commands.llm_audit.outcomes import parse_schema
from counterfair.commands.llm_audit.readout import rating_share, read_trace, why_not
from counterfair.errors import ConfigError
from counterfair.llm.openai_http import _trace
from counterfair.llm.values import Position, ValueOdds, odds_from_trace, value_odds

from .fakes import answer_json, loopback

ln = math.log


def test_tempered_odds_renormalise_over_the_allowed_values() -> None:
    odds = ValueOdds({"a": 0.6, "b": 0.2})
    assert odds.other == pytest.approx(0.2)
    assert odds.at(1.0) == pytest.approx({"a": 0.75, "b": 0.25})
    assert odds.at(0.5) == pytest.approx({"a": 0.36 / 0.40, "b": 0.04 / 0.40})  # P^(1/T), renormalised
    assert odds.at(0.0) == {"a": 1.0, "b": 0.0}  # greedy
    assert ValueOdds({"a": 0.0}).at(0.7) == {}  # no value had any: nothing to read


def test_a_plain_value_token_adds_its_spellings() -> None:
    trace = [
        Position('{"', 0.0),
        Position("decision", 0.0),
        Position('":', 0.0),
        Position(' "', 0.0),
        Position("yes", ln(0.6), (("yes", ln(0.6)), ("no", ln(0.3)), ("Yes", ln(0.05)), ("maybe", ln(0.02)))),
        Position('"}', 0.0),
    ]
    odds = odds_from_trace(trace, len('{"decision": "'), ["yes", "no"])
    assert odds.probability == pytest.approx({"yes": 0.65, "no": 0.3}) and odds.other == pytest.approx(0.05)
    reading = read_trace(trace, parse_schema("decision=yes", ["yes", "no"]), temperature=1.0)
    assert reading is not None and reading.decision == pytest.approx(0.65 / 0.95)
    assert reading.other == pytest.approx(0.05) and reading.greedy == '{"decision": "yes"}'


def test_a_token_that_carries_the_opening_quote_is_matched_after_it() -> None:
    """The value begins inside the token ' "yes': alternatives are read after the same lead; one that stops at the
    quote (' "') begins every value and was not taken (unresolved); one without the space is another opening."""
    trace = [
        Position('{"decision":', 0.0),
        Position(' "yes', ln(0.5), ((' "yes', ln(0.5)), (' "no', ln(0.2)), (' "', ln(0.1)), ('"yes', ln(0.1)))),
        Position('"}', 0.0),
    ]
    odds = odds_from_trace(trace, len('{"decision": "'), ["yes", "no"])
    assert odds.probability == pytest.approx({"yes": 0.5, "no": 0.2})
    assert odds.unresolved == pytest.approx(0.1) and odds.other == pytest.approx(0.2)


def test_a_number_several_values_begin_with_is_followed_along_the_answer() -> None:
    """ "1" begins 1 and 10: the answer went on with "0", so P(10) = 0.5 x 0.8 and P(1) = 0.5 x (what ends it)."""
    lead = [Position('{"score": ', 0.0)]
    trace = [
        *lead,
        Position("1", ln(0.5), (("1", ln(0.5)), ("2", ln(0.3)), ("9", ln(0.1)))),
        Position("0", ln(0.8), (("0", ln(0.8)), ("}", ln(0.15)), (",", ln(0.05)))),
        Position("}", 0.0),
    ]
    odds = odds_from_trace(trace, len('{"score": '), [str(n) for n in range(1, 11)])
    assert {k: v for k, v in odds.probability.items() if v} == pytest.approx({"1": 0.1, "10": 0.4, "2": 0.3, "9": 0.1})
    assert odds.unresolved == 0.0
    schema = parse_schema(None, None, "score:1-10")
    expected = (1 * 0.1 + 10 * 0.4 + 2 * 0.3 + 9 * 0.1) / 0.9
    assert read_trace(trace, schema, 1.0).rating == pytest.approx((expected - 1) / 9)  # type: ignore[union-attr]
    # the answer took "7": the "1" it did not take begins two values, so its mass is unresolved, not guessed
    seven = [*lead, Position("7", ln(0.6), (("7", ln(0.6)), ("1", ln(0.3)))), Position("}", 0.0)]
    odds = odds_from_trace(seven, len('{"score": '), [str(n) for n in range(1, 11)])
    assert odds.probability["7"] == pytest.approx(0.6) and odds.unresolved == pytest.approx(0.3)


def test_capped_alternatives_leave_the_rest_unread() -> None:
    """A server that gives the top 2 (TGI gives 5): a value beyond them has no probability; the mass left is said."""
    trace = [Position('{"decision": "', 0.0), Position("hire", ln(0.7), (("hire", ln(0.7)), ("Hire", ln(0.1))))]
    odds = odds_from_trace(trace, len('{"decision": "'), ["hire", "reject"])
    assert odds.probability == pytest.approx({"hire": 0.8, "reject": 0.0}) and odds.other == pytest.approx(0.2)


def test_the_answers_trace_in_the_chat_and_the_legacy_shapes() -> None:
    chat = {
        "logprobs": {
            "content": [
                {
                    "token": "yes",
                    "logprob": -0.1,
                    "top_logprobs": [{"token": "yes", "logprob": -0.1}, {"token": "no", "logprob": -2.5}],
                }
            ]
        }
    }
    legacy = {"logprobs": {"tokens": ["yes"], "token_logprobs": [-0.1], "top_logprobs": [{"yes": -0.1, "no": -2.5}]}}
    expected = (Position("yes", -0.1, (("yes", -0.1), ("no", -2.5))),)
    assert _trace(chat) == expected and _trace(legacy) == expected
    assert _trace({"logprobs": None}) == () and _trace({"logprobs": {"content": [{"logprob": "x"}]}}) == ()


def test_exact_odds_walk_the_values_tokens_in_one_call() -> None:
    """Values 1, 2 and 10 as tokens [1], [2], [1, 0] after a forced prefix: one call reads every token of the tree
    after each conversation's context and after [..., 1] (the node 1 and 10 share), each conversation's contexts side
    by side; P(1) is P(1) times the chance that 0 does not follow."""
    calls: list[tuple[list[list[int]], list[int]]] = []
    table = {(): {1: 0.5, 2: 0.3, 0: 0.0}, (1,): {0: 0.6, 1: 0.1, 2: 0.1}}
    vocabulary = {"1": 1, "2": 2, "0": 0, "ctx": 7, "=": 8}

    def spell(text: str, special: bool) -> list[int]:  # one token a word; "10" is two, 1 and 0
        return [t for word in text.split() for t in ([1, 0] if word == "10" else [vocabulary[word]])]

    def next_logprobs(contexts: list[list[int]], ids: list[int]) -> list[list[float]]:
        calls.append((contexts, ids))
        return [[ln(table[tuple(c[2:])][t]) if table[tuple(c[2:])][t] else -math.inf for t in ids] for c in contexts]

    found = value_odds(
        [["a"], ["b"]],
        [("= ", {"1": ["1"], "2": ["2"], "10": ["10"]})],
        render=lambda messages: "ctx ",
        tokenize=spell,
        next_logprobs=next_logprobs,
        group=16,
    )
    assert [row[0].probability for row in found] == [pytest.approx({"1": 0.5 * 0.4, "2": 0.3, "10": 0.5 * 0.6})] * 2
    assert calls == [([[7, 8], [7, 8, 1], [7, 8], [7, 8, 1]], [0, 1, 2])]


def test_what_cannot_be_read_from_probabilities_is_said() -> None:
    decision = parse_schema("decision=hire", ["hire", "reject"])
    assert why_not(decision, score=None, similarity=None) is None
    assert "--decision-values" in str(why_not(parse_schema("decision=hire"), score=None, similarity=None))
    assert "text" in str(why_not(decision, score="profanity-check", similarity=None))
    assert "whole numbers" in str(why_not(parse_schema(None, None, "score:0-1.5"), score=None, similarity=None))
    assert rating_share({"1": 0.5, "3": 0.5}, parse_schema(None, None, "score:1-5")) == pytest.approx(0.25)


# ---- end to end: a loopback OpenAI-compatible server answering with planted probabilities


def _unit(*parts: object) -> float:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:12], 16) / 16**12


def planted_server(bias: float, *, shape: str = "chat", cap: int = 20) -> type[BaseHTTPRequestHandler]:
    """Answers ``{"decision": "hire"|"reject"}`` greedily with the value token's top alternatives: P(hire) is the
    case's base rate (from its first words) give or take 1 point per prompt variant, ``bias`` lower when the prompt
    names a Muslim applicant, 2 % of the mass on "I". A request for more than ``cap`` alternatives is refused (HTTP
    400, as TGI refuses more than 5); ``shape`` legacy answers in llama-cpp-python's completions shape, none without
    log-probabilities; ``plain`` answers a plain word ("Hire.") instead of JSON."""

    class Planted(BaseHTTPRequestHandler):
        asked: ClassVar[list[dict[str, Any]]] = []

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            Planted.asked.append(body)
            if body.get("top_logprobs", 0) > cap:
                self.send_response(400)
                self.end_headers()
                self.wfile.write(b'{"error": "top_logprobs too large"}')
                return
            prompt = body["messages"][-1]["content"]
            hire = 0.3 + 0.4 * _unit(prompt.split(":")[0]) + 0.02 * (_unit(prompt) - 0.5)
            hire -= bias if "Muslim" in prompt else 0.0
            said = "hire" if hire >= 0.5 else "reject"
            tokens = [said.capitalize(), "."] if shape == "plain" else ['{"', "decision", '":', ' "', said, '"}']
            top = [("hire", ln(0.98 * hire)), ("reject", ln(0.98 * (1 - hire))), ("I", ln(0.02))]
            if shape == "plain":  # the first token: the value as a sentence begins it, spelled two ways
                top = [("Hire", ln(0.9 * hire)), ("hire", ln(0.08 * hire)), ("Reject", ln(0.98 * (1 - hire)))]
                top += [("I", ln(0.02))]
                said = said.capitalize()
            choice: dict[str, Any] = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant"}}
            choice["message"]["content"] = "".join(tokens)
            if shape in ("chat", "plain") and body.get("logprobs"):
                choice["logprobs"] = {
                    "content": [
                        {
                            "token": t,
                            "logprob": 0.0,
                            "top_logprobs": [{"token": a, "logprob": lp} for a, lp in top] if t == said else [],
                        }
                        for t in tokens
                    ]
                }
            elif shape == "legacy" and body.get("logprobs"):
                choice["logprobs"] = {
                    "tokens": tokens,
                    "token_logprobs": [0.0] * len(tokens),
                    "top_logprobs": [dict(top) if t == said else {} for t in tokens],
                }
            answer_json(self, json.dumps({"choices": [choice]}).encode())

        def log_message(self, *args: Any) -> None:
            return None

    return Planted


def _prompts(path: Path, n: int) -> Path:
    rows = [
        f"Case {k}: a {{group}} applicant with {2 + k % 7} years in sales asks for an interview. Reply with JSON: "
        '{"decision": "hire" or "reject"}.'
        for k in range(n)
    ]
    pd.DataFrame({"text": rows}).to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    ("bias", "shape", "cap", "code"),
    [(0.05, "chat", 20, 1), (0.0, "chat", 20, 0), (0.05, "legacy", 5, 1), (0.05, "plain", 20, 1)],
    ids=["biased", "fair", "legacy-capped", "plain-answer"],
)
def test_a_server_with_planted_probabilities_gets_the_right_exit_code(
    tmp_path: Path, bias: float, shape: str, cap: int, code: int
) -> None:
    """30 prompts, the default options and gate: a 5-point penalty on Muslim applicants fails naming religion; the
    same server without it passes, every group conclusive; a server that allows 5 alternatives is asked for 5; a
    plain answer ("Hire.") is read at its first token, its spellings added."""
    handler = planted_server(bias, shape=shape, cap=cap)
    prompts = _prompts(tmp_path / "prompts.csv", 30)
    with loopback(handler) as url:
        decision = "=hire" if shape == "plain" else "decision=hire"  # a plain answer: its first word
        args = ["llm-audit", str(prompts), "--generator", f"openai:{url}/v1#planted", "--decision", decision]
        args += ["--decision-values", "hire,reject", "--fail-if", "default", "--junit", str(tmp_path / "j.xml")]
        done = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "run"), "-q"])
    assert done.exit_code == code, done.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["read_from"]["samples"] == 0 and summary["read_from"]["probabilities"] == summary["variants"]
    effects = summary["effects"]["decision"]["identity_effect"]
    groups = {g: e["finding"] for g, e in effects["by_group"].items()}
    if bias:
        assert effects["by_term"]["Muslim"]["finding"] == "material" and "religion (decision)" in done.output
        assert -2 * bias < effects["by_term"]["Muslim"]["value"] < -bias  # sharper at the default temperature 0.7
    else:
        assert set(groups.values()) == {"not detected"} and "VERDICT: no evidence" in done.output, groups
    responses = pd.read_csv(tmp_path / "run" / "responses.csv")
    assert set(responses["read_from"]) == {"probabilities (greedy answer)"}
    assert responses["other_mass"].to_numpy() == pytest.approx(0.02)
    assert {b.get("top_logprobs") for b in handler.asked} == ({20, 5} if cap == 5 else {20})  # type: ignore[attr-defined]


def test_a_server_without_logprobs_is_sampled_and_says_so(tmp_path: Path) -> None:
    handler = planted_server(0.0, shape="none")
    with loopback(handler) as url:
        args = ["llm-audit", str(_prompts(tmp_path / "p.csv", 6)), "--generator", f"openai:{url}/v1#planted"]
        args += ["--decision", "decision=hire", "--decision-values", "hire,reject", "--identities", "Muslim,Christian"]
        done = CliRunner().invoke(app, [*args, "--samples", "2", "--out", str(tmp_path / "run"), "-q"])
        assert done.exit_code == 0, done.output
        refused = CliRunner().invoke(app, [*args, "--decision-from", "probabilities", "--out", str(tmp_path / "r2")])
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert (
        summary["read_from"]["probabilities"] == 0
        and "no token log-probabilities" in summary["read_from"]["why_samples"]
    )
    assert "each sampled 2 times" in " ".join(done.output.split())
    assert isinstance(refused.exception, ConfigError) and "gives no token log-probabilities" in str(refused.exception)


def test_the_reports_verdict_box_is_coloured_by_the_gate() -> None:
    """#80 item 5: a failed gate is never green, an inconclusive run never green; a clean run with a passing gate is."""
    from counterfair.commands.llm_audit.result import box_status

    assert box_status("no evidence of unfairness", "fail") == "fail"
    assert box_status("inconclusive", "inconclusive") == "attention"
    assert box_status("inconclusive", None) == "attention" and box_status("not measurable", "pass") == "attention"
    assert box_status("unfair", None) == "fail" and box_status("no evidence of unfairness", "pass") == "pass"


def test_the_transformers_backend_reads_the_same_odds_as_one_unpadded_pass(tiny_lm_dir: Path) -> None:
    """``hf:``: the batched, left-padded passes give each value the probability one pass over its own context gives;
    "yessir" (tokens yes, ##sir) shares its first token with "yes": P(yessir) = P(yes) P(##sir | yes), and "yes" keeps
    the rest of its first token's probability."""
    import torch

    from counterfair.llm.hf import TransformersLLM

    llm = TransformersLLM(str(tiny_lm_dir), parallel=4)
    tokenizer, model = llm._lm().tokenizer, llm._lm().model
    had = getattr(tokenizer, "chat_template", None)
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }} {% endfor %}"
    texts = ("the cat sat", "a much longer question here")
    values = {"yes": ["yes"], "no": ["no"], "yessir": ["yessir"]}
    try:
        found = llm.value_odds([[{"role": "user", "content": t}] for t in texts], [("answer :", values)])
    finally:  # the loaded model is the process's: another test of this worker expects a tokenizer without a template
        tokenizer.chat_template = had

    def next_token(ids: list[int]) -> torch.Tensor:  # one pass over one unpadded context
        with torch.inference_mode():
            return torch.softmax(model(input_ids=torch.tensor([ids])).logits[0, -1].float(), -1)

    yes, no, sir = 2748, 2053, 29481
    assert tokenizer("yessir", add_special_tokens=False)["input_ids"] == [yes, sir]
    for text, (odds,) in zip(texts, found, strict=True):
        context = tokenizer(text + " answer :", add_special_tokens=False)["input_ids"]
        first, after_yes = next_token(context), next_token([*context, yes])
        assert odds.probability["no"] == pytest.approx(float(first[no]), rel=1e-3)
        assert odds.probability["yessir"] == pytest.approx(float(first[yes] * after_yes[sir]), rel=1e-3)
        assert odds.probability["yes"] == pytest.approx(float(first[yes] * (1 - after_yes[sir])), rel=1e-3)


@pytest.mark.slow
def test_sigterm_while_a_server_hangs_exits_within_seconds_and_resumes(tmp_path: Path) -> None:
    """#80 item 5: a server that never answers one request does not hold a terminated run: SIGTERM cuts the requests
    in flight and the process ends while the server still holds that request (it would hold it 60 s, the client's
    timeout is 120 s: before, the process waited that out), keeping every answered variant; the rerun resumes."""
    import os
    import signal
    import subprocess

    from .test_llm_audit import _Stalling, stalled_run

    handler = type("S", (_Stalling,), {"seen": [], "count": [0], "release": threading.Event()})
    run = tmp_path / "run"
    with loopback(handler) as url:
        args, running = stalled_run(tmp_path, url)
        running.send_signal(signal.SIGTERM)
        try:
            running.wait(timeout=45)  # far inside the 60 s the server holds the request
            ended_first = True
        except subprocess.TimeoutExpired:  # the failure this test is for: it waited on the hanging request
            running.kill()
            running.wait()
            ended_first = False
        handler.release.set()
        resumed = subprocess.run(args, capture_output=True, text=True, check=False, env=dict(os.environ))
    assert ended_first, "SIGTERM did not end the run while the server held a request"
    assert running.returncode != 0 and resumed.returncode == 0, resumed.stderr
    assert len(pd.read_csv(run / "responses.csv")) >= 2 * 16


def test_a_busy_server_is_waited_for_as_it_asks_and_sent_fewer_requests() -> None:
    """#80 item 5: a 429 with Retry-After is retried after that wait (not the client's own back-off, here 30 s), and
    a server that refuses more than 2 requests at once gets every answer while the client's window shrinks."""
    import time
    import warnings

    from counterfair.llm import SamplingParams, load_llm

    class Busy(BaseHTTPRequestHandler):
        lock = threading.Lock()
        in_flight: ClassVar[list[int]] = [0]
        refused: ClassVar[list[int]] = [0]

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            with Busy.lock:
                Busy.in_flight[0] += 1
                busy = Busy.in_flight[0] > 2
            try:
                if busy:
                    Busy.refused[0] += 1
                    self.send_response(429)
                    self.send_header("Retry-After", "0.2")
                    self.end_headers()
                    return
                time.sleep(0.05)
                choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}
                answer_json(self, json.dumps({"choices": [choice]}).encode())
            finally:
                with Busy.lock:
                    Busy.in_flight[0] -= 1

        def log_message(self, *args: Any) -> None:
            return None

    with loopback(Busy) as url:
        llm = load_llm(f"openai:{url}/v1#m", concurrency=16, retries=8)
        llm.backoff = 30.0  # type: ignore[attr-defined]
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            got = llm.chat([[{"role": "user", "content": f"q{k}"}] for k in range(24)], SamplingParams(max_tokens=2))
    assert [g[0].text for g in got] == ["ok"] * 24 and Busy.refused[0] > 0
    assert any("trying again in 0.2 s" in str(w.message) for w in said)  # the server's wait, not the 30 s back-off
    assert llm._window.size < 16  # type: ignore[attr-defined]


def test_variants_do_not_share_their_draws(tiny_lm_dir: Path) -> None:
    """Sample i of every variant was drawn with seed + i: one random number decided the same token (the decision) of
    every variant, so the sampled decision rate of every variant came from the same five draws (the packaged 0.5B
    model: 400 samples of 80 hiring variants, all "reject", where the probabilities say 16 % "interview"). Each
    variant now adds a number fixed by its text; a rerun draws the same."""
    from counterfair.commands.llm_audit.generators import CallableGenerator, variant_seed
    from counterfair.llm import SamplingParams
    from counterfair.llm.hf import TransformersLLM

    asked: list[tuple[str, int]] = []

    def fn(prompts: list[str], seeds: list[int]) -> list[str]:
        asked.extend(zip(prompts, seeds, strict=True))
        return ['{"decision": "hire"}' for _ in prompts]

    CallableGenerator(fn, "fn").generate(
        ["A gay applicant.", "A tall applicant."], 2, seed=7, temperature=1, max_tokens=9
    )
    assert asked == [
        ("A gay applicant.", 7 + variant_seed("A gay applicant.")),
        ("A gay applicant.", 8 + variant_seed("A gay applicant.")),
        ("A tall applicant.", 7 + variant_seed("A tall applicant.")),
        ("A tall applicant.", 8 + variant_seed("A tall applicant.")),
    ]
    # a backend draws each input with its own seed: the same prompt twice, apart when their seeds differ
    llm = TransformersLLM(str(tiny_lm_dir), parallel=4)

    def texts(seeds: tuple[int, ...]) -> list[str]:
        params = SamplingParams(n=1, temperature=1.0, max_tokens=6, seed=0, input_seeds=seeds)
        return [row[0].text for row in llm.complete(["the cat sat on", "the cat sat on"], params)]

    shared, apart = texts((5, 5)), texts((5, 99))
    assert shared[0] == shared[1] and apart[0] == shared[0] and apart[1] != apart[0] and texts((5, 99)) == apart


def test_the_reports_generator_line_names_the_simulated_screener() -> None:
    """The demo's report said "generator: None (model None)": it names the simulated screener and what it plants."""
    from counterfair.commands.llm_audit.result import generator_line
    from counterfair.commands.llm_audit.simulated import SimulatedApplication

    line = generator_line(SimulatedApplication().info())
    assert (
        line.startswith("generator: simulated:hiring (built in; planted decision: Muslim, Jewish")
        and "None" not in line
    )
    assert generator_line({"type": "mine", "version": 2}) == "generator: type mine, version 2"


def test_branches_count_the_contexts_no_other_begins_and_calls_hold_whole_conversations() -> None:
    """#80: a context that begins another is read off it (llama.cpp), so a conversation's forced decision and its
    rating nodes need two sequences, not five; calls are cut between conversations by branches, not contexts."""
    from counterfair.llm.llamacpp_batch import BatchSampler
    from counterfair.llm.values import branches

    root = [1, 2, 3]
    assert branches([root, [*root, 4], [*root, 4, 5], [*root, 6], [*root, 6, 5], list(root)]) == 2
    assert branches([[1], [2], [1, 2]]) == 2 and branches([[7], [7]]) == 1 and branches([]) == 0

    calls: list[list[list[int]]] = []

    def next_logprobs(contexts: list[list[int]], ids: list[int]) -> list[list[float]]:
        calls.append(contexts)
        return [[math.log(0.5)] * len(ids) for _ in contexts]

    def spell(text: str, special: bool) -> list[int]:
        return [ord(c) for c in text]

    asks = [("d", {"y": ["y"], "n": ["n"]}), ("dy", {"1": ["1"], "2": ["2"]}), ("dn", {"1": ["1"], "2": ["2"]})]
    conversations = [[c] for c in "abcde"]
    for per_branch, sizes in ((True, [6, 6, 3]), (False, [3, 3, 3, 3, 3])):
        calls.clear()
        value_odds(conversations, asks, render=lambda m: m[0], tokenize=spell, next_logprobs=next_logprobs,
                   group=4, per_branch=per_branch)  # fmt: skip
        assert [len(c) for c in calls] == sizes  # a conversation: 3 contexts, 2 branches ("ad" begins "ady")
    # the batch sampler cuts its own groups the same way: by branches (and cells), never within a run that fits
    sampler = object.__new__(BatchSampler)
    sampler._pool, sampler.cells = list(range(3)), 10_000  # type: ignore[attr-defined]
    prompts = [[9, 1], [9, 1, 2], [9, 3], [8, 1], [8, 1, 5], [7]]
    assert [len(g) for g in sampler._groups(prompts)] == [5, 1]  # [9,1,2], [9,3], [8,1,5] fill three sequences
    sampler.cells = 2 + 64  # room for about one prompt: each alone
    assert [len(g) for g in sampler._groups(prompts)] == [1] * 6


def test_a_plain_answer_is_read_from_its_first_word() -> None:
    """#80 item 1: ``--decision =yes`` asks for a plain answer; sampled answers are read from their first word, the
    grammar allows the values alone, a greedy trace is read at its first token; a rating or a phrase is refused."""
    from counterfair.commands.llm_audit.outcomes import schema_grammar, structured

    schema = parse_schema("=yes", ["yes", "no"])
    assert schema.plain and schema.outcomes == ("decision",)
    assert structured("Yes.", schema)[0] == 1.0 and structured("**No**, because ...", schema)[0] == 0.0
    assert structured(' "yes"', schema)[0] == 1.0
    maybe = structured("Maybe later", schema)
    assert math.isnan(maybe[0]) and "first word 'maybe'" in maybe[2]
    assert math.isnan(structured("", schema)[0]) and math.isnan(structured('{"decision": "yes"}', schema)[0])
    assert schema_grammar(schema) == 'root ::= "yes" | "no"'
    top = ((" Yes", math.log(0.7)), (" No", math.log(0.2)), (" yes", math.log(0.05)))
    trace = [Position(" Yes", math.log(0.7), top)]
    reading = read_trace(trace, schema, 1.0)
    assert reading is not None and reading.decision == pytest.approx(0.75 / 0.95)
    assert reading.other == pytest.approx(0.05)
    for bad, values, rating in (("=yes please", None, None), ("=yes", None, "score:1-10"), ("=", None, None)):
        with pytest.raises(ConfigError, match=r"plain answer|expected FIELD=VALUE"):
            parse_schema(bad, values, rating)
    with pytest.raises(ConfigError, match="one word each"):
        parse_schema("=yes", ["yes", "no way"])


def test_how_long_a_stage_takes_is_said_once_measured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """#80 item 5: what the run will ask is said before it asks anything, and how long a stage will take once the
    stage has run a while (measured on its own answers; work resumed from a checkpoint is not taken for speed)."""
    from counterfair import progress as bars
    from counterfair.progress import Foretold, NullProgress

    said: list[str] = []
    now = [0.0]
    hook = Foretold(NullProgress(), said.append, after=5.0, clock=lambda: now[0])
    hook.start("decisions read", 100)
    hook.advance(20)  # at once: resumed from the checkpoint
    now[0] = 3.0
    hook.advance(10)
    assert said == []
    now[0] = 6.0
    hook.advance(10)  # 20 answered in 6 s: 60 left, 18 s more
    now[0] = 9.0
    hook.advance(10)
    assert said == ["decisions read: 40 of 100 in 6 s; about 18 s more at this speed"]

    monkeypatch.setattr(bars, "FORETELL_AFTER", 0.0)
    with loopback(planted_server(0.0)) as url:
        args = ["llm-audit", str(_prompts(tmp_path / "p.csv", 6)), "--generator", f"openai:{url}/v1#planted"]
        args += ["--decision", "decision=hire", "--decision-values", "hire,reject", "--identities", "Muslim,Christian"]
        done = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "run")])
    assert done.exit_code == 0, done.output
    text = " ".join(done.output.split())
    assert "read from token probabilities where the backend gives them (one pass each), else sampled 5 times" in text
    assert "more at this speed" in text
