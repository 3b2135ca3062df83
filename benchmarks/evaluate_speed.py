"""Speed of ``counterfair evaluate`` against a naive pipeline, on CEval's 488 IMDB pairs.

Three measurements, each in its own process (so that peak memory is its own):

* ``ours``  — ``evaluate_pairs`` with distance, diversity, BLEU, perplexity (Gemma-3-270M) and BERTScore on
  all 488 pairs of ``crowd.csv``, models loaded once, texts batched. Wall time includes model loading.
* ``raw``   — the same Gemma model's forward pass on fixed-shape batches (4 x 256 tokens, no padding, no
  loss): the best throughput this machine gives that model. Our perplexity tokens/s is compared to it.
* ``naive`` — the pipeline as most users write it: per pair, load the LM and compute its loss
  (``AutoModelForCausalLM.from_pretrained(..., gguf_file=...)`` as the model's package documents, or, a
  kinder variant, from an already converted fp32 directory), ``bert_score.score([cand], [ref], ...)`` (which
  loads the encoder on each call), a pure-Python Levenshtein, and sacrebleu per pair. Running it on all 488
  pairs would take hours, so it runs on the first ``--naive-n`` pairs and its per-pair time is multiplied
  by 488 (stated as extrapolated). Its values on those pairs are compared with ours.

Usage: python benchmarks/evaluate_speed.py [--pairs PATH] [--naive-gguf-n 3] [--naive-fp32-n 20]
Results: benchmarks/results/evaluate_speed.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")  # measure computation, not reuse of stored results

import argparse
import json
import math
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT.parent / "shared" / "data" / "ceval" / "outputs" / "imdb" / "crowd.csv"
RESULTS = ROOT / "benchmarks" / "results"
METRICS = ["distance", "diversity", "bleu", "perplexity", "bertscore"]


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# ------------------------------------------------------------------------------------------------ roles


def role_ours(pairs: Path) -> dict[str, Any]:
    from counterfair.commands.evaluate.options import EvaluateOptions
    from counterfair.commands.evaluate.shell import evaluate_pairs

    started = time.perf_counter()
    result = evaluate_pairs(pairs, EvaluateOptions(metrics=METRICS))
    wall = time.perf_counter() - started
    rows = result.rows
    timing = result.summary["timing_s"]
    tokens = int(rows["ppl_tokens"].sum())
    return {
        "wall_s": wall,
        "pairs": len(rows),
        "pairs_per_s": len(rows) / wall,
        "stage_s": timing,
        "ppl_tokens": tokens,
        # the perplexity stage includes loading the converted model (a few seconds)
        "ppl_tokens_per_s_incl_load": tokens / timing["perplexity"],
        "peak_rss_mib": peak_rss_mib(),
        "values": rows[["distance", "diversity", "bleu", "perplexity", "bertscore_f1"]].to_dict(orient="list"),
    }


def role_ppl_only(pairs: Path) -> dict[str, Any]:
    """Our perplexity scorer alone, model already loaded: tokens/s of the scoring loop itself."""
    from counterfair.io import read_table
    from counterfair.metrics.perplexity import PerplexityScorer

    texts = read_table(pairs)["gen_text"].tolist()
    scorer = PerplexityScorer()
    scorer.score(texts[:2])  # load the model, warm up
    scorer.tokens_scored = scorer.tokens_forwarded = 0
    started = time.perf_counter()
    result = scorer.score(texts)
    elapsed = time.perf_counter() - started
    return {
        "seconds": elapsed,
        "tokens_scored": int(result.n_tokens.sum()),
        "tokens_forwarded_incl_padding": scorer.tokens_forwarded,
        "tokens_per_s": int(result.n_tokens.sum()) / elapsed,
        "peak_rss_mib": peak_rss_mib(),
    }


def role_raw(batches: int = 16) -> dict[str, Any]:
    import torch

    from counterfair.models import load_causal_lm

    model = load_causal_lm("gemma-3-270m").model
    generator = torch.Generator().manual_seed(0)
    data = [torch.randint(100, 20000, (4, 256), generator=generator) for _ in range(batches + 1)]
    with torch.inference_mode():
        model(input_ids=data[0])  # warm-up
        started = time.perf_counter()
        for batch in data[1:]:
            model(input_ids=batch)
        elapsed = time.perf_counter() - started
    tokens = batches * 4 * 256
    return {"tokens": tokens, "seconds": elapsed, "tokens_per_s": tokens / elapsed, "batch_shape": [4, 256]}


def _python_levenshtein(a: list[str], b: list[str]) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def role_naive(pairs: Path, n: int, source: str) -> dict[str, Any]:
    import bert_score
    import pandas as pd
    import sacrebleu
    import spacy
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from counterfair.models import cache_root, get_model_info

    frame = pd.read_csv(pairs).head(n)
    gguf = get_model_info("gemma-3-270m").path()
    converted = next((cache_root() / "converted").glob("gemma-3-270m-*-float32"))
    minilm = str(get_model_info("all-minilm-l6-v2").path())
    tokenizer = spacy.blank("en").tokenizer  # built once: a fair naive user does this much

    def words(text: str) -> list[str]:
        return [t.text for t in tokenizer(text) if not t.is_space]

    def perplexity(text: str) -> float:
        if source == "gguf":
            tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
        else:
            tok = AutoTokenizer.from_pretrained(converted)
            model = AutoModelForCausalLM.from_pretrained(converted, dtype=torch.float32)
        enc = tok(text, return_tensors="pt")
        with torch.no_grad():
            loss = model(**enc, labels=enc["input_ids"]).loss
        return math.exp(float(loss))

    values: dict[str, list[float]] = {k: [] for k in ("distance", "diversity", "bleu", "perplexity", "bertscore_f1")}
    per_metric = dict.fromkeys(values, 0.0)
    started = time.perf_counter()
    for orig, gen, gen2 in zip(frame.orig_text, frame.gen_text, frame.gen_text_2, strict=True):
        t0 = time.perf_counter()
        o, g = words(orig), words(gen)
        values["distance"].append(_python_levenshtein(o, g))
        t1 = time.perf_counter()
        values["diversity"].append(_python_levenshtein(g, words(gen2)) if isinstance(gen2, str) else math.nan)
        t2 = time.perf_counter()
        values["bleu"].append(sacrebleu.sentence_bleu(gen, [orig], smooth_method="exp").score / 100)
        t3 = time.perf_counter()
        values["perplexity"].append(perplexity(gen))
        t4 = time.perf_counter()
        _, _, f1 = bert_score.score([gen], [orig], model_type=minilm, num_layers=6, lang="en")
        values["bertscore_f1"].append(float(f1[0]))
        t5 = time.perf_counter()
        for key, dt in zip(values, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4), strict=True):
            per_metric[key] += dt
    wall = time.perf_counter() - started
    return {
        "source": source,
        "pairs": n,
        "wall_s": wall,
        "seconds_per_pair": wall / n,
        "seconds_per_pair_by_metric": {k: v / n for k, v in per_metric.items()},
        "peak_rss_mib": peak_rss_mib(),
        "values": values,
    }


# ------------------------------------------------------------------------------------------------ driver


def run_role(*args: str) -> dict[str, Any]:
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, __file__, "--role", *args], capture_output=True, text=True, check=False, env=env
    )
    if proc.returncode != 0:
        raise RuntimeError(f"role {args} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compare(ours: dict[str, list[float]], naive: dict[str, list[float]]) -> dict[str, float]:
    out = {}
    for key, theirs in naive.items():
        mine = ours[key][: len(theirs)]
        diffs = [
            abs(a - b) / (abs(b) if key == "perplexity" else 1.0)
            for a, b in zip(mine, theirs, strict=True)
            if not (math.isnan(a) or math.isnan(b))
        ]
        out[f"max_{'rel' if key == 'perplexity' else 'abs'}_diff_{key}"] = max(diffs) if diffs else math.nan
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--role", nargs="+")
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--naive-gguf-n", type=int, default=3)
    parser.add_argument("--naive-fp32-n", type=int, default=20)
    args = parser.parse_args()

    if args.role:
        name, *rest = args.role
        if name == "ours":
            out = role_ours(Path(rest[0]))
        elif name == "ppl":
            out = role_ppl_only(Path(rest[0]))
        elif name == "raw":
            out = role_raw()
        else:
            out = role_naive(Path(rest[0]), int(rest[1]), rest[2])
        print(json.dumps(out))
        return

    from counterfair.models import load_causal_lm

    load_causal_lm("gemma-3-270m", progress=True)  # make sure the converted copy exists before timing
    pairs = str(args.pairs)
    print("ours (all pairs, every metric) ...", flush=True)
    ours = run_role("ours", pairs)
    print(f"  {ours['wall_s']:.1f} s, {ours['pairs_per_s']:.2f} pairs/s, peak {ours['peak_rss_mib']:.0f} MiB")
    print("our perplexity loop alone ...", flush=True)
    ppl = run_role("ppl", pairs)
    print(f"  {ppl['tokens_per_s']:.1f} tokens/s")
    print("raw forward pass ...", flush=True)
    raw = run_role("raw")
    print(f"  {raw['tokens_per_s']:.1f} tokens/s")
    print(f"naive, reloading from the GGUF, {args.naive_gguf_n} pairs ...", flush=True)
    naive_gguf = run_role("naive", pairs, str(args.naive_gguf_n), "gguf")
    print(f"  {naive_gguf['seconds_per_pair']:.1f} s/pair")
    print(f"naive, reloading the converted fp32 copy, {args.naive_fp32_n} pairs ...", flush=True)
    naive_fp32 = run_role("naive", pairs, str(args.naive_fp32_n), "fp32")
    print(f"  {naive_fp32['seconds_per_pair']:.2f} s/pair")

    n = ours["pairs"]
    ours_per_pair = ours["wall_s"] / n
    summary = {
        "pairs": n,
        "ours_wall_s": round(ours["wall_s"], 1),
        "ours_pairs_per_s": round(ours["pairs_per_s"], 3),
        "ours_peak_rss_mib": round(ours["peak_rss_mib"]),
        "naive_gguf_extrapolated_wall_s": round(naive_gguf["seconds_per_pair"] * n, 1),
        "naive_fp32_extrapolated_wall_s": round(naive_fp32["seconds_per_pair"] * n, 1),
        "speedup_vs_naive_gguf": round(naive_gguf["seconds_per_pair"] / ours_per_pair, 1),
        "speedup_vs_naive_fp32": round(naive_fp32["seconds_per_pair"] / ours_per_pair, 2),
        "ppl_tokens_per_s": round(ppl["tokens_per_s"], 1),
        "raw_forward_tokens_per_s": round(raw["tokens_per_s"], 1),
        "ppl_fraction_of_raw": round(ppl["tokens_per_s"] / raw["tokens_per_s"], 3),
        "padding_overhead": round(ppl["tokens_forwarded_incl_padding"] / ppl["tokens_scored"] - 1, 4),
        "same_values_gguf": compare(ours["values"], naive_gguf["values"]),
        "same_values_fp32": compare(ours["values"], naive_fp32["values"]),
        "targets": {"speedup_vs_naive": ">= 5x", "ppl_fraction_of_raw": ">= 0.80"},
    }
    for key, value in summary.items():
        print(f"{key:32} {value}")
    for part in (ours, naive_gguf, naive_fp32):
        part.pop("values")
    from counterfair.writing import write_json

    write_json(
        {
            "benchmark": "evaluate_speed",
            "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version()},
            "input": pairs,
            "summary": summary,
            "ours": ours,
            "ppl_only": ppl,
            "raw_forward": raw,
            "naive_gguf": naive_gguf,
            "naive_fp32": naive_fp32,
        },
        RESULTS / "evaluate_speed.json",
    )
    print(f"wrote {RESULTS / 'evaluate_speed.json'}")


if __name__ == "__main__":
    main()
