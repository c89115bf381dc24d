"""Blocking Docker calls from async code: the docker-py clients, the worker threads that run the calls,
the limit on calls in flight per engine, and the drain of the calls still running at teardown.

sandbox.py and compose.py await `blocking(fn, ...)`; images.py and the verifier side use `docker_api`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import os
import threading
import weakref

import docker

from sandboxing import hosts


class SandboxError(RuntimeError):
    """The sandbox itself failed (image missing, container gone, Docker error), not the agent's command."""


def default_max_concurrent() -> int:
    """Docker operations in flight at once: 8 per CPU core, at most one per 0.5 GiB of RAM, at least 4."""
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return max(4, min(8 * (os.cpu_count() or 1), int(mem_gib / 0.5)))


MAX_CONCURRENT = (
    int(os.environ.get("TERMRL_SANDBOX_MAX_CONCURRENT") or 0) or default_max_concurrent()
)
_lock = threading.Lock()
_executor: concurrent.futures.ThreadPoolExecutor | None = None
# event loop -> {engine url: its Semaphore in that loop}
_semaphores: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def set_max_concurrent(n: int) -> None:
    """Set the number of blocking Docker operations in flight (0 = default_max_concurrent()).
    Raises ValueError when n < 0."""
    global MAX_CONCURRENT
    if n < 0:
        raise ValueError(f"max_concurrent = {n}: must be >= 0 (0 = auto)")
    with _lock:
        MAX_CONCURRENT = n or default_max_concurrent()
        _semaphores.clear()
    drain_calls(wait=False)


def drain_calls(wait: bool = True) -> None:
    """End the threads of blocking Docker calls (new ones start with the next call). wait: for the
    calls in flight, whose containers a reap before their return misses (reaping.reap_run)."""
    global _executor
    with _lock:
        old = _executor
        _executor = None
    if old is not None:
        old.shutdown(wait=wait)


def docker_api(timeout: float = 60.0, host: str | None = None) -> docker.APIClient:
    """A process-wide docker-py low-level client with this socket timeout (seconds) for engine `host`
    (a sandbox.docker_hosts url; None = the first listed engine, by default the local one: hosts.py)."""
    return hosts.client(host or hosts.default_url(), timeout, MAX_CONCURRENT + 16)


async def blocking(fn, *args, limit: bool = True, host: str | None = None):
    """Run a blocking call in a worker thread, behind this loop's semaphore of engine `host` (None = the
    first listed) unless limit=False. Returns what fn returns; raises what it raises.

    Docker API work (start, file copies) is limited to MAX_CONCURRENT at once per engine. Commands and hidden-test
    runs are not: their thread mostly waits on the already open shell socket for as long as the command
    runs, and one agent's `sleep 60` must not hold up another agent's `ls`. close() is not limited either,
    so cleanup never waits behind busy sandboxes.
    """
    global _executor
    loop = asyncio.get_running_loop()
    url = host or hosts.default_url()
    with _lock:
        # threads start lazily; the cap only bounds a pathological pile-up
        if _executor is None:
            _executor = concurrent.futures.ThreadPoolExecutor(
                max(512, 2 * MAX_CONCURRENT), thread_name_prefix="sandbox"
            )
        sems = _semaphores.setdefault(loop, {})
        sem = sems.get(url)
        if sem is None:
            sem = asyncio.Semaphore(MAX_CONCURRENT)
            sems[url] = sem
        executor = _executor
    call = functools.partial(fn, *args)
    if not limit:
        return await loop.run_in_executor(executor, call)
    async with sem:
        return await loop.run_in_executor(executor, call)
