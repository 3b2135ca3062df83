"""What the placebo control costs: the audit with and without it, on the demo and on 10,000 texts.

* the demo audit's identity swaps (64 texts, guard on);
* 10,000 sentences of Dixon et al.'s template set (``../shared/data/dixon/bias_madlibs_77k.csv``, seeded sample),
  every one with an identity term, so 49 swaps each (about 490,000 pairs). The guard is off here (it parses each
  text with spaCy once, the same with and without the placebo, and would take most of the time).

Both runs in one process after a warm-up audit (models load once), same classifier (profanity-check), in memory
(``counterfair.audit``). Reported: wall
seconds, distinct texts the classifier scored, and the ratios with/without (the issue's target: the placebo at
most doubles the classifier calls).

Usage: python benchmarks/placebo_cost.py [--texts 10000]
Results: benchmarks/results/placebo_cost.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")

import argparse
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import counterfair as cf
from counterfair.classifiers import as_classifier
from counterfair.commands.audit.options import demo_path
from counterfair.writing import write_json

ROOT = Path(__file__).resolve().parents[1]
DIXON = ROOT.parent / "shared" / "data" / "dixon" / "bias_madlibs_77k.csv"
RESULTS = ROOT / "benchmarks" / "results"


class Counted:
    """profanity-check's P(offensive), counting the texts it is asked to score."""

    def __init__(self) -> None:
        self.inner = as_classifier("profanity-check")
        self.texts = 0

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.texts += len(texts)
        return self.inner.predict_proba(texts)[:, 1]


def run(name: str, texts: Any, **options: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"texts": len(texts)}
    for placebo in (None, "en"):
        clf = Counted()
        started = time.perf_counter()
        result = cf.audit(texts, clf, methods=["swap"], placebo=placebo, bootstrap=1000, **options)
        seconds = time.perf_counter() - started
        key = "with_placebo" if placebo else "without_placebo"
        out[key] = {
            "seconds": round(seconds, 1),
            "classifier_texts": clf.texts,
            "pairs": int((result.pairs["method"] == "swap").sum()),
            "ctf_gap": result.ctf_gap,
            "identity_effect": ((result.summary.get("effects") or {}).get("identity_effect") or {}).get("overall"),
            "timing_s": result.summary["timing_s"],
        }
        print(f"{name:6} {key:16} {seconds:7.1f} s  classifier texts {clf.texts:8d}", flush=True)
    out["ratio_seconds"] = round(out["with_placebo"]["seconds"] / out["without_placebo"]["seconds"], 2)
    out["ratio_classifier_texts"] = round(
        out["with_placebo"]["classifier_texts"] / out["without_placebo"]["classifier_texts"], 2
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=10_000)
    args = parser.parse_args()
    demo = pd.read_csv(demo_path())["text"].tolist()
    large = pd.read_csv(DIXON)["Text"].drop_duplicates().sample(args.texts, random_state=0).tolist()
    cf.audit(demo[:8], Counted(), methods=["swap"], bootstrap=100)  # warm-up: spaCy and the classifier load once
    results = {
        "benchmark": "placebo_cost",
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "args": vars(args),
        "demo": run("demo", demo),
        "large": run("large", large, guard=False),
    }
    for name in ("demo", "large"):
        r = results[name]
        print(f"{name}: placebo ×{r['ratio_seconds']} time, ×{r['ratio_classifier_texts']} classifier texts")
    write_json(results, RESULTS / "placebo_cost.json")
    print(f"wrote {RESULTS / 'placebo_cost.json'}")


if __name__ == "__main__":
    main()
