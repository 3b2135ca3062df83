"""LLM sampling at the speed of the hardware (issue: parallel sequences in process, concurrent requests to servers).

Parts (``--only``, default all):

1. ``inprocess`` — paper 000's rewrite (Table 8 prompt, 16 samples, temperature 1, top-k 40) of the 40 sentences of
   ``benchmarks/data/fairness_sentences.csv`` through llama.cpp in this process: sequential (``parallel=1``, one
   ``create_completion`` per sample, today's path), parallel (16 sequences in one batch, one text per call) and
   parallel with 4 texts per call (``generate``'s default ``--llm-chunk``). Seconds per input, generated tokens/s,
   and the outputs' statistics (parsed share, filter pass rate, inputs with a passing candidate, BLEU, BERTScore)
   so that a faster path that samples worse shows. The ceiling is llama.cpp's own ``llama-batched-bench`` for the
   same model, threads, prompt length and batch (generation tokens/s).
2. ``http`` — the same rewrite of the first ``--http-texts`` sentences through ``llama-server --parallel 16`` on
   127.0.0.1: a sequential client (one request at a time, as before) against the concurrent one.
3. ``stub`` — throughput of the HTTP client against a loopback stub that answers after a fixed delay, at 1 to 64
   requests in flight (ideal: concurrency / delay).

llama.cpp's tools come from the llama.cpp sources inside the llama-cpp-python sdist this project installs (the same
llama.cpp version as the bindings)::

    curl -sO https://files.pythonhosted.org/packages/ec/e9/e7de2b0463ea3ffbf0ede6cb21b58c1258a8f6521aae45ca773a59fe7cf3/llama_cpp_python-0.3.36.tar.gz
    tar xzf llama_cpp_python-0.3.36.tar.gz && cd llama_cpp_python-0.3.36/vendor/llama.cpp
    cmake -B build -DGGML_NATIVE=ON -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release
    cmake --build build -j2 --target llama-server llama-batched-bench      # ~10 min on 2 cores

then ``--llama-bin .../build/bin`` (or ``LLAMA_BIN``). On Intel machines whose AMX crashes llama.cpp, the tools get
``-nr`` (no weight repacking) when counterfair's native-path probe says so. Without the tools, parts 1 (ceiling) and
2 are skipped and say so.

Usage: python benchmarks/llm_parallel.py [--llm qwen2.5-coder-0.5b-instruct] [--llama-bin DIR] [--only PARTS]
Results: benchmarks/results/llm_parallel.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")  # measure computation, not reuse of stored results

import argparse
import json
import platform
import subprocess
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from statistics import mean, median
from typing import Any

import pandas as pd

from counterfair.commands.generate.options import GenerateOptions
from counterfair.commands.generate.recipe import Generator
from counterfair.editors.filters import best
from counterfair.editors.llm_rewrite import LLMRewriteEditor
from counterfair.lexicons.attributes import load_attribute
from counterfair.llm.base import default_threads
from counterfair.llm.llamacpp import LlamaCppLLM
from counterfair.llm.openai_http import OpenAIHTTPLLM
from counterfair.models import get_model_info
from counterfair.writing import write_json
from llm_gpu_server import free_port, wait_until_healthy

ROOT = Path(__file__).resolve().parents[1]
SENTENCES = ROOT / "benchmarks" / "data" / "fairness_sentences.csv"
RESULTS = ROOT / "benchmarks" / "results"
SAMPLES = 16


def sentences() -> pd.DataFrame:
    return pd.read_csv(SENTENCES)


def rewrite_all(llm: Any, frame: pd.DataFrame, per_call: int) -> tuple[float, list[tuple[str, str, list[Any]]]]:
    """Rewrite every sentence (grouped by attribute, ``per_call`` texts per LLM call); LLM seconds and the samples."""
    seconds = 0.0
    out = []
    for attribute, group in frame.groupby("attribute", sort=False):
        editor = LLMRewriteEditor(llm, load_attribute(str(attribute)), n=SAMPLES, seed=0)
        texts = group["text"].tolist()
        for start in range(0, len(texts), per_call):
            chunk = texts[start : start + per_call]
            t0 = time.perf_counter()
            candidates = editor.edit(chunk)
            seconds += time.perf_counter() - t0
            out.extend((str(attribute), text, cands) for text, cands in zip(chunk, candidates, strict=True))
    return seconds, out


def sample_statistics(llm: Any, rewrites: list[tuple[str, str, list[Any]]]) -> dict[str, Any]:
    """What the samples are worth: parsed, passing paper 000's filters, an input with a passing candidate."""
    parsed, passed, inputs_ok, bleu, bert, tokens = 0, 0, 0, [], [], []
    filters: dict[str, Any] = {}
    for attribute, text, candidates in rewrites:
        if attribute not in filters:
            filters[attribute] = Generator(GenerateOptions(attribute=attribute, methods=["llm"])).filter
        outputs = [c.text if c.meta["parsed"] else None for c in candidates]
        verdicts = filters[attribute].judge([text] * len(candidates), outputs)
        parsed += sum(o is not None for o in outputs)
        passed += sum(v.passed for v in verdicts)
        top = best(verdicts)
        if top is not None:
            inputs_ok += 1
            bleu.append(verdicts[top].bleu)
            bert.append(verdicts[top].bertscore_f1)
        tokens.extend(llm.count_tokens(c.meta["raw"]) + 1 for c in candidates)  # + the stop token
    n = sum(len(c) for _, _, c in rewrites)
    return {
        "samples": n,
        "parsed_share": round(parsed / n, 3),
        "filter_pass_share": round(passed / n, 3),
        "inputs_with_passing_candidate": inputs_ok,
        "chosen_bleu_mean": round(mean(bleu), 3) if bleu else None,
        "chosen_bertscore_mean": round(mean(bert), 3) if bert else None,
        "generated_tokens": sum(tokens),
        "tokens_per_sample_mean": round(sum(tokens) / n, 1),
    }


