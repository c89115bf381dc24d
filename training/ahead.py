"""Sandboxes started ahead of a rollout: the overlapped driver (training/overlap.py) starts the next
rollout's first sandboxes while the learner trains (`start_ahead`), run_episodes(..., ahead=...)
hands each to its episode, and what no episode took (a stop before or during the rollout) is closed
(`close_ahead`)."""

import asyncio

import sandbox as sandbox_lib
from configs import RolloutConfig, SandboxConfig
from rollout import close_unused
from sandboxing import hosts
from sandboxing.images import build_error, build_images


async def start_ahead(
    tasks: list, n_per_task: int, cfg: RolloutConfig, sandbox_cfg: SandboxConfig, run_id
) -> dict[tuple[int, int], asyncio.Task]:
    """Start the sandboxes of a rollout's first cfg.max_concurrent_episodes episodes before it
    (training/overlap.py: while the learner trains), for run_episodes(tasks, ...,
    ahead=<a future of this>). Returns (task index, group index) -> a task resolving to (engine
    url, sandbox, start seconds). Raises nothing itself: a failed start (its engine slot given
    back) is that episode's error when it runs; a task whose image failed gets none."""
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


async def close_ahead(ahead: asyncio.Future) -> None:
    """Close the sandboxes of `start_ahead` that no episode took (run_episodes takes an entry out
    of the mapping when an episode owns it; a stop or an error before or during their rollout
    leaves the rest) and give their engine slots back; waits for the starts still in flight, whose
    containers a reap would otherwise miss. A start that failed already gave its slot back; an
    `ahead` cancelled before its starts were made started nothing. Idempotent."""
    if ahead.cancelled():
        return
    started = await ahead
    untaken = list(started.values())
    started.clear()
    await asyncio.gather(*(close_unused(t) for t in untaken))
