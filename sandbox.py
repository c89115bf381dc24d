"""Docker sandboxes for terminal agents: containers, commands, files, hidden tests, reaping (images: images.py).

One `Sandbox` is one container that one agent works in. The container is built to never hang, leak
or let the agent out:

- Isolation: no network (`network_mode="none"`), memory limit with swap equal to it (no swap), CPU quota,
  pids limit, `cap_drop=ALL` plus the few capabilities a root shell needs for file work, `no-new-privileges`,
  `init=True` (docker-init reaps the zombies left by background jobs).
- Dead man: the container's main process is a small bash shell server under `timeout -s KILL <max_lifetime_s>`,
  reading commands from the container's stdin, which is attached to a socket held by the owning process.
  When the owner dies (even by SIGKILL) the kernel closes the socket, the server reads EOF and exits, and
  the container stops by itself; `reap()` removes it.
- Commands: one long-lived bash per sandbox (the worker, a child of the shell server) runs every command in
  itself, so what a terminal keeps persists between calls: variables (exported or not), functions, aliases,
  shell options, cwd, the directory stack, sourced scripts, jobs. Commands have no stdin (/dev/null); a
  background job never holds the call. On timeout the server stops and kills the worker and every process
  started since the command began (jobs of earlier commands live on); a worker that died (timeout, `exit 3`)
  is replaced and its state restored from a snapshot taken after each command (sandbox_shell.py). No
  `docker exec` per command: one message on the socket, output back on it, streamed keeping only a head
  and a rolling tail (bounded memory), stdout and stderr interleaved in one pipe, decoded as UTF-8 with
  replacement, ANSI escapes stripped.
- Hidden tests: `run_tests` verifies in a fresh container from a snapshot of this one, frozen, with a toolchain
  from the untouched task image and a report the agent cannot reach (verifier.py says how).

Blocking docker-py calls run in worker threads behind a semaphore (`max_concurrent`); the async API
(`Sandbox.start`, `exec`, ...) is what rollout.py and reward.py use.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import functools
import io
import logging
import os
import re
import secrets
import socket
import tarfile
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import docker
import docker.errors
import docker.types

from sandboxing import harbor_verifier, hosts, toolchain, verifier
from sandboxing.disk import DiskWatch
from sandboxing.hosts import host_resources  # noqa: F401 - callers use sandbox.host_resources
from sandboxing.reaping import reap
from sandboxing.shell import SERVER_SCRIPT as _SERVER
from sandboxing.shell import WORKER_SCRIPT as _INNER
from sandboxing.shell import Capture as _Capture  # noqa: F401 - clean_output: public API
from sandboxing.shell import Shell as _Shell
from sandboxing.shell import split_markers as _markers
from sandboxing.verifier import TestReport, parse_junit  # noqa: F401 - re-exported

log = logging.getLogger("termrl.sandbox")

WORKDIR = "/app"  # working directory of a fresh sandbox whose image sets no WORKDIR
# One id per process unless the caller names its run; labels every container this process starts.
RUN_ID = (
    os.environ.get("TERMRL_RUN_ID")
    or f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"
)
# A group of runs started together (the test suite and its child processes set TERMRL_SESSION): its sweep
# removes what the group started and nothing of another run on the same engine.
SESSION = os.environ.get("TERMRL_SESSION") or RUN_ID
# What a root shell needs for ordinary file and process work; everything else (NET_RAW, MKNOD, SYS_CHROOT,
# AUDIT_WRITE, SETFCAP, ...) stays dropped.
DEFAULT_CAPS = tuple("CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID NET_BIND_SERVICE".split())


class SandboxError(RuntimeError):
    """The sandbox itself failed (image missing, container gone, Docker error), not the agent's command."""


class DiskLimitError(SandboxError):
    """The sandbox wrote more than its disk limit (Limits.storage_bytes) and was killed."""


@dataclass
class ExecResult:
    """One command's outcome. exit_code is None when the command timed out or its shell was killed."""

    exit_code: int | None
    output: str  # stdout and stderr interleaved, UTF-8 (errors replaced), ANSI stripped, head + tail capped
    timed_out: bool
    truncated: bool  # True when bytes were cut from the middle (the output says how many)
    duration_s: float  # wall clock seconds, host side