def part_inprocess(spec: str, frame: pd.DataFrame, bench: Path | None, repack_flag: list[str]) -> dict[str, Any]:
    modes = [("sequential", 1, 1), ("parallel 16, 1 text per call", 16, 1), ("parallel 16, 4 texts per call", 16, 4)]
    out: dict[str, Any] = {"model": spec, "inputs": len(frame), "samples_per_input": SAMPLES, "modes": {}}
    prompt_tokens = []
    for name, parallel, per_call in modes:
        llm = LlamaCppLLM(spec, parallel=parallel)
        warm = LLMRewriteEditor(llm, load_attribute("islam"), n=2, seed=99)
        warm.edit(["A warm-up sentence about the mosque."])  # loads the model, caches the few-shot prefix
        seconds, rewrites = rewrite_all(llm, frame, per_call)
        stats = sample_statistics(llm, rewrites)
        entry: dict[str, Any] = {
            "parallel": parallel,
            "texts_per_call": per_call,
            "seconds": round(seconds, 1),
            "seconds_per_input": round(seconds / len(frame), 2),
            "generated_tokens_per_s": round(stats["generated_tokens"] / seconds, 1),
            **stats,
        }
        batcher = getattr(llm, "_batcher", None)
        if batcher is not None:
            entry["decode_seconds"] = {k: round(v, 1) for k, v in batcher.seconds.items()}
            entry["engine_tokens_generated"] = batcher.tokens_generated
            entry["generation_tokens_per_s"] = round(batcher.tokens_generated / batcher.seconds["generate"], 1)
        out["modes"][name] = entry
        print(
            f"{name}: {entry['seconds_per_input']} s/input, {entry['generated_tokens_per_s']} tok/s, "
            f"pass {stats['filter_pass_share']}, inputs ok {stats['inputs_with_passing_candidate']}/{len(frame)}"
        )
        if not prompt_tokens:
            editor = LLMRewriteEditor(llm, load_attribute("islam"), n=SAMPLES)
            prompt_tokens = [
                llm.count_tokens(llm.render_chat(editor.prompt.messages(t, editor.instruction))) for t in frame["text"]
            ]
        del llm
    seq = out["modes"]["sequential"]
    for name in list(out["modes"])[1:]:
        out["modes"][name]["speedup_vs_sequential"] = round(seq["seconds"] / out["modes"][name]["seconds"], 2)
    out["prompt_tokens_median"] = int(median(prompt_tokens))
    if bench is None:
        out["ceiling"] = "skipped: no llama-batched-bench (see the docstring for how to build it)"
        return out
    ntg = round(seq["tokens_per_sample_mean"])
    model = str(get_model_info(spec).path())
    cmd = [
        str(bench), "-m", model, "-kvu", "-pps", "-npp", str(out["prompt_tokens_median"]), "-ntg", str(ntg),
        "-npl", "1,16", "-t", str(default_threads()), "-c", "4096", *repack_flag,
    ]  # fmt: skip
    text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 10 and cells[2].isdigit():
            rows[int(cells[2])] = {"S_TG": float(cells[7]), "S": float(cells[9])}
    out["ceiling"] = {"command": " ".join(cmd), "generation_tokens_per_s": {b: r["S_TG"] for b, r in rows.items()}}
    best_mode = out["modes"]["parallel 16, 4 texts per call"]
    out["share_of_ceiling"] = round(best_mode["generation_tokens_per_s"] / rows[16]["S_TG"], 2)
    print(f"ceiling (llama-batched-bench, 16 sequences): {rows[16]['S_TG']} tok/s; ours {out['share_of_ceiling']:.0%}")
    return out


