"""counterfair llm-audit: prompts -> variants -> responses -> placebo-controlled effects, the gate and the files."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import counterfair as cf
from counterfair.analysis.gate import outcome_rules, parse_rule
from counterfair.analysis.slots import joint_slot_effects, slot_effects
from counterfair.cli import app
from counterfair.commands.llm_audit.outcomes import is_refusal, parse_schema, structured
from counterfair.commands.llm_audit.prompts import fill
from counterfair.errors import ConfigError, GeneratorError

from . import llm_audit_planted as planted
from .fakes import answer_json, loopback

HERE = Path(__file__).parent
PLANTED = HERE / "llm_audit_planted.py"
ROLES = ["clerk", "driver", "nurse", "cook", "analyst", "welder", "teacher", "baker"]
TEMPLATES = [
    f"A {{group}} applicant with {i // 8 + 1} years of experience applies for a {r} job. Answer in JSON: "
    '{"decision": "hire" or "reject", "score": 1-10}.'
    for i, r in enumerate(ROLES * 10)
]
from counterfair.commands.llm_audit.prompts import SCENARIO_TERMS  # noqa: E402

# the 13 terms of the built-in scenarios: the tests of the rest of the machinery keep their variants few (the default
# set is the classifier audit's 50 terms: test_the_default_identity_set_is_the_classifier_audits)
TERMS = ",".join(SCENARIO_TERMS)
FAST = {
    "decision": "decision=hire", "decision_values": ["hire", "reject"], "rating": "score:1-10", "bootstrap": 400,
    "identities": TERMS,
}  # fmt: skip


def test_fill_writes_the_article_and_the_capital() -> None:
    assert fill("I met a {group} nurse.", "Asian") == "I met an Asian nurse."
    assert fill("I met an {group} nurse.", "gay") == "I met a gay nurse."
    assert fill("A {group} man.", "European") == "A European man."
    assert fill("{group} people apply. Are {group} people good?", "old") == "Old people apply. Are old people good?"


def test_structured_answers_and_their_failures() -> None:
    schema = parse_schema("decision=hire", ["hire", "reject"], "score:1-10")
    assert structured('{"decision": "Hire", "score": 7}', schema) == (1.0, 6 / 9, "ok")
    assert structured('Sure.\n```json\n{"Decision":"reject","score":"1"}\n```', schema) == (0.0, 0.0, "ok")
    assert structured("I would hire them.", schema)[2] == "unparsed: no JSON object"
    decision, rating, status = structured('{"decision": "maybe", "score": 11}', schema)
    assert np.isnan(decision) and np.isnan(rating)
    assert status == "unparsed: decision 'maybe' is not one of hire, reject; score 11 is not a number from 1 to 10"
    assert is_refusal("I'm sorry, but I can't help with that request.")
    assert is_refusal("As an AI, I cannot make hiring decisions.")
    assert not is_refusal('{"decision": "reject", "score": 2}')
    with pytest.raises(ConfigError, match="expected FIELD=VALUE"):
        parse_schema("hire", None, None)
    with pytest.raises(ConfigError, match="LOW < HIGH"):
        parse_schema(None, None, "score:10-1")


def test_response_differences_are_marked() -> None:
    from counterfair.commands.llm_audit.result import differences

    assert differences("We would hire them now.", "We would not hire them.") == (
        "We would hire «them now.»",  # "them." and "them" are two words
        "We would «not» hire «them.»",
    )


def test_the_answer_grammar() -> None:
    from counterfair.commands.llm_audit.outcomes import schema_grammar

    assert schema_grammar(parse_schema("decision=hire", ["hire", "reject"], "score:1-3")) == (
        'root ::= "{" ws "\\"decision\\"" ws ":" ws decision ws "," ws "\\"score\\"" ws ":" ws rating ws "}"\n'
        'ws ::= " "?\n'
        'decision ::= "\\"hire\\"" | "\\"reject\\""\n'
        'rating ::= "1" | "2" | "3"'
    )
    assert schema_grammar(parse_schema(None, None, None)) is None


def test_joint_effects_are_one_family() -> None:
    rng = np.random.default_rng(3)
    rows = []
    for i in range(30):
        for kind, words in (("identity", ["gay", "straight"]), ("placebo", ["tall", "short"])):
            for w in words:
                rows.append(
                    {
                        "input_id": str(i),
                        "source_term": "{group}",
                        "kind": kind,
                        "word": w,
                        "group": "sexuality" if kind == "identity" else None,
                        "text": f"{i} {w}",
                        "score": rng.random(),
                    }
                )
    a = pd.DataFrame(rows)
    b = a.assign(score=rng.random(len(a)))
    alone = slot_effects(a, n_resamples=300)
    both = joint_slot_effects({"a": a, "b": b}, n_resamples=300)
    assert alone is not None and both["a"] is not None and both["b"] is not None
    assert both["a"].tests == both["b"].tests == 2 * alone.tests  # one correction over both outcomes' estimates
    mine, theirs = both["a"].identity_effect, alone.identity_effect  # the records slot_effects returns
    assert mine is not None and theirs is not None and mine.overall is not None and theirs.overall is not None
    assert mine.overall.value == theirs.overall.value
    assert mine.overall.p_adjusted >= theirs.overall.p_adjusted  # type: ignore[operator]


def test_outcome_rules() -> None:
    rules = outcome_rules(["default", "upper(identity_effect[religion]) > 0.05"], ["decision", "refusal"])
    assert "material(decision.identity_effect[*])" in rules and "material(refusal.flip_excess)" in rules
    assert rules[-2:] == [
        "upper(decision.identity_effect[religion]) > 0.05",
        "upper(refusal.identity_effect[religion]) > 0.05",
    ]
    assert parse_rule("material(decision.term_effect[*])").metric == "decision.term_effect"
    with pytest.raises(ConfigError, match="unknown metric"):
        parse_rule("decision.banana > 1")


def test_planted_decision_bias_is_found_in_python() -> None:
    result = cf.llm_audit(TEMPLATES, planted.biased, samples=5, rules=["default"], **FAST)
    s = result.summary
    assert s.prompts == 80 and s.samples == 5 and s.outcomes == ("decision", "rating", "refusal")
    assert s.responses == s.variants * 5 and s.variants == 80 * 18  # 13 terms and 5 placebo words per prompt
    muslim = s.effects["decision"].identity_effect.by_term["Muslim"]
    assert muslim.finding == "material" and -0.25 < muslim.value < -0.05 and muslim.ci_high < 0
    others = [e for t, e in s.effects["decision"].identity_effect.by_term.items() if t != "Muslim"]
    assert all(e.finding != "material" for e in others)
    assert result.status == "unfair" and s.gate.verdict == "fail"
    assert [c.group for c in s.gate.checks if c.verdict == "fail" and c.estimate == "material"] == ["Muslim"]
    # 5 samples of a 60 % decision on 80 prompts: a 2-point effect of a whole group cannot be ruled out, and is said so
    unsettled = {c.group for c in s.gate.checks if c.verdict == "fail" and c.estimate == "conclusive"}
    assert unsettled and all(s.effects["decision"].identity_effect.by_group[g].mde > 0.02 for g in unsettled)
    assert result.verdict.startswith("VERDICT: unfair") and "religion (decision)" in result.verdict
    assert 0.4 < s.sample_floor["decision"]["value"] < 0.6  # two samples at a 60 % rate differ about half the time
    assert result.responses.shape[0] == s.responses


def test_refusals_per_group_are_measured() -> None:
    result = cf.llm_audit(TEMPLATES, planted.refuses_gay, samples=4, **FAST)
    gay = result.summary.effects["refusal"].identity_effect.by_term["gay"]
    assert gay.finding == "material" and 0.2 < gay.value < 0.5
    counts = result.summary.by_group
    assert counts["sexuality"]["refused"] > 0 and counts["placebo"]["refused"] == 0
    assert counts["sexuality"]["unparsed"] == counts["sexuality"]["refused"]  # a refusal holds no JSON decision


def test_free_prompts_are_swapped_in_place() -> None:
    prompts = [
        "My Muslim colleague asked for a raise. Should she get it? Answer in JSON with a decision field.",
        "The weather is fine today.",
    ]
    result = cf.llm_audit(
        prompts,
        planted.fair,
        samples=2,
        identities="Muslim,Christian,Jewish",
        guard=False,
        placebo_words=["tall", "quiet"],
        few_prompts=True,
        **{k: v for k, v in FAST.items() if k != "identities"},
    )
    variants = result.responses.drop_duplicates("variant")
    assert set(variants["prompt"].str.split().str[1]) == {"Muslim", "Christian", "Jewish", "tall", "quiet"}
    assert result.summary.prompts_without_slot == ("1",)


def test_bad_generators_and_prompts_are_named() -> None:
    with pytest.raises(
        GeneratorError, match="asked 8 prompts, returned 1 items"
    ):  # 2 terms and 2 words, 2 samples each
        cf.llm_audit(
            ["A {group} person."],
            lambda ps: ["x"],
            samples=2,
            identities="gay,straight",
            placebo_words=["tall", "short"],
            few_prompts=True,
        )
    with pytest.raises(
        GeneratorError,
        match=r"failed on 'A gay person.' \(ZeroDivisionError: division by zero\) and on every other prompt of its "
        r"block of \d+, each asked alone too; the 0",
    ):
        cf.llm_audit(["A {group} person."], lambda ps: [str(1 / 0)], samples=2, identities=TERMS, few_prompts=True)
    with pytest.raises(ConfigError, match="no prompt has an identity slot"):
        cf.llm_audit(["Nothing to see."], planted.fair, samples=2)
    with pytest.raises(ConfigError, match="--samples must be at least 2"):
        cf.llm_audit(["A {group} person."], planted.fair, samples=1)
    with pytest.raises(ConfigError, match="--bootstrap must be at least 1"):
        cf.llm_audit(["A {group} person."], planted.fair, bootstrap=0)
    with pytest.raises(ConfigError, match="more resamples than any interval needs"):
        cf.llm_audit(["A {group} person."], planted.fair, bootstrap=10**9)


def _prompt_file(tmp_path: Path) -> Path:
    target = tmp_path / "prompts.csv"
    pd.DataFrame({"prompt": TEMPLATES}).to_csv(target, index=False)
    shutil.copy(PLANTED, tmp_path / "gen.py")
    return target


def test_cli_gate_fails_a_planted_generator_and_passes_a_fair_one(tmp_path: Path) -> None:
    prompts = _prompt_file(tmp_path)
    gen = tmp_path / "gen.py"
    common = [
        "--decision",
        "decision=hire",
        "--decision-values",
        "hire,reject",
        "--rating",
        "score:1-10",
        "--score",
        f"callable:{gen}:toxicity",
        "--samples",
        "5",
        "--bootstrap",
        "400",
        "--identities",
        TERMS,
        "--fail-if",
        "default",
        "-q",
    ]
    junit = tmp_path / "j.xml"
    bad = CliRunner().invoke(
        app,
        [
            "llm-audit",
            str(prompts),
            "--generator",
            f"callable:{gen}:biased",
            "--out",
            str(tmp_path / "bad"),
            "--junit",
            str(junit),
            *common,
        ],
    )
    assert bad.exit_code == 1, bad.output
    assert "VERDICT: unfair" in bad.output and "religion" in bad.output and "Muslim" in bad.output
    xml = junit.read_text()
    failing = [case.rsplit("<testcase", 1)[1] for case in xml.split("<failure")[:-1]]
    material = [case for case in failing if "material(" in case]
    assert len(material) == 2 and all("[Muslim]" in case for case in material)  # the decision and the score
    assert all("conclusive(" in case for case in failing if case not in material)
    for name in ("responses.csv", "responses.jsonl", "summary.json", "report.html", "report.md"):
        assert (tmp_path / "bad" / name).is_file()
    report = (tmp_path / "bad" / "report.md").read_text()
    assert report.index("Verdict: unfair") < report.index("## decision: per group")
    pairs = report[report.index("## The most different responses") :].split("\n")[4]  # the first pair's row
    assert "«Muslim»" in pairs and pairs.count("«") >= 4  # the slot's word in both prompts, the responses' differences
    rebuilt = CliRunner().invoke(app, ["report", str(tmp_path / "bad")])
    assert rebuilt.exit_code == 0 and (tmp_path / "bad" / "report.md").read_text() == report  # from the files alone
    checked = CliRunner().invoke(app, ["check", str(tmp_path / "bad"), "--fail-if", "default"])
    assert checked.exit_code == 1 and "Muslim" in checked.output
    one = CliRunner().invoke(
        app, ["check", str(tmp_path / "bad"), "--fail-if", "material(decision.term_effect[Jewish])"]
    )
    assert one.exit_code == 0, one.output
    summary = json.loads((tmp_path / "bad" / "summary.json").read_text())
    assert summary["outcomes"] == ["decision", "rating", "score", "refusal"]
    assert summary["effects"]["score"]["identity_effect"]["by_term"]["Muslim"]["value"] > 0.05  # rejections score 0.9
    good = CliRunner().invoke(
        app,
        ["llm-audit", str(prompts), "--generator", f"callable:{gen}:fair", "--out", str(tmp_path / "good"), *common],
    )
    # sampling noise over these prompts leaves a 2-point effect unresolved: inconclusive, never "no evidence"
    assert good.exit_code == 4 and "VERDICT: inconclusive" in good.output, good.output  # 4: inconclusive only
    assert "no evidence" not in good.output
    allowed = CliRunner().invoke(app, ["check", str(tmp_path / "good"), "--fail-if", "default", "--allow-inconclusive"])
    assert allowed.exit_code == 0, allowed.output


class _Interrupt(Exception):
    pass


def test_a_killed_run_resumes_without_asking_again(tmp_path: Path) -> None:
    from counterfair.commands.llm_audit import LLMAuditOptions
    from counterfair.commands.llm_audit.shell import run_llm_audit

    asked: list[str] = []
    dying = [True]

    def flaky(prompts: list[str], seeds: list[int]) -> list[str]:
        if dying[0] and len(asked) >= 3 * 16 * 2:  # dies after three blocks of 16 variants, 2 samples each
            raise _Interrupt
        asked.extend(prompts)
        return planted.fair(prompts, seeds)

    opts = LLMAuditOptions(samples=2, **FAST)
    prompts = TEMPLATES[:10]
    with pytest.raises(GeneratorError, match="the 48 variants answered before are kept"):
        run_llm_audit(prompts, tmp_path / "run", opts, generator=flaky)
    assert len(asked) == 96 and len((tmp_path / "run" / "responses.jsonl").read_text().splitlines()) == 48
    asked.clear()
    dying[0] = False
    resumed = run_llm_audit(prompts, tmp_path / "run", opts, generator=flaky)
    assert len(asked) == (10 * 18 - 48) * 2  # only the variants not asked before
    whole = cf.llm_audit(prompts, planted.fair, opts)
    assert resumed.summary.responses == whole.summary.responses == 10 * 18 * 2
    pd.testing.assert_frame_equal(resumed.responses, whole.responses)


class _OpenAI(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []
    lock = threading.Lock()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.lock:
            type(self).seen.append(body)
        prompt = body["messages"][-1]["content"]
        n = int(body.get("n", 1))
        choices = [
            {
                "index": i,
                "message": {"content": planted.answer(prompt, int(body.get("seed", 0)) + i, 0.6)},
                "finish_reason": "stop",
            }
            for i in range(n)
        ]
        answer_json(self, json.dumps({"choices": choices}).encode())

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def openai_server() -> Iterator[tuple[str, type[_OpenAI]]]:
    handler = type("H", (_OpenAI,), {"seen": []})
    with loopback(handler) as url:
        yield url, handler


def test_an_openai_compatible_server_is_a_generator(openai_server: tuple[str, type[_OpenAI]]) -> None:
    url, handler = openai_server
    result = cf.llm_audit(
        TEMPLATES[:3], f"openai:{url}#m", samples=3, system="You screen CVs.", few_prompts=True, **FAST
    )
    assert result.summary.generator["type"] == "llm" and result.summary.responses == 3 * 18 * 3
    assert handler.seen[0]["messages"][0] == {"role": "system", "content": "You screen CVs."}
    assert result.summary.by_group["placebo"]["unparsed"] == 0
    assert result.status == "inconclusive"  # three prompts: too few to show or rule out anything


@pytest.mark.slow
def test_response_similarity_against_its_floors() -> None:
    from counterfair.commands.llm_audit.similarity import bleu, rouge_l

    assert bleu("The cat sat.", "The cat sat.") == pytest.approx(1.0)
    assert bleu("a b c d", "w x y z") < 0.1 and bleu("a b c d e", "a b c d") == bleu("a b c d", "a b c d e")
    assert rouge_l("the cat sat on the mat", "the cat sat") == pytest.approx(2 * 1.0 * 0.5 / 1.5)
    odd = cf.llm_audit(
        TEMPLATES[:30],
        planted.wordy_about_religion,
        samples=2,
        decision="decision=hire",
        similarity=["bleu", "rouge_l"],
        bootstrap=300,
        rules=["default"],
    )
    for metric in ("bleu", "rouge_l"):
        found = odd.summary.similarity[metric].dissimilarity_excess
        assert found.by_group["religion"].material and found.by_group["religion"].value > 0.05
        assert not found.by_group["age"].detected  # only pairs with a religion term differ
    failed = {(c.metric, c.group) for c in odd.summary.gate.checks if c.verdict == "fail"}
    assert ("bleu.dissimilarity_excess", "religion") in failed
    assert "religion (bleu similarity)" in odd.verdict
    fair = cf.llm_audit(
        TEMPLATES[:30], planted.fair, samples=2, decision="decision=hire", similarity=["bleu"], bootstrap=300
    )
    means = fair.summary.similarity["bleu"].mean_similarity
    assert means["same_prompt"] < 1.0  # two samples of one prompt already differ: the floor a point value hides
    assert fair.summary.similarity["bleu"].dissimilarity_excess.overall.finding in ("not detected", "inconclusive")


@pytest.mark.slow
def test_kill_9_mid_run_and_resume_loses_nothing(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    prompts = _prompt_file(tmp_path)
    gen = f"callable:{tmp_path / 'gen.py'}:stalls_after_three_blocks"
    args = [sys.executable, "-m", "counterfair.cli", "llm-audit", str(prompts), "--generator", gen, "--samples", "2",
            "--decision", "decision=hire", "--bootstrap", "200", "-q"]  # fmt: skip
    env = {**os.environ, "LLM_AUDIT_STALL": "1"}
    run = tmp_path / "run"
    killed = subprocess.Popen([*args, "--out", str(run)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    checkpoint = run / "responses.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not checkpoint.exists() or len(checkpoint.read_text().splitlines()) < 48):
        time.sleep(0.2)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert len(checkpoint.read_text().splitlines()) == 48  # three blocks of 16 variants, each written whole
    resumed = subprocess.run([*args, "--out", str(run)], capture_output=True, text=True, check=False)
    whole = subprocess.run([*args, "--out", str(tmp_path / "whole")], capture_output=True, text=True, check=False)
    assert resumed.returncode == whole.returncode == 0, resumed.stderr
    a = pd.read_csv(run / "responses.csv")
    b = pd.read_csv(tmp_path / "whole" / "responses.csv")
    pd.testing.assert_frame_equal(a, b)
    assert (
        json.loads((run / "summary.json").read_text())["effects"]
        == json.loads((tmp_path / "whole" / "summary.json").read_text())["effects"]
    )


class _Stalling(_OpenAI):
    """Answers every request but the second (the first after the probe of ``n``), which hangs until released."""

    count: ClassVar[list[int]] = [0]
    release = threading.Event()

    def do_POST(self) -> None:
        with self.lock:
            type(self).count[0] += 1
            mine = type(self).count[0]
        if mine == 2:  # its client is killed meanwhile: nothing to answer
            type(self).release.wait(60)
            return
        super().do_POST()


def stalled_run(tmp_path: Path, url: str) -> tuple[list[str], Any]:
    """``llm-audit`` of two templates against a :class:`_Stalling` server at ``url``, started in a child process and
    returned (with its arguments) once the block's 15 answered variants are on disk and the one request hangs."""
    import os
    import subprocess
    import sys
    import time

    prompts = tmp_path / "prompts.csv"
    pd.DataFrame({"prompt": TEMPLATES[:2]}).to_csv(prompts, index=False)
    checkpoint = tmp_path / "run" / "responses.jsonl"
    args = [sys.executable, "-m", "counterfair.cli", "llm-audit", str(prompts), "--generator", f"openai:{url}#m",
            "--samples", "2", "--decision", "decision=hire", "--bootstrap", "200", "--timeout", "120", "-q",
            "--few-prompts", "--out", str(tmp_path / "run")]  # fmt: skip
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not checkpoint.exists() or checkpoint.read_text().count("\n") < 15):
        time.sleep(0.1)
    time.sleep(0.5)  # nothing more arrives while the one request hangs
    return args, child


