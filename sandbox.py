"""Docker sandboxes for terminal agents: one `Sandbox` is one container that one agent works in.

The contract: `await Sandbox.start(image)`, then `exec` (a bash command line in the sandbox's one
persistent shell), `write_file` / `read_file`, `run_tests` (the task's hidden tests, verified from a
snapshot), `close`. The container is built to never hang, leak or let the agent out:

- Isolation: no network (`network_mode="none"`), memory limit with swap equal to it (no swap), CPU quota,
  pids limit, `cap_drop=ALL` plus the few capabilities a root shell needs for file work (DEFAULT_CAPS),
  `no-new-privileges`, `init=True` (docker-init reaps the zombies left by background jobs); the numbers
  are `Limits`.
- Dead man: the container's main process is a small bash shell server under `timeout -s KILL <max_lifetime_s>`,
  reading commands from the container's stdin, which is attached to a socket held by the owning process.
  When the owner dies (even by SIGKILL) the kernel closes the socket, the server reads EOF and exits, and
  the container stops by itself; `reap()` removes it.
- Commands: one long-lived bash per sandbox (the worker, a child of the shell server) runs every command in
  itself, so what a terminal keeps persists between calls: variables (exported or not), functions, aliases,
  shell options, cwd, the directory stack, sourced scripts, jobs. Commands have no stdin (/dev/null); a
  background job never holds the call. On timeout the server stops and kills the worker and every process
  started since the command began (jobs of earlier commands live on); a worker that died (timeout, `exit 3`)
  is replaced and its state restored from a snapshot taken after each command (sandboxing/shell.py). No
  `docker exec` per command: one message on the socket, output back on it, streamed keeping only a head
  and a rolling tail (bounded memory), stdout and stderr interleaved in one pipe, decoded as UTF-8 with
  replacement, ANSI escapes stripped.
- Hidden tests: `run_tests` verifies in a fresh container from a snapshot of this one, frozen, with a toolchain
  from the untouched task image and a report the agent cannot reach (sandboxing/verifier.py says how).

Beside it in sandboxing/: the blocking Docker calls in worker threads behind a limit per engine
(calls.py), the labels and reaping (reaping.py), images (images.py), compose sidecars (compose.py; a
task's sandbox with its sidecars: `start_sandbox` here). The names imported `x as x` below are
re-exported: train.py, evaluate.py, the tests and the benchmarks reach them through sandbox.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import io
import logging
import os
import re
import secrets
import shlex
import tarfile
import time
from pathlib import Path, PurePosixPath

import docker
import docker.errors
import docker.types

from sandboxing import archive, compose, harbor_verifier, hosts, images, verifier
from sandboxing.calls import SandboxError, blocking, docker_api
from sandboxing.calls import drain_calls as drain_calls
from sandboxing.calls import set_max_concurrent as set_max_concurrent
from sandboxing.disk import DiskWatch, OverLimit
from sandboxing.hosts import host_resources as host_resources
from sandboxing.limits import DEFAULT_CAPS as DEFAULT_CAPS
from sandboxing.limits import BuildLimits, Limits
from sandboxing.limits import host_config as isolation_config
from sandboxing.reaping import RUN_ID, labels
from sandboxing.reaping import SESSION as SESSION
from sandboxing.reaping import reap as reap
from sandboxing.reaping import reap_run as reap_run
from sandboxing.shell import SERVER_SCRIPT, WORKER_SCRIPT, ExecResult, Shell, ShellSession
from sandboxing.verifier import TestReport
from sandboxing.verifier import parse_junit as parse_junit

log = logging.getLogger("termrl.sandbox")

# working directory of a fresh sandbox whose image sets no WORKDIR
WORKDIR = "/app"


class DiskLimitError(SandboxError):
    """The sandbox wrote more than its disk limit (Limits.storage_bytes) and was killed."""


class Sandbox:
    """One isolated container for one agent. Create with `await Sandbox.start(image)`; use as `async with`.

    Methods are coroutines; the blocking Docker work runs in worker threads (sandboxing/calls.py). Commands
    of one sandbox run one at a time (a second `exec` waits for the first). Cancelling an awaiting `exec`
    does not stop the command: its timeout does (the worker thread returns a few seconds after `timeout` at
    the latest).
    """

    def __init__(
        self,
        container_id: str,
        name: str,
        limits: Limits,
        run_id: str,
        shell: Shell,
        host: str | None = None,
    ):
        self.id = container_id
        self.name = name
        self.limits = limits
        self.run_id = run_id
        # the Docker engine holding the container (sandboxing/hosts.py)
        self.host = host or hosts.default_url()
        # its commands; the shell's socket is also the dead man: closing it stops the container
        self._session = ShellSession(container_id, name, shell)
        self._closed = False
        # the image's WORKDIR (set by start)
        self.workdir = WORKDIR
        # or "container:<id>": a compose pod's namespace (set by start)
        self.network_mode = "none"
        # the disk limit's watchdog (set by start)
        self._disk: DiskWatch | None = None
        # removals of verifier containers, after their verdicts (close waits for them)
        self._cleanup: list = []
        # seconds start_sandbox took to start it, the task image's build not counted
        self.start_s = 0.0

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
        limits = limits or Limits()
        run_id = run_id or RUN_ID
        return await blocking(
            cls._start_blocking, image, limits, run_id, host, network_mode, host=host
        )

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
        res = await blocking(self._exec_blocking, cmd, timeout, True, limit=False)
        # killed while this command ran: its output ends with the shell's death
        self._check_disk()
        return res

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
        await blocking(self._write_blocking, p, bytes(data), mode, host=self.host)

    async def read_file(self, path: str | os.PathLike, max_bytes: int = 10 << 20) -> bytes:
        """Read a regular file (up to 8 symlinks followed). Relative paths are under /app. The read is
        bounded before it is read (sandboxing/archive.py): the size and type come from the archive's
        headers, and this process holds at most max_bytes + 1 MiB of it.

        Raises:
            FileNotFoundError: no such file. IsADirectoryError: path is a directory.
            ValueError: the file is larger than max_bytes (the size is named); archive.NotAFileError
                (a ValueError): a device, pipe, socket, or a chain of more than 8 links.
            SandboxError: the engine failed.
        """
        p = self._abs(path)
        self._check_open()
        return await blocking(self._read_blocking, p, max_bytes, host=self.host)

    async def run_tests(
        self,
        tests_dir: str | os.PathLike,
        timeout: float = 60.0,
        test_setup: str | None = None,
        agent_modules=(),
        script: str | None = None,
    ) -> TestReport:
        """Run the hidden tests in `tests_dir` against this sandbox's files, in a fresh verifier container from a
        snapshot of it (sandboxing/verifier.py's run_tests_blocking: tamper verdict, /tests, TEST_DIR,
        WORKDIR, test_setup).
        This sandbox is paused for the snapshot and left as it was (stopped instead when the engine cannot
        pause it, on a heavily loaded host: its commands then fail with SandboxError).

        Args:
            timeout: seconds per test (> 0; a test past it fails: its program hung), and for test_setup or a
                Harbor script. The whole run has the verifier's wall clock (limits.verify_wall_s, default
                3 x timeout, tests that hung not counted): past it the machine is too slow, SandboxError.
            test_setup: bash source run before pytest (run-tests.sh), or None.
            agent_modules: module names the tests import from the agent's files (Task.agent_modules).
            script: a Harbor test.sh (Task.verifier_script) run instead of pytest and scored from the reward
                files it writes (sandboxing/harbor_verifier.py: report.parts), or None.
        Returns:
            TestReport (sandboxing/verifier.py); timed_out when a test ran past `timeout` (that test failed).
        Raises:
            FileNotFoundError: tests_dir is not a directory on the host. ValueError: timeout <= 0.
            SandboxError: the sandbox is closed, its container is gone, the image has no usable pytest, the
                wall clock ran out, or pytest's run cannot be scored (killed, exit code not 0/1, no
                regular report under the cap).
            DiskLimitError: the sandbox would write more than limits.storage_bytes or holds more than
                limits.max_files entries (checked once more here, and on the frozen layer before the
                snapshot's commit: nothing over the cap is committed); the sandbox is killed.

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
            await blocking(self._disk.check, limit=False)
            self._check_disk()
        budget = self.limits.storage_bytes - (self._disk.last if self._disk is not None else 0)
        verifier_labels = {**labels(self.run_id), "termrl.verifies": self.name}
        timeout = float(timeout)
        wall = verifier.wall_clock(timeout, self.limits.verify_wall_s)
        # a socket timeout past the verifier's backstop
        api = docker_api(2 * wall + timeout + 120.0, self.host)
        args = (api, self.id, self.name, verifier_labels, self.limits, tests_dir, timeout)
        kw = {
            "disk_budget": max(budget, 1 << 20),
            "cleanup": self._cleanup,
            # a compose pod's sidecars stay reachable
            "network_mode": self.network_mode,
        }
        if script is not None:
            fn = functools.partial(harbor_verifier.run_script_blocking, *args, script, **kw)
        else:
            modules = tuple(agent_modules)
            fn = functools.partial(
                verifier.run_tests_blocking, *args, test_setup, modules, wall_s=wall, **kw
            )
        try:
            return await blocking(fn, limit=False)
        except verifier.VerifyError as e:
            raise SandboxError(f"sandbox {self.name}: {e}") from e
        except OverLimit as e:
            # measured frozen, before the commit (verifier_box): nothing was committed
            await blocking(self._disk.kill, e.usage, e.reason, limit=False)
            self._check_disk()
            raise

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
            await asyncio.wait_for(blocking(self._close_blocking, limit=False), timeout)
        except Exception as e:  # noqa: BLE001 - cleanup must not raise; the reaper is the backstop
            log.warning("closing sandbox %s failed: %s (reap() will remove it)", self.name, e)

    @property
    def disk_exceeded(self) -> int | None:
        """Bytes (at least) the sandbox held when its disk watchdog killed it; None while within
        storage_bytes."""
        return self._disk.exceeded if self._disk is not None else None

    @property
    def disk_over(self) -> str | None:
        """Which disk limit the watchdog killed the sandbox for ("wrote 70.2 MiB or more to disk, over
        its limit of 64 MiB (sandbox.storage_mb)", or the files' limit); None while within both."""
        return self._disk.reason if self._disk is not None else None

    async def __aenter__(self) -> Sandbox:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    # ---- the blocking halves, run in worker threads -----------------------------------------------

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
        container_labels = {**labels(run_id), "termrl.image": image}
        # output must not pile up in logs
        host_config = isolation_config(api, limits, logs=False, network_mode=network_mode)
        command = [
            "timeout",
            "-s",
            "KILL",
            f"{limits.max_lifetime_s:.0f}",
            "bash",
            "-c",
            _WITH_ENTRYPOINT,
            "termrl-shell",
            *(config.get("Entrypoint") or []),
        ]
        try:
            cid = api.create_container(
                image,
                command=command,
                stdin_open=True,
                environment={"TERMRL_SERVER": SERVER_SCRIPT, "TERMRL_INNER": WORKER_SCRIPT},
                working_dir=workdir,
                entrypoint=[],
                labels=container_labels,
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
            shell = Shell(api, cid)
            api.start(cid)
        except Exception as e:
            with contextlib.suppress(Exception):
                api.remove_container(cid, force=True)
            raise SandboxError(f"starting a container from {image!r} failed: {e}") from e
        box = cls(cid, name, limits, run_id, shell, host)
        box.workdir = workdir
        box.network_mode = network_mode
        box._disk = DiskWatch(
            api, cid, limits.storage_bytes, limits.storage_check_s, max_files=limits.max_files
        ).start()
        return box

    def _exec_blocking(
        self, cmd: str, timeout: float, stateful: bool, output_bytes: int | None = None
    ) -> ExecResult:
        return self._session.run(
            docker_api(host=self.host),
            cmd,
            timeout,
            stateful,
            output_bytes or self.limits.output_bytes,
            self._check_open,
            self._check_disk,
        )

    def _write_blocking(self, p: PurePosixPath, data: bytes, mode: int) -> None:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
            # extracted at "/": Docker creates missing parents
            info = tarfile.TarInfo(str(p).lstrip("/"))
            info.size = len(data)
            info.mode = mode
            info.mtime = int(time.time())
            tar.addfile(info, io.BytesIO(data))
        try:
            docker_api(host=self.host).put_archive(self.id, "/", buf.getvalue())
        except docker.errors.APIError as e:
            raise SandboxError(
                f"write_file {str(p)!r} in sandbox {self.name} failed: {e.explanation or e}"
            ) from e

    def _read_blocking(self, p: PurePosixPath, max_bytes: int) -> bytes:
        api = docker_api(host=self.host)
        where = f"read_file in sandbox {self.name}:"
        try:
            # up to 8 links followed, as a shell's open would (40 in Linux; 8 keeps a loop short)
            return archive.read_file(api, self.id, str(p), max_bytes, where, links=8)
        except FileNotFoundError:
            raise FileNotFoundError(
                f"read_file: no such file in sandbox {self.name}: {str(p)!r}"
            ) from None
        except archive.NotAFileError as e:
            if e.kind == "a directory":
                raise IsADirectoryError(
                    f"read_file: {str(p)!r} is a directory in sandbox {self.name}"
                ) from None
            raise
        except archive.TooLargeError as e:
            raise ValueError(
                f"read_file: {str(p)!r} is {e.size} bytes, more than max_bytes={max_bytes}"
            ) from None
        except docker.errors.APIError as e:
            raise SandboxError(
                f"read_file {str(p)!r} in sandbox {self.name} failed: {e.explanation or e}"
            ) from e

    def _close_blocking(self) -> None:
        if self._disk is not None:
            self._disk.stop()
        self._session.close()
        try:
            self._remove_blocking()
        finally:
            # the verifiers' removals run beside this one; close allows them 25 s
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

    def _abs(self, path: str | os.PathLike) -> PurePosixPath:
        p = PurePosixPath(os.fspath(path))
        if "\x00" in str(p) or not str(p):
            raise ValueError(f"path {str(path)!r}: must be a non-empty path without NUL")
        return p if p.is_absolute() else PurePosixPath(self.workdir) / p

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxError(f"sandbox {self.name} is closed")
        self._check_disk()

    def _check_disk(self) -> None:
        if self.disk_exceeded is not None:
            raise DiskLimitError(f"sandbox {self.name}: {self.disk_over}: killed")


# The image's ENTRYPOINT ("$@" here) starts the task's services; one ending in `exec "$@"` then sleeps.
_WITH_ENTRYPOINT = (
    'if [ $# -gt 0 ]; then ("$@" sleep infinity </dev/null >/dev/null 2>&1 &); fi; set --; '
    'eval "$TERMRL_SERVER"'
)


# ---------------------------------------------------------------------------------------------------------
# A task's sandbox: its oracle, its compose sidecars

# Harbor's: solve.sh refers to its side files as /solution/<file>
SOLUTION_DIR = "/solution"


async def put_solution(sb: Sandbox, task, path: str) -> str:
    """Copy a task's oracle into the sandbox; returns the bash command that runs it (from the WORKDIR).
    A Harbor solution/ folder goes to /solution whole (solve.sh and its side files); a single script to
    `path`. A symlink is never followed out of solution/ (for a single script: out of the task
    folder), so no host file reaches the container. Raises ValueError when the task has no oracle or
    has such a link."""
    folder = task.solution_dir
    if folder is not None:
        root = Path(folder).resolve()
        for f in sorted(Path(folder).rglob("*")):  # rglob does not descend into linked folders
            real, name = f.resolve(), f.relative_to(folder).as_posix()
            if f.is_symlink() and not real.is_relative_to(root):
                raise ValueError(
                    f"task {task.id}: solution/{name} is a symlink to {real}, outside solution/; "
                    "not followed"
                )
            if real.is_file():
                await sb.write_file(f"{SOLUTION_DIR}/{name}", real.read_bytes(), 0o755)
        # Harbor [solution.env]: the oracle's own variables
        env = "".join(
            f"{k}={shlex.quote(v)} " for k, v in task.solution_env.items()
        )
        return f"{env}bash {SOLUTION_DIR}/{Path(task.solution).relative_to(folder).as_posix()}"
    if task.solution is None:
        raise ValueError(
            f"task {task.id}: no oracle solution (solution.sh, solution.yaml or solution/solve.sh)"
        )
    script = Path(task.solution)
    if script.is_symlink() and not script.resolve().is_relative_to(Path(task.path).resolve()):
        raise ValueError(
            f"task {task.id}: the solution {script} is a symlink to {script.resolve()}, outside the "
            "task folder; not followed"
        )
    await sb.write_file(path, script.read_bytes())
    return f"bash {path}"


async def start_sandbox(
    task,
    image: str | Exception | None = None,
    limits: Limits | None = None,
    run_id: str | None = None,
    host: str | None = None,
    cfg=None,
) -> Sandbox:
    """A task's sandbox on Docker engine `host` (None: the first listed): a plain Sandbox, or a
    ComposeSandbox when the task has sidecars. Its `start_s` is the seconds its start took, the
    build of the task's image not counted.

    image: the task's image tag on `host`; None, or the Exception its build raised there
        (images.build_images: it failed on this engine alone), has it built here first.
    limits: default Limits.from_config(cfg) with the task's own request (Limits.for_task), or
        Limits() when cfg is None too.
    cfg: the run's configs.SandboxConfig: the default limits, and the base_image, image_map,
        build_network and build limits (BuildLimits) of the builds (the task's image here, its
        sidecars'); None: their defaults.
    Raises images.ImageBuildError (the task's image or a sidecar's), or what Sandbox.start and
    ComposeSandbox.start_pod raise.
    """
    if cfg is None:
        build = {}
        limits = limits or Limits()
    else:
        build = dict(
            base_image=cfg.base_image,
            image_map=cfg.image_map,
            build_network=cfg.build_network,
            limits=BuildLimits.from_config(cfg),
        )
        limits = limits or Limits.from_config(cfg).for_task(task)
    if image is None or isinstance(image, Exception):
        # a build blocks for minutes: in a worker thread, not behind the engine's call limit
        image = await asyncio.to_thread(images.build_image, task, host=host, **build)
    t0 = time.monotonic()
    if task.sidecars:
        box = await ComposeSandbox.start_pod(task, image, limits, run_id, host, build)
    else:
        box = await Sandbox.start(image, limits=limits, run_id=run_id, host=host)
    box.start_s = time.monotonic() - t0
    return box


class ComposeSandbox(Sandbox):
    """A Sandbox (the agent's `main`) in a pod's network namespace beside the task's sidecars
    (sandboxing/compose.py). Start with `await ComposeSandbox.start_pod(task, image, ...)`; close
    removes the whole pod."""

    pod_ids: list[str]

    @classmethod
    async def start_pod(
        cls,
        task,
        image: str,
        limits: Limits | None = None,
        run_id: str | None = None,
        host: str | None = None,
        build: dict | None = None,
    ) -> ComposeSandbox:
        """Build the sidecars' images (build: images.build_image's base_image, image_map,
        build_network and limits; None: their defaults), start the holder and the sidecars
        (sandboxing/compose.py), then the agent's container from `image` in their namespace.

        Raises SandboxError (a sidecar exited, turned unhealthy or was never ready; Docker refused a
        container) or images.ImageBuildError (a sidecar's image); nothing of the pod is left then.
        """
        limits = limits or Limits()
        run_id = run_id or RUN_ID
        tags = await blocking(
            functools.partial(compose.sidecar_images, task, host=host, **(build or {})), limit=False
        )
        pod = compose.pod_name(run_id)
        api = docker_api(120.0, host)
        try:
            # not behind the engine's semaphore: readiness may take minutes
            ids = await blocking(
                compose.start_pod,
                api,
                task,
                tags,
                image,
                limits,
                _HOLDER_LIMITS,
                run_id,
                pod,
                limit=False,
            )
        except docker.errors.APIError as e:
            raise SandboxError(
                f"task {task.id}: starting its sidecars failed: {e.explanation or e}"
            ) from e
        try:
            box = await cls.start(image, limits, run_id, host, network_mode=f"container:{ids[0]}")
        except BaseException:
            await blocking(compose.remove, api, ids, limit=False)
            raise
        box.pod_ids = ids
        return box

    async def run_tests(self, *args, **kwargs):
        """Sandbox.run_tests after the agent's container is killed: its processes must not live on
        in the namespace the verifier and the sidecars share."""
        if not self.closed:
            try:
                await blocking(docker_api(60.0, self.host).kill, self.id, limit=False)
            except docker.errors.APIError as e:
                # gone or stopped already: frozen all the same
                if not isinstance(e, docker.errors.NotFound) and "is not running" not in str(e):
                    raise SandboxError(f"sandbox {self.name}: kill before verification: {e}") from e
        return await super().run_tests(*args, **kwargs)

    def _close_blocking(self) -> None:
        try:
            super()._close_blocking()
        finally:
            compose.remove(docker_api(30.0, self.host), getattr(self, "pod_ids", []))


# The pod's holder only sleeps: the least a container gets.
_HOLDER_LIMITS = Limits(memory_bytes=64 << 20, cpus=0.1, pids=8)
