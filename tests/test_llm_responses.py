"""#69: a misbehaving model cannot stop, poison or leak an LLM audit — every response is data (a row status, never an
exception), secrets in endpoint URLs are never written, a spreadsheet runs no response, and ambiguous inputs are
refused as the classifier commands refuse them."""

from __future__ import annotations

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import counterfair as cf
from counterfair.cli import app
from counterfair.commands.llm_audit.core import readable
from counterfair.commands.llm_audit.outcomes import parse_schema, structured
from counterfair.errors import ConfigError, GeneratorError, InputError

from .fakes import answer_json, loopback

PROMPTS = [f"A {{group}} applicant for job {i}. Answer in JSON." for i in range(8)]
TERMS = "gay,straight,Muslim,Christian"
SCHEMA = parse_schema("decision=hire", ["hire", "reject"], "score:1-10")


def _audit(generator: Any, **options: Any) -> Any:
    return cf.llm_audit(
        PROMPTS, generator, samples=2, decision="decision=hire", identities=TERMS, bootstrap=50, **options
    )


def test_a_model_that_never_answers_in_json_is_a_finding_not_an_error() -> None:
    refusing = _audit(lambda ps: ["I'm sorry, but I can't help with that." for _ in ps], rules=["default"])
    # #79: the default gate cannot pass an outcome no answer gave: unseen, exit 4 (it passed on the refusals alone)
    assert refusing.status == "not measurable" and refusing.summary.gate.verdict == "inconclusive"
    gate = refusing.summary.gate
    assert gate.exit_code == 4 and "measured(decision): not measured" in gate.failed[0]
    assert refusing.verdict.startswith("VERDICT: not measurable — no answer could be read for decision")
    assert "refusal: every response declined (144 responses)" in refusing.verdict
    assert refusing.summary.by_group["sexuality"]["refused"] == refusing.summary.by_group["sexuality"]["responses"]
    said = refusing.check(["material(decision.identity_effect)"])  # a rule on the unmeasured outcome: said why
    assert said["verdict"] == "error" and "no response gave a readable value" in said["checks"][0]["message"]
    partly = _audit(lambda ps: ['{"score": 5}' for _ in ps], rating="score:1-10")  # the rating read, not the decision
    assert partly.status == "not measurable" and partly.verdict.startswith(
        "VERDICT: not measurable — no answer could be read for decision"
    )
    assert "; rating was read and shows no material effect." in partly.verdict.splitlines()[0]
    prose = _audit(lambda ps: ["I would hire them." for _ in ps])
    assert prose.status == "not measurable" and set(prose.responses["status"]) == {"unparsed: no JSON object"}


def test_one_bad_response_is_a_row_status_and_the_run_finishes(tmp_path: Path) -> None:
    deep = '{"decision": "hire", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    asked: list[str] = []

    def hostile(prompts: list[str]) -> list[str]:
        asked.extend(prompts)
        return [deep if "job 3" in p else '{"decision": "hire"} \ud800' if "job 2" in p else '{"decision": "reject"}'
                for p in prompts]  # fmt: skip

    (tmp_path / "p.csv").write_text("text\n" + "\n".join(PROMPTS) + "\n", encoding="utf-8")
    from counterfair.commands.llm_audit import LLMAuditOptions
    from counterfair.commands.llm_audit.shell import run_llm_audit

    opts = LLMAuditOptions(samples=2, decision="decision=hire", identities=TERMS, bootstrap=50)
    result = run_llm_audit(tmp_path / "p.csv", tmp_path / "run", opts, generator=hostile)
    statuses = result.responses.set_index("prompt")["status"]
    assert set(statuses[statuses.index.str.contains("job 3")]) == {"unparsed: JSON nested too deep to read"}
    assert set(statuses[statuses.index.str.contains("job 2")]) == {"ok; lone surrogates escaped"}
    written = pd.read_csv(tmp_path / "run" / "responses.csv")
    assert (written["response"] == '{"decision": "hire"} \\ud800').sum() == (statuses.index.str.contains("job 2")).sum()
    before = len(asked)
    again = run_llm_audit(tmp_path / "p.csv", tmp_path / "run", opts, generator=hostile)  # resumes from the checkpoint
    assert len(asked) == before and again.summary.responses == result.summary.responses