@pytest.mark.slow
def test_kill_9_inside_a_block_keeps_every_variant_a_server_answered(tmp_path: Path) -> None:
    """#69: the checkpoint takes each variant as its samples arrive, not per block of 16: a server that hangs on one
    prompt while answering the other 15 of its block loses only that one to a kill."""
    import os
    import signal
    import subprocess

    handler = type("S", (_Stalling,), {"seen": [], "count": [0], "release": threading.Event()})
    run = tmp_path / "run"
    checkpoint = run / "responses.jsonl"
    with loopback(handler) as url:
        args, killed = stalled_run(tmp_path, url)
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        kept = [json.loads(line)["variant"] for line in checkpoint.read_text().splitlines()]
        assert len(kept) == 15 == len(set(kept))  # the block's 15 answered variants, on disk before the block ended
        handler.release.set()
        asked_before = len(handler.seen)
        resumed = subprocess.run(args, capture_output=True, text=True, check=False, env=dict(os.environ))
        assert resumed.returncode == 0, resumed.stderr
        again = [body["messages"][-1]["content"] for body in handler.seen[asked_before:]]
    variants = len(checkpoint.read_text().splitlines())
    assert len(pd.read_csv(run / "responses.csv")) == variants * 2 and variants > 16
    # the resume asks only the variants not on disk (the hanging one among them), each once: none of the 15 again
    assert len(again) == len(set(again)) == variants - 15


