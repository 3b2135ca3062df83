"""What paper 000's rewrite costs behind a batching llama.cpp server on a GPU (issue: LLM sampling at the speed of
the hardware, benchmark 3's "with a server on a GPU").

Runs where the GPU is (one NVIDIA H100 80GB when measured), with a random-weight copy of Qwen2.5-Coder-0.5B-Instruct
Q4_K_M (``gguf_random_weights.py``: same shapes, quantization and tokenizer, for a machine without the real file), so
the samples are noise of a fixed length: every sample asks for ``--tokens`` new tokens (the mean of a real rewrite
sample on the CPU, ``llm_parallel.json``) with no stop string. Only this project's HTTP client
(``counterfair.llm.openai_http``) is imported, so the GPU machine needs httpx and nothing else of counterfair's.

    python benchmarks/llm_gpu_server.py prompts OUT.json                   # here: the 40 sentences' conversations
    python benchmarks/llm_gpu_server.py run --server BIN --model GGUF --messages OUT.json --out RESULT.json
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def prompts(out: str) -> None:
    import pandas as pd

    from counterfair.editors.llm_rewrite import FewShotPrompt
    from counterfair.lexicons.attributes import load_attribute

    prompt = FewShotPrompt.load()
    frame = pd.read_csv(ROOT / "benchmarks" / "data" / "fairness_sentences.csv")
    conversations = []
    for attribute, text in zip(frame["attribute"], frame["text"], strict=True):
        instruction = prompt.default_instruction.format(subject=load_attribute(str(attribute)).subject)
        conversations.append(prompt.messages(str(text), instruction))
    Path(out).write_text(json.dumps(conversations), encoding="utf-8")
    print(f"{out}: {len(conversations)} conversations")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_healthy(port: int, proc: subprocess.Popen[bytes], seconds: float = 300.0) -> None:
    """Until llama-server on ``port`` answers /health; an error if it exits or takes longer."""
    import httpx

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode} during start-up")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"the server did not answer within {seconds:.0f} s")


def run(args: argparse.Namespace) -> None:
    from counterfair.llm.base import SamplingParams
    from counterfair.llm.openai_http import OpenAIHTTPLLM

    conversations = json.loads(Path(args.messages).read_text(encoding="utf-8"))[: args.inputs]
    port = free_port()
    cmd = [
        args.server, "-m", args.model, "--host", "127.0.0.1", "--port", str(port), "-ngl", "99",
        "--parallel", str(args.parallel), "-kvu", "-c", str(args.context), *args.server_args,
    ]  # fmt: skip
    log = open(Path(args.out).with_suffix(".server.log"), "wb")  # noqa: SIM115 - the server's whole life
    proc = subprocess.Popen(cmd, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}/v1"
    result: dict[str, Any] = {"server": " ".join(cmd), "inputs": len(conversations), "samples_per_input": 16}
    result["tokens_per_sample_asked"] = args.tokens
    result["clients"] = {}
    try:
        wait_until_healthy(port, proc)
        params = SamplingParams(n=16, temperature=1.0, top_k=40, max_tokens=args.tokens, seed=0)
        OpenAIHTTPLLM(url, concurrency=8).chat(conversations[:2], params)  # warm-up: the few-shot prefix cached
        for name, concurrency, n_mode in [("sequential", 1, "off"), ("concurrent 16", 16, "auto"),
                                          ("concurrent 64", 64, "auto"), ("concurrent 64, one sample per request",
                                                                          64, "off")]:  # fmt: skip
            llm = OpenAIHTTPLLM(url, concurrency=concurrency, n_per_request=n_mode, timeout=600)
            t0 = time.perf_counter()
            out = llm.chat(conversations, params)
            seconds = time.perf_counter() - t0
            samples = [c for row in out for c in row]
            full = sum(c.finish_reason == "length" for c in samples)
            result["clients"][name] = {
                "concurrency": concurrency,
                "n_in_one_request": bool(llm._n_supported),
                "seconds": round(seconds, 2),
                "seconds_per_input": round(seconds / len(conversations), 3),
                "samples": len(samples),
                "samples_at_max_tokens": full,
                "generated_tokens_per_s_lower_bound": round(full * args.tokens / seconds, 1),
            }
            print(name, result["clients"][name], flush=True)
            llm.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
    Path(args.out).write_text(json.dumps(result, indent=2), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prompts")
    p.add_argument("out")
    r = sub.add_parser("run")
    r.add_argument("--server", required=True)
    r.add_argument("--model", required=True)
    r.add_argument("--messages", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--parallel", type=int, default=64)
    r.add_argument("--context", type=int, default=65536)
    r.add_argument("--tokens", type=int, default=16)
    r.add_argument("--inputs", type=int, default=40)
    r.add_argument("server_args", nargs="*", help="more llama-server options (after --)")
    args = parser.parse_args()
    if args.command == "prompts":
        prompts(args.out)
    else:
        run(args)


if __name__ == "__main__":
    main()
