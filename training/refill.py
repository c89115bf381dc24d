"""DAPO's dynamic sampling (Yu et al. 2025, section 3.2; grpo.refill_rounds >= 1): while too few of
a step's groups have reward variance, extra rounds of new tasks. It replaces the plain rollout's
episodes (training.step.episodes) with `refilled_rollout` and adds what it cost to the Rollout.
"""

import dataclasses
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from learner.packing import has_signal
from training.setup import Run
from training.step import Rollout, episodes
from training.step import roll_out as plain_roll_out


@dataclass
class Refill:
    """What dynamic sampling added to one rollout: extra rounds, their episodes, their seconds."""

    rounds: int = 0
    episodes: int = 0
    seconds: float = 0.0


def roll_out(
    run: Run, indices: list[int], n: int, sync_s: float = 0.0, play: Callable = episodes
) -> Rollout:
    """training.step.roll_out with its episodes refilled (`refilled_rollout` over `play`): the
    Rollout's indices and groups hold the extra rounds' tasks after the step's, and its refill_*
    figures what they cost."""
    refill = Refill()
    refilled = functools.partial(refilled_rollout, n=n, refill=refill, play=play)
    ro = plain_roll_out(run, indices, n, sync_s, refilled)
    return with_refill(run, ro, refill)


def with_refill(run: Run, ro: Rollout, refill: Refill) -> Rollout:
    """`ro` with the tasks of its groups as its indices (the step's, then the extra rounds') and
    `refill`'s figures."""
    indices = ro.indices
    if ro.groups is not None:
        position = {t.id: i for i, t in enumerate(run.tasks)}
        indices = [position[g.task.id] for g in ro.groups]
    return dataclasses.replace(
        ro,
        indices=indices,
        refill_rounds=refill.rounds,
        refill_episodes=refill.episodes,
        refill_s=refill.seconds,
    )


async def refilled_rollout(
    run: Run,
    indices: list[int],
    seed: int,
    write: Callable,
    n: int,
    refill: Refill,
    on_generation_end: Callable[[], None] | None = None,
    play: Callable = episodes,
) -> list:
    """The episodes of a step on this rank: group_size episodes of each task in `indices` (`play`,
    training.step.episodes), then while fewer than len(indices) of the groups so far have reward
    variance (learner.packing.has_signal) and fewer than grpo.refill_rounds extra rounds ran,
    another round of len(indices) tasks (refill_tasks) with fresh seeds. Every group is kept
    (those without variance are dropped later, learner.packing.samples_from_groups). Fills
    `refill` with the extra rounds' cost. on_generation_end is called once, when the last round's
    episodes stopped acting (a round known to be the last gets it; an earlier last one calls it
    when scored). n: the rollout's number, which seeds the extra rounds' task draws. Returns the
    groups in order: the step's tasks, then each extra round's."""
    cfg = run.cfg
    limit = cfg.grpo.refill_rounds
    wanted = len(indices)
    rolled = list(indices)
    groups: list = []
    for r in range(limit + 1):
        last = r == limit
        t0 = time.perf_counter()
        groups += await play(
            run,
            rolled[len(groups) :],
            # each extra round its own draws
            seed if r == 0 else seed * 7_919 + r,
            write,
            on_generation_end=on_generation_end if last else None,
        )
        if r > 0:
            refill.rounds += 1
            refill.episodes += wanted * cfg.grpo.group_size
            refill.seconds += time.perf_counter() - t0
        if last:
            return groups
        if sum(has_signal(g) for g in groups) >= wanted:
            if on_generation_end is not None:
                on_generation_end()
            return groups
        draw_seed = (cfg.seed * 1_000_003 + n) * 1_009 + run.rank
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
