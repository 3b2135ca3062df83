"""How often the in-slot 95 % intervals hold the true effect, by number of texts: the expanded percentile interval
that ``counterfair.analysis.slots`` gives now against the plain 2.5/97.5 percentiles it gave before.

Each column of one texts x estimates array is an independent sample of ``n`` per-text effects with a known mean
(planted in both directions, a normal spread and a skewed one where a third of the texts carry the whole effect),
and goes through the function that makes every in-slot estimate (``inference.estimates``, the audit's 2,000 resamples,
the same resamples of texts for every column, as in an audit). The plain interval is taken from the same resample means.
Reported per ``n``: the share of intervals that hold the true mean (the target is 0.95) and the median width of the
new interval over the old one.

``--audit``: the same question end to end, on real texts through the audit's own slots and ``slot_effects``:
calibration.py's pool of Civil Comments and its planted classifiers ``term`` (+5 points for "gay") and ``lower``
(−5 points for every race or ethnicity term), with its per-text noise (sd 2 points, drawn afresh each run). Each run
draws ``n`` texts; every term's interval is checked against the true effect: the term's effect over the whole pool
without noise (the base score ignores the slot, so that is 0 for every term not planted and ±5 points for the
planted ones, less where a text names another planted term outside the slot: there the plant is in every variant).
"Before" is the same run with the plain percentiles (``expanded_tail`` set to 2.5 for the run).

Usage: python benchmarks/interval_coverage.py [--samples 2000]
       python benchmarks/interval_coverage.py --audit [--seeds 200] [--sizes 6,10,20,40]
Results: benchmarks/results/interval_coverage.json, benchmarks/results/interval_coverage_audit.json
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

from counterfair.analysis.inference import estimates as _estimates
from counterfair.analysis.inference import resample_weights as _resample_weights
from counterfair.summaries import MIN_INTERVAL_TEXTS
from counterfair.writing import write_json

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


def audit_coverage(seeds: int, sizes: list[int]) -> None:
    """Coverage of every term's interval in audits of real texts with planted classifiers (see the docstring)."""
    import sys

    import pandas as pd

    import counterfair.analysis.inference as inference
    import counterfair.analysis.slots as slots

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from calibration import DATA, Planted, _slots, _with_noise, scores

    started = time.perf_counter()
    comments = pd.concat([pd.read_csv(path)["comment_text"] for path in DATA]).dropna().astype(str)
    comments = comments[comments.str.len() <= 1000].drop_duplicates()
    pool = comments.sample(n=min(1000, len(comments)), random_state=0).tolist()  # calibration.py's pool
    written = _slots(pool)
    ids = sorted(set(written["input_id"].astype(str)))
    planted = Planted(0.05)
    rows: list[dict[str, Any]] = []
    plain_tail = inference.expanded_tail
    written = written.assign(input_id=written["input_id"].astype(str))
    for kind in ("term", "lower"):
        scored = written.assign(score=scores(kind, written, planted))
        by_id = dict(tuple(scored.groupby("input_id", sort=False)))
        whole = slots.slot_effects(scored.copy(), threshold=0.5, seed=0, n_resamples=10)
        assert whole is not None and whole.identity_effect is not None and whole.identity_effect.by_term
        truth = {t: e.value for t, e in whole.identity_effect.by_term.items()}  # the pool's, noiseless
        for n in sizes:
            held = {"before": [], "now": []}
            for seed in range(seeds):
                rng = np.random.default_rng(seed)
                chosen = rng.choice(len(ids), size=n, replace=False)
                part = _with_noise(pd.concat([by_id[ids[i]] for i in chosen], ignore_index=True), 0.02, rng)
                for when in ("before", "now"):
                    inference.expanded_tail = (lambda texts, confidence=0.95: 2.5) if when == "before" else plain_tail
                    try:
                        effects = slots.slot_effects(part.copy(), threshold=0.5, seed=seed, n_resamples=RESAMPLES)
                    finally:
                        inference.expanded_tail = plain_tail
                    assert effects is not None and effects.identity_effect is not None
                    for term, e in (effects.identity_effect.by_term or {}).items():
                        if e.ci_low is not None and e.ci_high is not None:
                            held[when].append(e.ci_low - 1e-12 <= truth[term] <= e.ci_high + 1e-12)
            rows.append(
                {
                    "classifier": kind,
                    "texts": n,
                    "runs": seeds,
                    "intervals": len(held["now"]),
                    "coverage_before": float(np.mean(held["before"])),
                    "coverage_now": float(np.mean(held["now"])),
                }
            )
            print(
                f"{kind:5s} n={n:3d}: {len(held['now'])} term intervals, held before {rows[-1]['coverage_before']:.3f}"
                f", now {rows[-1]['coverage_now']:.3f}",
                flush=True,
            )
    lines = [
        "| classifier | texts | runs | term intervals | held the planted effect before | now |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['classifier']} | {r['texts']} | {r['runs']} | {r['intervals']:,} | {r['coverage_before']:.3f} "
            f"| {r['coverage_now']:.3f} |"
        )
    out = {
        "table": "\n".join(lines) + "\n",
        "rows": rows,
        "pool": len(pool),
        "pool_with_slots": len(ids),
        "resamples": RESAMPLES,
        "seconds": round(time.perf_counter() - started, 1),
    }
    write_json(out, RESULTS / "interval_coverage_audit.json")
    print(f"written: {RESULTS / 'interval_coverage_audit.json'} ({out['seconds']} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000, help="intervals per size and spread")
    parser.add_argument("--audit", action="store_true", help="end to end on real texts with planted classifiers")
    parser.add_argument("--seeds", type=int, default=200, help="--audit: runs per classifier and size")
    parser.add_argument("--sizes", default="6,10,20,40", help="--audit: texts per run")
    args = parser.parse_args()
    if args.audit:
        audit_coverage(args.seeds, [int(s) for s in args.sizes.split(",")])
        return
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    for kind in ("normal", "skewed"):
        for effect in (0.03, -0.03):
            for n in SIZES:
                seed = 1000 * n + (0 if effect > 0 else 1) + (2 if kind == "skewed" else 0)
                values = spread(kind, np.random.default_rng(seed), n, args.samples, effect)
                old_low, old_high = plain(values.copy(), seed)
                margins = [(0.02, True)] * args.samples
                new, _ = _estimates(values.copy(), seed=seed, n_resamples=RESAMPLES, margins=margins)
                new_low = np.array([np.nan if e.ci_low is None else e.ci_low for e in new])
                new_high = np.array([np.nan if e.ci_high is None else e.ci_high for e in new])
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