@dataclass
class Limits:
    """Per-sandbox resource limits and defaults."""

    memory_bytes: int = 1 << 30  # memory limit; swap limit set equal (no swap)
    cpus: float = 1.0  # CPU quota, cores
    pids: int = 256  # max processes in the container (fork bombs stop here)
    output_bytes: int = 16384  # bytes of output kept per exec (head + tail)
    exec_timeout_s: float = 60.0  # default timeout of `exec`, seconds
    max_lifetime_s: float = 24 * 3600.0  # the container stops by itself after this long, seconds
    cap_add: tuple[str, ...] = DEFAULT_CAPS  # capabilities kept after cap_drop=ALL
    storage_bytes: int = 2048 << 20  # disk its writable layer may hold (no file larger), bytes
    storage_check_s: float = 1.0  # seconds between two checks of the layer's size
    verify_wall_s: float = 0.0  # the verifier's wall clock, seconds (0 = 3 x the per-test timeout)
    # Values are trusted: configs.validate checks the SandboxConfig they come from (from_config) at start-up.

    @classmethod
    def from_config(cls, cfg) -> Limits:
        """Limits from a configs.SandboxConfig (memory_mb, cpus, pids, output_limit_bytes, exec_timeout_s,
        storage_mb, verify_wall_s)."""
        return cls(
            memory_bytes=int(cfg.memory_mb) << 20,
            cpus=float(cfg.cpus),
            pids=int(cfg.pids),
            output_bytes=int(cfg.output_limit_bytes),
            exec_timeout_s=float(cfg.exec_timeout_s),
            storage_bytes=int(cfg.storage_mb) << 20,
            verify_wall_s=float(cfg.verify_wall_s),
        )

    def ulimits(self) -> list:
        """RLIMIT_FSIZE = storage_bytes (no file grows past the disk limit; disk.py), soft = hard."""
        return [docker.types.Ulimit(name="fsize", soft=self.storage_bytes, hard=self.storage_bytes)]

    def for_task(self, task) -> Limits:
        """These limits with a task's own request (Harbor [environment] memory_mb, cpus; Task fields, None =
        keep) applied; cpus capped at this machine's cores (the engine refuses more). storage_mb is not
        enforced: `--storage-opt size=` needs overlay on XFS with project quotas."""
        memory_mb, cpus = getattr(task, "memory_mb", None), getattr(task, "cpus", None)
        return dataclasses.replace(
            self,
            memory_bytes=int(memory_mb) << 20 if memory_mb else self.memory_bytes,
            cpus=min(float(cpus), float(os.cpu_count() or 1)) if cpus else self.cpus,
        )


# The image's ENTRYPOINT ("$@" here) starts the task's services; one ending in `exec "$@"` then sleeps.
_WITH_ENTRYPOINT = (
    'if [ $# -gt 0 ]; then ("$@" sleep infinity </dev/null >/dev/null 2>&1 &); fi; set --; '
    'eval "$TERMRL_SERVER"'
)
SOLUTION_DIR = "/solution"  # Harbor's: solve.sh refers to its side files as /solution/<file>


async def put_solution(sb: Sandbox, task, path: str) -> str:
    """Copy a task's oracle into the sandbox; returns the bash command that runs it (from the WORKDIR).
    A Harbor solution/ folder goes to /solution whole (solve.sh and its side files); a single script to
    `path`. Raises ValueError when the task has no oracle."""
    folder = getattr(task, "solution_dir", None)
    if folder is not None:
        for f in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
            await sb.write_file(
                f"{SOLUTION_DIR}/{f.relative_to(folder).as_posix()}", f.read_bytes(), 0o755
            )
        return f"bash {SOLUTION_DIR}/{Path(task.solution).relative_to(folder).as_posix()}"
    if task.solution is None:
        raise ValueError(
            f"task {task.id}: no oracle solution (solution.sh, solution.yaml or solution/solve.sh)"
        )
    await sb.write_file(path, Path(task.solution).read_bytes())
    return f"bash {path}"


# ---------------------------------------------------------------------------------------------------------
# Docker clients, worker threads and the concurrency limit


def default_max_concurrent() -> int:
    """Docker operations in flight at once: 8 per CPU core, at most one per 0.5 GiB of RAM, at least 4."""
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return max(4, min(8 * (os.cpu_count() or 1), int(mem_gib / 0.5)))


