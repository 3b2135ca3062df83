"""CEval's SNLI task (paper 004 §4): the human (crowd) revisions of SNLI premises and hypotheses as evaluate pairs.

Builds the pair tables with ``nli_revision_pairs`` (what ``counterfair nli-pairs`` writes) from
``../shared/data/ceval/snli`` and evaluates them on the revised input: distance per token of the original (CEval's
Table 2 gives 0.41 for the crowd on SNLI), token distance and BLEU. CEval's NLI classifier (textattack BERT on SNLI) is
not installable here and no NLI model ships in a package, so flip rate and probability change are not measured; the
two-input classifier path is tested with a transformers pair model made in the tests (tests/test_nli.py).

Usage: python benchmarks/snli_pairs.py
Results: benchmarks/results/snli_pairs.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")

import json
import time
from pathlib import Path

import pandas as pd

from counterfair import evaluate
from counterfair.nli import nli_revision_pairs

ROOT = Path(__file__).resolve().parents[1]
SNLI = ROOT.parent / "shared" / "data" / "ceval" / "snli"
RESULTS = ROOT / "benchmarks" / "results"
CEVAL_CROWD_DISTANCE = 0.41


def main() -> None:
    record: dict[str, object] = {"ceval_crowd_distance": CEVAL_CROWD_DISTANCE}
    frames = []
    for part in ("premise", "hypothesis"):
        started = time.perf_counter()
        pairs = nli_revision_pairs(SNLI / "original" / "test.tsv", SNLI / f"revised_{part}" / "test.tsv", part=part)
        built = time.perf_counter() - started
        result = evaluate(pairs, ["distance", "bleu"], context_column="context", revised_input=_side(part))
        rows = result.rows
        frames.append(rows.assign(part=part))
        record[part] = {
            "revisions": len(pairs),
            "originals": int(pairs["original_row"].nunique()),
            "target_labels": pairs["target_label"].value_counts().to_dict(),
            "distance_per_token": round(float(rows["distance_norm"].mean()), 3),
            "distance_tokens": round(float(rows["distance"].mean()), 2),
            "bleu": round(float(rows["bleu"].mean()), 3),
            "unchanged_revisions": int((rows["distance"] == 0).sum()),
            "build_s": round(built, 2),
            "evaluate_s": round(result.summary["timing_s"]["total"], 2),
        }
    both = pd.concat(frames)
    record["both"] = {
        "revisions": len(both),
        "distance_per_token": round(float(both["distance_norm"].mean()), 3),
        "bleu": round(float(both["bleu"].mean()), 3),
    }
    (RESULTS / "snli_pairs.json").write_text(json.dumps(record, indent=1))
    print(json.dumps(record, indent=1))


def _side(part: str) -> str:
    return "first" if part == "premise" else "second"


if __name__ == "__main__":
    main()
