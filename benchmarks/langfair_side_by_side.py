"""counterfair's response similarities beside LangFair's (#51), on the same response pairs.

The responses: an LLM audit's ``responses.csv`` (``--responses``; by default a run of ``counterfair llm-audit
--demo``, the packaged Qwen2.5-Coder-1.5B answering the hiring scenario, which the script makes in ``--run`` when it
is not there). The pairs: within each prompt's slot, sample ``i`` of one identity term's variant with sample ``i`` of
another's (the pairs counterfair's dissimilarity excess and LangFair's counterfactual metrics both read). counterfair's
``bleu``, ``rouge_l`` and ``cosine`` (:mod:`counterfair.commands.llm_audit.similarity`) and its sentiment parity of
VADER's ``neg`` share (``--score vader --positive-label neg``; strong: Wasserstein-1, weak: shares above 0.5) are
computed here; LangFair 0.8's ``BleuSimilarity``, ``RougelSimilarity``, ``CosineSimilarity`` (``how="pairwise"``, the
same packaged MiniLM) and ``SentimentBias`` (VADER, strong and weak parity) in LangFair's own environment
(``--langfair-python``, running ``benchmarks/langfair_theirs.py``). Reported: the largest absolute difference per
metric over every pair (one value each for the two parities), and both means.

A second set of pairs carries sentiment (the demo's JSON answers have none): the 245 original and human-revised
reviews of CAD-IMDB's development split (``../shared/data/cad_imdb/dev_paired.tsv``, Kaushik et al. 2020), each
review paired with its revision, as two "responses" that differ in a few words and in sentiment.

    python benchmarks/langfair_side_by_side.py --langfair-python /tmp/lfenv/bin/python [--pairs 2000]

Writes ``benchmarks/results/langfair_side_by_side.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def pairs(responses: pd.DataFrame, limit: int) -> tuple[list[str], list[str]]:
    first, second = [], []
    ident = responses[responses["kind"] == "identity"]
    for _, slot in ident.groupby("input_id", sort=True):
        by_word = {w: list(p.sort_values("sample")["response"]) for w, p in slot.groupby("word")}
        for a, b in combinations(sorted(by_word), 2):
            for x, y in zip(by_word[a], by_word[b], strict=False):
                first.append(str(x))
                second.append(str(y))
    return first[:limit], second[:limit]


def review_pairs(path: Path) -> tuple[list[str], list[str]]:
    """CAD-IMDB's original reviews and their revisions, in pairs (rows sharing a ``batch_id``)."""
    frame = pd.read_csv(path, sep="\t")
    first, second = [], []
    for _, part in frame.groupby("batch_id", sort=True):
        if len(part) == 2:
            first.append(str(part["Text"].iloc[0]))
            second.append(str(part["Text"].iloc[1]))
    return first, second


def compare(a: list[str], b: list[str], langfair_python: str) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """Both sides' values on the pairs ``a[i]``, ``b[i]``: per metric the largest difference and both means."""
    from counterfair.classifiers import load_classifier
    from counterfair.commands.llm_audit.similarity import pair_scorer, sentiment_parity
    from counterfair.models import get_model_info

    start = time.perf_counter()
    ours: dict[str, list[float]] = {}
    for metric in ("bleu", "rouge_l", "cosine"):
        score = pair_scorer(metric, a + b)  # the cosine's embeddings of every response, once
        ours[metric] = [score(x, y) for x, y in zip(a, b, strict=True)]
    vader = load_classifier("vader")
    neg_a, neg_b = vader.predict_proba(a)[:, 1], vader.predict_proba(b)[:, 1]  # the neg share, LangFair's default
    ours["sentiment_strong"] = [sentiment_parity(neg_a, neg_b, strong=True)]
    ours["sentiment_weak"] = [sentiment_parity(neg_a, neg_b, strong=False)]
    seconds = {"counterfair": time.perf_counter() - start}
    minilm = str(get_model_info("all-minilm-l6-v2").path())
    start = time.perf_counter()
    run = subprocess.run(
        [langfair_python, str(ROOT / "benchmarks" / "langfair_theirs.py")],
        input=json.dumps({"texts1": a, "texts2": b, "minilm": minilm}),
        capture_output=True,
        text=True,
        check=True,
    )
    seconds["langfair (including its imports)"] = time.perf_counter() - start
    theirs = json.loads(run.stdout)
    rows = {}
    for metric in ours:
        x, y = np.array(ours[metric]), np.array(theirs[metric])
        rows[metric] = {
            "values": len(x),
            "max_abs_difference": float(np.max(np.abs(x - y))),
            "mean_counterfair": float(x.mean()),
            "mean_langfair": float(y.mean()),
        }
    return rows, {k: round(v, 1) for k, v in seconds.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--langfair-python", required=True)
    parser.add_argument("--responses", type=Path, default=None)
    parser.add_argument("--run", type=Path, default=ROOT / "benchmarks" / "results" / "llm_demo_run" / "model")
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--reviews", type=Path, default=ROOT.parent / "shared" / "data" / "cad_imdb" / "dev_paired.tsv")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "langfair_side_by_side.json")
    args = parser.parse_args()
    source = args.responses or args.run / "responses.csv"
    if not source.exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "counterfair.cli",
                "llm-audit",
                "--demo",
                "--generator",
                "llamacpp:qwen2.5-coder-1.5b-instruct",
                "--out",
                str(args.run),
                "-q",
            ],
            check=False,
        )
    responses = pd.read_csv(source, dtype={"input_id": str, "word": str, "response": str}, keep_default_na=False)
    a, b = pairs(responses, args.pairs)
    results, seconds = compare(a, b, args.langfair_python)
    reviews, review_seconds = compare(*review_pairs(args.reviews), args.langfair_python)
    version = subprocess.run(
        [args.langfair_python, "-c", "import importlib.metadata as m; print(m.version('langfair'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    lines = [
        "| pairs | metric | values | largest difference | mean (counterfair) | mean (LangFair) |",
        "|---|---|---|---|---|---|",
    ]
    for name, rows in (("demo responses", results), ("CAD-IMDB reviews", reviews)):
        lines += [
            f"| {name} | {m} | {r['values']:,} | {r['max_abs_difference']:.1e} | {r['mean_counterfair']:.6f} | "
            f"{r['mean_langfair']:.6f} |"
            for m, r in rows.items()
        ]
    document = {
        "benchmark": "langfair_side_by_side",
        "responses": str(source.relative_to(ROOT)) if source.is_relative_to(ROOT) else str(source),
        "langfair": version,
        "reviews": str(args.reviews.resolve().relative_to(ROOT.parent)),
        "results": {"demo responses": results, "CAD-IMDB reviews": reviews},
        "seconds": {"demo responses": seconds, "CAD-IMDB reviews": review_seconds},
        "table": "\n".join(lines),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(document["table"])


if __name__ == "__main__":
    main()
