"""How long ``make test`` takes on a fresh clone (#36, #50): the whole command, pytest alone, the 20 slowest tests.

Run ``make test`` in a fresh clone with its output in a log and the wall time appended as ``EXIT rc WALL seconds``::

    git clone -q . /tmp/fresh && cd /tmp/fresh && start=$(date +%s); make test > /tmp/make.log 2>&1; \\
        echo "EXIT $? WALL $(( $(date +%s) - start ))" >> /tmp/make.log

then ``python benchmarks/test_suite_time.py --log /tmp/make.log`` reads it (pytest prints its 20 slowest tests because
the Makefile passes ``--durations=20``) and writes the JSON and the README's table. ``--fast-log`` adds the development
tier (#50): a log of ``pytest -m "not slow"`` with ``WALL seconds`` appended.

Results: benchmarks/results/test_suite.json
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_run import cpu_model
from counterfair.writing import write_json

RESULTS = Path(__file__).resolve().parent / "results" / "test_suite.json"


def read_log(text: str) -> dict[str, Any]:
    end = re.search(r"EXIT (\d+) WALL (\d+)", text)
    summary = re.search(
        r"(?:=+ |^)(?:(\d+) failed, )?(\d+) passed(?:, (\d+) skipped)?(?:, (\d+) deselected)?(?:, \d+ warnings?)?"
        r" in ([\d.]+)s",
        text,
        re.MULTILINE,
    )
    if end is None or summary is None:
        raise SystemExit("the log has no 'EXIT rc WALL s' line or no pytest summary")
    slowest = [
        {"seconds": float(m[1]), "phase": m[2], "test": m[3]}
        for m in re.finditer(r"^([\d.]+)s (call|setup|teardown)\s+(\S+)$", text, re.MULTILINE)
    ]
    return {
        "exit": int(end[1]),
        "make_test_s": int(end[2]),
        "pytest_s": float(summary[5]),
        "passed": int(summary[2]),
        "skipped": int(summary[3] or 0),
        "deselected": int(summary[4] or 0),
        "failed": int(summary[1] or 0),
        "slowest": slowest[:20],
    }


def table(now: dict[str, Any]) -> str:
    rows = [
        "| run | make test | pytest | tests |",
        "|---|---|---|---|",
        "| #36's issue (a loaded machine) | 76 min | 37 min | 645 |",
        "| #50's issue (a loaded machine) | 45.6 min | 20 min | 807 passed |",
        "| #50, 2026-11-26 (fresh clone, AMD EPYC, 2 cores, one test process) | 13.4 min | 10.2 min | 877 passed |",
        f"| now (fresh clone, {now['machine'].get('processor', '?')}, {now['machine']['cpus']} cores, "
        f"{now.get('workers', 1)} test processes) | {now['make_test_s'] / 60:.1f} min | "
        f"{now['pytest_s'] / 60:.1f} min | {now['passed']} passed, {now['skipped']} skipped |",
    ]
    fast = now.get("fast_tier")
    if fast:
        rows.append(
            '| the development tier, `pytest -m "not slow" -n auto --dist loadfile` | – | '
            f"{fast['wall_s'] / 60:.1f} min (wall) | "
            f"{fast['passed']} passed, {fast['deselected']} deselected (slow) |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log", required=True, type=Path)
    parser.add_argument("--fast-log", type=Path, help='a log of pytest -m "not slow" ending in "WALL seconds"')
    args = parser.parse_args()
    now = read_log(args.log.read_text(encoding="utf-8", errors="replace"))
    if args.fast_log:
        fast = args.fast_log.read_text(encoding="utf-8", errors="replace")
        wall = re.search(r"WALL (\d+)", fast)
        if wall is None:
            raise SystemExit(f"{args.fast_log}: no 'WALL seconds' line")
        now["fast_tier"] = {**read_log(f"{fast}\nEXIT 0 WALL {wall[1]}"), "wall_s": int(wall[1])}
        if not now["fast_tier"]["deselected"]:  # pytest-xdist's summary leaves the deselected tests out
            whole = now["passed"] + now["skipped"]
            now["fast_tier"]["deselected"] = whole - now["fast_tier"]["passed"] - now["fast_tier"]["skipped"]
    now["machine"] = {"platform": platform.platform(), "processor": cpu_model(), "cpus": os.cpu_count()}
    workers = re.search(r"^created: (\d+)/\d+ workers", args.log.read_text(encoding="utf-8", errors="replace"), re.M)
    now["workers"] = int(workers[1]) if workers else 1
    now["table"] = table(now)
    print(now["table"])
    write_json(now, RESULTS)


if __name__ == "__main__":
    main()
