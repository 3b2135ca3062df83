"""The benchmarks' own checks: the README's tables come from the JSON results, and the speed smoke fails on a gross
regression (and only then)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_benchmark_readme_tables_are_the_json_results() -> None:
    sys.path.insert(0, str(REPO / "tools"))
    from bench_tables import BLOCK, README, rendered

    readme = README.read_text(encoding="utf-8")
    assert len(BLOCK.findall(readme)) >= 2
    assert rendered(readme) == readme, "run python tools/bench_tables.py"
    edited = readme.replace("| swap (tokens) |", "| swap (tokens, typed by hand) |", 1)
    assert rendered(edited) == readme  # a hand-edited figure is written over from the JSON


def test_the_speed_smoke_fails_above_three_times_the_recorded_ratio() -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from speed_smoke import regressions

    recorded = {"methods": {"swap (tokens)": {"ratio": 10.0}, "ablation": {"ratio": 2.0}}}
    now = {"methods": {"swap (tokens)": {"ratio": 31.0}, "ablation": {"ratio": 5.9}, "new method": {"ratio": 99.0}}}
    failed = regressions(now, recorded, 3.0)
    assert failed == ["swap (tokens): 31.0x the floor, recorded 10.0x (3.1 times worse; the limit is 3)"]
    assert regressions({"methods": {"swap (tokens)": {"ratio": 30.0}}}, recorded, 3.0) == []


def test_bench_tables_check_passes_on_the_committed_readme() -> None:
    done = subprocess.run([sys.executable, str(REPO / "tools" / "bench_tables.py"), "--check"], capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "tables match their JSON" in done.stdout
