"""Disk limits where Docker cannot set one: a watchdog on each container's writable layer.

`docker run --storage-opt size=` works only on overlay2 over XFS with project quotas; on overlay2
over ext4 (this machine, Docker 20.10) the engine refuses it, so a container could fill the host's
disk. Two parts hold the limit instead:

- RLIMIT_FSIZE = the limit (`--ulimit fsize`, in the container's host config, set by the caller):
  no one file grows past it, so one `fallocate -l 64G` dies at once (SIGXFSZ; EFBIG when ignored)
  instead of filling the disk. Raising a hard rlimit needs CAP_SYS_RESOURCE, which sandboxes drop.
- `DiskWatch`: a host thread measures the container's writable layer every `interval_s` and kills
  the container as soon as it holds more than the limit: a walk of the overlay2 UpperDir that
  `docker inspect` names (GraphDriver.Data) and of its volumes' host paths (`layer_usage`). Where
  the engine's data root is not readable by this process (a non-root docker-group user) it asks
  the engine (`GET /containers/{id}/json?size=1`, SizeRw: apparent size, sparse files counted).

The limit is on what the snapshot will write, not on the blocks the layer holds: a
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
import errno
import logging
import os
import stat
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
    # why the walk could not finish (a folder it could not open or list): the layer is then over
    # its limit whatever bytes and files say (`over_limit`); None for a complete walk
    error: str | None = None


# a folder, opened to list it and to open its subfolders by name: never through a symlink
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# folders the walk holds open at once (each an ancestor with subfolders still to visit): a chain of
# nested folders holds 2 whatever its depth; an agent that needs more is treated as over its limit
MAX_OPEN_DIRS = 256
# an entry that vanished, or turned into a file or a link, between its listing and its opening: it
# was counted when listed, and what it holds now is counted wherever it lives now
_CHANGED = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP)


class _Walk:
    """The running count of one `layer_usage`: bytes, entries, the hard-linked inodes seen."""

    def __init__(self, limit: int, max_files: int):
        self.limit = limit
        self.max_files = max_files
        self.bytes = 0
        self.files = 0
        self.seen: set[tuple[int, int]] = set()

    def over(self) -> bool:
        return self.bytes > self.limit or self.files > self.max_files

    def tree(self, root_fd: int) -> bool:
        """Count every entry under the open folder root_fd (closed here); True when the count passed
        a limit (the walk stopped there).

        Folders are opened relative to their parent's descriptor (openat), never by path, so the
        depth of the tree and the length of its paths do not matter (900 nested folders make the
        host path pass PATH_MAX). Only ancestors with subfolders still to visit stay open.

        Raises:
            OSError: a folder could not be listed or opened (other than `_CHANGED`), or more than
                MAX_OPEN_DIRS folders would be held open (EMFILE).
        """
        # (folder, names of its subfolders still to visit)
        stack: list[tuple[int, list[str]]] = []
        fd: int | None = root_fd
        try:
            while fd is not None:
                subfolders = []
                with os.scandir(fd) as it:
                    for e in it:
                        try:
                            st = e.stat(follow_symlinks=False)
                        except FileNotFoundError:
                            continue
                        folder = stat.S_ISDIR(st.st_mode)
                        if st.st_nlink > 1 and not folder:
                            if (st.st_dev, st.st_ino) in self.seen:
                                continue
                            self.seen.add((st.st_dev, st.st_ino))
                        self.bytes += max(st.st_size, st.st_blocks * 512, ENTRY_BYTES)
                        self.files += 1
                        if self.over():
                            return True
                        if folder:
                            subfolders.append(e.name)
                stack.append((fd, subfolders))
                fd = None
                # the next folder: the last subfolder of the deepest level that has one left
                while fd is None and stack:
                    parent, pending = stack[-1]
                    if not pending:
                        stack.pop()
                        os.close(parent)
                        continue
                    try:
                        fd = os.open(pending.pop(), _DIR_FLAGS, dir_fd=parent)
                    except OSError as e:
                        if e.errno not in _CHANGED:
                            raise
                        continue
                    if not pending:
                        # the parent's last subfolder: nothing brings the walk back to it
                        stack.pop()
                        os.close(parent)
                    if len(stack) > MAX_OPEN_DIRS:
                        raise OSError(
                            errno.EMFILE,
                            f"more than {MAX_OPEN_DIRS} nested folders with subfolders beside them",
                        )
            return False
        finally:
            if fd is not None:
                os.close(fd)
            for parent, _ in stack:
                os.close(parent)


def layer_usage(roots: list[str], limit: int, max_files: int = MAX_FILES) -> Usage:
    """What the files under roots cost once written out (Usage): apparent sizes, not allocated
    blocks, since a sparse file is nearly free in the layer but `docker commit` writes its holes in
    full. The walk stops as soon as the bytes pass limit or the entries pass max_files, so it visits
    at most min(limit / ENTRY_BYTES, max_files) + 1 entries whatever the agent created; it opens
    folders by descriptor (`_Walk.tree`), so no depth or path length stops it.

    A root that is gone (the container removed: its layer with it) counts 0, checked explicitly
    after any error. Any other error, a folder that cannot be listed or a tree that would hold more
    than MAX_OPEN_DIRS folders open, ends the walk with Usage.error set: `over_limit` then calls the
    layer over its limit, since what cannot be measured cannot be bounded (a walk that failed on a
    deep folder with ENAMETOOLONG would otherwise turn the watchdog off).
    """
    walk = _Walk(limit, max_files)
    for root in roots:
        try:
            fd = os.open(root, _DIR_FLAGS)
        except FileNotFoundError:
            # removed under us (the container is being removed): nothing left there
            continue
        except OSError as e:
            return Usage(walk.bytes, walk.files, error=f"{root}: {e.strerror or e}")
        try:
            if walk.tree(fd):
                break
        except OSError as e:
            if not os.path.lexists(root):
                # the layer itself went away during the walk: the container is gone, not hiding
                continue
            return Usage(walk.bytes, walk.files, error=e.strerror or str(e))
    return Usage(walk.bytes, walk.files)


def over_limit(usage: Usage, limit: int, max_files: int) -> str | None:
    """Why `usage` is over the limits (for messages: "wrote ... over its limit of ..."), None within.
    A walk that could not finish (usage.error) is over the bytes' limit: it cannot be bounded."""
    if usage.error is not None:
        return (
            f"has a writable layer the disk watchdog cannot measure ({usage.error}), counted as "
            f"over its limit of {limit / 2**20:.0f} MiB (sandbox.storage_mb)"
        )
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
    bound) and `reason` says which limit (`over_limit`), and the thread ends. A layer the walk cannot
    measure is over the limit (`layer_usage`); an engine error while checking ends the watch only
    when the container no longer runs (`_gone`); a kill that fails is logged.
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
            except (docker.errors.APIError, OSError) as e:
                # only the engine raises here (the walk reports its errors in Usage.error): the
                # watch ends only when the container is gone, checked explicitly
                if self._gone():
                    log.debug("disk watch of %s ended: %s", self.cid[:12], e)
                    return
                log.warning("disk check of %s failed (retried): %s", self.cid[:12], e)

    def _gone(self) -> bool:
        """Whether the container no longer runs (removed, or stopped): nothing can grow its layer.
        An engine that cannot answer counts as gone (nothing can be checked then)."""
        try:
            return not self.api.inspect_container(self.cid)["State"]["Running"]
        except (docker.errors.APIError, OSError):
            return True

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            with contextlib.suppress(RuntimeError):
                self._thread.join(5.0)