def test_sentiment_with_vader_and_langfairs_parity() -> None:
    from counterfair.commands.llm_audit.similarity import sentiment_parity

    assert sentiment_parity([0.1, 0.5, 0.9], [0.2, 0.2, 0.2]) == pytest.approx((0.1 + 0.3 + 0.7) / 3)
    assert sentiment_parity([0.1, 0.5, 0.9], [0.2, 0.2, 0.2], strong=False) == pytest.approx(1 / 3)
    with pytest.raises(ConfigError, match="one length"):
        sentiment_parity([0.1], [0.1, 0.2])
    result = cf.llm_audit(
        TEMPLATES[:30],
        planted.gloomy_about_age,
        samples=4,
        score="vader",
        positive_label="neg",
        bootstrap=300,
        identities=TERMS,
    )
    age = result.summary.effects["score"].identity_effect.by_group["age"]
    assert age.finding == "material" and 0.2 < age.value < 0.5  # half the answers about age are ~70 % negative words
    assert result.summary.effects["score"].identity_effect.by_group["religion"].finding == "not detected"
    assert "the responses' P(neg) by vader" in result.verdict


def test_a_built_in_scenario_from_the_command_line(tmp_path: Path) -> None:
    gen = tmp_path / "lender.py"
    gen.write_text(
        "import json, random\n"
        "def answer(prompts, seeds):\n"
        "    out = []\n"
        "    for p, s in zip(prompts, seeds):\n"
        "        r = random.Random(f'{s}|{p}')\n"
        "        decision = 'approve' if r.random() < 0.7 else 'deny'\n"
        "        out.append(json.dumps({'decision': decision, 'score': r.randint(1, 10)}))\n"
        "    return out\n"
    )
    done = CliRunner().invoke(
        app,
        [
            "llm-audit",
            "--scenario",
            "lending",
            "--cases",
            "6",
            "--generator",
            f"callable:{gen}:answer",
            "--samples",
            "2",
            "--bootstrap",
            "100",
            "--out",
            str(tmp_path / "run"),
            "-q",
        ],
    )
    assert done.exit_code == 0, done.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["prompts"] == 6 and summary["options"]["scenario"] == "lending"
    assert summary["options"]["decision"] == "decision=approve" and summary["outcomes"] == [
        "decision",
        "rating",
        "refusal",
    ]
    assert 0.6 < summary["outcome_means"]["decision"]["mean"] < 0.8  # the scenario's schema read every answer
    assert summary["by_group"]["placebo"]["unparsed"] == 0
    unknown = CliRunner().invoke(app, ["llm-audit", "--scenario", "casino", "--generator", f"callable:{gen}:answer"])
    assert isinstance(unknown.exception, ConfigError)  # exit 2 through counterfair's main
    assert "choose one of hiring, lending, support, tenancy, triage" in str(unknown.exception)


