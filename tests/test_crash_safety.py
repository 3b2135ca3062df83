"""Kill a run with SIGKILL midway, resume it, and check: no row lost, none duplicated, and the output identical to
an uninterrupted run with the same seeds."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from counterfair.commands.audit.options import demo_path


def _data(tmp_path: Path) -> Path:
    demo = pd.read_csv(demo_path())["text"].tolist()
    texts = [f"{text} (copy {k})" for k in range(6) for text in demo]  # 480 distinct texts (80 demo texts, 6 copies)
    path = tmp_path / "texts.csv"
    pd.DataFrame({"id": [f"t{i}" for i in range(len(texts))], "text": texts}).to_csv(path, index=False)
    return path


def _generate(data: Path, out: Path) -> subprocess.Popen[bytes]:
    # output to a file, not a pipe: an unread pipe fills up and blocks the child
    with open(out.parent / f"{out.name}.log", "ab") as log:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "counterfair.cli",
                "generate",
                str(data),
                "--methods",
                "ablation,substitution,swap",
                "--attribute",
                "islam",
                "--id-column",
                "id",
                "--score-methods",
                "ablation,substitution",
                "--out",
                str(out),
                "-q",
            ],
            stdout=log,
            stderr=log,
        )


def _timeless(value: Any) -> Any:
    """A summary without what measures this process's time (and, for feedback, how many texts this process found
    already done: its own history, not the result)."""
    if isinstance(value, dict):
        drop = (
            "timing_s",
            "seconds_this_run",
            "candidates_per_s_this_run",
            "seconds_per_text",
            "resumed_texts",
            "seconds",
        )
        return {k: _timeless(v) for k, v in value.items() if k not in drop}
    return value


@pytest.mark.slow
def test_sigkill_then_resume_matches_an_uninterrupted_run(tmp_path: Path) -> None:
    data = _data(tmp_path)
    reference = _generate(data, tmp_path / "whole")
    assert reference.wait(timeout=600) == 0, (tmp_path / "whole.log").read_text()

    victim = _generate(data, tmp_path / "cut")
    checkpoint = tmp_path / "cut" / ".work" / "done.jsonl"
    deadline = time.time() + 300
    while time.time() < deadline:
        if checkpoint.exists() and len(checkpoint.read_bytes().splitlines()) >= 480 * 2 + 100:  # within swap
            break
        time.sleep(0.05)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait(timeout=30)
    done_before = len(checkpoint.read_bytes().splitlines())
    assert 480 * 2 + 100 <= done_before < 480 * 3, done_before  # killed midway through the swaps
    assert not (tmp_path / "cut" / "counterfactuals.csv").exists()

    resumed = _generate(data, tmp_path / "cut")
    assert resumed.wait(timeout=600) == 0, (tmp_path / "cut.log").read_text()
    again = _generate(data, tmp_path / "whole")  # a finished run, rerun: nothing to do, same outputs
    assert again.wait(timeout=600) == 0, (tmp_path / "whole.log").read_text()

    for name in ("counterfactuals.csv", "candidates.csv"):
        whole = pd.read_csv(tmp_path / "whole" / name)
        cut = pd.read_csv(tmp_path / "cut" / name)
        pd.testing.assert_frame_equal(whole, cut)
    # every file, the summary too: signatures and identity counts as an uninterrupted run's (#20 item 5)
    whole_summary, cut_summary = (
        _timeless(json.loads((tmp_path / d / "summary.json").read_text())) for d in ("whole", "cut")
    )
    assert cut_summary == whole_summary
    swap = cut_summary["signatures"]["swap"]
    assert swap["identity_occurrences"] > 0 and swap["params"]["terms"]
    assert cut_summary["signatures"]["filter"] is not None
    cfs = pd.read_csv(tmp_path / "cut" / "counterfactuals.csv")
    assert len(cfs) == 480 * 3  # no row lost
    assert not cfs.duplicated(["input_id", "method"]).any()  # none duplicated


@pytest.mark.slow
def test_a_second_run_into_the_same_directory_is_refused_and_a_killed_run_leaves_no_lock(tmp_path: Path) -> None:

    from counterfair.commands.generate.options import GenerateOptions
    from counterfair.commands.generate.shell import run_generate
    from counterfair.errors import ConfigError

    data = _data(tmp_path)
    holder = _generate(data, tmp_path / "run")
    checkpoint = tmp_path / "run" / ".work" / "done.jsonl"
    deadline = time.time() + 300
    while time.time() < deadline and not checkpoint.exists():
        time.sleep(0.05)
    options = GenerateOptions(methods=["ablation", "substitution", "swap"], attribute="islam", id_column="id",
                              score_methods=["ablation", "substitution"])  # fmt: skip
    with pytest.raises(ConfigError, match=rf"is in use by another counterfair run \(pid {holder.pid}\)"):
        run_generate(data, tmp_path / "run", options)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=30)
    result = run_generate(data, tmp_path / "run", options)  # the lock died with its process: this run resumes
    assert len(result.counterfactuals) == 480 * 3
    after = _generate(data, tmp_path / "run")  # this process let go of the lock when its run finished
    assert after.wait(timeout=600) == 0, (tmp_path / "run.log").read_text()[-2000:]


# --------------------------------------------------------------------------- every command (#35)

_SLOW_CLASSIFIER = '''
import os
import time

import numpy as np


def slow(texts):
    """Deterministic scores; each call is logged (for the test to kill the run midway) and takes 10 ms or more."""
    log = os.environ.get("CF_CALLS")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{len(texts)}\\n")
    time.sleep(0.01 + 0.0001 * len(texts))
    return np.array([0.9 if ("awful" in t or "Muslim" in t or "gay" in t) else 0.2 for t in texts])


slow.labels = ["ok", "toxic"]
'''

_NUMBER_AFTER_TIME_KEY = re.compile(
    r"((?:seconds_this_run|candidates_per_s_this_run|seconds_per_text|resumed_texts|seconds|wall_s)(?:&#34;|&quot;|\")?:\s*)(?:-?[\d.e+-]+|null)"
)
_TIMING_BLOCK = re.compile(r"(timing_s(?:&#34;|&quot;|\")?:\s*\{)[^}]*\}")
_FOOTER_TIME = re.compile(r"· \d+(?:\.\d+)? (?:s|min)\b")


def _without_timings(path: Path) -> Any:
    """A file's content with what measures this process's time taken out (JSON: the timing keys; text: the numbers
    after them and the report's footer time); everything else compared byte for byte."""
    if path.suffix == ".json":
        return _timeless(json.loads(path.read_text(encoding="utf-8")))
    if path.suffix == ".csv":  # a table's named timing column (feedback's steps.csv) is this process's
        return pd.read_csv(path).drop(columns=["seconds_per_text"], errors="ignore").to_csv(index=False)
    if path.suffix in (".html", ".md"):
        text = path.read_text(encoding="utf-8")
        return _FOOTER_TIME.sub("· T", _TIMING_BLOCK.sub(r"\1T}", _NUMBER_AFTER_TIME_KEY.sub(r"\1T", text)))
    return path.read_bytes()


def _outputs(run: Path) -> dict[str, Path]:
    return {
        str(p.relative_to(run)): p
        for p in sorted(run.rglob("*"))
        if p.is_file() and ".work" not in p.parts and p.name != ".lock"
    }


def _command_inputs(tmp_path: Path) -> dict[str, list[str]]:
    classifier = tmp_path / "cf_slow.py"
    classifier.write_text(_SLOW_CLASSIFIER, encoding="utf-8")
    spec = f"callable:{classifier}:slow"
    demo = pd.read_csv(demo_path())["text"].tolist()
    texts = tmp_path / "texts.csv"
    pd.DataFrame({"text": [f"{t} (copy {k})" for k in range(2) for t in demo]}).to_csv(texts, index=False)
    pairs = tmp_path / "pairs.csv"
    pd.DataFrame(
        {
            "before": [f"{t} It was awful ({k})." for k in range(4) for t in demo],
            "after": [f"{t} It was fine ({k})." for k in range(4) for t in demo],
        }
    ).to_csv(pairs, index=False)
    reviews = tmp_path / "reviews.csv"
    words = ["good", "bad", "awful", "great", "dull", "lovely", "poor", "fine"]
    pd.DataFrame(
        {"text": [f"The film was {words[i % 8]} and the acting was {words[(i * 3) % 8]}." for i in range(24)]}
    ).to_csv(reviews, index=False)
    return {
        "audit": ["audit", str(texts), "--classifier", spec],
        "ctf": ["ctf", str(texts), "--classifier", spec],
        "evaluate": [
            "evaluate",
            str(pairs),
            "--metrics",
            "flip,distance,bleu",
            "--text-column",
            "before",
            "--cf-column",
            "after",
            "--classifier",
            spec,
        ],
        "feedback": [
            "feedback",
            str(reviews),
            "--editor",
            "synonym",
            "--steps",
            "2",
            "--ppl-model",
            "none",
            "--classifier",
            spec,
        ],
    }


def _start(args: list[str], out: Path, calls: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "COUNTERFAIR_STORE": "off", "CF_CALLS": str(calls)}
    with open(out.parent / f"{out.name}.log", "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "counterfair.cli", *args, "--out", str(out), "-q"], stdout=log, stderr=log, env=env
        )


@pytest.mark.slow
@pytest.mark.parametrize("command", ["audit", "ctf", "evaluate", "feedback"])
def test_every_command_killed_midway_then_rerun_writes_what_an_uninterrupted_run_writes(
    tmp_path: Path, command: str
) -> None:
    """#35: SIGKILL halfway through the classifier's calls, rerun into the same directory, and every output file is
    the uninterrupted run's (timings aside)."""
    if command == "feedback":
        pytest.importorskip("nltk")
    args = _command_inputs(tmp_path)[command]
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    reference = _start(args, whole, tmp_path / "whole.calls")
    code = reference.wait(timeout=600)
    assert code in (0, 1), (tmp_path / "whole.log").read_text()
    calls = len((tmp_path / "whole.calls").read_text().splitlines())
    assert calls >= 4, calls

    victim = _start(args, cut, tmp_path / "cut.calls")
    deadline = time.time() + 300
    while time.time() < deadline and victim.poll() is None:
        logged = tmp_path / "cut.calls"
        if logged.exists() and len(logged.read_text().splitlines()) >= calls // 2:
            break
        time.sleep(0.01)
    os.kill(victim.pid, signal.SIGKILL)
    assert victim.wait(timeout=30) == -signal.SIGKILL  # killed, not finished
    assert not (cut / "summary.json").exists()  # midway: the run had not written its summary

    resumed = _start(args, cut, tmp_path / "resumed.calls")
    assert resumed.wait(timeout=600) == code, (tmp_path / "cut.log").read_text()[-3000:]
    expected, got = _outputs(whole), _outputs(cut)
    assert sorted(got) == sorted(expected)
    for name, path in expected.items():
        assert _without_timings(got[name]) == _without_timings(path), f"{command}: {name} differs"


@pytest.mark.slow
def test_sigterm_says_what_is_kept_and_a_resume_clears_what_killed_writers_left(tmp_path: Path) -> None:
    """#47 item 14: SIGTERM ended with status -15 and no word; 0-byte .tmp files of a kill -9 stayed for good."""
    data = _data(tmp_path)
    victim = _generate(data, tmp_path / "cut")
    checkpoint = tmp_path / "cut" / ".work" / "done.jsonl"
    deadline = time.time() + 300
    while time.time() < deadline and not (checkpoint.exists() and len(checkpoint.read_bytes().splitlines()) > 50):
        time.sleep(0.05)
    os.kill(victim.pid, signal.SIGTERM)
    assert victim.wait(timeout=60) == 143
    log = (tmp_path / "cut.log").read_text()
    assert "terminated (SIGTERM): finished units are kept; the same command resumes" in log
    assert "internal error" not in log
    left = [tmp_path / "cut" / ".candidates.csv.k3x9_a0q.tmp", tmp_path / "cut" / ".work" / ".done.jsonl.ab12cd34.tmp"]
    for stale in left:  # what a writer killed with SIGKILL between creating and renaming its file leaves
        stale.touch()
    mine = tmp_path / "cut" / ".work" / "notes.tmp"  # not the shape of a counterfair temporary file: kept
    mine.touch()
    resumed = _generate(data, tmp_path / "cut")
    assert resumed.wait(timeout=600) == 0, (tmp_path / "cut.log").read_text()
    assert not any(p.exists() for p in left) and mine.exists()
    assert len(pd.read_csv(tmp_path / "cut" / "counterfactuals.csv")) == 480 * 3


def test_an_out_that_is_a_dangling_symbolic_link_is_named(tmp_path: Path) -> None:
    from .conftest import run_cli

    link = tmp_path / "out"
    link.symlink_to(tmp_path / "nowhere")
    data = tmp_path / "t.csv"
    data.write_text("text\nhello\n")
    done = run_cli("generate", str(data), "--methods", "swap", "--out", str(link), cwd=tmp_path)
    assert done.returncode == 2
    assert f"is a symbolic link to {tmp_path / 'nowhere'}, which does not exist" in done.stderr
