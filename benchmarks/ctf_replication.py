"""Replication of paper 001 (counterfactual token fairness) on the data available here.

Identity splits (paper 001: error bars over random splits of the 50 terms): ``--splits random`` (the default) draws,
for each seed, 35 training and 15 held-out terms at random; ``--splits fixed`` keeps the built-in split for every
seed (the earlier runs).

Training data: the real Civil Comments of ``../shared/data/nlp_ctf`` (its three files pooled: non-toxic, toxic and
the held-out-term file). With the fixed split, as the files are cut: the comments with a training term, 80/20 by
text, and ``civil_test_data.csv`` for the held-out terms. With a random split: all comments, 80/20 by text; held-out
terms are kept out of the training counterfactuals (as in the paper), not out of the texts, and their gap is measured
on the held-back comments that mention one. The 20 % measures accuracy, TPR/TNR and the training-term CTF gap on
unseen texts. (The paper trained on Jigsaw's Wikipedia
comments, which are not available here; our training set is much smaller.)

Evaluation:
* **Civil Comments, training terms** — the held-back 20 %, counterfactuals over the 35 training terms;
* **Civil Comments, held-out terms** — ``civil_test_data.csv`` (comments with one of the 15 held-out terms),
  counterfactuals over the held-out terms;
* **synthetic** — a stratified sample of Dixon et al.'s template sentences (``bias_madlibs_77k.csv``), toxic and
  non-toxic, gaps over training and held-out terms;
* **Table 5** — scores of "Some people are X" for paper 001's Table 5 terms (gay, straight, Jewish, Muslim,
  Christian; every other identity term is kept in the JSON too).

Models (text CNN, kernels 2-5 with 300 filters each, spaCy vectors fine-tuned unless --freeze-vectors, the CLP
pair term summed over the batch as paper 001 writes it unless --clp-reduction mean): baseline, blind, augment
(all / one), CLP with λ in {0.05, 1, 5}, CLP_nontox with λ = 1; each for several seeds. Reports CPU seconds per
model.

Usage: python benchmarks/ctf_replication.py [--seeds 3] [--epochs 8] [--dixon-sample 3000]
       python benchmarks/ctf_replication.py --tables-only   (the tables again from the saved JSON, no training)
Results: benchmarks/results/ctf_replication.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")  # measure computation, not reuse of stored results

import argparse
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from counterfair.commands.ctf.core import ctf_report
from counterfair.editors.swap import IdentitySwapEditor
from counterfair.lexicons.attributes import load_identity_set
from counterfair.training import TrainConfig, TrainedClassifier, classification_report, collapse_warning, train
from counterfair.writing import write_json

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results"

TABLE5_TERMS = ("gay", "straight", "jewish", "muslim", "christian")  # paper 001, Table 5

MODELS = [
    ("baseline", {"method": "baseline"}),
    ("blind", {"method": "blind"}),
    ("augment (all)", {"method": "augment", "augment": "all"}),
    ("augment (one)", {"method": "augment", "augment": "one"}),
    ("CLP λ=0.05", {"method": "clp", "lam": 0.05}),
    ("CLP λ=1", {"method": "clp", "lam": 1.0}),
    ("CLP λ=5", {"method": "clp", "lam": 5.0}),
    ("CLP_nontox λ=1", {"method": "clp", "lam": 1.0, "nontoxic_only": True}),
]


def random_split(seed: int, folder: Path) -> str:
    """A YAML identity set with the 50 terms split 35 / 15 at random (:meth:`IdentitySet.resplit`)."""
    import yaml

    builtin = load_identity_set()
    split = builtin.resplit(1000 + seed, 35)
    path = folder / f"split_{seed}.yaml"
    spec = {"train": list(split.train), "heldout": list(split.heldout), "ambiguous": sorted(split.ambiguous)}
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return str(path)


def load_civil(seed: int, identities: str | None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(train, held-back 20 %, held-out-term texts) of the Civil Comments for one seed and identity split."""
    base = DATA / "nlp_ctf" / "civil_comments"
    nontoxic = pd.read_csv(base / "civil_train_data.csv")[["comment_text"]].assign(label=0)
    toxic = pd.read_csv(base / "civil_toxic_train_data.csv")[["comment_text"]].assign(label=1)
    test = pd.read_csv(base / "civil_test_data.csv")[["comment_text"]].assign(label=0)
    parts = [nontoxic, toxic] if identities is None else [nontoxic, toxic, test]
    frame = pd.concat(parts, ignore_index=True).drop_duplicates("comment_text").rename(columns={"comment_text": "text"})
    order = np.random.default_rng(seed).permutation(len(frame))
    cut = int(len(frame) * 0.8)
    train_df, held = frame.iloc[order[:cut]].reset_index(drop=True), frame.iloc[order[cut:]].reset_index(drop=True)
    if identities is None:
        return train_df, held, test.rename(columns={"comment_text": "text"})
    # held-out terms are held out of the training counterfactuals (paper 001), not out of the training texts: their
    # gap is measured on the held-back texts that mention one
    matcher = IdentitySwapEditor(load_identity_set(identities).subset("heldout"), guard=None, grammar=False)
    return train_df, held, held[[bool(matcher.find(text)) for text in held["text"]]].reset_index(drop=True)