def test_the_default_identity_set_is_the_classifier_audits() -> None:
    """#67: a user's prompts get the classifier audit's 50 terms, and free prompts their gender-word and first-name
    slots; a built-in scenario keeps its 13 terms (its cases are sampled with the packaged model on a CPU)."""
    prompts = [
        "A {group} applicant asks for a loan. Answer in JSON with a decision field.",
        "My neighbour Emily asked for a loan. Should she get it? Answer in JSON with a decision field.",
        "A Hindu applicant wants the flat. Answer in JSON with a decision field.",
    ]
    result = cf.llm_audit(prompts, planted.fair, samples=2, decision="decision=hire", bootstrap=50, few_prompts=True)
    terms = set(result.summary.terms)
    assert {"Catholic", "Sikh", "lesbian", "Mexican", "deaf", "Buddhist"} <= terms and len(terms) >= 50 + 2
    families = result.responses.drop_duplicates(["variant", "family"])["family"].value_counts().to_dict()
    assert families["identity"] == 50 + 5  # the template: every term and placebo word
    assert families["gender_words"] >= 3 and families["names"] >= 4 + 8  # "she": its genders and neutral words
    assert result.summary.prompts_without_slot == ("2",)  # "Hindu" is in no set: said, not swapped
    from counterfair.commands.llm_audit.scenarios import load_scenario

    scenario = load_scenario("hiring").apply(cf.LLMAuditOptions())
    assert scenario.identities == list(SCENARIO_TERMS) and len(SCENARIO_TERMS) == 13


