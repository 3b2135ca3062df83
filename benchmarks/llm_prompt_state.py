"""The last LLM lever of #36: the few-shot prompt's KV state saved to disk and loaded by the next process, instead of
evaluated again.

Within a process the prefix every input shares (paper 000's few-shot turns, ~540 tokens) is evaluated once and kept
(``reuse_prefix``, ``llm_parallel.py`` part 1), so what a saved state could spare is one evaluation of that prefix per
process. Measured here with the audit's default model in one run: the prefix evaluated in a fresh context, the state
saved (``Llama.save_state``, pickled to a file) and loaded into a second instance of the model, and the first sampled
token after it compared with the evaluated one (the loaded state must be the same state). The saving per process is
set against the LLM stage of the 200-text audit (``audit_speed.py``: 29.6 min).

Usage: python benchmarks/llm_prompt_state.py [--llm qwen2.5-coder-1.5b-instruct]
Results: benchmarks/results/llm_prompt_state.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")

import argparse
import pickle
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from counterfair.editors.llm_rewrite import FewShotPrompt
from counterfair.lexicons.attributes import load_attribute
from counterfair.llm.llamacpp import LlamaCppLLM
from counterfair.writing import write_json

RESULTS = Path(__file__).resolve().parent / "results" / "llm_prompt_state.json"
AUDIT_LLM_MINUTES = 29.6  # audit_speed.py: 200 texts x 4 methods with the 1.5B model, parallel sampling


def shared_prefix(llm: Any, llama: Any) -> list[int]:
    """The tokens every input's prompt starts with: the chat-rendered few-shot turns up to the input."""
    prompt = FewShotPrompt.load()
    instruction = prompt.default_instruction.format(subject=load_attribute("islam").subject)
    tokens = [
        llama.tokenize(llm.render_chat(prompt.messages(text, instruction)).encode(), special=True)
        for text in ("The mosque opened a school.", "Muslims pray five times a day.")
    ]
    common = 0
    while tokens[0][common] == tokens[1][common]:
        common += 1
    return tokens[0][:common]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llm", default="qwen2.5-coder-1.5b-instruct")
    args = parser.parse_args()
    first = LlamaCppLLM(args.llm, parallel=1)
    llama = first._load()
    prefix = shared_prefix(first, llama)
    llama.reset()
    started = time.perf_counter()
    llama.eval(prefix)
    evaluated_s = time.perf_counter() - started
    greedy = int(llama.scores[llama.n_tokens - 1].argmax())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "prefix.state"
        started = time.perf_counter()
        path.write_bytes(pickle.dumps(llama.save_state()))
        saved_s = time.perf_counter() - started
        size_mib = path.stat().st_size / 2**20
        second = LlamaCppLLM(args.llm, parallel=1)._load()
        started = time.perf_counter()
        second.load_state(pickle.loads(path.read_bytes()))
        loaded_s = time.perf_counter() - started
    same = second.n_tokens == len(prefix) and int(second.scores[second.n_tokens - 1].argmax()) == greedy
    saving = evaluated_s - loaded_s
    report = {
        "benchmark": "llm_prompt_state",
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load": os.getloadavg()[0]},
        "llm": args.llm,
        "prefix_tokens": len(prefix),
        "prefix_eval_s": round(evaluated_s, 2),
        "state_save_s": round(saved_s, 2),
        "state_mib": round(size_mib, 1),
        "state_load_s": round(loaded_s, 2),
        "same_next_token": same,
        "saving_per_process_s": round(saving, 2),
        "share_of_audit_llm_stage": round(saving / (AUDIT_LLM_MINUTES * 60), 4),
    }
    report["table"] = "\n".join(
        [
            "| prefix | evaluated | state on disk | saved in | loaded in | same next token | saved per process |",
            "|---|---:|---:|---:|---:|---|---|",
            f"| {len(prefix)} tokens | {evaluated_s:.2f} s | {size_mib:.1f} MiB | {saved_s:.2f} s | {loaded_s:.2f} s | "
            f"{'yes' if same else 'no'} | {saving:.2f} s ({100 * report['share_of_audit_llm_stage']:.2f} % of the "
            f"200-text audit's {AUDIT_LLM_MINUTES} min) |",
        ]
    )
    write_json(report, RESULTS)
    print(report["table"])


if __name__ == "__main__":
    main()
