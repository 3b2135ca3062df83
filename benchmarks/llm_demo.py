"""``counterfair llm-audit --demo`` end to end (#51): the hiring scenario's first 8 cases, 13 identity terms and 5
neutral words, 3 samples each (432 responses), with the packaged Qwen2.5-Coder-1.5B in llama.cpp on this machine's
cores. Target: under 10 minutes on 2 cores.

Runs the command in a fresh folder (``--run``, default ``benchmarks/results/llm_demo_run``; its responses.csv,
summary.json and report.md are kept as the record), times it, and records the machine, its load before the run, the
verdict's first line, the unparsed answers and the outcomes' means.

    python benchmarks/llm_demo.py

Writes ``benchmarks/results/llm_demo.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_run import cpu_model

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, default=ROOT / "benchmarks" / "results" / "llm_demo_run")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "llm_demo.json")
    args = parser.parse_args()
    scratch = Path("/tmp") / f"counterfair-llm-demo-{os.getpid()}"
    load = os.getloadavg()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "counterfair.cli", "llm-audit", "--demo", "--out", str(scratch), "-q"],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"the demo failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
    summary = json.loads((scratch / "summary.json").read_text())
    args.run.mkdir(parents=True, exist_ok=True)
    for name in ("responses.csv", "summary.json", "report.md"):
        shutil.copy(scratch / name, args.run / name)
    shutil.rmtree(scratch)
    verdict = next(line for line in done.stdout.splitlines() if line.startswith("VERDICT"))
    unparsed = sum(c["unparsed"] for c in summary["by_group"].values())
    document = {
        "benchmark": "llm_demo",
        "machine": {
            "cpu": cpu_model(),
            "cores": len(os.sched_getaffinity(0)),
            "load_before": [round(x, 2) for x in load],
        },
        "seconds": round(seconds, 1),
        "exit_code": done.returncode,
        "responses": summary["responses"],
        "unparsed": unparsed,
        "outcome_means": summary["outcome_means"],
        "verdict": verdict,
        "table": "\n".join(
            [
                "| run | wall time | responses | unparsed | target |",
                "|---|---|---|---|---|",
                f"| `llm-audit --demo` ({len(os.sched_getaffinity(0))} cores, load {load[0]:.2f} before) | "
                f"{seconds / 60:.1f} min | {summary['responses']} | {unparsed} | under 10 min |",
            ]
        ),
    }
    args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(document["table"])
    print(verdict)


if __name__ == "__main__":
    main()
