"""Unintended bias on Dixon et al.'s labelled madlibs (#33): the default classifier (profanity-check) on
``../shared/data/dixon/bias_madlibs_77k.csv`` (labels BAD / NOT_BAD; group membership from the dixon50 identity
terms with the guard): overall AUC, every group's subgroup / BPSN / BNSP / pinned AUC with intervals, the generalized
means and the Jigsaw final metric, FPED and FNED. Then the counterfactual view of the same classifier: the audit's
placebo-controlled identity effect per group on 400 NOT_BAD madlibs, and whether the two views rank the groups alike
(Spearman's rho between the identity effect and the BPSN AUC; a fairer group has a small effect and a high AUC, so
agreement is a negative rho). Results: benchmarks/results/bias_dixon.json.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

import counterfair as cf
from counterfair.io import write_json

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "dixon" / "bias_madlibs_77k.csv"
RESULTS = ROOT / "benchmarks" / "results" / "bias_dixon.json"


def main() -> None:
    frame = pd.read_csv(DATA).rename(columns={"Text": "text", "Label": "label"})
    started = time.perf_counter()
    result = cf.bias(frame[["text", "label"]], classifier="profanity-check", bootstrap=200)
    seconds = time.perf_counter() - started
    s = result.typed_summary
    groups = result.by_group
    print(groups[["n", "n_positive", "subgroup_auc", "bpsn_auc", "bnsp_auc", "pinned_auc"]].round(3).to_string())
    print(result.overall.round(4).to_string())
    texts = frame[frame["label"] == "NOT_BAD"]["text"].sample(400, random_state=0).tolist()
    audited = cf.audit(texts, "profanity-check", methods=["swap"], bootstrap=500)
    effects = audited.identity_effects["identity_effect"]
    common = [g for g in effects.index if g in groups.index and groups.loc[g, "bpsn_auc"] == groups.loc[g, "bpsn_auc"]]
    rho = spearmanr([effects[g] for g in common], [groups.loc[g, "bpsn_auc"] for g in common])
    print(
        f"identity effect vs BPSN AUC over {len(common)} groups: Spearman rho {rho.statistic:.3f} (p {rho.pvalue:.3f})"
    )
    report: dict[str, Any] = {
        "data": f"{DATA.name}: {len(frame)} texts ({int((frame['label'] == 'BAD').sum())} BAD)",
        "classifier": "profanity-check",
        "seconds": round(seconds, 1),
        "overall": {k: (None if v != v else float(v)) for k, v in result.overall.items()},
        "groups": {g: {k: (None if v != v else float(v)) for k, v in row.items()} for g, row in groups.iterrows()},
        "identity_effect_400_not_bad": {g: float(effects[g]) for g in effects.index},
        "spearman_identity_effect_vs_bpsn": {"rho": float(rho.statistic), "p": float(rho.pvalue), "groups": common},
        "final_metric": s.final_metric,
    }
    write_json(report, RESULTS)
    print(f"wrote {RESULTS} ({seconds:.0f} s for the bias metrics)")
    assert np.isfinite(report["overall"]["overall_auc"])


if __name__ == "__main__":
    main()