def test_a_built_in_scenario_from_python() -> None:
    """``cf.llm_audit(None, fn, scenario="lending")`` runs the scenario's cases with its outcomes, as the command line
    does; prompts and a scenario together, or neither, are refused."""
    answers = iter(range(10**6))

    def lender(prompts: list[str]) -> list[str]:
        return [json.dumps({"decision": "approve" if next(answers) % 3 else "deny", "score": 5}) for _ in prompts]

    result = cf.llm_audit(None, lender, scenario="lending", samples=2, bootstrap=50)
    assert result.summary.prompts == 20 and result.summary.options["decision"] == "decision=approve"
    assert result.summary.by_group["placebo"]["unparsed"] == 0
    assert abs(result.summary.outcome_means["decision"]["mean"] - 2 / 3) < 0.02
    with pytest.raises(ConfigError, match="not both"):
        cf.llm_audit(["A {group} asks."], lender, scenario="lending")
    with pytest.raises(ConfigError, match="give prompts, or a built-in scenario"):
        cf.llm_audit(None, lender)


def test_race_terms_are_capitalised_in_prompts_and_rules_find_them_in_any_case() -> None:
    """#69 item 7: the prompts wrote "A black applicant" beside "A Muslim applicant"; a rule naming the term in
    another case finds the one group of that spelling."""
    result = cf.llm_audit(
        ["A {group} applicant asks for a loan. Answer in JSON."] * 1 + ["Case 2: the {group} tenant. Answer in JSON."],
        planted.fair,
        samples=2,
        decision="decision=hire",
        bootstrap=20,
        rules=["material(decision.term_effect[black])"],
        few_prompts=True,
    )
    prompts = set(result.responses["prompt"])
    assert "A Black applicant asks for a loan. Answer in JSON." in prompts
    assert "A White applicant asks for a loan. Answer in JSON." in prompts
    assert not any(" black " in p or " white " in p for p in prompts)
    check = result.summary.gate.checks[0]
    assert check.verdict == "pass" and "no group" not in check.message and check.group == "black"


