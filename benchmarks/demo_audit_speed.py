"""``counterfair audit --demo`` now against the code of an earlier commit, in one invocation (#36: "the demo audit's
wall time halved").

Each round runs the demo audit once with this checkout's code and once with ``--before-src`` (the ``src`` folder of
a ``git worktree`` of the earlier commit: for #36, the commit before the first #36 change, 7a0c5ec^), alternating, in
a fresh process each, run store off, into a fresh directory; wall time, CPU time and the child's peak memory come from
``wait4``. The ratio of the medians is what counts on a shared machine.

Usage: python benchmarks/demo_audit_speed.py --before-src /tmp/filed/src [--rounds 5]
Results: benchmarks/results/demo_audit_speed.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")

import argparse
import platform
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_run import before_commit, run_cli
from counterfair.writing import write_json

RESULTS = Path(__file__).resolve().parent / "results" / "demo_audit_speed.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before-src", required=True, help="the src folder of the code to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    before = before_commit(args.before_src)
    runs: dict[str, list[dict[str, Any]]] = {"now": [], "before": []}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            for name, env in (("now", None), ("before", {"PYTHONPATH": args.before_src})):
                out = Path(tmp) / f"{name}{round_}"
                runs[name].append(run_cli(["audit", "--demo", "--out", str(out), "-q"], env=env))
                print(f"round {round_} {name:6} {runs[name][-1]['wall_s']:6.2f} s", flush=True)
    medians = {
        name: {k: statistics.median(r[k] for r in rows) for k in ("wall_s", "cpu_s", "peak_rss_mib")}
        for name, rows in runs.items()
    }
    ratio = medians["now"]["wall_s"] / medians["before"]["wall_s"]
    report = {
        "benchmark": "demo_audit_speed",
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load": os.getloadavg()[0]},
        "before_commit": before,
        "rounds": args.rounds,
        "medians": medians,
        "wall_ratio_now_to_before": round(ratio, 3),
        "walls": {name: [r["wall_s"] for r in rows] for name, rows in runs.items()},
        "table": "\n".join(
            [
                "| code | median wall | CPU | peak memory | walls of the rounds |",
                "|---|---:|---:|---:|---|",
                *(
                    f"| {'now' if name == 'now' else f'before ({before})'} | {m['wall_s']:.2f} s | "
                    f"{m['cpu_s']:.1f} s | {m['peak_rss_mib']:.0f} MiB | "
                    f"{', '.join(format(r['wall_s'], '.2f') for r in runs[name])} |"
                    for name, m in medians.items()
                ),
                f"| now / before | {ratio:.2f} | | | |",
            ]
        ),
    }
    write_json(report, RESULTS)
    print(report["table"])


if __name__ == "__main__":
    main()
