"""The classifier stage against a tuned loop (#68): counterfair's ``hf:`` classifier (``load_classifier``, as every
command builds it, the run store off) against a plain loop written for speed (texts sorted by token count, batches of
``--batch-size``, each tokenised once, padded to its own longest, ``torch.inference_mode``), on the same
random-weight BERT-base (built from a config: 12 layers, 768 wide; MiniLM's offline tokenizer), on this machine's
device (``--device auto``: a GPU when torch sees one).

Three text sets, as the issue measured them: ``short``, Civil Comments identity swaps in the order an audit sends them
(each comment, then its variants); ``long``, CAD-IMDB reviews; ``mixed``, both shuffled together. Each method runs
``--repeats`` times on each set after one warm-up batch, the best time kept; both give the same probabilities (the
largest difference is recorded). Each precision of ``--dtypes`` is a row per set: counterfair's stage with ``--dtype``
against the tuned loop under the same autocast, with the largest difference from the float32 loop's probabilities
(what the lower precision costs).

    python benchmarks/gpu_classifier.py [--device auto] [--short 512] [--long 64] [--layers 12]
        [--dtypes float32,bfloat16]

Writes ``benchmarks/results/gpu_classifier.json`` (or ``--out``), naming the device.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_run import data_dir, tokenizer_dir  # noqa: E402


def build_model(layers: int, folder: Path) -> Path:
    """A random-weight BERT-base-shaped sequence classifier with MiniLM's tokenizer, saved as an hf: directory."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir())
    config = BertConfig(vocab_size=tokenizer.vocab_size, num_hidden_layers=layers, num_labels=2)
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def text_sets(short: int, long: int) -> dict[str, list[str]]:
    civil = pd.read_csv(data_dir() / "nlp_ctf" / "civil_comments" / "civil_test_data.csv")
    swaps = [str(t) for _, row in civil.iterrows() for t in row.iloc[1:].tolist() if isinstance(t, str)]
    reviews = pd.read_csv(data_dir() / "cad_imdb" / "dev_paired.tsv", sep="\t")["Text"].astype(str).tolist()
    mixed = swaps[: short // 2] + reviews[: long // 2]
    random.Random(0).shuffle(mixed)
    return {"short": swaps[:short], "long": reviews[:long], "mixed": mixed}


def tuned_loop(
    model: Any, tokenizer: Any, texts: list[str], batch: int, device: str, dtype: str = "float32"
) -> np.ndarray:
    """The reference: sort by token count, batch, tokenise once, pad per batch, inference_mode, back in input order;
    ``dtype`` other than float32 under torch's autocast."""
    import contextlib

    import torch

    ids = tokenizer(texts, truncation=True, max_length=512)["input_ids"]
    order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
    out = np.zeros((len(texts), model.config.num_labels))
    lower = dtype != "float32"
    cast = torch.autocast(device.partition(":")[0], dtype=getattr(torch, dtype)) if lower else contextlib.nullcontext()
    with torch.inference_mode(), cast:
        for start in range(0, len(order), batch):
            chosen = order[start : start + batch]
            enc = tokenizer.pad({"input_ids": [ids[i] for i in chosen]}, return_tensors="pt").to(device)
            out[chosen] = torch.softmax(model(**enc).logits.float(), dim=-1).cpu().numpy()
    return out


def best_of(repeats: int, run: Any) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="auto")
    parser.add_argument("--short", type=int, default=512)
    parser.add_argument("--long", type=int, default=64)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--dtypes", default="float32,bfloat16", help="precisions to time, comma-separated")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "gpu_classifier.json")
    args = parser.parse_args()
    os.environ["COUNTERFAIR_STORE"] = "off"  # every repeat predicts: no cached probabilities
    import torch

    from counterfair.classifiers import load_classifier

    device = ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    folder = build_model(args.layers, Path(tempfile.mkdtemp(prefix="cf-gpu-clf-")))
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(folder).to(device).eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    clf = load_classifier(f"hf:{folder}", batch_size=args.batch_size)
    clf.inner.device = device  # type: ignore[attr-defined]
    clf.predict_proba(["a warm-up text"])  # loads the model: the stage is timed, not the load
    rows: dict[str, dict[str, Any]] = {}
    for name, texts in text_sets(args.short, args.long).items():
        tokens = sum(len(i) for i in tokenizer(texts, truncation=True, max_length=512)["input_ids"])
        exact = tuned_loop(model, tokenizer, texts, args.batch_size, device)  # float32: what each precision costs
        for dtype in args.dtypes.split(","):
            clf.inner.dtype = dtype  # type: ignore[attr-defined]  # as --dtype sets it

            def ours(texts: list[str] = texts) -> np.ndarray:
                clf.forget()  # every repeat predicts every text
                return clf.predict_proba(texts)

            tuned_loop(model, tokenizer, texts[: args.batch_size], args.batch_size, device, dtype)  # warm-up
            ours_s, ours_p = best_of(args.repeats, ours)
            tuned_s, tuned_p = best_of(
                args.repeats, lambda t=texts, d=dtype: tuned_loop(model, tokenizer, t, args.batch_size, device, d)
            )
            rows[f"{name} {dtype}"] = {
                "set": name,
                "dtype": dtype,
                "texts": len(texts),
                "mean_tokens": round(tokens / len(texts), 1),
                "counterfair_texts_per_s": round(len(texts) / ours_s, 1),
                "tuned_texts_per_s": round(len(texts) / tuned_s, 1),
                "ratio": round(tuned_s / ours_s, 3),
                "max_abs_difference": float(np.max(np.abs(np.asarray(ours_p) - tuned_p))),
                "max_abs_difference_from_float32": float(np.max(np.abs(np.asarray(ours_p) - exact))),
            }
            print(name, rows[f"{name} {dtype}"], flush=True)
    from cli_run import cpu_model, markdown_table, save_result

    document = {
        "benchmark": "gpu_classifier",
        "device": torch.cuda.get_device_name(0) if device.startswith("cuda") else f"cpu: {cpu_model()}",
        "torch_threads": torch.get_num_threads(),
        "layers": args.layers,
        "batch_size": args.batch_size,
        "results": rows,
        "table": markdown_table(
            (
                "texts",
                "precision",
                "mean tokens",
                "counterfair texts/s",
                "tuned loop texts/s",
                "ratio",
                "largest Δp vs the loop",
                "largest Δp vs float32",
            ),
            (
                (
                    f"{r['set']} ({r['texts']})",
                    r["dtype"],
                    r["mean_tokens"],
                    r["counterfair_texts_per_s"],
                    r["tuned_texts_per_s"],
                    f"{r['ratio']:.2f}×",
                    f"{r['max_abs_difference']:.1e}",
                    f"{r['max_abs_difference_from_float32']:.1e}",
                )
                for r in rows.values()
            ),
        ),
    }
    save_result(document, args.out)


if __name__ == "__main__":
    main()