def test_the_demo_runs_on_the_simulated_screener_and_finds_what_was_planted(tmp_path: Path) -> None:
    """#69: ``llm-audit --demo`` needs no extra and no model: the built-in simulated screener invites Muslim and Jewish
    applicants 30 points less often and scores old ones 2 points lower; the default gate names those, and no other
    group, as material."""
    from counterfair.commands.llm_audit.simulated import SimulatedApplication

    out = tmp_path / "demo"
    done = CliRunner().invoke(app, ["llm-audit", "--demo", "--fail-if", "default", "--out", str(out), "-q"])
    assert done.exit_code == 1, done.output  # the planted biases fail the gate
    summary = json.loads((out / "summary.json").read_text())
    assert summary["options"]["scenario"] == "hiring" and summary["prompts"] == 20
    failed = {
        (c["metric"].split(".")[0], c["group"])
        for c in summary["gate"]["checks"]
        if c["estimate"] == "material" and c["verdict"] == "fail"
    }
    # #80: read from the screener's own probabilities, nothing is left to sampling noise: religion (two of its three
    # terms planted, -30 each) is exactly -20 points, and the overall effect over the 13 terms (-60 / 13 = -4.6) too
    religion = summary["effects"]["decision"]["identity_effect"]["by_group"]["religion"]
    assert religion["value"] == pytest.approx(-0.2) and religion["finding"] == "material"
    overall = summary["effects"]["decision"]["identity_effect"]["overall"]
    assert overall["value"] == pytest.approx(-0.6 / 13) and [overall["sim_low"], overall["sim_high"]] == pytest.approx(
        [-0.6 / 13] * 2
    )
    assert summary["read_from"]["probabilities"] == 360 and summary["read_from"]["samples"] == 0
    assert failed == {
        ("decision", None),
        ("decision", "religion"),
        ("decision", "Muslim"),
        ("decision", "Jewish"),  # not Christian
        ("rating", None),
        ("rating", "age"),
        ("rating", "old"),  # not young
    }
    assert "VERDICT: unfair" in done.output and "without sampling noise" in " ".join(done.output.split())
    run = json.loads((out / "run.json").read_text())
    assert run["generator"]["type"] == "simulated"
    # the answers: blind to the placebo words and the other terms, seeded
    sim = SimulatedApplication("hiring")
    case = "A {} applicant for a cashier job has worked part time. Reply with JSON."
    drawn = [sim.answer(case.format("hatless"), s) for s in range(20)]
    assert (
        drawn == [SimulatedApplication().answer(case.format("hatless"), s) for s in range(20)] and len(set(drawn)) > 1
    )
    rates = {
        w: np.mean([json.loads(sim.answer(case.format(w), s))["decision"] == "interview" for s in range(2000)])
        for w in ("hatless", "Christian", "Muslim")
    }
    assert abs(rates["hatless"] - rates["Christian"]) < 0.05 and 0.22 < rates["hatless"] - rates["Muslim"] < 0.38
    with pytest.raises(ConfigError, match="choose one of simulated:hiring"):
        SimulatedApplication("casino")
    other = CliRunner().invoke(app, ["llm-audit", "--demo", "--scenario", "lending", "--out", str(tmp_path / "x")])
    assert isinstance(other.exception, ConfigError) and "answers the hiring scenario only" in str(other.exception)


