"""CEval's LLM-judged text quality (paper 004 §3.1.2) with the judge that ships here, on CEval's IMDB outputs.

CEval asked Mistral-7B-instruct to rate each counterfactual 1-5 on grammar, cohesiveness, likability and fluency and
published the means per method (Table 2). We ask Qwen2.5-Coder-1.5B-Instruct (the default judge; a 7B model is too
slow on 2 CPU cores) through ``counterfair evaluate --metrics text_quality``, on the ``--texts`` reviews whose
originals are shortest among those every method has a counterfactual for (shortest: CPU time), and report

* the mean of each aspect per method, next to CEval's;
* Spearman's rank correlation across the six methods, per aspect and for the average;
* how often the judge's answer parsed at the first try, after retries, or never; seconds per judged text.

No human ratings of these texts exist here, so agreement is with CEval's LLM judge, not with people.

Usage: python benchmarks/llm_judge.py [--texts 12] [--llm SPEC]
Results: benchmarks/results/llm_judge.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")  # measure computation, not reuse of stored results

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd
from scipy.stats import spearmanr

from counterfair.commands.evaluate.options import EvaluateOptions
from counterfair.commands.evaluate.shell import evaluate_pairs
from counterfair.llm import load_llm
from counterfair.writing import write_json

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "ceval" / "outputs" / "imdb"
RESULTS = ROOT / "benchmarks" / "results"
METHODS = ["llama_02", "mice", "gbda", "crest", "crowd", "expert"]
ASPECTS = ["grammar", "cohesiveness", "likability", "fluency"]
# CEval Table 2, IMDB, Mistral-7B-instruct as judge
CEVAL = {
    "grammar": [4.80, 4.35, 3.47, 3.89, 4.71, 4.79],
    "cohesiveness": [4.63, 4.30, 3.61, 3.53, 4.71, 4.62],
    "likability": [2.82, 3.12, 3.07, 2.65, 3.12, 2.96],
    "fluency": [3.83, 3.58, 3.36, 3.20, 3.81, 3.73],
    "average": [4.02, 3.84, 3.38, 3.32, 4.09, 4.02],
}


def sample(n: int) -> dict[str, pd.DataFrame]:
    """The same ``n`` reviews for every method. The files list the same 488 reviews in the same order (GBDA's are
    lower-cased, CREST's carry ``<unk>br />`` for line breaks), so rows are matched by position."""
    frames = {m: pd.read_csv(DATA / f"{m}.csv", dtype=str, keep_default_na=False) for m in METHODS}
    usable = pd.Series(True, index=frames["crowd"].index)
    for frame in frames.values():
        usable &= frame["gen_text"].str.strip().ne("") & frame["gen_text"].ne("-1")
    words = frames["crowd"]["orig_text"].str.split().str.len()
    chosen = words[usable].sort_values(kind="stable").index[:n]
    return {m: f.loc[chosen, ["orig_text", "gen_text"]].reset_index(drop=True) for m, f in frames.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=12)
    parser.add_argument("--llm", default="llamacpp:qwen2.5-coder-1.5b-instruct")
    args = parser.parse_args()
    pairs = sample(args.texts)
    llm = load_llm(args.llm)
    result: dict[str, Any] = {
        "benchmark": "llm_judge",
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "judge": args.llm,
        "texts_per_method": args.texts,
        "mean_words_original": float(pd.Series(pairs["crowd"]["orig_text"]).str.split().str.len().mean()),
        "methods": {},
    }
    means: dict[str, dict[str, float]] = {}
    for method in METHODS:
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            ev = evaluate_pairs(pairs[method], EvaluateOptions(metrics=["text_quality"]), out_dir=tmp, judge_llm=llm)
            seconds = time.perf_counter() - started
            log = pd.read_json(Path(tmp) / "text_quality.jsonl", lines=True)
        tries = log["raw"].map(len)
        rows = ev.rows
        means[method] = {a: float(rows[f"quality_{a}"].mean()) for a in ASPECTS}
        means[method]["average"] = float(rows[[f"quality_{a}" for a in ASPECTS]].mean(axis=1).mean())
        result["methods"][method] = {
            "means": means[method],
            "parsed_first_try": int(((log["status"] == "ok") & (tries == 1)).sum()),
            "parsed_after_retry": int(((log["status"] == "ok") & (tries > 1)).sum()),
            "unparseable": int((log["status"] != "ok").sum()),
            "seconds_per_text": round(seconds / len(rows), 2),
            "example_raw": log["raw"].iloc[0][-1],
        }
        print(
            f"{method:9} "
            + "  ".join(f"{a} {means[method][a]:.2f}" for a in [*ASPECTS, "average"])
            + f"  ({seconds / len(rows):.1f} s/text, {result['methods'][method]['unparseable']} unparseable)",
            flush=True,
        )
    spearman = {}
    for aspect in [*ASPECTS, "average"]:
        ours = [means[m][aspect] for m in METHODS]
        rho = spearmanr(ours, CEVAL[aspect]).statistic
        spearman[aspect] = None if rho != rho else round(float(rho), 2)  # NaN when a side is constant
    result["ceval"] = {a: dict(zip(METHODS, v, strict=True)) for a, v in CEVAL.items()}
    result["spearman_vs_ceval"] = spearman
    print("Spearman vs CEval:", json.dumps(spearman))
    write_json(result, RESULTS / "llm_judge.json")
    print(f"wrote {RESULTS / 'llm_judge.json'}")


if __name__ == "__main__":
    main()
