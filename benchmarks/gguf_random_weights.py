"""A GGUF model of the same architecture, tokenizer and quantization as a real one, with random weights.

For timing llama.cpp on a machine that has no copy of the real weights and takes few files (the GPU machine measured
took 64 MiB of files per run; the 0.5B model is 491 MB): decode speed depends on the shapes and quantization types,
not on the weights' values.
The texts such a model writes are noise, so a benchmark with it fixes the number of generated tokens.

    python benchmarks/gguf_random_weights.py skeleton REAL.gguf skeleton.json.gz   # metadata + tensor list (~4 MB)
    python benchmarks/gguf_random_weights.py build skeleton.json.gz random.gguf     # needs gguf-py and numpy only

Quantized blocks get random bits with small scales (so no block decodes to inf or NaN); 1-d float tensors (norms,
biases) get ones and small values.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from typing import Any

import numpy as np

# bytes per block and the offsets of the block's fp16 scales, for the types of llama.cpp's Q4_K_M files
BLOCKS: dict[str, tuple[int, int, tuple[int, ...]]] = {  # type: (weights per block, bytes per block, fp16 offsets)
    "Q4_0": (32, 18, (0,)),
    "Q5_0": (32, 22, (0,)),
    "Q8_0": (32, 34, (0,)),
    "Q4_K": (256, 144, (0, 2)),
    "Q5_K": (256, 176, (0, 2)),
    "Q6_K": (256, 210, (208,)),
}


def skeleton(real: str, out: str) -> None:
    from gguf import GGUFReader

    reader = GGUFReader(real)
    fields = []
    for name, field in reader.fields.items():
        if name.startswith("GGUF."):
            continue  # written by the writer itself
        types = [t.name for t in field.types]
        value = field.contents()
        fields.append({"name": name, "types": types, "value": value})
    tensors = [
        {"name": t.name, "shape": [int(x) for x in t.shape], "type": t.tensor_type.name, "bytes": int(t.n_bytes)}
        for t in reader.tensors
    ]
    with gzip.open(out, "wt", encoding="utf-8") as handle:
        json.dump({"fields": fields, "tensors": tensors}, handle)
    print(f"{out}: {len(fields)} metadata fields, {len(tensors)} tensors")


def _random_tensor(spec: dict[str, Any], rng: np.random.Generator) -> tuple[np.ndarray, Any]:
    from gguf import GGMLQuantizationType

    kind = spec["type"]
    shape = spec["shape"]
    if kind in ("F32", "F16"):
        dtype = np.float32 if kind == "F32" else np.float16
        n = int(np.prod(shape))
        if len(shape) == 1 and "norm" in spec["name"]:
            data = np.ones(n, dtype=dtype)
        else:
            data = (rng.standard_normal(n) * 0.02).astype(dtype)
        return data.reshape(list(reversed(shape))), None
    if kind not in BLOCKS:
        raise SystemExit(f"tensor {spec['name']}: quantization {kind} is not handled")
    per_block, block_bytes, scales = BLOCKS[kind]
    blocks = spec["bytes"] // block_bytes
    raw = rng.integers(0, 256, size=(blocks, block_bytes), dtype=np.uint8)
    small = np.frombuffer(np.float16(0.002).tobytes(), dtype=np.uint8)
    for offset in scales:
        raw[:, offset : offset + 2] = small
    # numpy order, the last axis in bytes: (rows, bytes per row), as gguf-py expects quantized data
    byte_shape = [*reversed(shape[1:]), shape[0] // per_block * block_bytes]
    return raw.reshape(byte_shape), GGMLQuantizationType[kind]


def build(skeleton_path: str, out: str) -> None:
    from gguf import GGUFValueType, GGUFWriter

    with gzip.open(skeleton_path, "rt", encoding="utf-8") as handle:
        data = json.load(handle)
    arch = next(f["value"] for f in data["fields"] if f["name"] == "general.architecture")
    writer = GGUFWriter(out, arch)
    for field in data["fields"]:
        if field["name"] == "general.architecture":
            continue
        types = [GGUFValueType[t] for t in field["types"]]
        sub = types[1] if types[0] == GGUFValueType.ARRAY else None
        writer.add_key_value(field["name"], field["value"], types[0], sub_type=sub)
    rng = np.random.default_rng(0)
    for spec in data["tensors"]:
        tensor, raw_dtype = _random_tensor(spec, rng)
        if raw_dtype is None:
            writer.add_tensor(spec["name"], tensor)
        else:
            writer.add_tensor(spec["name"], tensor, raw_dtype=raw_dtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    print(f"{out}: {len(data['tensors'])} random tensors")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["skeleton", "build"])
    parser.add_argument("source")
    parser.add_argument("out")
    args = parser.parse_args(argv if argv is not None else sys.argv[1:])
    (skeleton if args.command == "skeleton" else build)(args.source, args.out)


if __name__ == "__main__":
    main()
