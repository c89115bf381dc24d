"""Sandboxes started ahead of a rollout: the overlapped driver (training/overlap.py) starts the next
rollout's first sandboxes while the learner trains (`start_ahead`), its episodes take them
(`episodes`, an EpisodeOptions.get_sandbox of `taking`), and what no episode took (a stop before or
during the rollout) is closed (`close_ahead`)."""

import asyncio
import dataclasses
from collections.abc import Callable, Coroutine

import rollout
import sandbox as sandbox_lib
from configs import RolloutConfig, SandboxConfig
from sandboxing import hosts
from sandboxing.images import build_error, build_images


async def start_ahead(
    tasks: list, n_per_task: int, cfg: RolloutConfig, sandbox_cfg: SandboxConfig, run_id
) -> dict[tuple[int, int], asyncio.Task]:
    """Start the sandboxes of a rollout's first cfg.max_concurrent_episodes episodes before it
    (training/overlap.py: while the learner trains), for the episodes of `taking` to take.
    Returns (task index, group index) -> a task resolving to (engine url, sandbox, start
    seconds). Raises nothing itself: a failed start (its engine slot given back) is that
    episode's error when it runs; a task whose image failed gets none."""
    images = await build_images(tasks, sandbox_cfg)

    async def one(task, image: dict):
        host = await hosts.acquire()
        try:
            sb = await sandbox_lib.start_sandbox(
                task, image.get(host), run_id=run_id, host=host, cfg=sandbox_cfg
            )
        except BaseException as e:
            # the slot goes back; the episode reports the error
            err = e if isinstance(e, Exception) else None
            await asyncio.shield(asyncio.to_thread(hosts.release, host, err))
            raise
        return host, sb, sb.start_s

    keys = [(i, j) for i, t in enumerate(tasks) for j in range(n_per_task)]
    return {
        (i, j): asyncio.ensure_future(one(tasks[i], images[tasks[i].id]))
        for i, j in keys[: cfg.max_concurrent_episodes]
        if build_error(images[tasks[i].id]) is None
    }


def taking(ahead: asyncio.Future, tasks: list) -> Callable:
    """An EpisodeOptions.get_sandbox (rollout.start_episode_sandbox's signature) whose episodes
    take the sandboxes `ahead` (a future of start_ahead(tasks, ...)) started: an episode of a task
    takes the first one left of that task out of the mapping (it owns it from then on:
    close_ahead closes the rest); one that finds none starts its own. An episode cancelled while
    its sandbox still starts closes it once started."""

    async def get_sandbox(task, image, opts: rollout.EpisodeOptions, placed: Callable):
        started = await ahead
        key = next((k for k in started if tasks[k[0]] is task), None)
        if key is None:
            return await rollout.start_episode_sandbox(task, image, opts, placed)
        start = started.pop(key)
        try:
            # shielded: a start cut short would leave its container unseen
            host, sb, _ = await asyncio.shield(start)
        except asyncio.CancelledError:
            await asyncio.shield(close_unused(start))
            raise
        placed(host)
        return sb

    return get_sandbox


def episodes(ahead: asyncio.Future, tasks: list) -> Callable:
    """training.step.episodes (its signature) whose episodes take the sandboxes `ahead` started
    for `tasks` (`taking`)."""

    def play(
        run, indices: list[int], seed: int, write: Callable, on_generation_end=None
    ) -> Coroutine[None, None, list]:
        opts = dataclasses.replace(run.episode_opts, get_sandbox=taking(ahead, tasks))
        return rollout.run_episodes(
            [run.tasks[i] for i in indices],
            run.engine,
            run.tokenizer,
            run.cfg.grpo.group_size,
            run.rollout_cfg,
            opts=opts,
            seed=seed,
            progress=run.rank == 0,
            on_trajectory=write,
            on_generation_end=on_generation_end,
        )

    return play


async def close_unused(start: asyncio.Future) -> None:
    """A sandbox started ahead that no episode took: closed, its engine slot given back; nothing
    when its start failed (the start gave the slot back)."""
    try:
        host, sb, _ = await start
    except Exception:
        return
    await asyncio.shield(sb.close())
    await asyncio.to_thread(hosts.release, host)


async def close_ahead(ahead: asyncio.Future) -> None:
    """Close the sandboxes of `start_ahead` that no episode took (`taking` takes an entry out of
    the mapping when an episode owns it; a stop or an error before or during their rollout leaves
    the rest) and give their engine slots back; waits for the starts still in flight, whose
    containers a reap would otherwise miss. A start that failed already gave its slot back; an
    `ahead` cancelled before its starts were made started nothing. Idempotent."""
    if ahead.cancelled():
        return
    started = await ahead
    untaken = list(started.values())
    started.clear()
    await asyncio.gather(*(close_unused(t) for t in untaken))
