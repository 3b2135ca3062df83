"""How often the in-slot 95 % intervals hold the true effect, by number of texts: the expanded percentile interval
that ``counterfair.analysis.slots`` gives now against the plain 2.5/97.5 percentiles it gave before.

Each column of one texts x estimates array is an independent sample of ``n`` per-text effects with a known mean
(planted in both directions, a normal spread and a skewed one where a third of the texts carry the whole effect),
and goes through the function that makes every in-slot estimate (``_estimates``, the audit's 2,000 resamples, the
same resamples of texts for every column, as in an audit). The plain interval is taken from the same resample means.
Reported per ``n``: the share of intervals that hold the true mean (the target is 0.95) and the median width of the
new interval over the old one.

Usage: python benchmarks/interval_coverage.py [--samples 2000]
Results: benchmarks/results/interval_coverage.json
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

from counterfair.analysis.slots import _estimates, _resample_weights
from counterfair.io import write_json
from counterfair.summaries import MIN_INTERVAL_TEXTS

RESULTS = Path(__file__).resolve().parent / "results"
SIZES = (3, 4, 5, 6, 8, 10, 15, 20, 30, 40, 64, 100)  # below MIN_INTERVAL_TEXTS: the plain interval only
RESAMPLES = 2000


def spread(kind: str, rng: np.random.Generator, n: int, samples: int, effect: float) -> np.ndarray:
    """``n`` texts' effects for ``samples`` independent columns, mean ``effect``."""
    if kind == "normal":
        return rng.normal(effect, 0.05, size=(n, samples))
    carried = rng.random((n, samples)) < 1 / 3  # a third of the texts carry the effect, three times over
    return np.where(carried, 3 * effect, 0.0) + rng.normal(0.0, 0.01, size=(n, samples))


def plain(values: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The 2.5 and 97.5 percentiles of the same resample means (every value known)."""
    rng = np.random.default_rng(seed)
    means = np.vstack([w @ values / values.shape[0] for w in _resample_weights(rng, values.shape[0], RESAMPLES)])
    low, high = np.percentile(means, [2.5, 97.5], axis=0)
    return low, high


def table(rows: list[dict[str, Any]], samples: int) -> str:
    """Per number of texts: the share of intervals holding the true effect before and now, in the four cases (normal
    spread +3 and −3 points, skewed +3 and −3), and the median width now over before."""
    lines = [
        f"| texts | held the true effect before (normal +3, −3; skewed +3, −3; {samples:,} intervals each) | now "
        "| width now / before |",
        "|---:|---|---|---:|",
    ]
    for n in SIZES:
        cases = [r for r in rows if r["texts"] == n]
        before = ", ".join(f"{r['coverage_before']:.3f}" for r in cases)
        if n < MIN_INTERVAL_TEXTS:
            lines.append(f"| {n} | {before} | no interval | |")
            continue
        now = ", ".join(f"{r['coverage_now']:.3f}" for r in cases)
        width = float(np.median([r["width_now_over_before"] for r in cases]))
        lines.append(f"| {n} | {before} | {now} | {width:.2f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000, help="intervals per size and spread")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    for kind in ("normal", "skewed"):
        for effect in (0.03, -0.03):
            for n in SIZES:
                seed = 1000 * n + (0 if effect > 0 else 1) + (2 if kind == "skewed" else 0)
                values = spread(kind, np.random.default_rng(seed), n, args.samples, effect)
                old_low, old_high = plain(values.copy(), seed)
                new = _estimates(values.copy(), seed=seed, n_resamples=RESAMPLES, margins=[(0.02, True)] * args.samples)
                new_low = np.array([np.nan if e["ci_low"] is None else e["ci_low"] for e in new])
                new_high = np.array([np.nan if e["ci_high"] is None else e["ci_high"] for e in new])
                rows.append(
                    {
                        "spread": kind,
                        "effect": effect,
                        "texts": n,
                        "coverage_before": float(np.mean((old_low <= effect) & (effect <= old_high))),
                        "coverage_now": None
                        if n < MIN_INTERVAL_TEXTS
                        else float(np.mean((new_low <= effect) & (effect <= new_high))),
                        "width_now_over_before": None
                        if n < MIN_INTERVAL_TEXTS
                        else float(np.median((new_high - new_low) / (old_high - old_low))),
                    }
                )
                print(f"{kind:7s} {effect:+.2f} n={n:3d}: " + ", ".join(f"{k} {v}" for k, v in rows[-1].items()))
    out = {
        "table": table(rows, args.samples),
        "samples": args.samples,
        "resamples": RESAMPLES,
        "min_interval_texts": MIN_INTERVAL_TEXTS,
        "rows": rows,
        "seconds": round(time.perf_counter() - started, 1),
        "machine": platform.machine(),
    }
    write_json(out, RESULTS / "interval_coverage.json")
    print(f"written: {RESULTS / 'interval_coverage.json'} ({out['seconds']} s)")


if __name__ == "__main__":
    main()
