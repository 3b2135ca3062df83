#!/usr/bin/env bash
# The #68 device run, prepared on CPU: both GPU benchmarks on the card in one command, each under 4 minutes, their JSON
# under $OUT (the GPU machine's folder that comes back) or benchmarks/results/. Needs PyTorch and transformers there,
# counterfair from src/, and .device/ (python benchmarks/device_bundle.py) where ../shared/data is not beside the
# checkout. A CPU check of the script itself: DEVICE=cpu SMALL=1 bash benchmarks/device_run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-benchmarks/results}"
device="${DEVICE:-cuda}"
py="${PYTHON:-python3}"
export PYTHONPATH="src:benchmarks${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 COUNTERFAIR_STORE=off
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
"$py" -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cuda', torch.cuda.is_available())"
if [ -n "${SMALL:-}" ]; then  # the script's own check: tiny models and text sets
  clf=(--short 64 --long 8 --layers 2 --repeats 1) llm=(--layers 2 --hidden 128 --heads 4 --kv-heads 2 --prompts 4 --prompt-tokens 64 --samples 4 --new-tokens 8 --parallel 16 --dtype float32)
else  # the issue's sets: every Civil Comments swap up to 4,096 and every CAD-IMDB review, 1,024 texts a batch
  clf=(--short 4096 --long 490 --batch-size 1024 --repeats 3) llm=()
fi
timeout 240 "$py" benchmarks/gpu_classifier.py --device "$device" "${clf[@]}" --out "$out/gpu_classifier_$device.json"
timeout 240 "$py" benchmarks/gpu_llm.py --device "$device" "${llm[@]}" --out "$out/gpu_llm_$device.json"