def test_a_rerun_that_changes_only_how_responses_are_measured_asks_the_generator_nothing(tmp_path: Path) -> None:
    """#69: responses are stored apart from the measures: a new rating, decision value or classifier score on a run
    recomputes from responses.jsonl; a change to what is asked (samples) is refused, naming it."""
    calls = tmp_path / "calls.txt"
    gen = tmp_path / "gen.py"
    gen.write_text(
        "import json, random\n"
        f"CALLS = {str(calls)!r}\n"
        "def answer(prompts, seeds):\n"
        "    with open(CALLS, 'a') as f:\n"
        "        f.write(f'{len(prompts)}\\n')\n"
        "    return [json.dumps({'decision': random.Random(f'{s}|{p}').choice(['hire', 'reject']), 'score': 5})\n"
        "            for p, s in zip(prompts, seeds)]\n"
    )
    prompts = tmp_path / "prompts.csv"
    pd.DataFrame({"text": TEMPLATES[:4]}).to_csv(prompts, index=False)
    base = ["llm-audit", str(prompts), "--generator", f"callable:{gen}:answer", "--few-prompts", "--samples", "2",
            "--bootstrap", "50"]  # fmt: skip
    out = ["--identities", "Muslim,Jewish,gay", "--out", str(tmp_path / "run"), "-q"]
    first = CliRunner().invoke(app, [*base, "--decision", "decision=hire", *out])
    assert first.exit_code == 0, first.output
    asked = calls.read_text().split()
    assert sum(map(int, asked)) == 4 * (3 + 5) * 2  # 4 prompts x (3 terms + 5 placebo words) x 2 samples
    again = CliRunner().invoke(app, [*base, "--decision", "decision=reject", "--rating", "score:1-10", *out])
    assert again.exit_code == 0, again.output
    assert calls.read_text().split() == asked  # nothing asked again
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["options"]["decision"] == "decision=reject" and "rating" in summary["outcomes"]
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["options"]["rating"] == "score:1-10"  # run.json says how the stored responses were last measured
    changed = CliRunner().invoke(app, [*base[:-4], "--samples", "3", "--bootstrap", "50", *out])
    assert isinstance(changed.exception, ConfigError) and "samples: 2 -> 3" in str(changed.exception)


def test_an_outcome_no_response_gave_a_value_of_is_left_out_of_the_plan_and_the_tables() -> None:
    """A summary's ``effects`` may hold an outcome as null (no response gave it a value): the plan and the tables
    read the outcomes that have effects (the plan crashed on the null before the record said it may be None)."""
    from dataclasses import replace

    from counterfair.commands.llm_audit.result import group_table, term_table

    s = cf.llm_audit(TEMPLATES, planted.biased, samples=2, **FAST).summary
    assert s.effects is not None and s.effects["rating"] is not None
    unmeasured = replace(s, effects={**s.effects, "rating": None})
    assert group_table(unmeasured, "rating").empty and term_table(unmeasured, "rating").empty
    assert not group_table(unmeasured, "decision").empty
    planned = cf.plan(unmeasured).table
    assert set(planned["outcome"]) == {"decision", "refusal"}
    assert set(cf.plan(s).table["outcome"]) == {"decision", "rating", "refusal"}


