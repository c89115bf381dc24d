"""Disk limits where Docker cannot set one: a watchdog on each container's writable layer.

`docker run --storage-opt size=` works only on overlay2 over XFS with project quotas; on overlay2
over ext4 (this machine, Docker 20.10) the engine refuses it, so a container could fill the host's
disk. Two parts hold the limit instead (issue 26):

- RLIMIT_FSIZE = the limit (`--ulimit fsize`, in the container's host config, set by the caller):
  no one file grows past it, so one `fallocate -l 64G` dies at once (SIGXFSZ; EFBIG when ignored)
  instead of filling the disk. Raising a hard rlimit needs CAP_SYS_RESOURCE, which sandboxes drop.
- `DiskWatch`: a host thread measures the container's writable layer every `interval_s` and kills
  the container as soon as it holds more than the limit: a walk of the overlay2 UpperDir that
  `docker inspect` names (GraphDriver.Data) and of its volumes' host paths (`layer_usage`). Where
  the engine's data root is not readable by this process (a non-root docker-group user) it asks
  the engine (`GET /containers/{id}/json?size=1`, SizeRw: apparent size, sparse files counted).

The limit is on what the snapshot will write, not on the blocks the layer holds (issue 41): a
256 MiB sparse file costs the layer nothing but `docker commit` writes its 256 MiB in full, and a
million empty files cost a million inodes and tar headers. So the walk counts apparent sizes and
entries (`max_files`, sandbox.max_files), and the verifier measures the frozen container once more
just before it commits it (`check_layer`, from verifier_box's snapshot): a sandbox within its caps
cannot make the snapshot, or the host, hold more than storage_bytes for it.

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
from dataclasses import dataclass

import docker.errors

log = logging.getLogger("termrl.disk")

# each file, directory or link is charged at least one ext4 block (bounds the walk)
ENTRY_BYTES = 4096
# files, folders and links a container's writable layer may hold (sandbox.max_files' default)
MAX_FILES = 100_000


@dataclass(frozen=True)
class Usage:
    """What a writable layer would cost the host once committed (a lower bound when the walk stopped
    past a limit)."""

    # bytes the snapshot commit writes: each entry's apparent size (or its allocated blocks when
    # larger: fallocate --keep-size), at least ENTRY_BYTES; hard links once
    bytes: int
    # entries: files, folders, links, whiteouts; 0 when the engine's SizeRw measured the bytes
    files: int


def layer_usage(roots: list[str], limit: int, max_files: int = MAX_FILES) -> Usage:
    """What the files under roots cost once written out (Usage): apparent sizes, not allocated
    blocks, since a sparse file is nearly free in the layer but `docker commit` writes its holes in
    full. The walk stops as soon as the bytes pass limit or the entries pass max_files, so it visits
    at most min(limit / ENTRY_BYTES, max_files) + 1 entries whatever the agent created. A root that
    vanished counts 0.

    Raises:
        PermissionError: a root exists but is not readable (DiskWatch then asks the engine).
    """
    total = 0
    files = 0
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
                total += max(st.st_size, st.st_blocks * 512, ENTRY_BYTES)
                files += 1
                if total > limit or files > max_files:
                    return Usage(total, files)
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
    return Usage(total, files)


def over_limit(usage: Usage, limit: int, max_files: int) -> str | None:
    """Why `usage` is over the limits (for messages: "wrote ... over its limit of ..."), None within."""
    if usage.bytes > limit:
        return (
            f"wrote {usage.bytes / 2**20:.1f} MiB or more to disk, over its limit of "
            f"{limit / 2**20:.0f} MiB (sandbox.storage_mb)"
        )
    if usage.files > max_files:
        return (
            f"holds {usage.files} files or more, over its limit of {max_files} files "
            f"(sandbox.max_files)"
        )
    return None


class OverLimit(Exception):
    """A frozen container's layer is over its limits: no snapshot of it is taken (`check_layer`)."""

    def __init__(self, reason: str, usage: Usage):
        super().__init__(reason)
        self.reason = reason
        self.usage = usage


def check_layer(api, cid: str, limit: int, max_files: int = MAX_FILES) -> Usage:
    """Measure container `cid` (frozen by the caller: nothing grows meanwhile) before its snapshot;
    its Usage when within limit bytes and max_files entries.

    Raises:
        OverLimit: over either limit (the caller kills the container; nothing is committed).
        docker.errors.APIError: the engine failed.
    """
    usage = DiskWatch(api, cid, limit, max_files=max_files).measure()
    reason = over_limit(usage, limit, max_files)
    if reason is not None:
        raise OverLimit(reason, usage)
    return usage


class DiskWatch:
    """Kill container `cid` when its writable layer (plus `volumes`: host paths) would write more than
    limit bytes, or holds more than max_files entries, once committed (`layer_usage`).

    Checks every interval_s from a daemon thread until `stop()`; after a kill, `exceeded` holds the
    bytes measured (None while within the limits; the walk stops past a limit, so it is a lower
    bound) and `reason` says which limit (`over_limit`), and the thread ends. Docker errors while
    checking (the container being removed) end the watch quietly; a kill that fails is logged.
    Where the engine's data root is not readable the bytes come from the engine's SizeRw (apparent
    size too) and the entries are not counted.
    """

    def __init__(
        self,
        api,
        cid: str,
        limit: int,
        interval_s: float = 1.0,
        volumes: tuple[str, ...] = (),
        max_files: int = MAX_FILES,
    ):
        self.api = api
        self.cid = cid
        self.limit = int(limit)
        self.max_files = int(max_files)
        self.interval_s = float(interval_s)
        self.exceeded: int | None = None
        # which limit the kill was for, as over_limit says it
        self.reason: str | None = None
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

    def measure(self) -> Usage:
        """What the container holds now (the walk, else the engine's SizeRw with files 0)."""
        if self._roots is not None:
            return layer_usage(self._roots, self.limit, self.max_files)
        url = self.api._url("/containers/{0}/json", self.cid)
        size_rw = self.api._result(self.api._get(url, params={"size": 1}), True).get("SizeRw")
        return Usage(int(size_rw or 0), 0)

    def check(self) -> bool:
        """One check now; kills the container and returns True when it is over a limit."""
        t0 = time.perf_counter()
        usage = self.measure()
        self.last = usage.bytes
        self.checks += 1
        self.check_s += time.perf_counter() - t0
        reason = over_limit(usage, self.limit, self.max_files)
        if reason is None:
            return False
        self.kill(usage, reason)
        return True

    def kill(self, usage: Usage, reason: str) -> None:
        """Record `usage` as over the limit for `reason` and kill the container (a failed kill is
        logged)."""
        self.exceeded = usage.bytes
        self.reason = reason
        log.warning("container %s %s: killed", self.cid[:12], reason)
        try:
            self.api.kill(self.cid)
        except docker.errors.APIError as e:
            log.warning("killing container %s over its disk limit failed: %s", self.cid[:12], e)

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
