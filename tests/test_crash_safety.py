"""Kill a run with SIGKILL midway, resume it, and check: no row lost, none duplicated, and the output identical to
an uninterrupted run with the same seeds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

from counterfair.core.audit import demo_path


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
    """A summary without what measures this process's time."""
    if isinstance(value, dict):
        drop = ("timing_s", "seconds_this_run", "candidates_per_s_this_run")
        return {k: _timeless(v) for k, v in value.items() if k not in drop}
    return value


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


def test_a_second_run_into_the_same_directory_is_refused_and_a_killed_run_leaves_no_lock(tmp_path: Path) -> None:
    import pytest

    from counterfair.core.generate import GenerateOptions
    from counterfair.errors import ConfigError
    from counterfair.shell.generate import run_generate

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
