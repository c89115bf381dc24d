"""The parts of one step on a rank that the recipe (train.py) and its variants (training/overlap.py,
training/disaggregated.py) share: the weight sync (step 2), the rollout (step 3) and the update
(step 5). Tensor parallelism (a follower replaying its leader's generation, the leader's groups
shared out) and the samples' staleness are handled here, out of the recipe's sight.
"""

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

import engines
import rollout
import sandbox
from bookkeeping.memory import release_free_memory
from episodes import ahead as ahead_lib
from learner.packing import Sample, has_signal
from learner.pipeline import Rollout, loss_config, staleness
from learner.sync import sync_weights
from learner.update import update
from training.setup import Run


def sync_engine(run: Run) -> float:
    """Step 2: the policy's weights into this rank's engine if they changed since its last sync
    (after every update, after a resume) or the engine dropped them when it slept. Collective
    (every rank decides alike). Returns seconds spent (0.0 when nothing was pushed)."""
    if not run.stale and not run.engine.weights_dropped:
        return 0.0
    sync_s = sync_weights(run.policy, run.engine, run.engine_dtype)
    run.stale = False
    return sync_s


def roll_out(
    run: Run,
    indices: list[int],
    sync_s: float = 0.0,
    on_generation_end: Callable[[], None] | None = None,
    ahead: asyncio.Task | None = None,
) -> Rollout:
    """Step 3: group_size episodes of each task in `indices` on this rank
    (rollout.run_episodes; with grpo.refill_rounds, extra rounds of new tasks while too few
    groups have reward variance: refilled_rollout), engine awake, trajectories streamed to
    trajectories/step_N_rankR.jsonl as their groups are scored; run.rollouts counts it. Each
    trajectory records the policy version the engine holds (run.step). A stop signal cancels the
    episodes (their sandboxes close; this run's leftovers are reaped): then the Rollout's groups
    are None. Under tensor parallelism the followers replay their leader's generation and the
    leader's groups are shared out (engines.split_for_tp): the Rollout holds this rank's share.
    sync_s: seconds of the weight sync before it, kept with the rollout for its record.
    on_generation_end: called (in the event loop) once every episode stopped acting, the engine
    asleep: the overlapped update starts there, beside the verifications and judge calls.
    ahead: the sandboxes episodes.ahead.start_ahead started for these indices while the learner
    trained; those no episode took (a stop before or during the rollout) are closed here."""
    cfg = run.cfg
    step = run.rollouts
    # the engine holds policy `version`
    version = run.step
    t0 = time.perf_counter()
    run.engine.wake_up()
    # seconds until the last episode stopped acting
    generated = []

    def generation_end() -> None:
        generated.append(time.perf_counter() - t0)
        if on_generation_end is not None:
            run.engine.sleep()
            # the KV cache and packed weights the engine freed
            release_free_memory()
            on_generation_end()

    path = run.out_dir / "trajectories" / f"step_{step + 1:06d}_rank{run.rank}.jsonl"
    with open(path, "w") as traj_file:

        def write(t: rollout.Trajectory) -> None:
            t.policy_version = version
            traj_file.write(json.dumps(t.to_json(), default=str) + "\n")

        seed = (cfg.seed * 1_000_003 + step) * 1_009 + run.rank // run.tp
        refill = Refill()
        if run.rank % run.tp:
            # a tensor-parallel follower replays its leader's generate calls
            job = engines.follow_async(run.engine)
        else:
            job = refilled_rollout(run, indices, seed, write, generation_end, ahead, refill)
        episodes = run.loop.create_task(job)
        run.stop.cancel_on_signal(run.loop, episodes)
        if run.stop.requested:
            # the signal came before the rollout (e.g. during the sync)
            episodes.cancel()
        try:
            groups = run.loop.run_until_complete(episodes)
        except asyncio.CancelledError:
            groups = None
            # sandboxes still closing in the background
            sandbox.reap(run_id=sandbox.RUN_ID)
        finally:
            run.stop.cancel_on_signal(run.loop, None)
            # a rollout cancelled before its episodes took their sandboxes
            close_started(run, ahead)
    if not generated or on_generation_end is None:
        # a tensor-parallel leader's sleep ends its followers' follow()
        run.engine.sleep()
        release_free_memory()
    seconds = time.perf_counter() - t0
    run.rollouts += 1
    groups = engines.split_for_tp(groups, run.tp, run.tp_group)
    # the tasks of the groups split_for_tp gave this rank (refill rounds add tasks only the
    # leader drew)
    mine = indices[run.rank % run.tp :: run.tp]
    if groups is not None:
        position = {t.id: i for i, t in enumerate(run.tasks)}
        mine = [position[g.task.id] for g in groups]
    generate_s = generated[0] if generated else seconds
    return Rollout(
        mine,
        groups,
        seconds,
        sync_s,
        version,
        generate_s,
        refill.rounds,
        refill.episodes,
        refill.seconds,
    )


