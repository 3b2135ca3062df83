"""What the safe llama.cpp path costs: tokens/s with and without weight repacking (``use_extra_bufts``).

For each model (Qwen2.5-Coder-0.5B and -1.5B Q4_K_M, where installed) and each path (repacking on / off, forced with
``COUNTERFAIR_LLAMA_REPACK``), a fresh child process loads the model through counterfair's llama.cpp backend and
measures, ``--repeats`` times: load seconds, prompt evaluation of a ~400-token prompt (tokens/s, KV cache cleared
first) and greedy generation of 64 tokens one at a time (tokens/s). Also the time of the native-path probe that
decides the path once per machine. Ratios are computed within this one run.

    python benchmarks/llama_native_paths.py [--models qwen2.5-coder-0.5b-instruct,qwen2.5-coder-1.5b-instruct]

Writes benchmarks/results/llama_native_paths.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results" / "llama_native_paths.json"
MODELS = ("qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct")
PROMPT = (
    "Rewrite the following review so that it is not about religion, changing as little as possible. "
    "My Muslim coworker brought homemade samosas to the office party and everyone loved them. " * 12
)
NEW_TOKENS = 64


def worker(model: str, repeats: int) -> dict[str, Any]:
    """Runs in the child: load through counterfair's backend, time prompt evaluation and generation."""
    from counterfair.llm import load_llm

    t0 = time.perf_counter()
    backend: Any = load_llm(f"llamacpp:{model}", n_ctx=2048)
    llama = backend._load()
    load_s = time.perf_counter() - t0
    tokens = llama.tokenize(PROMPT.encode(), add_bos=True)
    prompt_tps, gen_tps = [], []
    for _ in range(repeats):
        llama.reset()
        t0 = time.perf_counter()
        llama.eval(tokens)
        prompt_tps.append(len(tokens) / (time.perf_counter() - t0))
        t0 = time.perf_counter()
        for _ in range(NEW_TOKENS):
            llama.eval([llama.sample(temp=0.0)])
        gen_tps.append(NEW_TOKENS / (time.perf_counter() - t0))
    info = backend.info()
    return {
        "load_s": round(load_s, 2),
        "prompt_tokens": len(tokens),
        "prompt_tokens_per_s": [round(x, 1) for x in prompt_tps],
        "generated_tokens_per_s": [round(x, 1) for x in gen_tps],
        "prompt_tokens_per_s_median": round(statistics.median(prompt_tps), 1),
        "generated_tokens_per_s_median": round(statistics.median(gen_tps), 1),
        "weight_repacking": info["weight_repacking"],
        "native_path": info["native_path"],
        "threads": backend.n_threads,
    }


def run_child(model: str, repack: str, repeats: int) -> dict[str, Any]:
    env = {**os.environ, "COUNTERFAIR_LLAMA_REPACK": repack}
    argv = [sys.executable, __file__, "--worker", model, "--repeats", str(repeats)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"error": f"exit {done.returncode}", "output": done.stderr[-2000:]}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def probe_seconds(model: str) -> dict[str, Any]:
    """The one-time decision on this machine (a fresh cache, so the probe really runs)."""
    import tempfile

    code = (
        "import time, json; from counterfair.llm.native import decide; from counterfair.models import get_model_info;"
        f"p = get_model_info({model!r}).path(); t = time.perf_counter(); d = decide(p);"
        "print(json.dumps({'probe_s': round(time.perf_counter() - t, 2), **d.to_dict()}))"
    )
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "COUNTERFAIR_CACHE": cache, "COUNTERFAIR_LLAMA_REPACK": "auto"}
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"error": done.stderr[-2000:]}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.repeats)))
        return
    from counterfair.errors import CounterfairError
    from counterfair.llm.native import cpu_fingerprint
    from counterfair.models import get_model_info, package_version

    results: dict[str, Any] = {
        "machine": {**cpu_fingerprint(), "cores": len(os.sched_getaffinity(0))},
        "llama_cpp_python": package_version("llama-cpp-python"),
        "new_tokens": NEW_TOKENS,
        "repeats": args.repeats,
        "models": {},
    }
    for model in args.models.split(","):
        try:
            get_model_info(model).path()
        except CounterfairError as err:
            results["models"][model] = {"skipped": str(err).splitlines()[0]}
            print(f"{model}: not installed, skipped")
            continue
        entry: dict[str, Any] = {"probe": probe_seconds(model)}
        for repack in ("on", "off"):
            entry[f"repack_{repack}"] = run_child(model, repack, args.repeats)
            print(model, f"repack {repack}:", json.dumps(entry[f"repack_{repack}"]))
        on, off = entry["repack_on"], entry["repack_off"]
        if "error" not in on and "error" not in off:
            entry["safe_over_fast"] = {
                "prompt": round(off["prompt_tokens_per_s_median"] / on["prompt_tokens_per_s_median"], 3),
                "generation": round(off["generated_tokens_per_s_median"] / on["generated_tokens_per_s_median"], 3),
            }
            print(model, "safe path / fast path:", entry["safe_over_fast"])
        results["models"][model] = entry
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