MAX_CONCURRENT = (
    int(os.environ.get("TERMRL_SANDBOX_MAX_CONCURRENT") or 0) or default_max_concurrent()
)
_lock = threading.Lock()
_executor: concurrent.futures.ThreadPoolExecutor | None = None
_semaphores: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # loop -> {engine: Semaphore}


def set_max_concurrent(n: int) -> None:
    """Set the number of blocking Docker operations in flight (0 = default_max_concurrent())."""
    global MAX_CONCURRENT
    if n < 0:
        raise ValueError(f"max_concurrent = {n}: must be >= 0 (0 = auto)")
    with _lock:
        MAX_CONCURRENT = n or default_max_concurrent()
        _semaphores.clear()
    drain_calls(wait=False)


def drain_calls(wait: bool = True) -> None:
    """End the threads of blocking Docker calls (new ones start with the next call). wait: for the
    calls in flight, whose containers a reap before their return misses (reap_run)."""
    global _executor
    with _lock:
        old, _executor = _executor, None
    if old is not None:
        old.shutdown(wait=wait)


def reap_run(run_id: str) -> None:
    """Remove every container, volume and snapshot of run `run_id`, also those that Docker calls
    still in flight create (train.py's and evaluate.py's teardown): reap, drain_calls, reap."""
    reap(run_id=run_id)
    drain_calls()
    reap(run_id=run_id)


def docker_api(timeout: float = 60.0, host: str | None = None) -> docker.APIClient:
    """A process-wide docker-py low-level client with this socket timeout (seconds) for engine `host`
    (a sandbox.docker_hosts url; None = the first listed engine, by default the local one: hosts.py)."""
    return hosts.client(host or hosts.default_url(), timeout, MAX_CONCURRENT + 16)


async def _blocking(fn, *args, limit: bool = True, host: str | None = None):
    """Run a blocking call in a worker thread, behind this loop's semaphore of engine `host` (None = the
    first listed) unless limit=False.

    Docker API work (start, file copies) is limited to MAX_CONCURRENT at once per engine. Commands and hidden-test
    runs are not: their thread mostly waits on the already open shell socket for as long as the command
    runs, and one agent's `sleep 60` must not hold up another agent's `ls`. close() is not limited either,
    so cleanup never waits behind busy sandboxes.
    """
    global _executor
    loop = asyncio.get_running_loop()
    with _lock:
        if _executor is None:  # threads start lazily; the cap only bounds a pathological pile-up
            _executor = concurrent.futures.ThreadPoolExecutor(
                max(512, 2 * MAX_CONCURRENT), thread_name_prefix="sandbox"
            )
        sems = _semaphores.setdefault(loop, {})  # engine url -> its semaphore in this loop
        sem = sems.get(host or hosts.default_url())
        if sem is None:
            sem = sems[host or hosts.default_url()] = asyncio.Semaphore(MAX_CONCURRENT)
        executor = _executor
    call = functools.partial(fn, *args)
    if not limit:
        return await loop.run_in_executor(executor, call)
    async with sem:
        return await loop.run_in_executor(executor, call)


# ---------------------------------------------------------------------------------------------------------
# Sandbox


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _labels(run_id: str) -> dict[str, str]:
    """What reap() filters by: termrl=1, the run, the session, the start time, the owner process."""
    return {
        "termrl": "1",
        "termrl.run_id": run_id,
        "termrl.session": SESSION,
        "termrl.started": f"{time.time():.3f}",
        "termrl.owner": _owner(),
    }