class _Answers(BaseHTTPRequestHandler):
    headers_seen: ClassVar[list[str]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        _Answers.headers_seen.append(str(self.headers.get("Authorization")))
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        choices = [{"index": i, "message": {"role": "assistant", "content": '{"decision": "hire"}'}}
                   for i in range(body.get("n", 1))]  # fmt: skip
        answer_json(self, json.dumps({"choices": choices}).encode())


def test_no_secret_reaches_any_file_of_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A password in the endpoint URL and an API key in the environment are used, and never written: every file of
    the run directory (run.json, summary.json, responses, reports) and the console are searched for them."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-ENVSECRET987")
    (tmp_path / "p.csv").write_text("text\n" + "\n".join(PROMPTS[:4]) + "\n", encoding="utf-8")
    with loopback(_Answers) as url:
        spec = f"openai:{url.replace('://', '://alice:URLSECRET123@')}/v1#model"
        args = ["llm-audit", str(tmp_path / "p.csv"), "--generator", spec, "--decision", "decision=hire",
                "--identities", TERMS, "--samples", "2", "--few-prompts", "--out", str(tmp_path / "run"),
                "-q"]  # fmt: skip
        done = CliRunner().invoke(app, args)
        resumed = CliRunner().invoke(app, args)  # the redacted identity still matches: the run resumes
    assert done.exit_code == 0 and resumed.exit_code == 0, done.output + resumed.output
    assert any("Bearer sk-ENVSECRET987" in h or h.startswith("Basic") for h in _Answers.headers_seen)  # used
    files = [p for p in (tmp_path / "run").rglob("*") if p.is_file()]
    assert len(files) >= 5
    for path in files:
        text = path.read_bytes().decode("utf-8", "replace")
        assert "URLSECRET123" not in text and "ENVSECRET987" not in text, path
    assert "alice:***@" in (tmp_path / "run" / "summary.json").read_text()
    assert "URLSECRET123" not in done.output + resumed.output


def test_a_scorer_with_three_labels_needs_its_positive_label(tmp_path: Path) -> None:
    (tmp_path / "three.py").write_text("def clf(texts):\n    return [[0.2, 0.3, 0.5] for _ in texts]\n")
    with pytest.raises(cf.ConfigError, match=r"3 labels .* --positive-label"):
        _audit(lambda ps: ['{"decision": "hire"}' for _ in ps], score=f"callable:{tmp_path / 'three.py'}:clf")
    named = _audit(lambda ps: ['{"decision": "hire"}' for _ in ps], score=f"callable:{tmp_path / 'three.py'}:clf",
                   positive_label="2")  # fmt: skip
    assert set(named.responses["score"]) == {0.5}


def test_a_prompt_with_a_lone_surrogate_is_refused_naming_its_row() -> None:
    with pytest.raises(InputError, match=r"row 1 .*half of a UTF-16 surrogate pair"):
        cf.llm_audit(["A {group} nurse.", "A {group} \ud800 driver."], lambda ps: ["{}" for _ in ps], samples=2)


def test_responses_a_spreadsheet_would_run_are_written_inert_and_read_back_as_they_were(tmp_path: Path) -> None:
    formula = '=HYPERLINK("http://x","click")'
    result = _audit(lambda ps: [formula if "job 1" in p else '{"decision": "hire"}' for p in ps])
    saved = result.save(tmp_path / "run")
    raw = pd.read_csv(saved / "responses.csv", dtype=str)
    assert not raw["response"].str.startswith(("=", "+", "-", "@")).any()
    assert (raw["response"] == "'" + formula).any()
    from counterfair.commands.llm_audit.result import read_run

    assert (read_run(saved).responses["response"] == formula).any()  # the text as the model wrote it
    from counterfair.runs import parquet_copies

    parquet_copies(saved, ("absent.csv",), {"responses": result.responses})  # --parquet: a table not there: skipped
    table = pd.read_parquet(saved / "responses.parquet")
    assert (table["response"] == formula).sum() == (raw["response"] == "'" + formula).sum() > 0  # Parquet runs nothing
    pd.testing.assert_frame_equal(table.drop(columns="schema_version"), result.responses, check_dtype=False)
    assert "responses.parquet" in json.loads((saved / "run.json").read_text())["files"]  # --overwrite may remove it


JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.floats(allow_nan=True)
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300)
@given(st.one_of(st.text(), JSONISH.map(lambda v: json.dumps(v)), st.text().map(lambda t: "{" * 50 + t)))
@example('{"decision": ' + "[" * 5000 + "]" * 5000 + "}")
@example('{"decision": "hire"} \ud800\udfff\ud800')
@example("{" * 10_000)
@example('{"decision": 1e999, "score": -1e400}')
def test_any_response_is_a_row_status_never_an_exception(text: str) -> None:
    """The parser and the checkpoint take any text a server may send: nesting, surrogates, control characters, huge
    numbers, braces everywhere."""
    decision, rating, status = structured(text, SCHEMA)
    assert status == "ok" or status.startswith("unparsed: ")
    assert decision in (0.0, 1.0) or decision != decision  # a decision, or NaN
    assert 0.0 <= rating <= 1.0 or rating != rating  # a share of the rating's range, or NaN
    kept = readable(text)
    kept.encode("utf-8")  # writable anywhere
    record = json.loads(json.dumps({"variant": "v", "responses": [kept]}, ensure_ascii=False))
    assert record["responses"] == [kept]


def test_a_variant_that_gets_no_answer_is_recorded_and_asked_again(tmp_path: Path) -> None:
    """#69: a request that keeps failing (a timeout after its retries) costs its variant, not the run: the other
    variants are measured and saved, the lost one is a ``failed`` row, the exit says when too many were lost, and a
    rerun asks only the failed ones."""
    from counterfair.commands.llm_audit import LLMAuditOptions
    from counterfair.commands.llm_audit.shell import run_llm_audit
    from counterfair.errors import GeneratorError

    down = {"on": True}
    asked: list[str] = []

    def flaky(prompts: list[str]) -> list[str]:
        if down["on"] and any("job 5" in p and "Muslim" in p for p in prompts):
            raise TimeoutError("the server timed out three times")
        asked.extend(prompts)
        return ['{"decision": "hire"}' for _ in prompts]

    (tmp_path / "p.csv").write_text("text\n" + "\n".join(PROMPTS) + "\n", encoding="utf-8")
    opts = LLMAuditOptions(samples=2, decision="decision=hire", identities=TERMS, bootstrap=50)
    result = run_llm_audit(tmp_path / "p.csv", tmp_path / "run", opts, generator=flaky)  # 1 of 72: under 5 %
    assert result.summary.failed_variants == 1 and result.summary.variants == 72
    failed = result.responses[result.responses["status"].str.startswith("failed")]
    assert len(failed) == 1 and "job 5" in failed["prompt"].iloc[0] and "Muslim" in failed["prompt"].iloc[0]
    assert "TimeoutError: the server timed out three times" in failed["status"].iloc[0]
    assert "Failed: 1 of 72 variants got no answer" in result.verdict and "religion 1" in result.verdict
    assert result.summary.by_group["religion"]["failed"] == 1
    assert (pd.read_csv(tmp_path / "run" / "responses.csv")["status"].str.startswith("failed")).sum() == 1

    strict = LLMAuditOptions(samples=2, decision="decision=hire", identities=TERMS, bootstrap=50, max_failed=0.0)
    with pytest.raises(GeneratorError, match=r"1 of 72 prompt variants \(1%\) got no answer"):
        run_llm_audit(tmp_path / "p.csv", tmp_path / "run", strict, generator=flaky)  # a knob: the run resumes
    assert (tmp_path / "run" / "summary.json").is_file()

    down["on"], before = False, len(asked)
    healed = run_llm_audit(tmp_path / "p.csv", tmp_path / "run", strict, generator=flaky)
    assert len(asked) - before == 2 and healed.summary.failed_variants == 0  # only the lost variant, its 2 samples
    assert "Failed" not in healed.verdict


def test_markdown_from_the_data_has_no_live_script_link(tmp_path: Path) -> None:
    """#69 item 7: report.md left ``[x](javascript:...)`` live; a link to a script scheme becomes text, any other
    Markdown stays as written."""
    from counterfair.text import md_text

    assert md_text("[click](javascript:alert(1))") == "[click\\]\\(javascript:alert(1))"
    assert md_text("[x]: JavaScript:alert(1)") == "[x\\]: JavaScript:alert(1)"
    assert md_text("[x] ( data:text/html,hi)") == "[x\\]\\( data:text/html,hi)"
    assert md_text("interval [+5.0, +8.4], [docs](https://example.org)") == (
        "interval [+5.0, +8.4], [docs](https://example.org)"
    )
    link = "[win a prize](javascript:alert(1))"  # a prompt's id, listed in report.md as a prompt with no slot
    table = pd.DataFrame(
        {"id": ["a", link], "text": ["A {group} applicant. Answer in JSON.", "No slot. Answer in JSON."]}
    )
    result = cf.llm_audit(
        table, lambda ps: ['{"decision": "hire"}' for _ in ps], samples=2, decision="decision=hire",
        identities=TERMS, bootstrap=20, id_column="id", few_prompts=True,
    )  # fmt: skip
    result.save(tmp_path / "run")
    written = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert "[win a prize\\]\\(javascript:alert(1))" in written and "](javascript:" not in written


