"""The first load of a GGUF language model (Gemma-3-270M, the perplexity default) now and before (#50).

A first load dequantises the GGUF with transformers and saves a float16 copy in the cache; later loads read the copy
(seconds). transformers parses the GGUF's header once for the tokenizer, once for the config and once for the weights;
Gemma-3-270M's header holds a 262,144-token vocabulary, and each parse of it took 17 s on 2 cores. Now the three share
one reader (``counterfair.models._gguf_read_once``).

Each round loads the model in a fresh process with an empty cache (``COUNTERFAIR_CACHE``) and scores one text, with
this checkout's code and with ``--before-src`` (the ``src`` folder of a ``git worktree`` of the earlier commit),
alternating; wall time and the perplexity come back from the child, which must be equal to the last bit.

Usage: python benchmarks/gguf_first_load.py --before-src /tmp/before/src [--rounds 2]
Results: benchmarks/results/gguf_first_load.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_run import before_commit, cpu_model
from counterfair.writing import write_json

RESULTS = Path(__file__).resolve().parent / "results" / "gguf_first_load.json"
CHILD = """
import json, time
started = time.perf_counter()
from counterfair.metrics.perplexity import PerplexityScorer
value = PerplexityScorer("gemma-3-270m", use_store=False).score(["My Muslim neighbour is kind."]).perplexity[0]
print(json.dumps({"seconds": time.perf_counter() - started, "perplexity": float(value)}))
"""


def first_load(src: str | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as cache:
        env = os.environ | {"COUNTERFAIR_CACHE": cache, "COUNTERFAIR_STORE": "off"}
        if src is not None:
            env["PYTHONPATH"] = src
        done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before-src", required=True, help="the src folder of the code to compare with")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    before = before_commit(args.before_src)
    runs: dict[str, list[dict[str, Any]]] = {"now": [], "before": []}
    load = os.getloadavg()[0]
    for round_ in range(args.rounds):
        for name, src in (("now", None), ("before", args.before_src)):
            runs[name].append(first_load(src))
            print(f"round {round_ + 1} {name}: {runs[name][-1]['seconds']:.1f} s", flush=True)
    values = {r["perplexity"] for rs in runs.values() for r in rs}
    medians = {name: statistics.median(r["seconds"] for r in rs) for name, rs in runs.items()}
    report = {
        "model": "gemma-3-270m",
        "before_commit": before,
        "rounds": args.rounds,
        "machine": {"processor": cpu_model(), "cpus": os.cpu_count(), "load_1min": load},
        "seconds": {name: [round(r["seconds"], 1) for r in rs] for name, rs in runs.items()},
        "median_s": {name: round(s, 1) for name, s in medians.items()},
        "ratio_now_to_before": round(medians["now"] / medians["before"], 2),
        "same_perplexity": len(values) == 1,
        "perplexity": sorted(values)[0],
    }
    write_json(report, RESULTS)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
