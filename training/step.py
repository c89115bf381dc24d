"""The parts of one step on a rank that the recipe (train.py) and its variants share: the weight
sync (step 2), the plain rollout (step 3) and the update (step 5), and `Rollout`, what a rollout
hands to the learner and the record. The variants wrap or replace these from their own modules:
training/refill.py (dynamic sampling), training/tensor_parallel.py (a tensor-parallel engine's
followers), training/overlap.py (the update beside the next rollout, the sandboxes started ahead)
and training/disaggregated.py (rollout ranks apart from trainers).
"""

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass

import rollout
import sandbox
from bookkeeping.memory import release_free_memory
from learner.packing import Sample
from learner.sync import sync_weights
from learner.update import loss_config, staleness, update
from training.setup import Run


@dataclass
class Rollout:
    """One step's rollout on this rank as the learner takes it: the indices of this rank's tasks,
    their groups (rollout.Group; None when a stop cancelled the rollout), seconds of the rollout
    and of the weight sync before it, the policy version the engine held (optimizer steps done),
    and seconds of the rollout until its last episode stopped acting (the rest, rollout_s -
    generate_s, is the verification and judge tail). refill_rounds, refill_episodes, refill_s:
    what dynamic sampling (training/refill.py) added on this rank: its extra rounds, their
    episodes and seconds (their tasks are in indices, their groups in groups)."""

    indices: list[int]
    groups: list | None
    rollout_s: float
    sync_s: float
    version: int
    generate_s: float = 0.0
    refill_rounds: int = 0
    refill_episodes: int = 0
    refill_s: float = 0.0


def sync_engine(run: Run) -> float:
    """Step 2: the policy's weights into this rank's engine if they changed since its last sync
    (run.stale: after every update, after a resume) or the engine dropped them when it slept.
    Collective (every rank decides alike). Returns seconds spent (0.0 when nothing was pushed)."""
    if not run.stale and not run.engine.weights_dropped:
        return 0.0
    sync_s = sync_weights(run.policy, run.engine, run.engine_dtype)
    run.stale = False
    return sync_s


def episodes(
    run: Run, indices: list[int], seed: int, write: Callable, on_generation_end=None
) -> Coroutine[None, None, list]:
    """group_size episodes of each task in `indices` with the run's settings
    (rollout.run_episodes, and its on_generation_end). Returns the coroutine of their groups, in
    the order of `indices`."""
    cfg = run.cfg
    return rollout.run_episodes(
        [run.tasks[i] for i in indices],
        run.engine,
        run.tokenizer,
        cfg.grpo.group_size,
        run.rollout_cfg,
        opts=run.episode_opts,
        seed=seed,
        progress=run.rank == 0,
        on_trajectory=write,
        on_generation_end=on_generation_end,
    )


def roll_out(
    run: Run, indices: list[int], n: int, sync_s: float = 0.0, play: Callable = episodes
) -> Rollout:
    """Step 3, rollout n (0-based) on this rank: group_size episodes of each task in `indices`
    (`play`: `episodes`, or a variant's replacement with its signature), engine awake,
    trajectories streamed to trajectories/step_N_rankR.jsonl as their groups are scored, each
    marked with the policy version the engine holds (run.step). A stop signal cancels the
    episodes (their sandboxes close; this run's leftovers are reaped): then the Rollout's groups
    are None. sync_s: seconds of the weight sync before it, kept with the rollout for its record."""
    version = run.step
    t0 = time.perf_counter()
    # seconds until the last episode stopped acting
    generated = []

    def generation_end() -> None:
        generated.append(time.perf_counter() - t0)

    run.engine.wake_up()
    with trajectories(run, n, version) as write:
        job = play(run, indices, episode_seed(run, n), write, on_generation_end=generation_end)
        groups = until_done_or_stopped(run, job)
    run.engine.sleep()
    # the KV cache and packed weights the engine freed
    release_free_memory()
    seconds = time.perf_counter() - t0
    generate_s = generated[0] if generated else seconds
    return Rollout(indices, groups, seconds, sync_s, version, generate_s)


def episode_seed(run: Run, n: int) -> int:
    """The seed of rollout n's episodes on this rank (one per engine: the ranks of a
    tensor-parallel engine share their leader's)."""
    return (run.cfg.seed * 1_000_003 + n) * 1_009 + run.rank // run.tp


@contextlib.contextmanager
def trajectories(run: Run, n: int, version: int) -> Iterator[Callable]:
    """A writer of rollout n's trajectories to trajectories/step_N_rankR.jsonl (N = n + 1), each
    marked with the policy `version` that generated it."""
    path = run.out_dir / "trajectories" / f"step_{n + 1:06d}_rank{run.rank}.jsonl"
    with open(path, "w") as traj_file:

        def write(t: rollout.Trajectory) -> None:
            t.policy_version = version
            traj_file.write(json.dumps(t.to_json(), default=str) + "\n")

        yield write


def until_done_or_stopped(run: Run, job: Coroutine) -> list | None:
    """Run the rollout's coroutine in the run's event loop until it returns its groups, or until
    a stop signal cancels it: then None (the episodes closed their sandboxes; what is still
    closing in the background is reaped)."""
    task = run.loop.create_task(job)
    run.stop.cancel_on_signal(run.loop, task)
    if run.stop.requested:
        # the signal came before the rollout (e.g. during the sync)
        task.cancel()
    try:
        return run.loop.run_until_complete(task)
    except asyncio.CancelledError:
        sandbox.reap(run_id=sandbox.RUN_ID)
        return None
    finally:
        run.stop.cancel_on_signal(run.loop, None)


def update_policy(
    run: Run, samples: list[Sample], version: int, stop: Callable[[], bool] | None = None
) -> tuple[dict, float] | None:
    """Step 5: the GRPO update over every rank's `samples` (learner.update.update), generated by
    policy `version`; TIS on when that is older than the learner's (learner.update.loss_config).
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