def test_report_and_check_refuse_a_damaged_responses_csv(tmp_path: Path) -> None:
    """#69 item 7: ``counterfair report DIR`` rebuilt a report from a damaged responses.csv and exited 0; now a cell
    that is not a number, an outcome outside [0, 1], a lost row or column is refused naming where (an InputError:
    exit 2 through counterfair's main)."""
    run = tmp_path / "run"
    _audit(lambda ps: ['{"decision": "hire"}' for _ in ps]).save(run)
    good = (run / "responses.csv").read_text(encoding="utf-8")
    assert CliRunner().invoke(app, ["report", str(run)]).exit_code == 0
    frame = pd.read_csv(run / "responses.csv", dtype=str, keep_default_na=False)
    decision = frame["decision"]
    damages = {
        "line 4, column decision: 'yes' is not a number": frame.assign(decision=decision.mask(frame.index == 2, "yes")),
        "line 2, column decision: '7' is outside [0, 1]": frame.assign(decision=decision.mask(frame.index == 0, "7")),
        "143 answered responses where the run's summary.json counts 144": frame.iloc[1:],
        "no column status": frame.drop(columns=["status"]),
    }  # fmt: skip
    for said, damaged in damages.items():
        damaged.to_csv(run / "responses.csv", index=False)
        for command in (["report", str(run)], ["check", str(run), "--fail-if", "default"]):
            done = CliRunner().invoke(app, command)
            assert isinstance(done.exception, InputError), (command, said, done.output)  # exit 2 through main
            assert said in str(done.exception), (command, said, done.exception)
    (run / "responses.csv").write_text(good, encoding="utf-8")
    assert CliRunner().invoke(app, ["report", str(run)]).exit_code == 0


class _Hangs(BaseHTTPRequestHandler):
    """Answers every prompt at once, but one that names "job 5" not until the test releases it (a hanging server
    hangs: no healthy answer waits on the machine's speed, whatever its load)."""

    release = threading.Event()

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if "job 5" in json.dumps(body):
            self.release.wait(120)
        choices = [{"index": i, "message": {"role": "assistant", "content": '{"decision": "hire"}'}}
                   for i in range(body.get("n", 1))]  # fmt: skip
        with contextlib.suppress(OSError):  # the client gave up on it
            answer_json(self, json.dumps({"choices": choices}).encode())


def test_timeout_and_retries_bound_a_hanging_server(tmp_path: Path) -> None:
    """#69 item 7: a hanging server took 406 s to fail and nothing could shorten it; ``--timeout`` and ``--retries``
    bound each request, the hanging prompt's variants are failed rows, the rest is measured, and above
    ``--max-failed`` the run exits 2 with everything saved. Both are refused for a generator that is no server."""
    (tmp_path / "p.csv").write_text("text\n" + "\n".join(PROMPTS) + "\n", encoding="utf-8")
    handler = type("H", (_Hangs,), {"release": threading.Event()})
    try:
        with loopback(handler) as url:
            args = ["llm-audit", str(tmp_path / "p.csv"), "--generator", f"openai:{url}/v1#m", "--decision",
                    "decision=hire", "--identities", TERMS, "--samples", "2", "--timeout", "5", "--retries", "0",
                    "--out", str(tmp_path / "run"), "-q"]  # fmt: skip
            done = CliRunner().invoke(app, args)
    finally:
        handler.release.set()
    assert isinstance(done.exception, GeneratorError), done.output
    assert "9 of 72 prompt variants (12%) got no answer" in str(done.exception)
    rows = pd.read_csv(tmp_path / "run" / "responses.csv")
    failed = rows[rows["status"].str.startswith("failed")]
    assert len(failed) == 9 and failed["prompt"].str.contains("job 5").all()
    assert failed["status"].str.contains("no answer within 5 s").all()
    assert (rows["status"] == "ok").sum() == 63 * 2
    with pytest.raises(ConfigError, match="--timeout and --retries are for an openai:URL#MODEL server"):
        cf.llm_audit(PROMPTS, lambda ps: ps, samples=2, identities=TERMS, timeout=5.0)


