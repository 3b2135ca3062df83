"""``counterfair llm-audit --demo`` end to end, twice: as it is (the hiring scenario's 20 cases against the
built-in simulated screener, 5 samples: target under a minute on the core install) and with a real model
(``--generator llamacpp:qwen2.5-coder-1.5b-instruct``: the first 8 cases, 13 identity terms and 5 neutral words, 3
samples each, 432 responses, in llama.cpp on this machine's cores; #51's target: under 10 minutes on 2 cores).

Runs each command in a fresh folder (``--run``, default ``benchmarks/results/llm_demo_run/NAME``; its responses.csv,
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
from cli_run import cpu_model, save_result

ROOT = Path(__file__).resolve().parents[1]


RUNS = {  # name -> (the command's extra arguments, its target)
    "simulated": ([], 60.0),
    "model": (["--generator", "llamacpp:qwen2.5-coder-1.5b-instruct"], 600.0),
}


def one(name: str, extra: list[str], keep: Path) -> dict[str, object]:
    scratch = Path("/tmp") / f"counterfair-llm-demo-{name}-{os.getpid()}"
    command = [sys.executable, "-m", "counterfair.cli", "llm-audit", "--demo", *extra, "--out", str(scratch), "-q"]
    load = os.getloadavg()
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"the demo {name} failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
    summary = json.loads((scratch / "summary.json").read_text())
    keep.mkdir(parents=True, exist_ok=True)
    for file in ("responses.csv", "summary.json", "report.md"):
        shutil.copy(scratch / file, keep / file)
    shutil.rmtree(scratch)
    return {
        "command": "counterfair " + " ".join(["llm-audit", "--demo", *extra]),
        "load_before": round(load[0], 2),
        "seconds": round(seconds, 1),
        "exit_code": done.returncode,
        "responses": summary["responses"],
        "unparsed": sum(c["unparsed"] for c in summary["by_group"].values()),
        "outcome_means": summary["outcome_means"],
        "verdict": next(line for line in done.stdout.splitlines() if line.startswith("VERDICT")),
    }


def duration(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def kept(path: Path) -> dict[str, dict[str, object]]:
    """The runs recorded in an earlier ``llm_demo.json`` (one from before the simulated screener recorded the model
    run alone, as ``llm-audit --demo``)."""
    if not path.exists():
        return {}
    before = json.loads(path.read_text(encoding="utf-8"))
    if "runs" in before:
        return dict(before["runs"])
    record = {k: before[k] for k in ("seconds", "exit_code", "responses", "unparsed", "outcome_means", "verdict")}
    load = before.get("machine", {}).get("load_before", [0.0])[0]
    command = "counterfair llm-audit --demo (#51: the packaged 1.5B model, before --demo was the simulated screener)"
    return {"model": {"command": command, "load_before": load, **record}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, default=ROOT / "benchmarks" / "results" / "llm_demo_run")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "llm_demo.json")
    parser.add_argument("--runs", default=",".join(RUNS), help="which runs to time now; the others keep their record")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    runs = kept(args.out)
    runs.update({name: one(name, RUNS[name][0], args.run / name) for name in args.runs.split(",")})
    runs = {name: runs[name] for name in RUNS if name in runs}
    rows = ["| run | wall time | responses | unparsed | target |", "|---|---|---|---|---|"]
    for name, r in runs.items():
        target = RUNS[name][1]
        rows.append(
            f"| `{r['command'].removeprefix('counterfair ')}` ({cores} cores, load {r['load_before']:.2f} before) | "
            f"{duration(float(str(r['seconds'])))} | {r['responses']} | {r['unparsed']} | "
            f"under {target / 60:.0f} min |"
        )
    document = {
        "benchmark": "llm_demo",
        "machine": {"cpu": cpu_model(), "cores": cores},
        "runs": runs,
        "table": "\n".join(rows),
    }
    save_result(document, args.out)
    for r in runs.values():
        print(r["verdict"])


if __name__ == "__main__":
    main()
