"""Where a training rank's host memory goes: RSS after each part of train.py's set-up and step.

    flock /work/heavy.lock python -m torch.distributed.run --standalone --nproc_per_node=2 \\
        bench/bench_memory.py --preset cpu-smollm2 [train.py flags]

Runs the parts of two training steps on each rank as train.py does (policy, optimizer, engine,
rollout, update, weight sync, HF export) with the preset's model and knobs, but with the
engine's generate calls in place of the episodes (no containers): each rank generates
`--bench-episodes` replies of `--bench-prompt` prompt tokens, and trains on trajectories of that
length plus `rollout.max_tokens_per_turn` x `rollout.max_turns` tokens. After each part it prints
the rank's RSS now, the part's own peak (VmHWM, reset at the start of each part by writing 5 to
/proc/self/clear_refs) and the peak so far, in GB (1e9 bytes); the update is split into forward,
backward and optimizer step (learner.update's functions wrapped). As train.py it first fixes
glibc's mmap threshold (bookkeeping.memory.fix_mmap_threshold); TERMRL_BENCH_MMAP_THRESHOLD=glibc
leaves glibc's dynamic one (the figures before that fix). Measures memory, not time; nothing is
asserted.
"""

import asyncio
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
from torch.distributed.device_mesh import init_device_mesh  # noqa: E402

import configs  # noqa: E402
import engines  # noqa: E402
from bookkeeping.memory import (  # noqa: E402
    GB,
    fix_mmap_threshold,
    peak_rss_bytes,
    release_free_memory,
    rss_bytes,
)
from hf import weights  # noqa: E402
from learner import distributed, packing, sync  # noqa: E402
from learner import update as update_mod  # noqa: E402
from learner.update import build_optimizer, update  # noqa: E402

ROWS: list[tuple[str, float, float, float]] = []  # part, RSS now, the part's peak, peak so far
_PEAK = [0]


def mark(part: str) -> None:
    """Record the part that just ended, then reset VmHWM so the next part's peak is its own
    (Linux >= 4.0; where clear_refs is not writable the part's peak is the peak so far)."""
    part_peak = peak_rss_bytes()
    _PEAK[0] = max(_PEAK[0], part_peak)
    ROWS.append((part, rss_bytes() / GB, part_peak / GB, _PEAK[0] / GB))
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def mark_update_parts(step: list[int]) -> None:
    """Wrap learner.update's forward_logprobs and optimizer_step so that the update's parts are
    marked: forward, backward (up to the next forward or the optimizer step), optimizer step."""
    forward, opt_step = update_mod.forward_logprobs, update_mod.optimizer_step
    state = {"forwarded": False}

    def marked_forward(*args, **kwargs):
        if state["forwarded"]:
            mark(f"step {step[0]}: update, backward")
        out = forward(*args, **kwargs)
        mark(f"step {step[0]}: update, forward")
        state["forwarded"] = True
        return out

    def marked_step(*args, **kwargs):
        mark(f"step {step[0]}: update, backward")
        state["forwarded"] = False
        out = opt_step(*args, **kwargs)
        mark(f"step {step[0]}: update, optimizer step")
        return out

    update_mod.forward_logprobs, update_mod.optimizer_step = marked_forward, marked_step


def bench_flags(argv: list[str]) -> tuple[int, int, list[str]]:
    """(--bench-episodes, --bench-prompt, the remaining train.py flags)."""
    episodes, prompt, rest, it = 4, 200, [], iter(argv)
    for a in it:
        if a == "--bench-episodes":
            episodes = int(next(it))
        elif a == "--bench-prompt":
            prompt = int(next(it))
        else:
            rest.append(a)
    return episodes, prompt, rest