@dataclass
class Refill:
    """What dynamic sampling added to one rollout: extra rounds, their episodes, their seconds."""

    rounds: int = 0
    episodes: int = 0
    seconds: float = 0.0


async def refilled_rollout(
    run: Run,
    indices: list[int],
    seed: int,
    write: Callable,
    generation_end: Callable[[], None],
    ahead: asyncio.Task | None,
    refill: Refill,
) -> list:
    """Step 3's episodes on this rank: group_size episodes of each task in `indices`
    (rollout.run_episodes), then DAPO's dynamic sampling (Yu et al. 2025, section 3.2): while fewer
    than len(indices) of the groups so far have reward variance (learner.packing.has_signal) and
    fewer than grpo.refill_rounds extra rounds ran, another round of len(indices) tasks
    (refill_tasks) with fresh seeds. Every group is kept (those without variance are dropped later,
    learner.packing.samples_from_groups). Fills `refill` with the extra rounds' cost.
    generation_end is called once, when the last round's episodes stopped acting (a round known to
    be the last gets it as on_generation_end; an earlier last one calls it when scored).
    Returns the groups in order: the step's tasks, then each extra round's."""
    cfg = run.cfg
    limit = cfg.grpo.refill_rounds
    wanted = len(indices)
    rolled = list(indices)
    groups: list = []
    for r in range(limit + 1):
        last = r == limit
        t0 = time.perf_counter()
        groups += await rollout.run_episodes(
            [run.tasks[i] for i in rolled[len(groups) :]],
            run.engine,
            run.tokenizer,
            cfg.grpo.group_size,
            cfg.rollout,
            run.judge,
            action_format=cfg.policy.action_format,
            sandbox_cfg=cfg.sandbox,
            reward_cfg=cfg.reward,
            run_id=sandbox.RUN_ID,
            # each extra round its own draws
            seed=seed if r == 0 else seed * 7_919 + r,
            progress=run.rank == 0,
            on_trajectory=write,
            on_generation_end=generation_end if last else None,
            ahead=ahead if r == 0 else None,
        )
        if r > 0:
            refill.rounds += 1
            refill.episodes += wanted * cfg.grpo.group_size
            refill.seconds += time.perf_counter() - t0
        if last:
            return groups
        if sum(has_signal(g) for g in groups) >= wanted:
            generation_end()
            return groups
        draw_seed = (cfg.seed * 1_000_003 + run.rollouts) * 1_009 + run.rank
        rolled += refill_tasks(len(run.tasks), wanted, rolled, draw_seed * 31 + r, run.sampler)
    return groups


def refill_tasks(num_tasks: int, n: int, rolled: list[int], seed: int, sampler) -> list[int]:
    """n task indices for an extra round of dynamic sampling, drawn on this rank alone (the shared
    sampler's state stays as every rank holds it): a permutation of range(num_tasks) seeded by
    `seed`, the tasks not yet `rolled` this step and not skipped by the curriculum
    (sampler.skipped) first, then the others in the same order, repeated when the task set is
    smaller than n (a task rolled again samples new episodes)."""
    g = torch.Generator().manual_seed(seed)
    order = torch.randperm(num_tasks, generator=g).tolist()
    done = set(rolled)
    fresh = [i for i in order if i not in done and not sampler.skipped(i)]
    taken = set(fresh)
    pool = fresh + [i for i in order if i not in taken]
    return [pool[k % len(pool)] for k in range(n)]


def close_started(run: Run, ahead: asyncio.Task | None) -> None:
    """Close the sandboxes episodes.ahead.start_ahead started that no episode took (none: nothing)."""
    if ahead is not None:
        run.loop.run_until_complete(ahead_lib.close_ahead(ahead))


def learn(
    run: Run, samples: list[Sample], version: int, stop: Callable[[], bool] | None = None
) -> tuple[dict, float] | None:
    """Step 5: the GRPO update over every rank's `samples` (learner.update.update), generated by
    policy `version`; TIS on when that is older than the learner's (learner.pipeline.loss_config).
    Touches only policy, optimizer and scheduler: it may run in the learner thread beside the
    next rollout. Collective (over the ranks that train). stop: checked (collectively) per
    micro-batch; True before the first optimizer step cuts the update short. Returns (update
    metrics with staleness_mean/max, seconds of the update), or None when stop cut it short (no
    optimizer step taken). Raises RuntimeError when a sample is older than
    max_off_policy_steps."""
    ages = staleness(samples, run.step, run.cfg.max_off_policy_steps, run.device)
    t0 = time.perf_counter()
    # alike on every rank: every rank's samples share their rollout's version
    cfg = loss_config(run.cfg, stale=run.step > version)
    metrics = update(
        run.policy,
        run.optimizer,
        run.scheduler,
        samples,
        cfg,
        run.device,
        run.ref_model,
        stop=stop,
        progress=run.rank == 0,
    )
    if metrics is None:
        return None
    return {**metrics, **ages}, time.perf_counter() - t0
