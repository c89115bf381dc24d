#!/usr/bin/env bash
# One short check of the GPU-only paths on a CUDA machine (requirements-gpu.txt installed: vllm 0.30.0,
# torch 2.13.0). TIME LIMIT: 10 minutes in all (each part runs under `timeout`; about 3-5 minutes on one
# H100, most of it vLLM start-up). Uses only the embedded SmolLM2-135M; nothing is downloaded.
#   1. bf16 compute with fp32 master weights: a real FSDP2 step on cuda (model.apply_fsdp2 through
#      weights.load_hf_sharded): parameters and AdamW state fp32, forward in bf16, two AdamW steps at
#      lr 1e-6 change >= 99% of the weights.
#   2. flash-attn's packed varlen path equals per-sequence SDPA (skipped when flash_attn is not installed).
#   3. VLLMEngine under torchrun, tensor_parallel_size = number of GPUs used (1, or 2 when >1 GPU is visible):
#      the generate worker thread's CUDA device is the rank's; the leader's batches are replayed by the
#      follower; log-prob convention: with temperature 0.7, top-k 40, top-p 0.95 the engine's log-prob of
#      each sampled token equals the learner's log-prob under the processed distribution (logits / T,
#      top-k, renormalise, top-p, renormalise; vLLM's order); sleep(level=2) -> load_weights (bucketed,
#      bf16 from fp32 masters) -> wake_up -> the same greedy output.
# Usage: bash scripts/gpu_smoke.sh            (make gpu-smoke)
set -euo pipefail
cd "$(dirname "$0")/.."
# the parts' scripts live in a temp folder: the project must be on sys.path for `import model, engines`
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || { echo "gpu_smoke: no NVIDIA GPU visible" >&2; exit 1; }
NGPU=$(python -c "import torch; print(torch.cuda.device_count())")
TP=$(( NGPU > 1 ? 2 : 1 ))
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
run() { timeout "$1" python -m torch.distributed.run --standalone --nproc_per_node="$2" "${@:3}"; }

# ---- 1. fp32 master weights, bf16 compute, a real FSDP2 step on cuda
cat > "$tmp/master.py" <<'EOF'
import os, torch, torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
import model
from hf import weights
rank = int(os.environ["LOCAL_RANK"]); torch.cuda.set_device(rank)
dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
mesh = init_device_mesh("cuda", (dist.get_world_size(),))
net = weights.load_hf_sharded(weights.default_model_dir(), lambda m: model.apply_fsdp2(m, mesh, param_dtype=torch.bfloat16), device="cuda")
seen = []
net.model.layers[0].register_forward_hook(lambda m, i, o: seen.append(o.dtype))
before = {n: p.full_tensor().detach().clone() for n, p in net.named_parameters()}
opt = torch.optim.AdamW(net.parameters(), lr=1e-6, fused=True)
ids = torch.randint(0, net.config.vocab_size, (1, 256), device="cuda", generator=torch.Generator("cuda").manual_seed(rank))
for _ in range(2):
    lp, _ = net(ids, targets=torch.roll(ids, -1, 1))
    (-lp.mean()).backward(); opt.step(); opt.zero_grad()
changed = sum((p.full_tensor() != before[n]).sum().item() for n, p in net.named_parameters()) / sum(p.numel() for p in before.values())
dtypes = {p.dtype for p in net.parameters()} | {s["exp_avg"].dtype for s in opt.state.values()}
assert dtypes == {torch.float32}, dtypes
assert seen and all(d == torch.bfloat16 for d in seen), seen
assert changed >= 0.99, f"only {changed:.4f} of the fp32 master weights changed"
if rank == 0:
    print(f"fp32 master / bf16 compute FSDP2 step on cuda: ok ({changed:.4f} of the weights changed)")
dist.destroy_process_group()
EOF
run 180 "$TP" "$tmp/master.py"

# ---- 2. flash-attn packed path of model.py (optional package)
timeout 120 python - <<'EOF'
import torch, model
from hf import weights
try:
    import flash_attn  # noqa: F401
except ImportError:
    print("flash-attn not installed: packed-path check skipped"); raise SystemExit(0)
m = weights.load_hf(weights.default_model_dir(), dtype=torch.bfloat16, device="cuda")
lens = [37, 5, 90]
seqs = [torch.randint(0, m.config.vocab_size, (n,), device="cuda") for n in lens]
ids = torch.cat(seqs)[None]
pos = torch.cat([torch.arange(n, device="cuda") for n in lens])[None]
cu = torch.tensor([0, 37, 42, 132], dtype=torch.int32, device="cuda")
assert model._use_flash(torch.empty(1, device="cuda", dtype=torch.bfloat16)), "flash-attn path not taken"
with torch.no_grad():
    packed, _ = m(ids, position_ids=pos, cu_seqlens=cu, targets=torch.roll(ids, -1, 1))
    off = 0
    for s in seqs:
        ref, _ = m(s[None], targets=torch.roll(s, -1)[None])
        err = (packed[0, off:off + len(s) - 1] - ref[0, :-1]).abs().max().item()
        assert err < 0.05, f"packed flash-attn vs SDPA log-probs differ by {err}"
        off += len(s)