def roll_out(engine, cfg: configs.TrainConfig, n: int, prompt_len: int, seed: int) -> list:
    """n concurrent generate calls of prompt_len random tokens -> learner Samples of the length
    of a max_turns episode (the generated reply repeated once per turn)."""
    g = torch.Generator().manual_seed(seed)
    prompts = [torch.randint(0, 40000, (prompt_len,), generator=g).tolist() for _ in range(n)]
    ro = cfg.rollout
    sampling = engines.SamplingParams(
        max_tokens=ro.max_tokens_per_turn,
        temperature=ro.temperature,
        top_p=ro.top_p,
        top_k=ro.top_k,
    )

    async def all_of():
        return await asyncio.gather(*(engine.generate(p, sampling) for p in prompts))

    loop = asyncio.new_event_loop()
    done = loop.run_until_complete(all_of())
    loop.run_until_complete(engine.aclose())
    loop.close()
    samples = []
    for i, (p, c) in enumerate(zip(prompts, done)):
        reply = (c.token_ids * (ro.max_tokens_per_turn // max(1, len(c.token_ids)) + 1))[
            : ro.max_tokens_per_turn
        ]
        ids = p + reply * ro.max_turns
        mask = [0] * len(p) + [1] * (len(ids) - len(p))
        samples.append(packing.Sample(ids, mask, [-1.0 * m for m in mask], (-1.0) ** i))
    return samples


def main() -> None:
    episodes, prompt_len, argv = bench_flags(sys.argv[1:])
    cfg = configs.parse_cli(argv)
    if os.environ.get("TERMRL_BENCH_MMAP_THRESHOLD") != "glibc":  # "glibc": its dynamic one
        fix_mmap_threshold()  # as train.py
    rank, world, _, device = distributed.init_distributed()
    torch.manual_seed(rank)
    mark("imports, process group")
    model_dir = distributed.resolve_model_dir(cfg.policy.path, rank)
    tokenizer = weights.load_tokenizer(model_dir)
    policy = distributed.load_policy(model_dir, cfg, init_device_mesh("cpu", (world,)), device)
    mark("policy (FSDP2 shard, fp32 master)")
    ref = None
    if cfg.grpo.kl_coef > 0:
        ref = distributed.load_policy(
            model_dir, cfg, init_device_mesh("cpu", (world,)), device, trainable=False
        )
        mark("reference model")
    optimizer, scheduler = build_optimizer(policy, cfg)
    # as train.py: no more KV cache slots than episodes in flight
    cfg.policy.engine_max_batch = min(cfg.policy.engine_max_batch, episodes)
    engine = engines.build_engine(cfg.policy, model_dir, tokenizer, device, rank)
    mark("engine (weights, KV cache)")
    dtype = weights.DTYPES[cfg.policy.dtype]
    step_now = [1]
    mark_update_parts(step_now)
    for step in (1, 2):
        step_now[0] = step
        if step == 2:
            sync.sync_weights(policy, engine, dtype)
            mark("step 2: weight sync")
        engine.wake_up()
        samples = roll_out(engine, cfg, episodes, prompt_len, seed=step * 100 + rank)
        engine.sleep()  # as training.step.roll_out
        release_free_memory()
        mark(f"step {step}: rollout ({episodes} x {len(samples[0].token_ids)} tokens)")
        update(policy, optimizer, scheduler, samples, cfg, device, ref)
        mark(f"step {step}: update, the rest")
    with tempfile.TemporaryDirectory() as tmp:
        weights.save_hf(policy, Path(tmp) / "hf", dtype=dtype)
        mark("HF export")
    gathered: list = [None] * world
    torch.distributed.all_gather_object(gathered, ROWS)
    if rank == 0:
        print(
            f"load {os.getloadavg()[0]:.1f}; RSS now / the part's peak / peak so far, "
            "GB (1e9 B), per rank"
        )
        print("| part | " + " | ".join(f"rank {r}" for r in range(world)) + " |")
        print("|---|" + "---|" * world)
        for i, (part, *_) in enumerate(ROWS):
            cells = " | ".join(f"{g[i][1]:.2f} / {g[i][2]:.2f} / {g[i][3]:.2f}" for g in gathered)
            print(f"| {part} | {cells} |")
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
