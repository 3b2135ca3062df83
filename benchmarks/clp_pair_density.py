"""Why does CLP with paper 001's summed pair term collapse here? An experiment on pair density per batch.

counterfair's CLP sums the pair term |g(x) - g(x')| over the pairs of a batch (as paper 001 writes its objective and
as the replication's published code does), and it pairs only the batch's examples that have a counterfactual, i.e.
that mention a training identity term. In ``ctf_replication.py`` every training comment mentions one, so a batch of 64
carries 64 pairs and λ = 0.05 pulls like λ ≈ 3.2 on the mean. Paper 001 trained on Wikipedia comments of which few
mention an identity term, so its batches carried few pairs.

This script tests that explanation: it dilutes the Civil Comments training set with texts that mention no identity
term, so that identity comments are 100 %, 30 % or 10 % of the training texts (about 64, 19 or 6 pairs per batch),
and trains the baseline and CLP (summed, λ = 0.05 and λ = 1) at each density, over the same random identity splits
as ``ctf_replication.py``. The added texts are sentences of the counterfactually augmented IMDB reviews
(``../shared/data/cad_imdb``, Apache-2.0) that mention none of the 50 identity terms, labelled non-toxic (movie
reviews; the data sets available offline have no other labelled text without identity terms). They shift the class
balance too, so each CLP model is read against the baseline trained on the same mixture.

Measured: TPR/TNR/AUC on the held-back Civil Comments (identity comments only, unchanged across densities), the CTF
gap over training terms on their non-toxic ones, "Some people are X" for paper 001's Table 5 terms, the mean pair
term per batch, and whether the collapse guardrail fires.

Usage: python benchmarks/clp_pair_density.py [--seeds 3] [--densities 1,0.3,0.1] [--epochs 8]
Results: benchmarks/results/clp_pair_density.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")

import argparse
import platform
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from counterfair.editors.swap import IdentitySwapEditor
from counterfair.lexicons.attributes import load_identity_set
from counterfair.training import (
    TrainConfig,
    TrainedClassifier,
    classification_report,
    collapse_warning,
    train,
)
from counterfair.writing import write_json
from ctf_replication import DATA, RESULTS, TABLE5_TERMS, Swaps, gap, load_civil, random_split

MODELS = [
    ("baseline", {"method": "baseline"}),
    ("CLP λ=0.05", {"method": "clp", "lam": 0.05}),
    ("CLP λ=1", {"method": "clp", "lam": 1.0}),
]


def filler_sentences(limit: int, seed: int) -> list[str]:
    """Sentences of the CAD IMDB reviews (6 to 60 words) that mention none of the 50 identity terms."""
    frame = pd.read_csv(DATA / "cad_imdb" / "train_paired.tsv", sep="\t")
    sentences = []
    for review in dict.fromkeys(frame["Text"].astype(str)):
        for piece in re.split(r"(?<=[.!?])\s+", review.replace("<br />", " ")):
            if 6 <= len(piece.split()) <= 60:
                sentences.append(piece.strip())
    sentences = list(dict.fromkeys(sentences))
    finder = IdentitySwapEditor(load_identity_set(), guard=None, grammar=False)
    clean = [s for s in sentences if not finder.find(s)]
    order = np.random.default_rng(seed).permutation(len(clean))
    if limit > len(clean):
        raise SystemExit(f"only {len(clean)} identity-free sentences; lower the density")
    return [clean[i] for i in order[:limit]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--densities", default="1,0.3,0.1", help="share of training texts that mention an identity")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument(
        "--fresh", action="store_true", help="drop the saved runs; by default runs at other densities are kept"
    )
    args = parser.parse_args()
    densities = [float(d) for d in args.densities.split(",")]
    saved = RESULTS / "clp_pair_density.json"
    kept: list[dict[str, Any]] = []
    if saved.exists() and not args.fresh:
        import json

        kept = [r for r in json.loads(saved.read_text())["runs"] if r["density"] not in densities]
    import torch

    torch.set_num_threads(1)
    split_dir = Path(tempfile.mkdtemp(prefix="clp_density_"))
    some_people = [f"Some people are {t}." for t in TABLE5_TERMS]
    results: dict[str, Any] = {
        "benchmark": "clp_pair_density",
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "torch_threads": 1},
        "args": vars(args),
        "runs_kept_from_earlier": len(kept),
        "runs": kept,
    }
    for seed in range(args.seeds):
        identities = random_split(seed, split_dir)
        train_df, eval_df, _ = load_civil(seed, identities)
        evals = Swaps(eval_df, "train", identities)
        most = max(round(len(train_df) * (1 - d) / d) for d in densities)
        filler = filler_sentences(most, seed)
        texts = list(dict.fromkeys(evals.texts() + eval_df["text"].tolist() + some_people))
        for density in densities:
            extra = round(len(train_df) * (1 - density) / density)
            mixed = pd.concat([train_df, pd.DataFrame({"text": filler[:extra], "label": 0})], ignore_index=True).sample(
                frac=1.0, random_state=seed
            )
            for name, overrides in MODELS:
                config = TrainConfig(
                    epochs=args.epochs,
                    seed=seed,
                    batch_size=args.batch_size,
                    clp_reduction="sum",
                    vectors="spacy",  # as ctf_replication.py: spaCy's medium vectors, fine-tuned; 300 filters
                    identities=identities,
                    **overrides,  # type: ignore[arg-type]
                )
                with tempfile.TemporaryDirectory() as tmp:
                    c0 = time.process_time()
                    trained = train(mixed, tmp, config)
                    cpu = time.process_time() - c0
                    score = dict(zip(texts, TrainedClassifier(tmp).predict_proba(texts)[:, 1].tolist(), strict=True))
                report = classification_report(
                    eval_df["label"].to_numpy(), np.array([score[t] for t in eval_df["text"]])
                )
                pair_terms = [h["pair_loss"] for h in trained.history]
                run = {
                    "seed": seed,
                    "density": density,
                    "model": name,
                    "training_texts": len(mixed),
                    "identity_texts": len(train_df),
                    "pairs_per_batch": round(args.batch_size * len(train_df) / len(mixed), 1),
                    "toxic_share": round(float(mixed["label"].mean()), 3),
                    "cpu_seconds": round(cpu, 1),
                    "civil_eval": report,
                    "collapse_warning": collapse_warning(report),
                    "gap_civil_train_terms_nontoxic": gap(evals, score, 0),
                    "pair_term_per_batch_last_epoch": round(pair_terms[-1], 4) if pair_terms else None,
                    "some_people_are": {t: round(score[f"Some people are {t}."], 3) for t in TABLE5_TERMS},
                }
                results["runs"].append(run)
                print(
                    f"seed {seed} density {density:.2f} ({run['pairs_per_batch']:5.1f} pairs/batch) {name:11} "
                    f"TPR {report['tpr']:.2f} TNR {report['tnr']:.2f} AUC {report['auc']:.2f} "
                    f"gap {run['gap_civil_train_terms_nontoxic']:.3f} cpu {cpu:6.1f}s"
                    + ("  COLLAPSED" if run["collapse_warning"] else ""),
                    flush=True,
                )
                write_json(results, RESULTS / "clp_pair_density.json")  # what finished survives an interruption
    results["summary"] = summarise(results["runs"])
    results["table"] = table(results["summary"])
    print(results["table"])
    write_json(results, RESULTS / "clp_pair_density.json")
    print(f"wrote {RESULTS / 'clp_pair_density.json'}")


def summarise(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean ± std over seeds per (density, model)."""
    frame = pd.DataFrame(runs)
    rows = []
    for (density, model), part in frame.groupby(["density", "model"], sort=False):
        reports = pd.DataFrame(list(part["civil_eval"]))
        rows.append(
            {
                "density": density,
                "model": model,
                "pairs_per_batch": float(part["pairs_per_batch"].mean()),
                "toxic_share": float(part["toxic_share"].mean()),
                "seeds": len(part),
                "collapsed": int(part["collapse_warning"].notna().sum()),
                **{
                    k: [round(float(reports[k].mean()), 3), round(float(reports[k].std(ddof=0)), 3)]
                    for k in ("tpr", "tnr", "auc")
                },
                "gap": [
                    round(float(part["gap_civil_train_terms_nontoxic"].mean()), 3),
                    round(float(part["gap_civil_train_terms_nontoxic"].std(ddof=0)), 3),
                ],
                "some_people_are": {
                    t: round(float(np.mean([s[t] for s in part["some_people_are"]])), 2) for t in TABLE5_TERMS
                },
                "cpu_seconds": round(float(part["cpu_seconds"].mean()), 1),
            }
        )
    return rows


def _pm(row: dict[str, Any], key: str) -> str:
    mean, std = row[key]
    return f"{mean:.3f}±{std:.3f}" if key == "gap" else f"{mean:.2f}±{std:.2f}"


def table(summary: list[dict[str, Any]]) -> str:
    """The README's table (Markdown), generated from the JSON."""
    lines = [
        "| identity texts | pairs per batch | toxic share | model | TPR | TNR | AUC | CTF gap (Civil, train terms, NT) "
        "| collapsed | CPU s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in summary:
        lines.append(
            f"| {row['density']:.0%} | {row['pairs_per_batch']:.0f} | {row['toxic_share']:.0%} | {row['model']} | "
            + " | ".join(_pm(row, key) for key in ("tpr", "tnr", "auc", "gap"))
            + f" | {row['collapsed']}/{row['seeds']} | {row['cpu_seconds']:.0f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
