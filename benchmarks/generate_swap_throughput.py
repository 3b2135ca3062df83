"""``counterfair generate --methods swap`` end to end: texts per second and peak memory (#36), now and before.

The texts are ``scale.py``'s (Dixon's madlibs, the Civil Comments of ``nlp_ctf`` and the demo sentences, numbered
once they repeat; almost every one names an identity term, so the swap writes ~48 variants per text). Each run is a
fresh ``counterfair`` process with the run store off, the guard on (the default), writing ``candidates.csv``; the
peak memory is that process's own. With ``--before-src DIR`` (the ``src`` folder of an older checkout, e.g. a
``git worktree``), the same command runs on that code in the same invocation, alternating, so the ratio is fair on a
shared machine.

Usage: python benchmarks/generate_swap_throughput.py [--sizes 10000] [--before-src /tmp/before/src] [--rounds 1]
Results: benchmarks/results/generate_swap_throughput.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")

import argparse
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_run import run_cli
from counterfair.writing import write_json
from scale import make_texts

RESULTS = Path(__file__).resolve().parent / "results" / "generate_swap_throughput.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000")
    parser.add_argument("--before-src", help="the src folder of the code to compare with")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    report: dict[str, Any] = {
        "benchmark": "generate_swap_throughput",
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load": os.getloadavg()[0]},
        "args": vars(args),
        "runs": [],
    }
    variants = [("now", None)] + ([("before", {"PYTHONPATH": args.before_src})] if args.before_src else [])
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            source = Path(tmp) / "texts.csv"
            make_texts(size).to_csv(source, index=False)
            for round_ in range(args.rounds):
                for name, env in variants:
                    out = Path(tmp) / f"{name}{round_}"
                    measured = run_cli(["generate", str(source), "--methods", "swap", "--out", str(out), "-q"], env=env)
                    candidates = sum(1 for _ in (out / "candidates.csv").open(encoding="utf-8")) - 1
                    row = {
                        "code": name,
                        "texts": size,
                        "round": round_,
                        "wall_s": measured["wall_s"],
                        "cpu_s": measured["cpu_s"],
                        "peak_rss_mib": measured["peak_rss_mib"],
                        "texts_per_s": round(size / measured["wall_s"], 1),
                        "candidates": candidates,
                        "candidates_csv_mib": round((out / "candidates.csv").stat().st_size / 2**20, 1),
                        "run_dir_mib": round(sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) / 2**20, 1),
                    }
                    report["runs"].append(row)
                    print(
                        f"{name:6} {size:>7} texts: {row['wall_s']:7.1f} s, {row['texts_per_s']:7.1f} texts/s, "
                        f"{row['peak_rss_mib']} MiB, {candidates} candidates, run dir {row['run_dir_mib']} MiB",
                        flush=True,
                    )
                    report["table"] = table(report["runs"])
                    write_json(report, RESULTS)


def table(runs: list[dict[str, Any]]) -> str:
    """The README's table (Markdown), generated from the JSON."""
    lines = ["| code | texts | wall | texts/s | peak memory | candidates | candidates.csv | run directory |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in runs:
        lines.append(
            f"| {r['code']} | {r['texts']:,} | {r['wall_s']:.1f} s | {r['texts_per_s']:.0f} | {r['peak_rss_mib']} MiB "
            f"| "
            f"{r['candidates']:,} | {r['candidates_csv_mib']} MiB | {r['run_dir_mib']} MiB |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
