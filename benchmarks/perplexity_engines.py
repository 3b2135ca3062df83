"""Perplexity from the GGUF with llama.cpp against counterfair's transformers path, in one run (#36).

counterfair scores perplexity with transformers on Gemma-3-270M, read from the shipped Q4_K_M GGUF and dequantized
(a float16 copy cached once, computed in float32). llama.cpp could score the GGUF as it is: evaluate each text once
with logits for every position and sum -log p(next token). This script measures both on the same texts, each in its
own process (load time, tokens per second, peak memory), and compares the values per text: the issue's rule is to
keep the faster engine only at equal values (relative difference ≤ 1e-3).

Texts: the built-in demo texts, the benchmark sentences and the implicit-reference sentences (short, 10–30 tokens),
and 20 long ones made by joining 12 of them (~250 tokens). Threads: 2 for both (torch and llama.cpp).

Usage: python benchmarks/perplexity_engines.py
Results: benchmarks/results/perplexity_engines.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")

import json
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from counterfair.writing import write_json
from speed_smoke import smoke_texts

RESULTS = Path(__file__).resolve().parent / "results" / "perplexity_engines.json"
THREADS = 2


def bench_texts() -> list[str]:
    short = [t for t in smoke_texts() if not t.endswith(("anything.", "wonderful.", "Sundays.", "everyone else."))]
    long = [" ".join(short[i : i + 12]) for i in range(0, 240, 12)][:20]
    return short + long


def _transformers(texts: list[str]) -> dict[str, Any]:
    import torch

    torch.set_num_threads(THREADS)
    from counterfair.metrics import PerplexityScorer

    scorer = PerplexityScorer(use_store=False)
    started = time.perf_counter()
    scorer.lm()
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    result = scorer.score(texts)
    seconds = time.perf_counter() - started
    return {
        "load_s": round(loaded, 2),
        "score_s": round(seconds, 2),
        "tokens": int(result.n_tokens.sum()),
        "perplexity": result.perplexity.tolist(),
        "n_tokens": result.n_tokens.tolist(),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
    }


def _llamacpp(texts: list[str]) -> dict[str, Any]:
    from llama_cpp import Llama

    from counterfair.models import resolve_lm_source

    _, path, _ = resolve_lm_source("gemma-3-270m")
    started = time.perf_counter()
    probe = Llama(model_path=str(path), n_ctx=64, vocab_only=True, verbose=False)
    encoded = [probe.tokenize(t.encode("utf-8"), add_bos=True, special=False) for t in texts]
    n_ctx = max(64, -(-max(len(e) for e in encoded) // 64) * 64)
    llm = Llama(model_path=str(path), logits_all=True, n_ctx=n_ctx, n_batch=n_ctx, n_threads=THREADS, verbose=False)
    loaded = time.perf_counter() - started
    perplexity, counts = [], []
    eval_s = 0.0  # llama.cpp's own time; the rest is the log-softmax over 262k logits per token in numpy
    started = time.perf_counter()
    for ids in encoded:
        if len(ids) < 2:  # nothing to predict (as the transformers path: no perplexity)
            perplexity.append(float("nan"))
            counts.append(0)
            continue
        llm.reset()
        evaluating = time.perf_counter()
        llm.eval(ids)
        eval_s += time.perf_counter() - evaluating
        logits = np.asarray(llm.scores[: len(ids) - 1], dtype=np.float64)
        top = logits.max(axis=1)
        lse = top + np.log(np.exp(logits - top[:, None]).sum(axis=1))
        nll = float((lse - logits[np.arange(len(ids) - 1), ids[1:]]).sum())
        perplexity.append(float(np.exp(nll / (len(ids) - 1))))
        counts.append(len(ids) - 1)
    seconds = time.perf_counter() - started
    return {
        "load_s": round(loaded, 2),
        "score_s": round(seconds, 2),
        "tokens": int(sum(counts)),
        "perplexity": perplexity,
        "n_tokens": counts,
        "n_ctx": n_ctx,
        "eval_s": round(eval_s, 2),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
    }


def run(engine: str) -> dict[str, Any]:
    """One engine in a child process of its own (its own peak memory); the child prints its JSON result last."""
    done = subprocess.run(
        [sys.executable, __file__, "--engine", engine], capture_output=True, text=True, check=False, timeout=1800
    )
    if done.returncode != 0:
        raise SystemExit(f"{engine} failed ({done.returncode}): {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


ENGINES = {
    "transformers (float32, from the dequantized GGUF)": ("transformers", _transformers),
    "llama.cpp (the Q4_K_M GGUF)": ("llamacpp", _llamacpp),
}


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--engine":
        print(json.dumps(dict(ENGINES.values())[sys.argv[2]](bench_texts())))
        return
    texts = bench_texts()
    report: dict[str, Any] = {
        "benchmark": "perplexity_engines",
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "threads": THREADS,
            "load_1min": os.getloadavg()[0],
        },
        "texts": len(texts),
        "engines": {},
    }
    for name, (engine, _) in ENGINES.items():
        measured = run(engine)
        measured["tokens_per_s"] = round(measured["tokens"] / measured["score_s"], 1)
        report["engines"][name] = measured
        print(f"{name}: load {measured['load_s']} s, {measured['tokens']} tokens in {measured['score_s']} s "
              f"({measured['tokens_per_s']} tokens/s), peak {measured['peak_rss_mib']} MiB", flush=True)  # fmt: skip
    (ref, other) = report["engines"].values()
    a, b = np.array(ref["perplexity"], dtype=float), np.array(other["perplexity"], dtype=float)
    both = ~np.isnan(a) & ~np.isnan(b)
    relative = np.abs(b[both] - a[both]) / a[both]
    report["same_tokens"] = ref["n_tokens"] == other["n_tokens"]
    report["relative_difference"] = {
        "median": float(np.median(relative)),
        "p90": float(np.quantile(relative, 0.9)),
        "max": float(relative.max()),
        "within_1e-3": int((relative <= 1e-3).sum()),
    }
    report["speed_ratio"] = round(other["tokens_per_s"] / ref["tokens_per_s"], 2)
    report["table"] = "\n".join(
        ["| engine | load | tokens/s | peak memory |", "|---|---|---|---|"]
        + [
            f"| {n} | {e['load_s']:.1f} s | {e['tokens_per_s']:,.0f} | {e['peak_rss_mib']:,} MiB |"
            for n, e in report["engines"].items()
        ]
    )
    print(report["table"])
    print(f"same tokens: {report['same_tokens']}; relative difference {report['relative_difference']}; "
          f"llama.cpp / transformers speed {report['speed_ratio']}x")  # fmt: skip
    write_json(report, RESULTS)


if __name__ == "__main__":
    main()
