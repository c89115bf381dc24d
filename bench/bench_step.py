"""Where the time of one training step goes: rollout (engine compute, container work, idle), train, sync.

    python bench/bench_step.py                       # preset cpu-smollm2, 1 warm-up step + 1 measured step
    python bench/bench_step.py --measure-steps 2 --preset cpu-smollm2 --tasks-per-step 2

Runs train.py's step in one process (one gloo rank) with the preset's model, tasks and engine: sync
weights (from the second step on), rollout with verification, GRPO update. Busy intervals are
recorded around the engine's model calls (TorchEngine._admit / _step: prefill, decode, sampling) and
around every Sandbox call (start, exec, file transfer, run_tests, close).

Baseline, measured in the same run: the step's busy time = |engine U containers| during the rollout
+ train (forward, backward, optimizer). Printed ratio: overhead = (step wall - busy) / step wall, the
time spent in neither model compute nor container work (rollout idle + weight sync + bookkeeping).
Goal: <= 0.10. Zero-variance groups are kept by default (--grpo.no-drop-zero-variance-groups, the
user's flags come after it), so the update trains on every trajectory as it would with reward spread.
"""

import argparse
import asyncio
import functools
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
from torch.distributed.device_mesh import init_device_mesh  # noqa: E402

import configs  # noqa: E402
import engines  # noqa: E402
import rollout  # noqa: E402
import sandbox  # noqa: E402
from hf import weights  # noqa: E402
from judging import judge as judge_lib  # noqa: E402
from learner import distributed, packing, sync  # noqa: E402
from learner.update import build_optimizer, update  # noqa: E402
from tasks import select_tasks  # noqa: E402
from tasks.sampler import TaskSampler  # noqa: E402

INTERVALS: dict[str, list[tuple[float, float]]] = {"engine": [], "container": [], "verify": []}


def _timed_sync(kind, fn):
    @functools.wraps(fn)
    def wrapper(*a, **k):
        t0 = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            INTERVALS[kind].append((t0, time.perf_counter()))

    return wrapper


def _timed_async(kinds, fn):
    @functools.wraps(fn)
    async def wrapper(*a, **k):
        t0 = time.perf_counter()
        try:
            return await fn(*a, **k)
        finally:
            for kind in kinds:
                INTERVALS[kind].append((t0, time.perf_counter()))

    return wrapper


def instrument() -> None:
    engines.TorchEngine._admit = _timed_sync("engine", engines.TorchEngine._admit)
    engines.TorchEngine._step = _timed_sync("engine", engines.TorchEngine._step)
    for name in ("exec", "write_file", "read_file", "close"):
        setattr(sandbox.Sandbox, name, _timed_async(("container",), getattr(sandbox.Sandbox, name)))
    sandbox.Sandbox.run_tests = _timed_async(("container", "verify"), sandbox.Sandbox.run_tests)
    start = sandbox.Sandbox.start.__func__
    sandbox.Sandbox.start = classmethod(_timed_async(("container",), start))


def union_length(intervals: list[tuple[float, float]], lo: float, hi: float) -> float:
    """Seconds of [lo, hi] covered by at least one interval."""
    total, end = 0.0, lo
    for a, b in sorted((max(a, lo), min(b, hi)) for a, b in intervals if b > lo and a < hi):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def step_row(step: int, t_step: float, sync_s: float, marks: tuple, trajs: list) -> dict:
    """One step's seconds by part (perf_counter marks: rollout start/end, train start, end)."""
    t_roll, t_roll_end, t_train, t_end = marks
    eng = union_length(INTERVALS["engine"], t_roll, t_roll_end)
    cont = union_length(INTERVALS["container"], t_roll, t_roll_end)
    either = union_length(INTERVALS["engine"] + INTERVALS["container"], t_roll, t_roll_end)
    r = dict(
        step=step,
        wall=t_end - t_step,
        sync=sync_s,
        rollout=t_roll_end - t_roll,
        engine=eng,
        container=cont,
        overlap=eng + cont - either,
        verify=union_length(INTERVALS["verify"], t_roll, t_roll_end),
        idle=(t_roll_end - t_roll) - either,
        train=t_end - t_train,
        other=(t_end - t_step) - (t_roll_end - t_roll) - (t_end - t_train) - sync_s,
        episodes=len(trajs),
        tokens=sum(len(t.token_ids) for t in trajs),
        generated=sum(sum(t.loss_mask) for t in trajs),
        failed=sum(t.reward is None for t in trajs),
    )
    r["busy"] = either + r["train"]
    r["overhead"] = r["wall"] - r["busy"]
    return r


