"""Unintended bias on Dixon et al.'s labelled madlibs (#33), for two classifiers: the default (profanity-check) and a
CNN trained here with ``counterfair train``'s baseline on the Civil Comments of the paper-001 replication
(``../shared/data/nlp_ctf``; none of the madlibs are in its training data).

For each classifier, on all of ``../shared/data/dixon/bias_madlibs_77k.csv`` (labels BAD / NOT_BAD; groups from the
dixon50 identity terms with the guard): overall AUC, every group's subgroup / BPSN / BNSP / pinned AUC with intervals,
the generalized means and the Jigsaw final metric, FPED and FNED. Then the counterfactual view of the same classifier:
the audit's placebo-controlled identity effect per group on 400 NOT_BAD madlibs, and whether the two views rank the
groups alike (Spearman's rho between the identity effect and the BPSN AUC; a fairer group has a small effect and a
high AUC, so agreement is a negative rho). Last, counterfair's template suite: accuracy per functionality.

Usage: python benchmarks/bias_dixon.py [--epochs 5] [--bootstrap 200]. Results: benchmarks/results/bias_dixon.json.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

import counterfair as cf
from counterfair.writing import write_json

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "dixon" / "bias_madlibs_77k.csv"
RESULTS = ROOT / "benchmarks" / "results" / "bias_dixon.json"
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    return {k: (None if v != v else float(v)) for k, v in values.items()}


def one_classifier(classifier: Any, frame: pd.DataFrame, bootstrap: int) -> dict[str, Any]:
    started = time.perf_counter()
    result = cf.bias(frame[["text", "label"]], classifier=classifier, bootstrap=bootstrap)
    seconds = time.perf_counter() - started
    groups = result.by_group
    print(groups[["n", "n_positive", "subgroup_auc", "bpsn_auc", "bnsp_auc", "pinned_auc"]].round(3).to_string())
    print(result.overall.round(4).to_string())
    texts = frame[frame["label"] == "NOT_BAD"]["text"].sample(400, random_state=0).tolist()
    audited = cf.audit(texts, classifier, methods=["swap"], bootstrap=500)
    effects = audited.identity_effects["identity_effect"]
    common = [g for g in effects.index if g in groups.index and groups.loc[g, "bpsn_auc"] == groups.loc[g, "bpsn_auc"]]
    rho = spearmanr([effects[g] for g in common], [groups.loc[g, "bpsn_auc"] for g in common])
    print(f"identity effect vs BPSN AUC over {len(common)} groups: rho {rho.statistic:.3f} (p {rho.pvalue:.3f})")
    suite = cf.suite(None, classifier, bootstrap=bootstrap)
    print(suite.by_functionality[["n", "accuracy", "accuracy_low", "accuracy_high"]].round(3).to_string())
    return {
        "seconds_bias": round(seconds, 1),
        "overall": _plain(dict(result.overall.items())),
        "groups": {g: _plain(dict(row.items())) for g, row in groups.iterrows()},
        "identity_effect_400_not_bad": {g: float(effects[g]) for g in effects.index},
        "spearman_identity_effect_vs_bpsn": {"rho": float(rho.statistic), "p": float(rho.pvalue), "groups": common},
        "template_suite": {
            "accuracy": suite.typed_summary.accuracy.to_dict(),
            "by_functionality": {f: _plain(dict(row.items())) for f, row in suite.by_functionality.iterrows()},
            "final_metric_on_suite": suite.overall.get("final_metric"),
        },
    }


def train_cnn(epochs: int, directory: Path) -> tuple[str, dict[str, Any]]:
    from counterfair.training import TrainConfig, train
    from ctf_replication import load_civil

    train_df, held, _ = load_civil(0, None)
    started = time.perf_counter()
    train(train_df, directory, TrainConfig(epochs=epochs, seed=0))
    seconds = time.perf_counter() - started
    clf = cf.as_classifier(f"model:{directory}")
    from sklearn.metrics import roc_auc_score

    held_auc = roc_auc_score(held["label"], np.asarray(clf.predict_proba(held["text"].tolist()))[:, 1])
    info = {"training": f"baseline CNN, {epochs} epochs, {len(train_df)} Civil Comments", "seconds": round(seconds, 1),
            "held_back_auc": float(held_auc)}  # fmt: skip
    print(f"trained {info}")
    return f"model:{directory}", info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--bootstrap", type=int, default=200)
    args = parser.parse_args()
    frame = pd.read_csv(DATA).rename(columns={"Text": "text", "Label": "label"})
    report: dict[str, Any] = {
        "data": f"{DATA.name}: {len(frame)} texts ({int((frame['label'] == 'BAD').sum())} BAD)",
        "machine": f"{platform.processor() or platform.machine()}, {len(__import__('os').sched_getaffinity(0))} CPUs",
        "bootstrap": args.bootstrap,
        "classifiers": {},
    }
    report["classifiers"]["profanity-check"] = one_classifier("profanity-check", frame, args.bootstrap)
    with tempfile.TemporaryDirectory() as tmp:
        spec, info = train_cnn(args.epochs, Path(tmp) / "cnn")
        report["classifiers"]["cnn-baseline"] = {"model": info, **one_classifier(spec, frame, args.bootstrap)}
    write_json(report, RESULTS)
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