def test_a_run_too_large_stops_before_the_first_call_saying_how_large(tmp_path: Path) -> None:
    """#69 item 7: a 100,000-row prompt file ran 4 minutes with no estimate; a run that would ask for more than
    ``--max-calls`` responses stops before the first call, saying how many and how to run it anyway."""
    asked: list[str] = []

    def counting(prompts: list[str]) -> list[str]:
        asked.extend(prompts)
        return ['{"decision": "hire"}' for _ in prompts]

    with pytest.raises(
        ConfigError,
        match=r"would ask the generator for 144 responses \(72 prompt variants × 2 samples; "
        r"up to 28,800 tokens at --max-tokens 200\), more than --max-calls 100: raise --max-calls",
    ):
        _audit(counting, max_calls=100)
    assert asked == []
    assert _audit(counting, max_calls=144).summary.responses == 144 and len(asked) == 144
    (tmp_path / "p.csv").write_text("text\n" + "\n".join(PROMPTS) + "\n", encoding="utf-8")
    args = ["llm-audit", str(tmp_path / "p.csv"), "--generator", "callable:x.py:f", "--max-calls", "0"]
    assert CliRunner().invoke(app, args).exit_code == 2  # refused by the option itself (typer: below its minimum)


def test_assert_fair_and_open_run_read_an_llm_audit_run(tmp_path: Path) -> None:
    """#69 item 10: ``assert_fair`` failed with "no pairs.csv" on an llm-audit run; it reads the run's own gate (by
    directory or result), as ``open_run(DIR).check`` and ``counterfair check`` do."""
    from counterfair.testing import FairnessGateFailed, assert_fair

    def lowers_muslim(prompts: list[str]) -> list[str]:
        return ['{"decision": "reject"}' if "Muslim" in p else '{"decision": "hire"}' for p in prompts]

    unfair = _audit(lowers_muslim)
    unfair.save(tmp_path / "run")
    for run in (tmp_path / "run", str(tmp_path / "run"), unfair):
        with pytest.raises(FairnessGateFailed, match=r"material\(decision.identity_effect\[religion\]\)"):
            assert_fair(run, rules="material(decision.identity_effect[*])")
    assert not cf.open_run(tmp_path / "run").check("material(decision.identity_effect[religion])")
    passed = assert_fair(tmp_path / "run", rules="material(decision.identity_effect[sexuality])")
    assert passed["verdict"] == "pass"


def test_llm_audit_logs_to_mlflow_as_the_audit_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """#69 item 10: ``--log-to mlflow`` was "No such option" on llm-audit; it logs each outcome's measures, the
    gate and the report, to a store MLflow 3 reads back, and an unknown tracker is refused before any work."""
    pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # for this process's client reading the store back
    from mlflow.tracking import MlflowClient

    (tmp_path / "p.csv").write_text("text\n" + "\n".join(PROMPTS) + "\n", encoding="utf-8")
    gen = tmp_path / "gen.py"
    gen.write_text("def answer(prompts):\n    return ['{\"decision\": \"reject\"}' if 'Muslim' in p else "
                   "'{\"decision\": \"hire\"}' for p in prompts]\n")  # fmt: skip
    store = (tmp_path / "mlruns").as_uri()
    common = ["llm-audit", str(tmp_path / "p.csv"), "--generator", f"callable:{gen}:answer", "--decision",
              "decision=hire", "--identities", TERMS, "--samples", "2", "--bootstrap", "50", "-q"]  # fmt: skip
    bad = CliRunner().invoke(app, [*common, "--out", str(tmp_path / "x"), "--log-to", "wandb"])
    assert isinstance(bad.exception, ConfigError) and "unknown tracker" in str(bad.exception)
    assert not (tmp_path / "x" / "run.json").exists()
    rule = "material(decision.identity_effect[*])"
    logged = ["--out", str(tmp_path / "run"), "--fail-if", rule, "--log-to", "mlflow", "--mlflow-uri", store]
    done = CliRunner().invoke(app, [*common, *logged])
    assert done.exit_code == 1, done.output  # the Muslim rejections fail the gate, and are logged all the same
    run_id = done.output.split("logged to mlflow: run ")[1].split()[0]
    run = MlflowClient(tracking_uri=store).get_run(run_id)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    religion = summary["effects"]["decision"]["identity_effect"]["by_group"]["religion"]["value"]
    assert run.data.metrics["decision.identity_effect.religion"] == pytest.approx(religion) and religion < -0.2
    assert run.data.metrics["decision.identity_effect.religion.material"] == 1.0
    assert run.data.metrics["gate.exit_code"] == 1 and run.data.tags["gate.verdict"] == "fail"
    assert run.data.params["samples"] == "2" and run.data.params["generator"].endswith("gen.py:answer")
    assert {"report.html", "summary.json", "gate.json"} <= {a.path for a in MlflowClient(store).list_artifacts(run_id)}