def load_dixon(sample: int, seed: int) -> pd.DataFrame:
    frame = pd.read_csv(DATA / "dixon" / "bias_madlibs_77k.csv")
    frame["label"] = (frame["Label"] == "BAD").astype(int)
    parts = [g.sample(min(len(g), sample // 2), random_state=seed) for _, g in frame.groupby("label")]
    return pd.concat(parts, ignore_index=True).rename(columns={"Text": "text"})[["text", "label"]]


class Swaps:
    """Counterfactual pairs of an evaluation set, computed once and scored by every model."""

    def __init__(self, frame: pd.DataFrame, split: str, identities_spec: str | None = None) -> None:
        identities = load_identity_set(identities_spec).subset(split)
        editor = IdentitySwapEditor(identities, guard=None, grammar=False)
        self.frame = frame
        self.variants = editor.edit(frame["text"].tolist())
        self.split = split

    def pairs(self, score: dict[str, float]) -> pd.DataFrame:
        rows = []
        for i, (text, label, cands) in enumerate(
            zip(self.frame["text"], self.frame["label"], self.variants, strict=True)
        ):
            for c in cands:
                rows.append(
                    {
                        "input_id": i,
                        "label": label,
                        "source_term": c.meta["source_term"],
                        "target_term": c.meta["target_term"],
                        "source_split": self.split,
                        "target_split": self.split,
                        "score_orig": score[text],
                        "score_cf": score[c.text],
                    }
                )
        pairs = pd.DataFrame(rows)
        pairs["diff"] = pairs["score_cf"] - pairs["score_orig"]
        pairs["abs_diff"] = pairs["diff"].abs()
        return pairs

    def texts(self) -> list[str]:
        return list(dict.fromkeys(self.frame["text"].tolist() + [c.text for v in self.variants for c in v]))


def gap(swaps: Swaps, score: dict[str, float], label: int | None) -> float | None:
    pairs = swaps.pairs(score)
    if label is not None:
        pairs = pairs[pairs["label"] == label]
    return None if pairs.empty else ctf_report(pairs, n_resamples=200).value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--dixon-sample", type=int, default=3000)
    parser.add_argument("--vectors", default="spacy", choices=["spacy", "learned"])
    parser.add_argument("--freeze-vectors", action="store_true", help="keep the spaCy vectors as loaded")
    parser.add_argument("--clp-reduction", default="sum", choices=["sum", "mean"], help="sum is paper 001's")
    parser.add_argument("--filters", type=int, default=300, help="CNN filters per kernel size (paper 001: 300)")
    parser.add_argument("--splits", default="random", choices=["random", "fixed"], help="identity splits per seed")
    parser.add_argument("--tables-only", action="store_true", help="rebuild the tables from the saved JSON")
    args = parser.parse_args()
    if args.tables_only:
        import json

        saved = json.loads((RESULTS / "ctf_replication.json").read_text(encoding="utf-8"))
        summarise(saved)
        write_json(saved, RESULTS / "ctf_replication.json")
        return
    split_dir = Path(tempfile.mkdtemp(prefix="ctf_splits_"))

    some_people = [f"Some people are {t}." for t in load_identity_set().terms]
    results: dict[str, Any] = {
        "benchmark": "ctf_replication",
        "machine": {"platform": platform.platform()},
        "args": vars(args),
        "models": {},
    }
    results["splits"] = {}
    for seed in range(args.seeds):
        identities = random_split(seed, split_dir) if args.splits == "random" else None
        split = load_identity_set(identities)
        results["splits"][seed] = {"train": list(split.train), "heldout": list(split.heldout)}
        train_df, eval_df, civil_test = load_civil(seed, identities)
        results["splits"][seed] |= {
            "civil_train": len(train_df),
            "civil_eval": len(eval_df),
            "civil_heldout": len(civil_test),
        }
        sizes = f"{len(train_df)}/{len(eval_df)}/{len(civil_test)}"
        print(f"seed {seed}: held-out terms {', '.join(split.heldout)}; civil train/eval/held-out {sizes}")
        dixon = load_dixon(args.dixon_sample, seed)
        evals = {
            "civil_train_terms": Swaps(eval_df, "train", identities),
            "civil_heldout_terms": Swaps(civil_test[civil_test["label"] == 0], "heldout", identities),
            "dixon_train_terms": Swaps(dixon, "train", identities),
            "dixon_heldout_terms": Swaps(dixon, "heldout", identities),
        }
        all_texts = list(
            dict.fromkeys(
                [t for s in evals.values() for t in s.texts()]
                + eval_df["text"].tolist()
                + dixon["text"].tolist()
                + some_people
            )
        )
        for name, overrides in MODELS:
            config = TrainConfig(
                epochs=args.epochs,
                seed=seed,
                vectors=args.vectors,
                freeze_vectors=args.freeze_vectors,
                clp_reduction=args.clp_reduction,
                filters=args.filters,
                identities=identities,
                **overrides,  # type: ignore[arg-type]
            )
            with tempfile.TemporaryDirectory() as tmp:
                t0, c0 = time.perf_counter(), time.process_time()
                train(train_df, tmp, config)
                cpu, wall = time.process_time() - c0, time.perf_counter() - t0
                clf = TrainedClassifier(tmp)
                score = dict(zip(all_texts, clf.predict_proba(all_texts)[:, 1].tolist(), strict=True))
            civil_report = classification_report(
                eval_df["label"].to_numpy(), np.array([score[t] for t in eval_df["text"]])
            )
            dixon_report = classification_report(dixon["label"].to_numpy(), np.array([score[t] for t in dixon["text"]]))
            entry = {
                "seed": seed,
                "cpu_seconds": round(cpu, 1),
                "wall_seconds": round(wall, 1),
                "civil_eval": civil_report,
                "dixon": dixon_report,
                "collapse_warning": collapse_warning(civil_report),
                "gaps": {
                    "civil_train_terms_nontoxic": gap(evals["civil_train_terms"], score, 0),
                    "civil_train_terms_toxic": gap(evals["civil_train_terms"], score, 1),
                    "civil_heldout_terms_nontoxic": gap(evals["civil_heldout_terms"], score, 0),
                    "dixon_train_terms_nontoxic": gap(evals["dixon_train_terms"], score, 0),
                    "dixon_train_terms_toxic": gap(evals["dixon_train_terms"], score, 1),
                    "dixon_heldout_terms_nontoxic": gap(evals["dixon_heldout_terms"], score, 0),
                    "dixon_heldout_terms_toxic": gap(evals["dixon_heldout_terms"], score, 1),
                },
                "some_people_are": {t.split("are ", 1)[1].rstrip("."): round(score[t], 3) for t in some_people},
            }
            results["models"].setdefault(name, []).append(entry)
            g = entry["gaps"]
            print(
                f"seed {seed} {name:15} cpu {cpu:6.1f}s  TPR {civil_report['tpr']:.2f} TNR {civil_report['tnr']:.2f} "
                f"gap civil {g['civil_train_terms_nontoxic']:.3f}/{g['civil_heldout_terms_nontoxic']:.3f} "
                f"dixon train/heldout {g['dixon_train_terms_nontoxic']:.3f}/{g['dixon_heldout_terms_nontoxic']:.3f}",
                flush=True,
            )

    summarise(results)
    write_json(results, RESULTS / "ctf_replication.json")
    print(f"wrote {RESULTS / 'ctf_replication.json'}")


def summarise(results: dict[str, Any]) -> None:
    """The table over seeds and Table 5, printed and stored in ``results``."""

    def mean_std(values: list[float | None]) -> str:
        v = np.array([x for x in values if x is not None], dtype=float)
        return f"{v.mean():.3f}±{v.std():.3f}" if v.size else "–"

    columns = [
        "dixon_train_terms_nontoxic",
        "dixon_train_terms_toxic",
        "dixon_heldout_terms_nontoxic",
        "civil_train_terms_nontoxic",
        "civil_heldout_terms_nontoxic",
    ]
    header = (
        f"{'model':16}"
        + "".join(f"{c.replace('_terms', '').replace('_nontoxic', ' NT').replace('_toxic', ' T'):>20}" for c in columns)
        + f"{'TPR':>14}{'TNR':>14}{'AUC':>14}{'CPU s':>8}"
    )
    lines = [header]
    summary: dict[str, Any] = {}
    for name, entries in results["models"].items():
        row = {c: mean_std([e["gaps"][c] for e in entries]) for c in columns}
        row |= {k: mean_std([e["civil_eval"][k] for e in entries]) for k in ("tpr", "tnr", "auc")}
        row["cpu_seconds"] = float(np.mean([e["cpu_seconds"] for e in entries]))
        row["collapse_warnings"] = [e["collapse_warning"] for e in entries if e["collapse_warning"]]
        row["some_people_are"] = {
            t: round(float(np.mean([e["some_people_are"][t] for e in entries])), 3) for t in TABLE5_TERMS
        }
        summary[name] = row
        lines.append(
            f"{name:16}"
            + "".join(f"{row[c]:>20}" for c in columns)
            + f"{row['tpr']:>14}{row['tnr']:>14}{row['auc']:>14}{row['cpu_seconds']:>8.0f}"
        )
    table = "\n".join(lines)
    print(table)
    print("\nTable 5 (Some people are X; mean over seeds):")
    for name, row in summary.items():
        print(f"  {name:16} " + "  ".join(f"{t} {v:.2f}" for t, v in row["some_people_are"].items()))
    results["summary"] = summary
    results["table"] = table


if __name__ == "__main__":
    main()