def part_http(spec: str, frame: pd.DataFrame, server_bin: Path | None, repack_flag: list[str]) -> dict[str, Any]:
    if server_bin is None:
        return {"skipped": "no llama-server (see the docstring for how to build it)"}
    port = free_port()
    model = str(get_model_info(spec).path())
    cmd = [
        str(server_bin), "-m", model, "--host", "127.0.0.1", "--port", str(port), "--parallel", "16", "-kvu",
        "-c", "8192", "-t", str(default_threads()), *repack_flag,
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    out: dict[str, Any] = {"server": " ".join(cmd), "inputs": len(frame), "samples_per_input": SAMPLES, "clients": {}}
    try:
        wait_until_healthy(port, proc)
        clients = [("sequential", 1, "off"), ("concurrent 32", 32, "auto")]
        warm = OpenAIHTTPLLM(url, concurrency=4)
        LLMRewriteEditor(warm, load_attribute("islam"), n=4).edit(["A warm-up sentence about the mosque."])
        for name, concurrency, n_mode in clients:
            llm = OpenAIHTTPLLM(url, concurrency=concurrency, n_per_request=n_mode, timeout=600)
            seconds, rewrites = rewrite_all(llm, frame, 4)
            samples = sum(len(c) for _, _, c in rewrites)
            parsed = sum(c.meta["parsed"] for _, _, cands in rewrites for c in cands)
            out["clients"][name] = {
                "concurrency": concurrency,
                "n_in_one_request": bool(llm._n_supported),
                "seconds": round(seconds, 1),
                "seconds_per_input": round(seconds / len(frame), 2),
                "samples": samples,
                "parsed_share": round(parsed / samples, 3),
            }
            print(f"http {name}: {seconds / len(frame):.2f} s/input")
        seq, conc = out["clients"]["sequential"], out["clients"]["concurrent 32"]
        out["speedup"] = round(seq["seconds"] / conc["seconds"], 2)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return out


class _Delayed(BaseHTTPRequestHandler):
    delay = 0.1
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out at once (no 40 ms delayed-ACK stall)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        time.sleep(self.delay)
        body = json.dumps({"choices": [{"text": "{ok}", "finish_reason": "stop"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return None


def _serve_stub(port: int, delay: float) -> None:
    _Delayed.delay = delay
    httpd = ThreadingHTTPServer(("127.0.0.1", port), _Delayed)
    httpd.daemon_threads = True
    httpd.request_queue_size = 256
    httpd.serve_forever()


def part_stub(delay: float) -> dict[str, Any]:
    """The stub runs in its own process, so that its threads do not share the client's interpreter lock."""
    import multiprocessing

    import httpx

    from counterfair.llm import SamplingParams

    port = free_port()
    server = multiprocessing.get_context("spawn").Process(target=_serve_stub, args=(port, delay), daemon=True)
    server.start()
    url = f"http://127.0.0.1:{port}/v1"
    out: dict[str, Any] = {"delay_s": delay, "levels": {}}
    try:
        for _ in range(100):
            try:
                httpx.get(url, timeout=0.5)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        for concurrency in (1, 2, 4, 8, 16, 32, 64):
            llm = OpenAIHTTPLLM(url, concurrency=concurrency, n_per_request="off")
            requests = max(32, 16 * concurrency)
            prompts = [f"prompt {i}" for i in range(requests)]
            t0 = time.perf_counter()
            llm.complete(prompts, SamplingParams(n=1, max_tokens=8))
            seconds = time.perf_counter() - t0
            rate = requests / seconds
            out["levels"][concurrency] = {
                "requests": requests,
                "requests_per_s": round(rate, 1),
                "ideal_per_s": round(concurrency / delay, 1),
                "efficiency": round(rate / (concurrency / delay), 3),
            }
            print(f"stub: {concurrency} in flight -> {rate:.1f} req/s (ideal {concurrency / delay:.0f})")
            llm.close()
    finally:
        server.terminate()
        server.join(timeout=10)
    return out


def repack_flag(spec: str) -> list[str]:
    """``-nr`` where counterfair's probe says llama.cpp's weight repacking crashes this machine."""
    from counterfair.llm.native import decide

    return [] if decide(get_model_info(spec).path()).repack else ["-nr"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llm", default="qwen2.5-coder-0.5b-instruct")
    parser.add_argument(
        "--llama-bin", type=Path, default=Path(os.environ["LLAMA_BIN"]) if "LLAMA_BIN" in os.environ else None
    )
    parser.add_argument("--http-texts", type=int, default=16)
    parser.add_argument("--stub-delay", type=float, default=0.1)
    parser.add_argument("--only", default="inprocess,http,stub")
    args = parser.parse_args()
    parts = set(args.only.split(","))
    path = RESULTS / "llm_parallel.json"
    result: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    result |= {
        "benchmark": "llm_parallel",
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "threads": default_threads()},
    }

    def tool(name: str) -> Path | None:
        return args.llama_bin / name if args.llama_bin and (args.llama_bin / name).exists() else None

    flag = repack_flag(args.llm)
    frame = sentences()
    if "inprocess" in parts:
        result["inprocess"] = part_inprocess(args.llm, frame, tool("llama-batched-bench"), flag)
    if "http" in parts:
        result["http"] = part_http(args.llm, frame.head(args.http_texts), tool("llama-server"), flag)
    if "stub" in parts:
        result["stub"] = part_stub(args.stub_delay)
    write_json(result, path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
