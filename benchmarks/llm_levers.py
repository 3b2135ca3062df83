"""Levers on the LLM rewrite's cost, measured in one run (#36): what each saves against the current default path.

Paper 000's rewrite (16 samples at temperature 1, top-k 40, stop at ``}``) of the first ``--texts`` sentences of
``benchmarks/data/fairness_sentences.csv`` with the same model and threads, each lever alone:

* ``sequential`` — one sample after another (``parallel=1``), the path before parallel sampling;
* ``sequential + prompt lookup`` — the same with llama.cpp's prompt-lookup speculative decoding (tokens drafted from
  the prompt's n-grams, ``draft=`` tokens checked in one evaluation; a rewrite copies most of its input);
* ``parallel 16`` — today's default: 16 sequences decoded together, 4 texts per call.

Each row reports seconds per input and what the samples are worth (parsed share, filter pass rate, inputs with a
passing candidate, chosen BLEU and BERTScore), so a faster lever that samples worse shows.

Usage: python benchmarks/llm_levers.py [--llm qwen2.5-coder-0.5b-instruct] [--texts 12] [--draft 10]
Results: benchmarks/results/llm_levers.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")

import argparse
import platform
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from counterfair.llm.llamacpp import LlamaCppLLM
from counterfair.writing import write_json
from llm_parallel import rewrite_all, sample_statistics, sentences

RESULTS = Path(__file__).resolve().parent / "results" / "llm_levers.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llm", default="qwen2.5-coder-0.5b-instruct")
    parser.add_argument("--texts", type=int, default=12)
    parser.add_argument("--draft", type=int, default=10)
    args = parser.parse_args()
    frame = sentences().head(args.texts)
    levers: list[tuple[str, dict[str, Any], int]] = [
        ("parallel 16, 4 texts per call (default)", {"parallel": 16}, 4),
        ("sequential", {"parallel": 1}, 1),
        (f"sequential + prompt lookup ({args.draft} tokens)", {"parallel": 1, "draft": args.draft}, 1),
    ]
    report: dict[str, Any] = {
        "benchmark": "llm_levers",
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load_1min": os.getloadavg()[0]},
        "args": vars(args),
        "levers": {},
    }
    for name, settings, per_call in levers:
        llm = LlamaCppLLM(args.llm, **settings)
        rewrite_all(llm, frame.head(1), 1)  # load and warm up outside the timing
        seconds, rewrites = rewrite_all(llm, frame, per_call)
        row = {"s_per_input": round(seconds / len(frame), 2), **sample_statistics(llm, rewrites)}
        report["levers"][name] = row
        print(f"{name}: {row['s_per_input']} s/input, parsed {row['parsed_share']}, pass {row['filter_pass_share']}, "
              f"inputs ok {row['inputs_with_passing_candidate']}/{len(frame)}", flush=True)  # fmt: skip
        write_json(report, RESULTS)
    base = report["levers"][levers[1][0]]["s_per_input"]
    lines = ["| lever | s / input | vs sequential | parsed | pass the filters | inputs with a counterfactual | "
             "chosen BLEU | chosen BERTScore |", "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, row in report["levers"].items():
        lines.append(
            f"| {name} | {row['s_per_input']:.2f} | {base / row['s_per_input']:.2f}× | {row['parsed_share']:.3f} | "
            f"{row['filter_pass_share']:.3f} | {row['inputs_with_passing_candidate']}/{len(frame)} | "
            f"{row['chosen_bleu_mean']} | {row['chosen_bertscore_mean']} |"
        )
    report["table"] = "\n".join(lines)
    print(report["table"])
    write_json(report, RESULTS)


if __name__ == "__main__":
    main()