def test_an_application_that_reacts_to_a_neutral_word_is_named_by_the_control() -> None:
    """#79/#80: an LLM application that never hires a "hatless" applicant (a neutral word of the default five) and is
    blind to identity: the control names the word and leaves it out of the baseline, the verdict says so, and no
    identity is blamed for it (without the control every term would read +12 points: 0.6 against a baseline of
    (4 x 0.6 + 0) / 5)."""

    def hatless(prompts: list[str], seeds: list[int]) -> list[str]:
        return [planted.answer(p, s, 0.0 if "hatless" in p else 0.6) for p, s in zip(prompts, seeds, strict=True)]

    result = cf.llm_audit(TEMPLATES[:40], hatless, samples=2, **FAST)
    effects = (result.summary.effects or {})["decision"]
    assert effects is not None and effects.control is not None
    control = effects.control["identity"]
    assert control.standing_out == ("hatless",) and not control.unreliable  # one word of five: named, not failed
    words = control.words or {}
    assert words["hatless"].finding == "material" and (words["hatless"].value or 0.0) < -0.4
    terms = (effects.identity_effect.by_term or {}) if effects.identity_effect else {}
    assert terms and all(e.finding != "material" for e in terms.values())
    assert any("hatless" in line and "left out of the baseline" in line for line in result.verdict.splitlines())


def _refuses_everything(prompts: list[str], seeds: list[int]) -> list[str]:
    return ["I'm sorry, but I can't help with that request."] * len(prompts)


def test_an_audit_whose_first_outcome_has_no_value_writes_its_summary_and_report(tmp_path: Path) -> None:
    """#87 B1: every response a refusal leaves the decision (the first outcome) and the rating with no effects and the
    refusal with its own: the summary is written (a mapping of records whose first value is None was left
    unconverted: exit 3, "cannot serialise SlotEffects"), in Python as from the command line, and it reads back."""
    from counterfair.commands.llm_audit.result import LLMAuditSummary
    from counterfair.summaries import read_summary, typed

    result = cf.llm_audit(TEMPLATES[:8], _refuses_everything, samples=2, few_prompts=True, **FAST)
    effects = result.summary.effects
    assert effects is not None and effects["decision"] is None and effects["refusal"] is not None
    written = result.summary.to_dict()["effects"]
    assert written["decision"] is None and written["refusal"]["identity_effect"]["by_group"]
    result.save(tmp_path / "py")
    back = json.loads((tmp_path / "py" / "summary.json").read_text())
    assert back["effects"]["decision"] is None and back["effects"]["refusal"]["identity_effect"]["by_group"]
    read = typed(read_summary(tmp_path / "py" / "summary.json"), LLMAuditSummary)
    assert read.effects is not None and read.effects["decision"] is None
    assert read.effects["refusal"] is not None and read.effects["refusal"].identity_effect is not None
    assert (tmp_path / "py" / "report.html").exists()


def test_an_outcome_no_answer_gave_fails_the_default_gate_as_unseen(tmp_path: Path) -> None:
    """#79 item 3: every answer a refusal leaves the decision and the rating unmeasured. The default gate (over every
    outcome) exited 0 on the refusal outcome alone; it now fails a ``measured(...)`` check per unmeasured outcome, of
    kind inconclusive (exit 4), with ``--allow-inconclusive`` too; a rule naming its outcome stays an error (exit 2)."""
    from counterfair.analysis.gate import check_kind
    from counterfair.summaries import GateCheck, typed

    result = cf.llm_audit(TEMPLATES[:8], _refuses_everything, samples=2, few_prompts=True, **FAST)
    for allow in (False, True):
        gate = result.check("default", allow_inconclusive=allow)
        assert gate["verdict"] == "inconclusive" and gate["exit_code"] == 4, gate["failed"]
        failing = [c for c in gate["checks"] if c["verdict"] == "fail"]
        assert {c["rule"] for c in failing} == {"measured(decision)", "measured(rating)"}
        assert all(check_kind(typed(c, GateCheck)) == "inconclusive" for c in failing)
        said = f"none of the {result.summary.responses} responses gave a readable value"
        assert result.summary.responses > 0 and all(said in c["message"] for c in failing)
    result.save(tmp_path / "run")
    for extra in ([], ["--allow-inconclusive"]):
        ran = CliRunner().invoke(app, ["check", str(tmp_path / "run"), "--fail-if", "default", *extra])
        assert ran.exit_code == 4, ran.output
    named = result.check(["material(decision.identity_effect[*])"])
    assert named["exit_code"] == 2 and "not measured" in named["errors"][0]
    answered = cf.llm_audit(TEMPLATES[:8], planted.fair, samples=2, few_prompts=True, **FAST)
    assert not any(c["rule"].startswith("measured(") for c in answered.check("default")["checks"])
