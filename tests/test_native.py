"""The llama.cpp native path: a probe in a child process decides weight repacking once per machine; a crash in the
child never reaches this process; ``COUNTERFAIR_LLAMA_REPACK`` forces either path, so both run on every machine."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from counterfair.errors import ConfigError, NativeLibraryError
from counterfair.llm import SamplingParams, load_llm, native
from counterfair.models import get_model_info

MODEL = "qwen2.5-coder-0.5b-instruct"


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COUNTERFAIR_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(native.ENV, raising=False)


def _child(tmp_path: Path, crash_when: str) -> list[str]:
    """A stand-in probe child: a real SIGSEGV (reading address 0) when its path argument is in ``crash_when``; it
    logs every call so the tests can count probes."""
    script = tmp_path / "child.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import ctypes, sys
            with open({str(tmp_path / "calls.log")!r}, "a") as log:
                log.write(sys.argv[2] + "\\n")
            if sys.argv[2] in {crash_when!r}.split(","):
                ctypes.string_at(0)
            print("probe ok")
            """
        )
    )
    return [sys.executable, str(script)]


def _model_file(tmp_path: Path) -> Path:
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF" + b"\0" * 64)
    return path


def test_a_crash_with_repacking_falls_back_to_the_safe_path_and_is_remembered(tmp_path: Path) -> None:
    command = _child(tmp_path, "on")
    path = native.decide(_model_file(tmp_path), command=command)
    assert (path.repack, path.decided_by) == (False, "probe")
    assert "SIGSEGV" in path.detail
    assert (tmp_path / "calls.log").read_text().split() == ["on", "off"]
    again = native.decide(_model_file(tmp_path), command=command)
    assert (again.repack, again.decided_by) == (False, "cache")
    assert (tmp_path / "calls.log").read_text().split() == ["on", "off"]  # no second probe
    cached = json.loads((tmp_path / "cache" / "llama_native.json").read_text())
    record = next(v for k, v in cached.items() if k != "schema_version")
    assert record["repack"] is False and record["llama_cpp_python"]


def test_a_working_fast_path_is_kept(tmp_path: Path) -> None:
    path = native.decide(_model_file(tmp_path), command=_child(tmp_path, "none"))
    assert (path.repack, path.decided_by) == (True, "probe")
    assert (tmp_path / "calls.log").read_text().split() == ["on"]


def test_a_crash_on_both_paths_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(
        NativeLibraryError, match=r"with weight repacking \(SIGSEGV\) and without it \(SIGSEGV\)"
    ) as err:
        native.decide(_model_file(tmp_path), command=_child(tmp_path, "on,off"))
    assert "COUNTERFAIR_LLAMA_REPACK=off" in str(err.value) and "--llm openai:URL" in str(err.value)
    assert not (tmp_path / "cache" / "llama_native.json").exists()  # a failure is not remembered


def test_the_variable_forces_a_path_without_a_probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for value, repack in (("off", False), ("on", True), ("0", False)):
        monkeypatch.setenv(native.ENV, value)
        path = native.decide(_model_file(tmp_path), command=_child(tmp_path, "on,off"))
        assert (path.repack, path.decided_by) == (repack, "env")
    assert not (tmp_path / "calls.log").exists()
    monkeypatch.setenv(native.ENV, "fast")
    with pytest.raises(ConfigError, match="COUNTERFAIR_LLAMA_REPACK='fast': expected auto, on or off"):
        native.decide(_model_file(tmp_path))


def test_a_damaged_verdict_cache_means_a_new_probe(tmp_path: Path) -> None:
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "llama_native.json").write_text("{not json")
    path = native.decide(_model_file(tmp_path), command=_child(tmp_path, "on"))
    assert (path.repack, path.decided_by) == (False, "probe")


@pytest.mark.model
@pytest.mark.parametrize("setting", ["off", "on", "auto"])
def test_the_real_model_runs_on_every_path(setting: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if setting == "on":  # forced repacking kills the process on CPUs whose AMX faults (MODELS.md, hardware notes)
        fast = native.probe(get_model_info(MODEL).path(), repack=True)
        if not fast.ok:
            pytest.skip(f"weight repacking ends a process on this CPU ({fast.cause}): 'auto' takes the safe path")
    monkeypatch.setenv(native.ENV, setting)
    llm = load_llm(MODEL, n_ctx=512)
    out = llm.complete(["The capital of France is"], SamplingParams(n=2, temperature=0.0, max_tokens=6, seed=1))
    assert len(out[0]) == 2 and all(c.text.strip() for c in out[0])
    info = llm.info()
    assert info["native_path"]["decided_by"] == ("env" if setting != "auto" else "probe")
    if setting != "auto":
        assert info["weight_repacking"] is (setting == "on")


@pytest.mark.model
def test_the_real_probe_loads_the_model_in_a_child(tmp_path: Path) -> None:
    result = native.probe(get_model_info(MODEL).path(), repack=False)
    assert result.ok and result.cause == "ok" and "probe ok" in result.output


@pytest.mark.slow
def test_a_native_crash_in_a_run_is_reported_and_the_finished_rows_are_kept(tmp_path: Path) -> None:
    """The CLI with an LLM whose native code segfaults at the third input: the process dies with a Python-level
    fault report on stderr (not silently), and the two finished inputs are in the checkpoint; the rerun resumes.
    Texts are checkpointed per LLM call (``--llm-chunk`` texts sampled together): here two per call, so the crash
    in the second call keeps the first call's two."""
    data = tmp_path / "texts.csv"
    texts = [f"My Muslim neighbour number {i} is kind." for i in range(4)]
    data.write_text("text\n" + "\n".join(texts) + "\n")
    driver = tmp_path / "driver.py"
    driver.write_text(
        textwrap.dedent(
            f"""
            import ctypes, sys
            sys.path.insert(0, {str(Path(__file__).parent)!r})
            from fakes import ScriptedLLM
            import counterfair.llm as llm_module
            calls, crash = [], sys.argv[1] == "crash"
            def answer(text, attempt, sample):
                if sample == 0:
                    calls.append(text)
                if len(calls) == 3 and crash:
                    ctypes.string_at(0)
                return "{{" + text.replace("Muslim", "new") + "}}"
            llm_module.load_llm = lambda *a, **k: ScriptedLLM(answer)
            from counterfair.cli import main
            sys.argv = ["counterfair", "generate", {str(data)!r}, "--methods", "llm", "--samples", "2",
                        "--max-attempts", "1", "--llm-chunk", "2", "--out", {str(tmp_path / "run")!r}, "-q"]
            main()
            """
        )
    )
    crashed = subprocess.run([sys.executable, str(driver), "crash"], capture_output=True, text=True, check=False)
    assert crashed.returncode != 0
    assert "Segmentation fault" in crashed.stderr, crashed.stderr[-2000:]
    done = [json.loads(line) for line in (tmp_path / "run" / ".work" / "done.jsonl").read_text().splitlines()]
    assert [d["row"] for d in done] == [0, 1]
    resumed = subprocess.run([sys.executable, str(driver), "fine"], capture_output=True, text=True, check=False)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    import pandas as pd

    cfs = pd.read_csv(tmp_path / "run" / "counterfactuals.csv")
    assert cfs["input_id"].astype(str).tolist() == ["0", "1", "2", "3"]
