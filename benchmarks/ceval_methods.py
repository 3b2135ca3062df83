"""CEval's method comparison in one command (paper 004: Table 2, Fig. 1, Fig. 2) on the six published IMDB outputs.

Runs ``evaluate_methods`` (what ``counterfair evaluate A.csv B.csv ...`` runs) on llama_02, mice, gbda, crest, crowd and
expert (488 reviews each) with the classifier-side and lexical metrics (flip, prob_change, distance, diversity, BLEU;
perplexity, BERTScore and the LLM judge are measured by ``ceval_imdb.py``), classifier ``imdb-sentiment``. Reports:

* Table 2 as counterfair writes it (``comparison.csv``);
* Fig. 2, the mean token distance between every two methods' texts, and how it orders the methods against the paper's
  reading of its own figure (crowd and expert closest; LLaMA-2 closest to the humans; GBDA and CREST farthest);
* the cost: wall time, and distinct texts the shared classifier predicted against six separate runs.

Usage: python benchmarks/ceval_methods.py [--limit N]
Results: benchmarks/results/ceval_methods.json and benchmarks/results/ceval_methods/ (report.html, plots).
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")

import argparse
import json
import platform
import shutil
import tempfile
import time
from pathlib import Path

import pandas as pd

from counterfair.classifiers import load_classifier
from counterfair.commands.evaluate.options import EvaluateOptions
from counterfair.commands.methods.shell import evaluate_methods

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "ceval" / "outputs" / "imdb"
RESULTS = ROOT / "benchmarks" / "results"
METHODS = ["llama_02", "mice", "gbda", "crest", "crowd", "expert"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=None, help="first N reviews of each file")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ceval-methods-"))
    files = {}
    for name in METHODS:
        frame = pd.read_csv(DATA / f"{name}.csv", dtype=str, keep_default_na=False)
        if args.limit:
            frame = frame.head(args.limit)
        files[name] = work / f"{name}.csv"
        frame.to_csv(files[name], index=False)
    out = RESULTS / "ceval_methods"
    shutil.rmtree(out, ignore_errors=True)
    classifier = load_classifier("imdb-sentiment")
    opts = EvaluateOptions(
        metrics=["flip", "prob_change", "distance", "diversity", "bleu"], classifier="imdb-sentiment"
    )
    started = time.perf_counter()
    result = evaluate_methods(files, opts, out_dir=out, classifier=classifier)
    wall = time.perf_counter() - started
    separate = sum(len(set(f["orig_text"]) | set(f["gen_text"])) for f in (pd.read_csv(p) for p in files.values()))
    matrix = result.distance_matrix
    humans = matrix.loc["crowd", "expert"]
    auto = [m for m in METHODS if m not in ("crowd", "expert")]
    to_humans = {m: float((matrix.loc[m, "crowd"] + matrix.loc[m, "expert"]) / 2) for m in auto}
    mean_to_others = {
        m: float(matrix.loc[m, [o for o in METHODS if o != m]].mean()) for m in METHODS
    }  # how far a method's edits are from every other method's
    checks = {
        "crowd_expert_is_the_closest_pair": bool(
            humans == min(matrix.loc[a, b] for i, a in enumerate(METHODS) for b in METHODS[i + 1 :])
        ),
        "closest_automatic_method_to_humans": min(to_humans, key=to_humans.__getitem__),
        "two_farthest_methods": sorted(mean_to_others, key=mean_to_others.__getitem__)[-2:],
    }
    record = {
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()},
        "reviews": int(result.summary["originals"]),
        "wall_s": round(wall, 1),
        "classifier_texts_predicted": classifier.cached_texts,
        "classifier_texts_if_run_separately": separate,
        "table2": json.loads(result.table.round(4).reset_index().to_json(orient="records")),
        "distance_matrix": json.loads(matrix.round(2).to_json()),
        "mean_distance_to_humans": {k: round(v, 2) for k, v in to_humans.items()},
        "mean_distance_to_other_methods": {k: round(v, 2) for k, v in mean_to_others.items()},
        "paper_fig2_reading": checks,
    }
    (RESULTS / "ceval_methods.json").write_text(json.dumps(record, indent=1))
    print(result.table.round(3).to_string())
    print(matrix.round(1).to_string())
    print(
        json.dumps(
            {k: record[k] for k in ("wall_s", "classifier_texts_predicted", "classifier_texts_if_run_separately")}
        )
    )
    print(json.dumps(checks))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
