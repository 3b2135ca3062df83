"""Counterfactuals of counterfactuals on IMDB (paper 002) with three editors and two sentiment classifiers.

Texts: the ``--texts`` shortest original reviews of the counterfactually augmented IMDB test pairs
(``../shared/data/cad_imdb/test_paired.tsv``); shortest, to keep the CPU cost of the LLM editors within hours.
Classifiers: the spaCy IMDB model (``imdb-sentiment``) and a TF-IDF + logistic regression trained here on
``train_paired.tsv`` (saved as a scikit-learn pipeline, used as ``sklearn:PATH``).
Editors: synonym swap (TextFooler-like), mask-and-fill (LLM fill, binary search), LLM flip (one-shot); ``--steps`` n
feedback steps (n + 1 edits). ppl-base: Gemma-3-270M; ppl-fine: Gemma-3-270M adapted to the CAD training reviews
(last 2 blocks, 1 epoch; ``counterfair adapt-lm``).

Reports inc@1..n, flip-rate@1 and @n+1, ppl@1 and @n+1, seconds per text per step, and paired t-tests of per-text
inc@n between editors (paper 002 App. E found 100-200 texts enough for significant differences).

Usage: python benchmarks/feedback_imdb.py [--texts 100] [--steps 5] [--llm SPEC] [--editors synonym,mask_fill,llm_flip]
       [--classifiers imdb-sentiment,tfidf] [--report-only]
Results: benchmarks/results/feedback_imdb.json (runs cached in benchmarks/results/feedback_imdb/)
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")  # measure computation, not reuse of stored results

import argparse
import json
import platform
import time
from pathlib import Path
from typing import Any

import pandas as pd

from counterfair.commands.feedback.core import FeedbackOptions, adapt_lm
from counterfair.commands.feedback.shell import run_feedback
from counterfair.writing import write_json

ROOT = Path(__file__).resolve().parents[1]
CAD = ROOT.parent / "shared" / "data" / "cad_imdb"
RESULTS = ROOT / "benchmarks" / "results"
WORK = RESULTS / "feedback_imdb"


def texts(n: int) -> pd.DataFrame:
    frame = pd.read_csv(CAD / "test_paired.tsv", sep="\t")
    originals = frame.groupby("batch_id").head(1)  # one review of each pair
    originals = originals.assign(words=originals["Text"].str.split().str.len()).sort_values("words", kind="stable")
    return originals.head(n)[["Text", "Sentiment"]].rename(columns={"Text": "text"}).reset_index(drop=True)


def train_tfidf(path: Path) -> dict[str, Any]:
    import joblib
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    train = pd.read_csv(CAD / "train_paired.tsv", sep="\t")
    test = pd.read_csv(CAD / "test_paired.tsv", sep="\t")
    model = make_pipeline(
        TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True), LogisticRegression(max_iter=2000)
    )
    model.fit(train["Text"], train["Sentiment"])
    path.parent.mkdir(parents=True, exist_ok=True)
    joblib.dump(model, path)
    return {"test_accuracy": float((model.predict(test["Text"]) == test["Sentiment"]).mean()), "train_rows": len(train)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=100)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--llm", default="llamacpp:qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--editors", default="synonym,mask_fill,llm_flip")
    parser.add_argument("--classifiers", default="imdb-sentiment,tfidf")
    parser.add_argument("--adapt-texts", type=int, default=300)
    parser.add_argument("--report-only", action="store_true", help="write the JSON from finished runs; run nothing")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    data = texts(args.texts)
    data.to_csv(WORK / "texts.csv", index=False)
    result: dict[str, Any] = {
        "benchmark": "feedback_imdb",
        "machine": {"platform": platform.platform()},
        "args": vars(args),
        "texts": len(data),
        "mean_words": float(data["text"].str.split().str.len().mean()),
    }
    tfidf_path = WORK / "tfidf.joblib"
    result["tfidf"] = train_tfidf(tfidf_path)
    fine = WORK / "gemma-imdb-adapted"
    if not (fine / "config.json").exists():
        started = time.perf_counter()
        train_texts = pd.read_csv(CAD / "train_paired.tsv", sep="\t")["Text"].head(args.adapt_texts).tolist()
        adapt_lm(train_texts, fine, base="gemma-3-270m", train_layers=2, epochs=1)
        result["adapt_seconds"] = round(time.perf_counter() - started, 1)
    specs = {"imdb-sentiment": "imdb-sentiment", "tfidf": f"sklearn:{tfidf_path}"}
    classifiers = args.classifiers.split(",")
    editors = args.editors.split(",")
    # cheapest first, so that what finishes within a CPU budget is the most informative part; every run
    # checkpoints per text, so rerunning this script resumes an unfinished run
    order = [(e, c) for e in editors if e == "synonym" for c in classifiers]
    order += [(e, c) for c in classifiers for e in editors if e != "synonym"]
    runs: dict[str, Any] = {}

    def report(key: str) -> None:
        last = str(args.steps + 1)
        summary = runs[key]
        inc = summary["inconsistency"]
        print(
            f"{key:28} inc@1 {inc.get('inc@1')}  inc@{args.steps} {inc.get(f'inc@{args.steps}')}  "
            f"flip@1 {summary['steps']['1']['flip_rate']}  flip@{last} {summary['steps'][last]['flip_rate']}  "
            f"ppl@1 {summary['steps']['1']['ppl_base']}  ppl@{last} {summary['steps'][last]['ppl_base']}",
            flush=True,
        )
        result["pending"] = [f"{e}@{c}" for e, c in order if f"{e}@{c}" not in runs]
        result["runs"] = {k: _brief(runs[k]) for k in [f"{e}@{c}" for e, c in order] if k in runs}
        result["t_tests_inc_at_n"] = t_tests(runs, classifiers, editors, str(args.steps))
        write_json(result, RESULTS / "feedback_imdb.json")  # after every run: a partial result is kept

    def run_dir(key: str) -> Path:
        return WORK / key.replace("@", "_at_")

    # every finished run first, so that the JSON holds all of them while a long run is under way
    for editor, clf_name in order:
        key = f"{editor}@{clf_name}"
        if (run_dir(key) / "summary.json").exists():
            runs[key] = json.loads((run_dir(key) / "summary.json").read_text())
            report(key)
    for editor, clf_name in order:
        key = f"{editor}@{clf_name}"
        if key in runs or args.report_only:
            continue
        options = FeedbackOptions(
            editor=editor,
            classifier=specs[clf_name],
            steps=args.steps,
            llm=args.llm,
            ppl_model="gemma-3-270m",
            ppl_fine_model=str(fine),
            ppl_steps="ends",
            label_names={"POS": "positive", "NEG": "negative", "Positive": "positive", "Negative": "negative"},
        )
        runs[key] = run_feedback(WORK / "texts.csv", run_dir(key), options).summary
        report(key)
    print(json.dumps(result["t_tests_inc_at_n"], indent=1))
    print(f"wrote {RESULTS / 'feedback_imdb.json'}")


def _brief(summary: dict[str, Any]) -> dict[str, Any]:
    steps = summary["steps"]
    return {
        **{k: summary[k] for k in ("inconsistency", "steps", "status", "editor", "classifier")},
        # per-text seconds summed over the steps, from the step rows: right even when a run was resumed
        "seconds_per_text": round(sum(s["seconds_per_text"] or 0.0 for s in steps.values()), 2),
    }


def t_tests(runs: dict[str, Any], classifiers: list[str], editors: list[str], n: str) -> dict[str, Any]:
    """Paired t-tests of per-text inc@n between editors, over the texts both runs have."""
    from counterfair.commands.feedback.core import paired_inc_test

    tests: dict[str, Any] = {}
    for clf_name in classifiers:
        for i, a in enumerate(editors):
            for b in editors[i + 1 :]:
                if f"{a}@{clf_name}" not in runs or f"{b}@{clf_name}" not in runs:
                    continue
                test = paired_inc_test(runs[f"{a}@{clf_name}"], runs[f"{b}@{clf_name}"], int(n))
                if test is not None:
                    tests[f"{a} vs {b} @ {clf_name}"] = {k: v for k, v in test.items() if k != "k"}
    return tests


if __name__ == "__main__":
    main()
