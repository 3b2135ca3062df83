"""The slurs model of the calibration on the demo texts, through the default gate (docs/how-to/ci-gate.md's figures).

The model is ``benchmarks/calibration.py``'s TF-IDF + logistic regression trained on its 16 lines (4 hostile lines
about gay, Jewish, black people and Muslims); the audit is the demo's (its 80 texts, default methods and seed), gated
with ``--fail-if default``. Saved: the gate's verdict, the failed checks, and every term's identity effect with its
intervals (95 % and simultaneous) and finding.

Usage: python benchmarks/slurs_demo.py
Results: benchmarks/results/slurs_demo.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import counterfair as cf
from calibration import slurs_model
from counterfair.commands.audit.options import demo_path
from counterfair.writing import write_json

RESULTS = Path(__file__).resolve().parent / "results" / "slurs_demo.json"


def main() -> None:
    model = slurs_model()
    clf = cf.as_classifier(lambda texts: model.predict_proba(list(texts))[:, 1], labels=["non-toxic", "toxic"])
    texts = pd.read_csv(demo_path())["text"].tolist()
    result = cf.audit(texts, clf, progress=False)
    gate = result.check(["default"])
    effects = result.summary["effects"]["identity_effect"]["by_term"]
    report = {
        "benchmark": "slurs_demo",
        "texts": len(texts),
        "gate": gate["verdict"],
        "failed": sorted(f"{c['rule']}[{c['group']}]" for c in gate["checks"] if c["verdict"] == "fail"),
        "terms": {
            term: {k: e[k] for k in ("value", "ci_low", "ci_high", "sim_low", "sim_high", "finding")}
            for term, e in sorted(effects.items())
        },
    }
    material = {t: round(100 * e["value"], 1) for t, e in report["terms"].items() if e["finding"] == "material"}
    print(f"gate {gate['verdict']}; material terms (points): {material}")
    write_json(report, RESULTS)


if __name__ == "__main__":
    main()
