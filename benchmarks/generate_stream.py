"""Memory of ``counterfair generate`` over a large input (#35 item 8, #36): read whole vs read in blocks.

A file of 64 MB or more is read in blocks of 10,000 rows, its checkpoint keeps only file offsets in memory and both
tables are written block by block (``counterfair.commands.generate.shell``). This benchmark runs the same command on the
same file twice in one invocation, once with ``COUNTERFAIR_STREAM_BYTES`` above the file's size (read whole, as every
run did before) and once with 0 (blocks), and samples the child's resident memory every 0.5 s from ``/proc``:

* **large file**: 1,000,000 rows of ~160 characters (151 MB: five of ``scale.py``'s texts per row, numbered),
  ``--attribute islam --methods ablation,substitution`` (the word lists; most rows do not name Islam, so this is
  mostly the cost of carrying a row through the run);
* **swap**: ``scale.py``'s short texts, ``--methods swap`` (the guard on; ~48 variants per text), at 50,000 rows.

Reported per run: wall time, rows per second, peak RSS, RSS at 25 %, 50 % and 90 % of the wall time (flat means the
last two agree), and whether the two runs' ``candidates.csv`` and ``counterfactuals.csv`` are byte-identical.

Usage: python benchmarks/generate_stream.py [--rows 1000000] [--swap-rows 50000]
Results: benchmarks/results/generate_stream.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")

import argparse
import filecmp
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from counterfair.writing import write_json
from scale import make_texts

RESULTS = Path(__file__).resolve().parent / "results" / "generate_stream.json"
MODES = {"whole": str(1 << 50), "blocks": "0"}


def _rss_mib(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def watched(args: list[str], mode: str) -> dict[str, Any]:
    """Run ``counterfair ARGS`` and sample its RSS every 0.5 s."""
    env = {**os.environ, "COUNTERFAIR_STREAM_BYTES": MODES[mode], "TOKENIZERS_PARALLELISM": "false"}
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "counterfair.cli", *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    samples: list[tuple[float, float]] = []
    while proc.poll() is None:
        rss = _rss_mib(proc.pid)
        if rss is not None:
            samples.append((time.perf_counter() - started, rss))
        time.sleep(0.5)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"counterfair exited {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")

    def at(share: float) -> float:
        return round(min(samples, key=lambda s: abs(s[0] - share * wall))[1])

    return {
        "mode": mode,
        "wall_s": round(wall, 1),
        "peak_rss_mib": round(max(r for _, r in samples)),
        "rss_at_25pct_mib": at(0.25),
        "rss_at_50pct_mib": at(0.5),
        "rss_at_90pct_mib": at(0.9),
        # flat from 25 % to 100 % of the run: the highest RSS after the first quarter against the RSS at 25 %
        "peak_after_25pct_mib": round(max(r for t, r in samples if t >= 0.25 * wall)),
        "rss_by_tenth_mib": [at(k / 10) for k in range(1, 11)],
    }


def compare(name: str, rows: int, source: Path, command: list[str], tmp: Path) -> list[dict[str, Any]]:
    runs = []
    for mode in MODES:
        out = tmp / f"{name}-{mode}"
        run = watched(["generate", str(source), *command, "--out", str(out), "-q"], mode)
        run |= {"case": name, "rows": rows, "input_mib": round(source.stat().st_size / 2**20, 1)}
        run["rows_per_s"] = round(rows / run["wall_s"], 1)
        runs.append(run)
        print(
            f"{name:11} {mode:6} {rows:>8} rows: {run['wall_s']:7.1f} s, peak {run['peak_rss_mib']} MiB, RSS at "
            f"25/50/90 % {run['rss_at_25pct_mib']}/{run['rss_at_50pct_mib']}/{run['rss_at_90pct_mib']} MiB",
            flush=True,
        )
    same = all(
        filecmp.cmp(tmp / f"{name}-whole" / f, tmp / f"{name}-blocks" / f, shallow=False)
        for f in ("candidates.csv", "counterfactuals.csv")
    )
    for run in runs:
        run["outputs_identical"] = same
    return runs


def table(runs: list[dict[str, Any]]) -> str:
    """The README's table (Markdown), generated from the JSON."""
    lines = [
        "| case | rows | input | read | wall | rows/s | peak RSS | RSS at 25 / 50 / 90 % | outputs identical |",
        "|---|---:|---:|---|---:|---:|---:|---|---|",
    ]
    for r in runs:
        lines.append(
            f"| {r['case']} | {r['rows']:,} | {r['input_mib']} MiB | {r['mode']} | {r['wall_s']} s | {r['rows_per_s']} "
            f"| {r['peak_rss_mib']} MiB | {r['rss_at_25pct_mib']} / {r['rss_at_50pct_mib']} / {r['rss_at_90pct_mib']} "
            f"MiB | {'yes' if r['outputs_identical'] else 'no'} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--swap-rows", type=int, default=50_000)
    args = parser.parse_args()
    report: dict[str, Any] = {
        "benchmark": "generate_stream",
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load": os.getloadavg()[0]},
        "args": vars(args),
        "runs": [],
    }
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if args.rows:
            short = make_texts(args.rows * 5)["text"].tolist()
            big = tmp / "large.csv"
            import pandas as pd

            pd.DataFrame({"text": [" ".join(short[i * 5 : i * 5 + 5]) for i in range(args.rows)]}).to_csv(
                big, index=False
            )
            del short
            command = ["--attribute", "islam", "--methods", "ablation,substitution"]
            report["runs"] += compare("large file", args.rows, big, command, tmp)
            write_json(report, RESULTS)
        if args.swap_rows:
            swap = tmp / "swap.csv"
            make_texts(args.swap_rows).to_csv(swap, index=False)
            report["runs"] += compare("swap", args.swap_rows, swap, ["--methods", "swap"], tmp)
    report["table"] = table(report["runs"])
    write_json(report, RESULTS)
    print(report["table"])


if __name__ == "__main__":
    main()