print("flash-attn packed forward: ok")
EOF

# ---- 3. VLLMEngine: device per thread, tensor parallel, log-prob convention, sleep level 2 + weight sync
cat > "$tmp/vllm_smoke.py" <<'EOF'
import asyncio, os, torch, torch.distributed as dist
import sys, engines
from hf import weights
from hf.chat import render_ids
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
device = torch.device("cuda", int(os.environ["LOCAL_RANK"])); torch.cuda.set_device(device)
dist.init_process_group("nccl", device_id=device)
# SmolLM2 has 9 attention heads, which vLLM cannot split over 2 GPUs: tensor parallelism runs on a tiny
# random Qwen3 with 4 heads of 64 (the SmolLM2 tokenizer)
path = weights.default_model_dir() if world == 1 else weights.save_tiny_random(f"{sys.argv[1]}-{rank}", head_dim=64)
tok = weights.load_tokenizer(path)
tp_group = engines.tp_groups(world, world)
eng = engines.VLLMEngine(str(path), max_seq_len=2048, gpu_memory_utilization=0.3, dtype="bfloat16", seed=0,
                         tensor_parallel_size=world, sleep_level=2, device=device, tp_group=tp_group)
thread_device = asyncio.run(asyncio.to_thread(lambda: (eng._set_device(), torch.cuda.current_device())[1]))
assert thread_device == device.index, f"worker thread on cuda:{thread_device}, engine on {device}"
texts = ["Create /app/hello.txt containing hello", "What is the capital of France?", "Count the lines of /app/a.txt", "List /app"]
prompts = [render_ids(tok, [{"role": "user", "content": t}], add_generation_prompt=True) for t in texts]
T, K, P = 0.7, 40, 0.95

async def gen(sp):
    return await asyncio.gather(*(eng.generate(p, sp) for p in prompts))

def rollout(*sps):  # one rollout: the leader generates; followers replay its batches until its sleep()
    if eng.is_leader:
        out = [asyncio.run(gen(sp)) for sp in sps]
    else:
        out = [None] * len(sps); assert eng.follow() >= len(sps)
    eng.sleep()
    return out

greedy, = rollout(engines.SamplingParams(temperature=0.0, max_tokens=24))
master = weights.load_hf(path, dtype=torch.float32, device="cuda")  # stands in for the fp32 master weights
eng.bucket_bytes = 64 << 20
eng.load_weights((n, p.detach().to(torch.bfloat16)) for n, p in master.named_parameters())
eng.wake_up()
again, sampled = rollout(engines.SamplingParams(temperature=0.0, max_tokens=24),
                         engines.SamplingParams(temperature=T, top_k=K, top_p=P, max_tokens=32, seed=1))
if eng.is_leader:
    same = sum(a.token_ids == b.token_ids for a, b in zip(greedy, again))
    assert same >= 3, f"greedy output changed after sleep(level=2) + load_weights ({same}/4 equal)"
    learner = weights.load_hf(path, dtype=torch.bfloat16, device="cuda")
    diffs, outside = [], 0
    with torch.no_grad():
        for p, c in zip(prompts, sampled):
            ids = torch.tensor([p + c.token_ids], device="cuda")
            z = learner(ids)[0, len(p) - 1:-1].float() / T                     # [n, V] logits / T
            kth = z.topk(K, dim=-1).values[:, -1:]
            z = z.masked_fill(z < kth, float("-inf"))                           # top-k, then renormalise
            probs, order = z.softmax(-1).sort(dim=-1, descending=True)
            drop = (probs.cumsum(-1) - probs) >= P                              # top-p on the top-k distribution
            z = z.scatter(1, order, z.gather(1, order).masked_fill(drop, float("-inf")))
            lp = z.log_softmax(-1).gather(1, torch.tensor(c.token_ids, device="cuda")[:, None])[:, 0]
            outside += int(torch.isinf(lp).sum())
            diffs.append((lp[~torch.isinf(lp)] - torch.tensor(c.logprobs, device="cuda")[~torch.isinf(lp)]).abs())
    err = torch.cat(diffs).mean().item()
    assert outside <= 1 and err < 0.05, f"processed log-probs: mean |engine - learner| = {err}, {outside} tokens outside"
    print(f"vllm tp={world}: thread device ok, sleep(2)/load/wake ok ({same}/4 same), "
          f"processed log-probs mean |diff| {err:.4f}, {outside} sampled tokens outside the learner's top-k/top-p set")
dist.destroy_process_group()
EOF
run 420 "$TP" "$tmp/vllm_smoke.py" "$tmp/tiny-qwen3-hd64"
echo "gpu_smoke: all ok"
