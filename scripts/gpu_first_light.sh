#!/usr/bin/env bash
# First light on one GPU, bench/first_light.py: the learner (FSDP2, fp32 master, bf16
# compute: tokens/s, MFU, peak memory vs gpu_memory.memory_items), TorchEngine decode vs transformers
# generate, weight sync, and the smoke checks that need no vLLM. Results: $OUT/first_light.json,
# $OUT/first_light.txt (the table, also printed), $OUT/first_light.log. TIME LIMIT: one device call
# of at most 8 minutes (the driver runs under `timeout 450`; ~3 minutes expected on one H200 for
# Qwen3-1.7B).
#
# On the device tool's nvidia-h200 (Python 3.12, torch 2.11, transformers 5.17, no package index):
# first, here, `bash scripts/gpu_wheels.sh` (the packages train.py imports that the image lacks ->
# .wheels), then one call: run(command="bash scripts/gpu_first_light.sh", carry=[".wheels"],
# timeout_s=480).
# CPU rehearsal (every part, a tiny model):
#   bash scripts/gpu_first_light.sh --device cpu --model tiny --micro-batch-tokens 512 \
#     --seq-len 128 --prompt-len 32 --new-tokens 16
# Extra arguments go to bench/first_light.py (--preset, --model Qwen3-4B, --batches, --pairs, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-runs/first_light}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null \
  || echo "no nvidia-smi"
# What is missing, named all at once, before anything long starts; carried wheels fill the gaps.
check() { python3 - "$@" <<'PY'
import importlib, importlib.util, sys
need = ["torch", "numpy", "transformers", "tokenizers", "safetensors", "yaml", "jinja2", "rich",
        "tqdm", "httpx", "tyro", "typeguard", "docstring_parser", "docker", "anthropic", "pydantic",
        "pydantic_core", "jiter", "gguf"]
missing = [m for m in need if importlib.util.find_spec(m) is None]
if not missing:
    try:
        import train, engines, model, configs  # noqa: F401  (their transitive imports too)
    except ModuleNotFoundError as e:
        missing = [e.name]
if missing:
    print(f"gpu_first_light: missing Python modules: {', '.join(missing)}", file=sys.stderr)
    sys.exit(1)
import torch, transformers
print(f"python {sys.version.split()[0]}, torch {torch.__version__} (cuda {torch.version.cuda}, "
      f"available {torch.cuda.is_available()}), transformers {transformers.__version__}")
PY
}
if ! check; then
  compgen -G ".wheels/*.whl" > /dev/null || { echo "gpu_first_light: no .wheels: run" \
    "\`bash scripts/gpu_wheels.sh\` where pip works, carry .wheels (see the header)" >&2
    exit 2; }
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/termrl-site .wheels/*.whl
  export PYTHONPATH=/tmp/termrl-site${PYTHONPATH:+:$PYTHONPATH}
  check || exit 2
fi
set -o pipefail
timeout 450 python3 bench/first_light.py --out "$OUT" "$@" 2>&1 | tee "$OUT/first_light.log"
