"""The hf: LLM backend's sampling against batched ``generate`` (#68): counterfair's ``TransformersLLM`` (as
``--llm hf:DIR`` builds it: every prompt's samples drawn together, ``--llm-parallel`` sequences at a time) against
transformers' own ``generate`` on the same model, the same left-padded batches of the same size
(``num_return_sequences`` samples per prompt, top-k 40, temperature 1), each forced to ``--new-tokens`` new tokens; and
counterfair's one-sequence-at-a-time path (``parallel=1``, what the backend did before) on a few prompts, for scale.

The model has random weights, built from a config (default Qwen2.5-1.5B's shape: 28 layers, 1536 wide, 12 heads, 2 KV
heads; ``--layers``/``--hidden`` shrink it for a CPU check) with MiniLM's offline tokenizer, whose missing end-of-text
token lets every sample run its full length; the prompts are Civil Comments texts joined to about
``--prompt-tokens`` tokens (the rewriting prompt's size). The device is ``--device`` (auto: a GPU torch sees), the
dtype ``--dtype``.

    python benchmarks/gpu_llm.py [--device auto] [--dtype bfloat16] [--prompts 32] [--samples 16] [--parallel 512]

Writes ``benchmarks/results/gpu_llm.json`` (or ``--out``), naming the device.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_run import data_dir, tokenizer_dir  # noqa: E402


def build_model(layers: int, hidden: int, heads: int, kv_heads: int, folder: Path) -> Path:
    """A random-weight Qwen2-shaped causal LM with MiniLM's tokenizer, saved as an hf: directory."""
    import torch
    from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir())
    config = Qwen2Config(
        vocab_size=tokenizer.vocab_size,
        hidden_size=hidden,
        intermediate_size=hidden * 6,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=None,
        bos_token_id=None,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = None
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def prompts_of(count: int, tokens: int, tokenizer: Any) -> list[str]:
    """``count`` prompts of about ``tokens`` tokens each, Civil Comments texts joined in turn."""
    civil = data_dir() / "nlp_ctf" / "civil_comments" / "civil_test_data.csv"
    texts = pd.read_csv(civil).iloc[:, 0].astype(str).tolist()
    out, at = [], 0
    for _ in range(count):
        words: list[str] = []
        while len(tokenizer(" ".join(words))["input_ids"]) < tokens:
            words.append(texts[at % len(texts)])
            at += 1
        ids = tokenizer(" ".join(words), add_special_tokens=False)["input_ids"][: tokens - 2]
        out.append(tokenizer.decode(ids))
    return out


def reference(lm: Any, prompts: list[str], samples: int, parallel: int, new_tokens: int) -> int:
    """transformers' batched ``generate``: as many prompts a batch as fill ``parallel`` sequences, left-padded; the
    new tokens it made."""
    import torch

    tokenizer, model = lm.tokenizer, lm.model
    device = next(model.parameters()).device
    tokenizer.padding_side = "left"
    per_batch = max(1, parallel // samples)
    made = 0
    torch.manual_seed(0)
    for start in range(0, len(prompts), per_batch):
        enc = tokenizer(prompts[start : start + per_batch], return_tensors="pt", padding=True).to(device)
        with torch.inference_mode():
            out = model.generate(
                **enc,
                do_sample=True,
                temperature=1.0,
                top_k=40,
                top_p=1.0,
                num_return_sequences=samples,
                max_new_tokens=new_tokens,
                min_new_tokens=new_tokens,
                pad_token_id=tokenizer.pad_token_id,
            )
        made += int(out.shape[0]) * (int(out.shape[1]) - int(enc["input_ids"].shape[1]))
    return made


def timed(run: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    result = run()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="bfloat16", choices=["float32", "bfloat16"])
    parser.add_argument("--layers", type=int, default=28)
    parser.add_argument("--hidden", type=int, default=1536)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--kv-heads", type=int, default=2)
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--prompt-tokens", type=int, default=320)
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--parallel", type=int, default=512, help="sequences decoded together (both methods)")
    parser.add_argument("--sequential-prompts", type=int, default=1, help="prompts for the one-at-a-time path")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "gpu_llm.json")
    args = parser.parse_args()
    os.environ["COUNTERFAIR_DEVICE"] = args.device
    import torch

    from counterfair.llm.base import SamplingParams
    from counterfair.llm.hf import TransformersLLM
    from counterfair.models import load_causal_lm, torch_device

    device = torch_device()
    folder = build_model(args.layers, args.hidden, args.heads, args.kv_heads, Path(tempfile.mkdtemp(prefix="cf-llm-")))
    lm = load_causal_lm(str(folder), dtype=args.dtype, device=device)  # the model both methods use
    prompts = prompts_of(args.prompts, args.prompt_tokens, lm.tokenizer)
    params = SamplingParams(n=args.samples, temperature=1.0, top_k=40, max_tokens=args.new_tokens, seed=0)
    batched = TransformersLLM(str(folder), dtype=args.dtype, parallel=args.parallel)
    batched.complete(prompts[:1], SamplingParams(n=2, max_tokens=4))  # warm-up (kernels, allocator)
    reference(lm, prompts[:1], 2, args.parallel, 4)
    ours_s, _ = timed(lambda: batched.complete(prompts, params))
    ours_tokens = batched.new_tokens - 2 * 4  # the warm-up's aside
    theirs_s, theirs_tokens = timed(lambda: reference(lm, prompts, args.samples, args.parallel, args.new_tokens))
    one = TransformersLLM(str(folder), dtype=args.dtype, parallel=1)
    few = prompts[: args.sequential_prompts]
    one_s, _ = timed(lambda: one.complete(few, params))
    sequences = args.prompts * args.samples

    def row(seconds: float, tokens: int) -> dict[str, float]:
        return {"seconds": round(seconds, 2), "new_tokens": tokens, "new_tokens_per_s": round(tokens / seconds, 1)}

    rows = {
        "counterfair batched": row(ours_s, ours_tokens),
        "transformers generate": row(theirs_s, theirs_tokens),
        "counterfair one at a time": row(one_s, len(few) * args.samples * args.new_tokens),
    }
    from cli_run import cpu_model, markdown_table, save_result

    document = {
        "benchmark": "gpu_llm",
        "device": torch.cuda.get_device_name(0) if device.startswith("cuda") else f"cpu: {cpu_model()}",
        "dtype": args.dtype,
        "model": {"layers": args.layers, "hidden": args.hidden, "heads": args.heads, "kv_heads": args.kv_heads},
        "prompts": args.prompts,
        "prompt_tokens": args.prompt_tokens,
        "samples_per_prompt": args.samples,
        "new_tokens": args.new_tokens,
        "parallel": args.parallel,
        "results": rows,
        # counterfair's new tokens per second as a share of generate's (#68's target: >= 0.8 on a GPU)
        "ratio": round(
            rows["counterfair batched"]["new_tokens_per_s"] / rows["transformers generate"]["new_tokens_per_s"], 3
        ),
        "table": markdown_table(
            ("method", "sequences", "new tokens/s", "seconds"),
            (
                (name, len(few) * args.samples if "one" in name else sequences, r["new_tokens_per_s"], r["seconds"])
                for name, r in rows.items()
            ),
        ),
    }
    save_result(document, args.out)
    print(f"counterfair batched / generate: {document['ratio']:.2f}x ({document['device']}, {args.dtype})")


if __name__ == "__main__":
    main()
