"""A tensor-parallel generation engine (vLLM, policy.vllm_tensor_parallel_size = tp > 1, colocated):
the ranks of one engine roll out as one. The leader (rank % tp == 0) runs the plain rollout (or
dynamic sampling's); its followers replay its generate calls; the leader's groups are then shared
out (engines.split_for_tp), so the learner's work is spread over every rank.
"""

import dataclasses
import time

import engines
from bookkeeping.memory import release_free_memory
from training import refill, step
from training.setup import Run
from training.step import Rollout


def roll_out(run: Run, indices: list[int], n: int, sync_s: float = 0.0) -> Rollout:
    """Step 3 on a rank of a tensor-parallel engine: the leader's rollout n (training.step.roll_out,
    training.refill.roll_out with grpo.refill_rounds), the followers' replay of it, then this
    rank's share of the leader's groups and their task indices. Collective over run.tp_group."""
    if run.rank % run.tp == 0:
        leader = refill.roll_out if run.cfg.grpo.refill_rounds else step.roll_out
        ro = leader(run, indices, n, sync_s)
    else:
        ro = _follow(run, indices, n, sync_s)
    groups = engines.split_for_tp(ro.groups, run.tp, run.tp_group)
    # the tasks of the groups split_for_tp gave this rank (refill rounds add tasks only the
    # leader drew)
    mine = indices[run.rank % run.tp :: run.tp]
    if groups is not None:
        position = {t.id: i for i, t in enumerate(run.tasks)}
        mine = [position[g.task.id] for g in groups]
    return dataclasses.replace(ro, indices=mine, groups=groups)


def _follow(run: Run, indices: list[int], n: int, sync_s: float) -> Rollout:
    """A follower's rollout n: its engine replays the leader's generate calls until the leader's
    sleep ends them (engines.follow_async); its groups come from the leader (its trajectories
    file stays empty)."""
    version = run.step
    t0 = time.perf_counter()
    run.engine.wake_up()
    with step.trajectories(run, n, version):
        step.until_done_or_stopped(run, engines.follow_async(run.engine))
    run.engine.sleep()
    release_free_memory()
    seconds = time.perf_counter() - t0
    return Rollout(indices, None, seconds, sync_s, version, seconds)