def print_rows(rows: list[dict]) -> None:
    """The measured steps' breakdown and overhead ratio."""
    for r in rows:
        w = r["wall"]
        print(f"\nstep {r['step']} ({w:.1f} s wall)")
        for key, label in (
            ("rollout", "rollout (wall)"),
            ("engine", "  engine compute"),
            ("container", "  container work"),
            ("overlap", "  engine and containers at once"),
            ("verify", "  of which verify (run_tests)"),
            ("idle", "  idle (neither)"),
            ("train", "train (fwd+bwd+optim)"),
            ("sync", "sync"),
            ("other", "other (advantages, packing)"),
        ):
            print(f"  {label:34s} {r[key]:8.2f} s  {r[key] / w:6.1%}")
        print(f"  baseline: busy = engine U containers + train = {r['busy']:.2f} s")
        print(
            f"  overhead ratio (wall - busy) / wall = {r['overhead'] / w:.3f}   (idle + sync + other; goal <= 0.10)"
        )


def main() -> None:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--measure-steps", type=int, default=1)
    known, rest = pre.parse_known_args()
    cfg = configs.parse_cli(["--grpo.no-drop-zero-variance-groups", *rest], description=__doc__)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    rank, world, _, device = distributed.init_distributed()
    instrument()
    tasks = select_tasks(cfg.tasks, cfg.task_ids, cfg.difficulties)
    model_dir = distributed.resolve_model_dir(cfg.policy.path, rank)
    tokenizer = weights.load_tokenizer(model_dir)
    policy = distributed.load_policy(
        model_dir, cfg, init_device_mesh(device.type, (world,)), device
    )
    optimizer, scheduler = build_optimizer(policy, cfg)
    sampler = TaskSampler(
        [t.id for t in tasks], cfg.tasks_per_step, rank, world, cfg.seed, cfg.epochs_shuffle
    )
    engine = engines.build_engine(cfg.policy, model_dir, tokenizer, device, cfg.seed + rank)
    judge = judge_lib.build_judge(cfg.reward, cfg.out_dir)
    loop = asyncio.new_event_loop()
    print(
        f"bench_step: preset tasks {[t.id for t in tasks]}, {cfg.tasks_per_step} tasks x {cfg.grpo.group_size} "
        f"per step, model {model_dir}, torch threads {torch.get_num_threads()}, 1 warm-up step + "
        f"{known.measure_steps} measured"
    )
    rows = []
    try:
        for step in range(1 + known.measure_steps):
            for v in INTERVALS.values():
                v.clear()
            t_step = time.perf_counter()
            sync_s = sync.sync_weights(policy, engine) if step > 0 else 0.0
            engine.wake_up()
            t_roll = time.perf_counter()
            groups = loop.run_until_complete(
                rollout.run_episodes(
                    [tasks[i] for i in sampler.next_batch()],
                    engine,
                    tokenizer,
                    cfg.grpo.group_size,
                    cfg.rollout,
                    opts=rollout.EpisodeOptions(
                        cfg.policy.action_format, cfg.sandbox, cfg.reward, judge, sandbox.RUN_ID
                    ),
                    seed=step,
                    progress=False,
                )
            )
            t_roll_end = time.perf_counter()
            trajs = [t for g in groups for t in g.trajectories]
            engine.sleep()
            samples, _ = packing.samples_from_groups(groups, cfg.grpo)
            t_train = time.perf_counter()
            update(policy, optimizer, scheduler, samples, cfg, device)
            t_end = time.perf_counter()
            r = step_row(step, t_step, sync_s, (t_roll, t_roll_end, t_train, t_end), trajs)
            rows.append(r)
            print(
                f"{'warm-up' if step == 0 else 'measured'} step {step}: {r['wall']:.1f}s wall, "
                f"{r['episodes']} episodes ({r['failed']} failed), {r['tokens']} tokens, "
                f"{r['generated']} generated",
                flush=True,
            )
    finally:
        loop.run_until_complete(engine.aclose())
        if judge is not None:
            loop.run_until_complete(judge.aclose())
        loop.close()
        sandbox.reap(run_id=sandbox.RUN_ID)
        torch.distributed.destroy_process_group()

    print_rows(rows[1:])


if __name__ == "__main__":
    main()
