"""Disk limits where Docker cannot set one: a watchdog on each container's writable layer.

`docker run --storage-opt size=` works only on overlay2 over XFS with project quotas; on overlay2
over ext4 (this machine, Docker 20.10) the engine refuses it, so a container could fill the host's
disk. Two parts hold the limit instead (issue 26):

- RLIMIT_FSIZE = the limit (`--ulimit fsize`, in the container's host config, set by the caller):
  no one file grows past it, so one `fallocate -l 64G` dies at once (SIGXFSZ; EFBIG when ignored)
  instead of filling the disk. Raising a hard rlimit needs CAP_SYS_RESOURCE, which sandboxes drop.
- `DiskWatch`: a host thread measures the container's writable layer every `interval_s` and kills
  the container as soon as it holds more than the limit: a walk of the overlay2 UpperDir that
  `docker inspect` names (GraphDriver.Data) and of its volumes' host paths (`layer_bytes`). Where
  the engine's data root is not readable by this process (a non-root docker-group user) it asks
  the engine (`GET /containers/{id}/json?size=1`, SizeRw: apparent size, sparse files counted).

Cost (bench/bench_disk_watch.py, BENCHMARKS.md): a check of a fresh sandbox takes 0.05 ms of CPU,
of 2,000 files about 5 ms; the limit is seen within interval_s plus one walk; between two checks a
writer of many files can add what the disk writes in that time (the overshoot the bench prints).
Not taken: a loop-mounted XFS with project quotas as the engine's data root (exact, no thread),
which moves the whole engine, for every user of the machine, in `make setup`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time

import docker.errors

log = logging.getLogger("termrl.disk")

ENTRY_BYTES = (
    4096  # each file, directory or link is charged at least one ext4 block (bounds the walk)
)


def layer_bytes(roots: list[str], limit: int) -> int:
    """Bytes of disk the files under roots use: st_blocks * 512 per inode (hard links once, sparse
    holes free), each entry charged at least ENTRY_BYTES. The walk stops as soon as the sum passes
    limit, so it visits at most limit / ENTRY_BYTES entries whatever the agent created. A root that
    vanished counts 0.

    Raises:
        PermissionError: a root exists but is not readable (DiskWatch then asks the engine).
    """
    total = 0
    seen = set()
    stack = list(roots)
    while stack:
        top = stack.pop()
        try:
            it = os.scandir(top)
        except FileNotFoundError:
            # removed under us (the container is being removed): nothing left there
            continue
        with it:
            for e in it:
                try:
                    st = e.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                if st.st_nlink > 1 and not e.is_dir(follow_symlinks=False):
                    if st.st_ino in seen:
                        continue
                    seen.add(st.st_ino)
                total += max(st.st_blocks * 512, ENTRY_BYTES)
                if total > limit:
                    return total
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
    return total


class DiskWatch:
    """Kill container `cid` when its writable layer (plus `volumes`: host paths) holds more than
    limit bytes.

    Checks every interval_s from a daemon thread until `stop()`; after a kill, `exceeded` holds the
    bytes measured (None while within the limit; the walk stops past the limit, so it is a lower
    bound) and the thread ends. Docker errors while checking (the container being removed) end the
    watch quietly; a kill that fails is logged.
    """

    def __init__(
        self, api, cid: str, limit: int, interval_s: float = 1.0, volumes: tuple[str, ...] = ()
    ):
        self.api = api
        self.cid = cid
        self.limit = int(limit)
        self.interval_s = float(interval_s)
        self.exceeded: int | None = None
        # bytes at the latest check
        self.last = 0
        # for the bench: the number of checks, and the seconds spent in them
        self.checks = 0
        self.check_s = 0.0
        self._stop = threading.Event()
        data = api.inspect_container(cid)["GraphDriver"]["Data"] or {}
        roots = [data["UpperDir"]] + list(volumes) if data.get("UpperDir") else []
        self._roots = (
            roots if roots and all(os.access(r, os.R_OK | os.X_OK) for r in roots) else None
        )
        self._thread = threading.Thread(
            target=self._run, daemon=True, name=f"disk-watch-{cid[:12]}"
        )

    def start(self) -> DiskWatch:
        self._thread.start()
        return self

    def measure(self) -> int:
        """Bytes the container holds now (the walk, else the engine's SizeRw)."""
        if self._roots is not None:
            return layer_bytes(self._roots, self.limit)
        url = self.api._url("/containers/{0}/json", self.cid)
        return int(
            self.api._result(self.api._get(url, params={"size": 1}), True).get("SizeRw") or 0
        )

    def check(self) -> bool:
        """One check now; kills the container and returns True when it is over the limit."""
        t0 = time.perf_counter()
        size = self.last = self.measure()
        self.checks += 1
        self.check_s += time.perf_counter() - t0
        if size <= self.limit:
            return False
        self.exceeded = size
        log.warning(
            "container %s holds %.1f MiB or more on disk, over its limit of %.1f MiB: killed",
            self.cid[:12],
            size / 2**20,
            self.limit / 2**20,
        )
        try:
            self.api.kill(self.cid)
        except docker.errors.APIError as e:
            log.warning("killing container %s over its disk limit failed: %s", self.cid[:12], e)
        return True

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                if self.check():
                    return
            except (docker.errors.APIError, OSError) as e:  # the container is gone or going
                log.debug("disk watch of %s ended: %s", self.cid[:12], e)
                return

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            with contextlib.suppress(RuntimeError):
                self._thread.join(5.0)