class Sandbox:
    """One isolated container for one agent. Create with `await Sandbox.start(image)`; use as `async with`.

    Methods are coroutines; the blocking Docker work runs in worker threads. Commands of one sandbox run
    one at a time (a second `exec` waits for the first). Cancelling an awaiting `exec` does not stop the
    command: its timeout does (the worker thread returns a few seconds after `timeout` at the latest).
    """

    def __init__(
        self,
        container_id: str,
        name: str,
        limits: Limits,
        run_id: str,
        shell: _Shell,
        host: str | None = None,
    ):
        self.id, self.name, self.limits, self.run_id = container_id, name, limits, run_id
        self.host = (
            host or hosts.default_url()
        )  # the Docker engine holding the container (hosts.py)
        self._shell: _Shell | None = (
            shell  # also the dead man: closing its socket stops the container
        )
        self._exec_lock = threading.Lock()
        self._closed = False
        self.workdir = WORKDIR  # the image's WORKDIR (set by start)
        self.network_mode = "none"  # or "container:<id>": a compose pod's namespace (set by start)
        self._disk: DiskWatch | None = None  # the disk limit's watchdog (set by start)
        self._cleanup: list = []  # removals of verifier containers, after their verdicts (close waits)

    # ---- lifecycle ------------------------------------------------------------------------------------

    @classmethod
    async def start(
        cls,
        image: str,
        limits: Limits | None = None,
        run_id: str | None = None,
        host: str | None = None,
        network_mode: str = "none",
    ) -> Sandbox:
        """Create and start a container from `image` with the isolation defaults; working dir the image's
        WORKDIR (/app when it sets none). The image's ENTRYPOINT, if any, runs first in the background with
        the arguments `sleep infinity` (harbor's and Terminal-Bench's command), so the services it starts
        are up beside the shell server, which is the container's own command.
        host: the Docker engine (a sandbox.docker_hosts url; None = the first listed), where `image` must be.
        network_mode: "none", or "container:<id>" to join the network namespace of a container that has
            no network but `lo` (sandboxing/compose.py's pod; its hostname and /etc/hosts are then used).

        Raises:
            SandboxError: the image does not exist or Docker refused to create/start the container.
        """
        limits, run_id = limits or Limits(), run_id or RUN_ID
        return await _blocking(
            cls._start_blocking, image, limits, run_id, host, network_mode, host=host
        )

    @classmethod
    def _start_blocking(
        cls, image: str, limits: Limits, run_id: str, host: str | None, network_mode: str
    ) -> Sandbox:
        api = docker_api(host=host)
        try:
            config = api.inspect_image(image)["Config"] or {}
            workdir = config.get("WorkingDir") or WORKDIR
        except docker.errors.ImageNotFound:
            raise SandboxError(
                f"image {image!r} not found: build it first (build_image(task))"
            ) from None
        name = (
            "termrl-"
            + re.sub(r"[^a-zA-Z0-9_.-]", "-", run_id)[-40:].lstrip("-_.")
            + "-"
            + secrets.token_hex(4)
        )
        labels = {**_labels(run_id), "termrl.image": image}
        # output must not pile up in logs
        host_config = toolchain.host_config(api, limits, logs=False, network_mode=network_mode)
        try:
            cid = api.create_container(
                image,
                command=[
                    "timeout",
                    "-s",
                    "KILL",
                    f"{limits.max_lifetime_s:.0f}",
                    "bash",
                    "-c",
                    _WITH_ENTRYPOINT,
                    "termrl-shell",
                    *(config.get("Entrypoint") or []),
                ],
                stdin_open=True,
                environment={"TERMRL_SERVER": _SERVER, "TERMRL_INNER": _INNER},
                working_dir=workdir,
                entrypoint=[],
                labels=labels,
                host_config=host_config,
                name=name,
                # a joined namespace brings its own hostname (Docker refuses to set one)
                hostname="sandbox" if network_mode == "none" else None,
            )["Id"]
        except docker.errors.ImageNotFound:
            raise SandboxError(
                f"image {image!r} not found: build it first (build_image(task))"
            ) from None
        except docker.errors.APIError as e:
            raise SandboxError(
                f"creating a container from {image!r} failed: {e.explanation or e}"
            ) from e
        try:
            # Attach before start: no output is missed, and the owner may die the instant the container runs.
            shell = _Shell(api, cid)
            api.start(cid)
        except Exception as e:
            with contextlib.suppress(Exception):
                api.remove_container(cid, force=True)
            raise SandboxError(f"starting a container from {image!r} failed: {e}") from e
        box = cls(cid, name, limits, run_id, shell, host)
        box.workdir, box.network_mode = workdir, network_mode
        box._disk = DiskWatch(api, cid, limits.storage_bytes, limits.storage_check_s).start()
        return box

    async def __aenter__(self) -> Sandbox:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    @property
    def closed(self) -> bool:
        return self._closed

    async def close(self, timeout: float = 30.0) -> None:
        """Remove the container. Idempotent; returns within about `timeout` seconds even if Docker hangs.

        Order: close the shell socket (the dead man: the container then stops by itself), `remove(force)`
        (kill + remove) with a 10 s socket timeout; on failure `kill` then `remove` again. A container that
        is already gone counts as removed. Errors are logged, never raised (close runs in cleanup paths).
        """
        if self._closed:
            return
        self._closed = True
        try:
            await asyncio.wait_for(_blocking(self._close_blocking, limit=False), timeout)
        except Exception as e:  # noqa: BLE001 - cleanup must not raise; the reaper is the backstop
            log.warning("closing sandbox %s failed: %s (reap() will remove it)", self.name, e)

    def _close_blocking(self) -> None:
        if self._disk is not None:
            self._disk.stop()
        if self._shell is not None:
            self._shell.close()
        try:
            self._remove_blocking()
        finally:  # the verifiers' removals run beside this one; close allows them 25 s
            concurrent.futures.wait(self._cleanup, 25.0)

    def _remove_blocking(self) -> None:
        api = docker_api(10.0, self.host)
        for step in ("remove", "kill", "remove"):
            try:
                if step == "kill":
                    api.kill(self.id)
                else:
                    api.remove_container(self.id, force=True)
                    return
            except docker.errors.NotFound:
                return
            except docker.errors.APIError as e:
                if e.status_code == 409 and "already in progress" in str(e):
                    return
                log.warning("sandbox %s: %s failed: %s", self.name, step, e)
            except Exception as e:  # noqa: BLE001 - timeouts: try the next step
                log.warning("sandbox %s: %s failed: %s", self.name, step, e)
        raise SandboxError(f"sandbox {self.name}: could not remove container {self.id[:12]}")

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxError(f"sandbox {self.name} is closed")
        self._check_disk()

    @property
    def disk_exceeded(self) -> int | None:
        """Bytes (at least) the sandbox held when its disk watchdog killed it; None while within
        storage_bytes."""
        return self._disk.exceeded if self._disk is not None else None

    def _check_disk(self) -> None:
        if self.disk_exceeded is not None:
            raise DiskLimitError(
                f"sandbox {self.name}: wrote {self.disk_exceeded / 2**20:.1f} MiB or more to disk, over "
                f"its limit of {self.limits.storage_bytes / 2**20:.0f} MiB (sandbox.storage_mb): killed"
            )

    # ---- commands -------------------------------------------------------------------------------------

    async def exec(self, cmd: str, timeout: float | None = None) -> ExecResult:
        """Run a bash command line in the sandbox's one persistent shell, as typed into a terminal.

        State persists between calls (variables, functions, aliases, options, cwd, dirstack, jobs). On
        expiry of `timeout` the shell and every process started since the command began are stopped
        (SIGSTOP) and killed (SIGKILL), so nothing of it remains, also a builtin loop of the shell itself
        that ignores signals; the shell is replaced and its state from before the command restored. `exit N`
        reports N and restores the shell the same way. stdin is /dev/null. Output: see ExecResult (at most
        limits.output_bytes bytes kept, head and tail, with a marker saying how many bytes were cut).

        Args:
            cmd: bash source, e.g. "cd /tmp && ls"; at most 96 KiB.
            timeout: seconds (> 0); default limits.exec_timeout_s.
        Raises:
            ValueError: cmd is not a str, too long or contains NUL; timeout <= 0.
            SandboxError: the sandbox is closed or its container is not running.
            DiskLimitError: its writable layer went over limits.storage_bytes; the container was killed.
        """
        timeout = self.limits.exec_timeout_s if timeout is None else float(timeout)
        if not isinstance(cmd, str):
            raise ValueError(f"exec: cmd must be str, got {type(cmd).__name__}")
        if "\x00" in cmd:
            raise ValueError("exec: cmd contains a NUL byte")
        if len(cmd.encode()) > 96 * 1024:
            raise ValueError(
                f"exec: cmd is {len(cmd.encode())} bytes; the limit is 96 KiB (write a file instead)"
            )
        if not timeout > 0:
            raise ValueError(f"exec: timeout = {timeout!r}: must be > 0 seconds")
        self._check_open()
        res = await _blocking(self._exec_blocking, cmd, timeout, True, limit=False)
        self._check_disk()  # killed while this command ran: its output ends with the shell's death
        return res

    def _exec_blocking(
        self, cmd: str, timeout: float, stateful: bool, output_bytes: int | None = None
    ) -> ExecResult:
        with self._exec_lock:
            self._check_open()
            t0 = time.monotonic()
            api = docker_api(host=self.host)
            for _ in range(2):
                if self._shell is None or not self._shell.alive:
                    self._check_disk()  # a container killed for its disk is never restarted
                    self._shell = self._open_shell(api)
                res = self._run_in_shell(api, self._shell, cmd, timeout, stateful, output_bytes, t0)
                if res is not None:
                    return res
                # The command never started: the shell died first (a shell opened while the container was
                # stopping after `kill -9 -1` dies at once): let the container settle, restart it, retry once.
                self._shell.close()
                self._shell = None
                self._settle(api)
            raise SandboxError(
                f"sandbox {self.name}: the shell keeps dying before the command starts"
            )

    def _run_in_shell(
        self,
        api,
        shell: _Shell,
        cmd: str,
        timeout: float,
        stateful: bool,
        output_bytes: int | None,
        t0: float,
    ) -> ExecResult | None:
        """Send one command and stream its output. None when the shell was gone before the command started."""
        nonce = secrets.token_hex(8)
        try:
            shell.sock.sendall(
                f"{nonce} {timeout:.3f} {int(stateful)}\n".encode() + cmd.encode() + b"\0"
            )
        except OSError:
            return None
        cap = _Capture(output_bytes or self.limits.output_bytes)
        cap.feed(shell.leftover)
        shell.leftover = b""
        group, end, swept = None, None, False
        deadline = (
            t0 + timeout + 5.0
        )  # the server itself stops the command at `timeout`, within about a second
        while end is None:
            if time.monotonic() > deadline:
                if swept or group is None:
                    break
                with contextlib.suppress(
                    Exception
                ):  # the server is stuck: kill the command's shell from outside
                    self._sweep(api, group)
                swept, deadline = True, time.monotonic() + 2.0
            frames = shell.frames(deadline)
            if frames is None:
                break
            for stream, payload in frames:
                if (
                    end is not None
                ):  # after this command's end: output of background jobs, for the next one
                    shell.leftover += payload
                elif (
                    stream != 1
                ):  # the server's own stderr (rare): keep it, never scan it for markers
                    cap.feed(payload)
                else:
                    for fields in _markers(shell, nonce.encode(), payload, cap.feed):
                        if fields[0] == b"S":
                            group = int(fields[1])
                        elif fields[0] == b"E":
                            end = (int(fields[1]), fields[2] == b"1")
        if group is None and end is None and not shell.alive:
            return None
        output, truncated = cap.result()
        duration = time.monotonic() - t0
        if end is not None:
            rc, timed_out = end
            if group is None:  # the command's shell never started
                output += (
                    f"\n[termrl: the shell could not start the command (status {rc}); "
                    "timeout or bash may be missing from the sandbox]"
                )
            return ExecResult(None if timed_out else rc, output, timed_out, truncated, duration)
        # No end marker: the shell died (kill -9 -1, OOM) or hung past every deadline.
        hung = shell.alive
        shell.close()
        self._shell = None
        if hung:
            with contextlib.suppress(Exception):
                self._sweep(api, group, pattern="[t]ermrl-shell")  # the server: container stops
            output += "\n[termrl: the command did not stop after its timeout; its shell was killed]"
        else:
            output += "\n[termrl: the shell running this command was killed; the next command starts a new one]"
        if not self._settle(api):
            output += (
                "\n[termrl: the sandbox container stopped because every process in it was killed; "
                "the next command restarts it: files are kept, processes are not]"
            )
        return ExecResult(None, output, hung, truncated, duration)

    def _settle(self, api, within_s: float = 2.0) -> bool:
        """Wait until a container whose processes were all killed has stopped; return whether it still runs."""
        stop_by = time.monotonic() + within_s
        while self._running(api) and time.monotonic() < stop_by:
            time.sleep(0.1)
        return self._running(api)

    def _open_shell(self, api) -> _Shell:
        """Restart the stopped container (its main process, the shell server, was killed, e.g. by
        `kill -9 -1`) with a new attach socket: files are kept, processes are not. A container whose server
        is stuck (e.g. a background fork bomb holds every pid) is killed first."""
        if self._settle(api):
            with contextlib.suppress(docker.errors.APIError):
                api.kill(self.id)
            if self._settle(api, 10.0):
                raise SandboxError(
                    f"sandbox {self.name}: its shell is gone and the container does not stop"
                )
        try:
            shell = _Shell(api, self.id)
            api.start(self.id)
        except docker.errors.NotFound:
            raise SandboxError(
                f"sandbox {self.name}: container {self.id[:12]} no longer exists (reaped?)"
            ) from None
        except docker.errors.APIError as e:
            raise SandboxError(
                f"sandbox {self.name}: restarting its stopped container failed: {e.explanation or e}"
            ) from e
        log.warning(
            "sandbox %s: its container had stopped; restarted it (files kept, processes lost)",
            self.name,
        )
        return shell

    def _running(self, api) -> bool:
        try:
            return bool(api.inspect_container(self.id)["State"]["Running"])
        except docker.errors.NotFound:
            return False

    def _sweep(self, api, pid: int | None, pattern: str | None = None) -> None:
        """Kill a process (and processes whose command line matches pattern) from a fresh exec."""
        cmd = []
        if pid:
            cmd.append(f"kill -KILL {int(pid)}")
        if pattern:
            cmd.append(f"pkill -KILL -f '{pattern}'")
        if cmd:
            eid = api.exec_create(self.id, ["sh", "-c", "; ".join(cmd) + "; true"], user="root")[
                "Id"
            ]
            api.exec_start(eid)

    # ---- files ----------------------------------------------------------------------------------------

    def _abs(self, path: str | os.PathLike) -> PurePosixPath:
        p = PurePosixPath(os.fspath(path))
        if "\x00" in str(p) or not str(p):
            raise ValueError(f"path {str(path)!r}: must be a non-empty path without NUL")
        return p if p.is_absolute() else PurePosixPath(self.workdir) / p

    async def write_file(
        self, path: str | os.PathLike, data: bytes | str, mode: int = 0o644
    ) -> None:
        """Write a file (str is encoded as UTF-8); missing parent directories are created. Relative paths are
        under /app. Raises ValueError on a bad path or data type, SandboxError when Docker refuses the write."""
        if isinstance(data, str):
            data = data.encode()
        if not isinstance(data, (bytes, bytearray)):
            raise ValueError(f"write_file: data must be bytes or str, got {type(data).__name__}")
        p = self._abs(path)
        if p == PurePosixPath("/"):
            raise ValueError("write_file: path '/' is a directory")
        self._check_open()
        await _blocking(self._write_blocking, p, bytes(data), mode, host=self.host)

    def _write_blocking(self, p: PurePosixPath, data: bytes, mode: int) -> None:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
            info = tarfile.TarInfo(
                str(p).lstrip("/")
            )  # extracted at "/": Docker creates missing parents
            info.size, info.mode, info.mtime = len(data), mode, int(time.time())
            tar.addfile(info, io.BytesIO(data))
        try:
            docker_api(host=self.host).put_archive(self.id, "/", buf.getvalue())
        except docker.errors.APIError as e:
            raise SandboxError(
                f"write_file {str(p)!r} in sandbox {self.name} failed: {e.explanation or e}"
            ) from e

    async def read_file(self, path: str | os.PathLike, max_bytes: int = 10 << 20) -> bytes:
        """Read a regular file (symlinks followed). Relative paths are under /app.

        Raises:
            FileNotFoundError: no such file. IsADirectoryError: path is a directory.
            ValueError: the file is larger than max_bytes (the size is named).
        """
        p = self._abs(path)
        self._check_open()
        return await _blocking(self._read_blocking, p, max_bytes, 0, host=self.host)

    def _read_blocking(self, p: PurePosixPath, max_bytes: int, depth: int) -> bytes:
        try:
            stream, stat = docker_api(host=self.host).get_archive(self.id, str(p))
        except docker.errors.NotFound:
            raise FileNotFoundError(
                f"read_file: no such file in sandbox {self.name}: {str(p)!r}"
            ) from None
        if stat.get("linkTarget") and depth < 8:
            target = PurePosixPath(stat["linkTarget"])
            return self._read_blocking(
                target if target.is_absolute() else p.parent / target, max_bytes, depth + 1
            )
        if stat.get("mode", 0) & (1 << 31):  # Go's os.ModeDir bit
            raise IsADirectoryError(f"read_file: {str(p)!r} is a directory in sandbox {self.name}")
        if stat.get("size", 0) > max_bytes:
            raise ValueError(
                f"read_file: {str(p)!r} is {stat['size']} bytes, more than max_bytes={max_bytes}"
            )
        data = b"".join(stream)
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            member = next((m for m in tar.getmembers() if m.isfile()), None)
            if member is None:
                raise FileNotFoundError(
                    f"read_file: {str(p)!r} is not a regular file in sandbox {self.name}"
                )
            return tar.extractfile(member).read()

    # ---- hidden tests ---------------------------------------------------------------------------------

    async def run_tests(
        self,
        tests_dir: str | os.PathLike,
        timeout: float = 60.0,
        test_setup: str | None = None,
        agent_modules=(),
        script: str | None = None,
    ) -> TestReport:
        """Run the hidden tests in `tests_dir` against this sandbox's files, in a fresh verifier container from a
        snapshot of it (verifier.run_tests_blocking: tamper verdict, /tests, TEST_DIR, WORKDIR, test_setup).
        This sandbox is paused for the snapshot and left as it was (stopped instead when the engine cannot
        pause it, on a heavily loaded host: its commands then fail with SandboxError).

        Args:
            timeout: seconds per test (> 0; a test past it fails: its program hung), and for test_setup or a
                Harbor script. The whole run has the verifier's wall clock (limits.verify_wall_s, default
                3 x timeout, tests that hung not counted): past it the machine is too slow, SandboxError.
            test_setup: bash source run before pytest (run-tests.sh), or None.
            agent_modules: module names the tests import from the agent's files (Task.agent_modules).
            script: a Harbor test.sh (Task.verifier_script) run instead of pytest and scored from the reward
                files it writes (harbor_verifier.run_script_blocking: report.parts), or None.
        Returns:
            TestReport (verifier.py); timed_out when a test ran past `timeout` (that test failed).
        Raises:
            FileNotFoundError: tests_dir is not a directory on the host. ValueError: timeout <= 0.
            SandboxError: the sandbox is closed, its container is gone, the image has no usable pytest, the
                wall clock ran out, or pytest's run cannot be scored (killed, exit code not 0/1, no
                regular report under the cap).
            DiskLimitError: the sandbox holds more than limits.storage_bytes (checked once more here).

        Disk: the snapshot copies the sandbox's layer (S bytes), so the verifier container (its layer and
        volumes) may write limits.storage_bytes - S more: the episode holds at most 2 x storage_bytes.
        """
        tests_dir = Path(tests_dir)
        if not tests_dir.is_dir():
            raise FileNotFoundError(f"run_tests: tests_dir {str(tests_dir)!r} is not a directory")
        if not timeout > 0:
            raise ValueError(f"run_tests: timeout = {timeout!r}: must be > 0 seconds")
        self._check_open()
        if self._disk is not None:
            await _blocking(self._disk.check, limit=False)
            self._check_disk()
        budget = self.limits.storage_bytes - (self._disk.last if self._disk is not None else 0)
        labels = {**_labels(self.run_id), "termrl.verifies": self.name}
        timeout, wall = float(timeout), verifier.wall_clock(timeout, self.limits.verify_wall_s)
        api = docker_api(2 * wall + timeout + 120.0, self.host)  # past the verifier's backstop
        args = (api, self.id, self.name, labels, self.limits, tests_dir, timeout)
        kw = {"disk_budget": max(budget, 1 << 20), "cleanup": self._cleanup}
        kw["network_mode"] = self.network_mode  # a compose pod's sidecars stay reachable
        if script is not None:
            fn = functools.partial(harbor_verifier.run_script_blocking, *args, script, **kw)
        else:
            modules = tuple(agent_modules)
            fn = functools.partial(
                verifier.run_tests_blocking, *args, test_setup, modules, wall_s=wall, **kw
            )
        try:
            return await _blocking(fn, limit=False)
        except verifier.VerifyError as e:
            raise SandboxError(f"sandbox {self.name}: {e}") from e
