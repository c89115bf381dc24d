"""The verifier container, shared by the pytest verifier (verifier.py) and Harbor's test.sh
(harbor_verifier.py): the agent's container frozen and committed, a FRESH container of the snapshot with
the verifier's mounts, the environment the verifier fixes, commands run in it with a time limit, and
its removal after the verdict (off the verdict's path when the caller keeps a `cleanup` list).

The hidden tests of the pytest verifier are written once per content and process into a read-only
volume (`tests_volume`) instead of into each verifier container: `put_archive` into a created container
was a fifth of a verification's own time (bench/bench_verify.py).
"""

from __future__ import annotations

import base64
import concurrent.futures
import contextlib
import hashlib
import io
import json
import logging
import shlex
import tarfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import docker.errors
import docker.types

from sandboxing.disk import DiskWatch, check_layer
from sandboxing.limits import host_config
from sandboxing.toolchain import (
    BIN,
    ROOT,
    TESTS,
    TOOLCHAIN,
    Toolchain,
    VerifyError,
    prepare_toolchain,
    pristine,
)

log = logging.getLogger("termrl.verifier")

PRIVATE = (
    "/.termrl-verify"  # the verifier's own tmpfs (pytest) or volume (Harbor): report, ini, script
)
PRIVATE_BYTES = 17 << 20  # the tmpfs at PRIVATE, bytes (a report of up to 16 MiB, the ini)
OUTPUT_BYTES = 65536  # a command's output kept (head + tail), bytes


_FIXED = (
    "PATH=",
    "HOME=",
    "USER=",
    "LOGNAME=",
    "LANG=",
    "LANGUAGE=",
    "LC_",
    "LOCPATH=",
    "GCONV_PATH=",
    "LD_",
    "PYTHON",
    "PYTEST_",
    "TEST_DIR=",
    "BASH_ENV=",
    "ENV=",
    "SHELLOPTS=",
    "BASHOPTS=",
)


def _env(tc: Toolchain, pytest_args: list[str] = ()) -> list[str]:
    """The verifier's environment: the task image's Config.Env without what the verifier fixes itself;
    pytest_args: options every pytest started in it takes first (PYTEST_ADDOPTS: a Harbor test.sh's
    pytest with its rootdir, config file and conftest search pinned to /tests)."""
    path = next(
        (e[5:] for e in tc.env if e.startswith("PATH=")),
        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    )
    user = (
        tc.user.split(":")[0] if tc.user and tc.user.split(":")[0] not in ("root", "0") else "root"
    )
    home = (
        "/root"
        if user == "root"
        else next((e[5:] for e in tc.env if e.startswith("HOME=")), "/tmp")
    )
    lib = tc.tc(tc.libdirs[0]) if tc.libdirs else ROOT + "/usr/lib"
    return (
        [e for e in tc.env if not e.startswith(_FIXED)]
        + [
            f"PATH={BIN}:{path}",
            f"HOME={home}",
            f"USER={user}",
            f"LOGNAME={user}",
            "LANG=C.UTF-8",
            "LC_ALL=C.UTF-8",
            f"LOCPATH={ROOT}/usr/lib/locale",
            f"GCONV_PATH={lib}/gconv",
            f"LD_LIBRARY_PATH={tc.libpath}",
            "PYTHONNOUSERSITE=1",
            "PYTHONDONTWRITEBYTECODE=1",
            f"TEST_DIR={TESTS}",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1",
        ]
        + ([f"PYTEST_ADDOPTS={shlex.join(pytest_args)}"] if pytest_args else [])
    )


def pytest_pins(tc: Toolchain, ini: str) -> list[str]:
    """pytest's options that pin it to the hidden tests: rootdir, config file (`ini`) and conftest search
    at /tests (never an agent's /pytest.ini or /conftest.py above it), no cache written, the image's own
    pytest11 plugins (autoload is off)."""
    return [
        "-p",
        "no:cacheprovider",
        f"--rootdir={TESTS}",
        f"--confcutdir={TESTS}",
        "-c",
        ini,
        *[a for p in tc.plugins for a in ("-p", p)],
    ]


def hidden_ini(tests_dir: Path) -> str:
    """The hidden tests' own pytest config file (as pytest would pick it in /tests), else the one the
    verifier writes at PRIVATE/pytest.ini (`INI_TEXT`)."""
    for name, section in (
        ("pytest.ini", ""),
        ("pyproject.toml", "[tool.pytest.ini_options]"),
        ("tox.ini", "[pytest]"),
        ("setup.cfg", "[tool:pytest]"),
    ):
        f = tests_dir / name
        if f.is_file() and section in f.read_text(errors="replace"):
            return f"{TESTS}/{name}"
    return f"{PRIVATE}/pytest.ini"


INI_TEXT = "[pytest]\n"  # the generated config file: pytest's defaults


def _cap(head: bytearray, tail: bytearray, data: bytes, limit: int) -> int:
    room = limit // 2 - len(head)
    if room > 0:
        head += data[:room]
        data = data[room:]
    tail += data
    if len(tail) > limit:
        del tail[: len(tail) - limit // 2]
    return len(data)


def _exec(
    api,
    cid: str,
    cmd: list[str],
    env: list[str],
    workdir: str,
    timeout: float,
    user: str = "",
) -> tuple[int | None, str]:
    """Run cmd (argv: a pristine program by absolute path, never one looked up on the image's PATH) in the
    verifier container as `user` (default the image's USER) for at most `timeout` seconds; (exit code or
    None on timeout, output head + tail). On timeout the container is killed, which ends every process in
    it. Every command the verifier runs in the container goes through here."""
    eid = api.exec_create(cid, cmd, environment=env, workdir=workdir, user=user)["Id"]
    head = bytearray()
    tail = bytearray()
    total = 0
    error = None

    def pump():
        nonlocal total, error
        try:
            for data in api.exec_start(eid, stream=True):
                total += len(data)
                _cap(head, tail, data, OUTPUT_BYTES)
        except Exception as e:  # noqa: BLE001 - reported below
            error = e

    t = threading.Thread(target=pump, daemon=True, name="verifier-exec")
    t.start()
    t.join(timeout)
    rc = None
    if t.is_alive():
        api.kill(cid)
        t.join(30)
    elif error is not None:
        raise VerifyError(f"running {cmd[0]} in the verifier container failed: {error}")
    else:
        rc = api.exec_inspect(eid)["ExitCode"]
    cut = total - len(head) - len(tail)
    text = head + (f"\n[... {cut} bytes of output cut ...]\n".encode() if cut > 0 else b"") + tail
    return rc, bytes(text).decode("utf-8", "replace")


def stop(api, cid: str) -> None:
    """Kill the verifier container and make sure it stopped: no process but the harness's is left to
    touch what is read next (reward files, report).

    Raises:
        VerifyError: the container still runs after the kill.
    """
    api.kill(cid)
    for _ in range(50):
        if not api.inspect_container(cid)["State"]["Running"]:
            return
        time.sleep(0.1)
    raise VerifyError(
        f"the verifier container {cid[:12]} still runs after a kill: nothing read from it"
    )


def _freeze(api, container_id: str, tries: int = 3) -> bool:
    """Freeze the agent's container: True when paused (to be unpaused), False when stopped. The cgroup freezer
    can fail to settle on a loaded host ("unable to freeze"); after `tries` the container is killed instead,
    which freezes its files just as well (the sandbox's shell dies with it)."""
    for i in range(tries):
        try:
            api.pause(container_id)
            return True
        except docker.errors.APIError as e:
            if "is not running" in str(e):
                return False  # a stopped container is frozen already
            log.warning("pausing %s failed (try %d of %d): %s", container_id[:12], i + 1, tries, e)
            time.sleep(0.5 * (i + 1))
    api.kill(container_id)
    return False


def _snapshot(
    api, container_id: str, name: str, labels: dict[str, str], limits, mounts=()
) -> tuple[str, str | None]:
    """Commit the agent's container while it is frozen (paused, or stopped): no process of the agent runs
    between the first and the last byte the snapshot takes. Returns the snapshot image id and the tamper
    verdict of the agent's files where `mounts` (docker.types.Mount) go (`mount_points_tampered`).
    Raises disk.OverLimit (nothing committed): the frozen layer would write more than
    limits.storage_bytes or holds more than limits.max_files entries."""
    paused = _freeze(api, container_id)
    try:
        # what the commit writes (sparse files in full), measured once nothing of the agent can grow it
        check_layer(api, container_id, limits.storage_bytes, limits.max_files)
        tampered = mount_points_tampered(api, container_id, mounts)
        snapshot = api.commit(
            container_id,
            repository="termrl/snapshot",
            tag=name.lower()[-120:],
            conf={"Labels": labels},
            pause=False,
        )["Id"]
        return snapshot, tampered
    finally:
        if paused:
            api.unpause(container_id)


# Go's os.FileMode bits in the engine's archive stat (X-Docker-Container-Path-Stat)
_GO_DIR = 1 << 31
_GO_SYMLINK = 1 << 27


def _path_stat(api, container_id: str, path: str) -> dict | None:
    """The engine's lstat of `path` in the container's files (name, size, mode as Go's os.FileMode,
    linkTarget), None when it does not exist; nothing of the file is read (a HEAD request)."""
    url = api._url("/containers/{0}/archive", container_id)
    # requests' own call: the client's socket timeout is added by docker-py's wrappers only
    res = api.head(url, params={"path": path}, timeout=api.timeout)
    if res.status_code == 404:
        return None
    api._raise_for_status(res)
    return json.loads(base64.b64decode(res.headers["X-Docker-Container-Path-Stat"]))


def mount_points_tampered(api, container_id: str, mounts) -> str | None:
    """Why the agent's files where the verifier mounts its own are tampering, None when they are not.

    The engine mounts through symlinks in the container's files: an agent's `/tests` turned into a
    symlink put the hidden tests where it pointed (into /etc, or under the toolchain's mount, where
    pytest then found no folder: an error, not a score). So every folder on the way to a mount point,
    and the mount point of a volume or tmpfs itself, must be absent or a real folder; anything else is
    tampering (score 0), as a mount the engine cannot make over the agent's files already is (a
    file turned into a folder: `start_box`). A bind of a single file is checked on its folders only
    (the engine refuses a folder there itself).
    """
    for m in mounts:
        target = m["Target"]
        parts = target.strip("/").split("/")
        whole = m["Type"] in ("volume", "tmpfs")
        for i in range(1, len(parts) + 1 if whole else len(parts)):
            path = "/" + "/".join(parts[:i])
            st = _path_stat(api, container_id, path)
            if st is None:
                # the engine creates what is missing, as a folder
                break
            if st["mode"] & _GO_SYMLINK:
                return (
                    f"the agent replaced {path}, where the verifier mounts {target}, by a symlink "
                    f"to {st.get('linkTarget')!r}"
                )
            if not st["mode"] & _GO_DIR:
                return (
                    f"the agent replaced {path}, where the verifier mounts {target}, by a file "
                    f"that is not a folder"
                )
    return None


def _mounts(tc: Toolchain, labels: dict[str, str], private: str, tests: str | None) -> list:
    """The verifier container's mounts: the hidden tests (the read-only volume `tests`, or a fresh
    labelled volume to be filled before start), the private dir (a tmpfs, or a fresh volume: a report
    read from the stopped container, Harbor's script), the pristine toolchain read-only, and the two files
    the loader reads by absolute path."""
    own = (
        docker.types.Mount(PRIVATE, None, type="volume", no_copy=True, labels=labels)
        if private == "volume"
        else docker.types.Mount(
            PRIVATE, None, type="tmpfs", tmpfs_size=PRIVATE_BYTES, tmpfs_mode=0o1777
        )
    )
    hidden = (
        docker.types.Mount(TESTS, None, type="volume", no_copy=True, labels=labels)
        if tests is None
        # labels without termrl.tests: a volume the engine made anew (a reap in between) is refilled
        else docker.types.Mount(
            TESTS, tests, type="volume", read_only=True, no_copy=True, labels=_run_labels(labels)
        )
    )
    return [
        hidden,
        own,
        docker.types.Mount(TOOLCHAIN, tc.volume, type="volume", read_only=True, no_copy=True),
        # the loader reads these two by absolute path in the container's root: the agent's, so replaced
        docker.types.Mount("/etc/ld.so.preload", "/dev/null", type="bind", read_only=True),
        docker.types.Mount("/etc/nsswitch.conf", tc.nsswitch, type="bind", read_only=True),
    ]


def tests_tar(tests_dir: Path) -> bytes:
    """The hidden tests in `tests_dir` as a tar (bytes; no __pycache__), as they appear under /tests."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for p in sorted(tests_dir.rglob("*")):
            if "__pycache__" not in p.parts:
                tar.add(p, arcname=p.relative_to(tests_dir).as_posix(), recursive=False)
    return buf.getvalue()


def _run_labels(labels: dict[str, str]) -> dict[str, str]:
    """What of a verification's labels a volume shared by the process's verifications keeps."""
    return {k: v for k, v in labels.items() if k not in ("termrl.verifies", "termrl.tests")}


_tests_locks: dict[str, threading.Lock] = {}  # volume name -> the lock of its filling
_tests_guard = threading.Lock()


def tests_volume(api, image: str, tests_dir: Path, labels: dict[str, str]) -> str:
    """The name of a read-only-mounted volume holding the hidden tests in `tests_dir`, written once per
    engine, content (sha256 of `tests_tar`), run and owner process: `termrl-tests-<hash>`, labelled
    like the run (termrl=1, run id, session, owner: `reap` removes it with the run, or after a dead
    owner) plus termrl.tests=<digest>. Filled through a created, never started, container of `image`;
    a volume found without its termrl.tests label (made empty by the engine after a reap) is made again.
    Each call inspects the volume (a few ms).

    Raises:
        docker.errors.APIError: the engine refused a step.
    """
    tar = tests_tar(tests_dir)
    digest = hashlib.sha256(tar).hexdigest()
    own = _run_labels(labels)
    key = f"{getattr(api, 'base_url', '')} {digest} {own.get('termrl.run_id')} {own.get('termrl.owner')}"
    name = "termrl-tests-" + hashlib.sha256(key.encode()).hexdigest()[:24]
    with _tests_guard:
        lock = _tests_locks.setdefault(name, threading.Lock())
    with lock:
        try:
            if (api.inspect_volume(name).get("Labels") or {}).get("termrl.tests") == digest:
                return name
            api.remove_volume(name, force=True)  # made empty by the engine after a reap: anew
        except docker.errors.NotFound:
            pass
        api.create_volume(name, labels={**own, "termrl.tests": digest})
        try:
            filler = api.create_container(
                image,
                entrypoint=[],
                command=["true"],
                labels=own,
                host_config=api.create_host_config(
                    network_mode="none",
                    mounts=[docker.types.Mount(TESTS, name, type="volume", no_copy=True)],
                ),
            )["Id"]
            try:
                api.put_archive(filler, TESTS, tar)
            finally:
                api.remove_container(filler, force=True)
        except BaseException:
            with contextlib.suppress(docker.errors.APIError):
                api.remove_volume(name, force=True)  # never a labelled volume without its tests
            raise
        return name


def remove_quietly(api, cid: str) -> None:
    """Remove a verifier container and its volumes. A 409 "removal already in progress" (a busy engine
    removing it already) and a 404 are fine: the verdict was read before; other errors are raised."""
    try:
        api.remove_container(cid, force=True, v=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as e:
        if e.status_code != 409:
            raise
        log.info("verifier container %s: %s", cid[:12], e.explanation or e)


_cleaner = concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="verifier-cleanup")


def _remove(api, vid: str | None, snapshot: str, phases: dict[str, float]) -> None:
    """Remove the verifier container (with its volumes) and the snapshot; failures are logged (reap() is
    the backstop: both carry the run's labels)."""
    t0 = time.monotonic()
    try:
        if vid is not None:
            remove_quietly(api, vid)
        api.remove_image(snapshot, force=True)
    except docker.errors.APIError as e:
        log.warning(
            "removing verifier container %s or snapshot %s failed: %s", vid, snapshot[:19], e
        )
    phases["removal_s"] = time.monotonic() - t0


@dataclass
class Box:
    """A verifier container made from the agent's snapshot (`verifier_container`)."""

    id: str
    tc: Toolchain
    watch: DiskWatch  # the disk limit of its layer and volumes
    budget: int  # bytes it may hold
    phases: dict[str, float]  # seconds per step (TestReport.phases)
    # the tamper verdict on the agent's files where the verifier mounts its own (`mount_points_tampered`):
    # `start_box` returns it without starting the container
    tampered: str | None = None
    # the task image's ENTRYPOINT (`start_entrypoint` runs it before the tests)
    entrypoint: tuple[str, ...] = ()


@contextlib.contextmanager
def verifier_container(
    api,
    container_id: str,
    name: str,
    labels: dict[str, str],
    limits,
    private: str = "tmpfs",
    extra_mounts=(),
    disk_budget: int | None = None,
    cleanup: list | None = None,
    network_mode: str = "none",
    tests_dir: Path | None = None,
):
    """Freeze and snapshot the agent's container, create (not start) a fresh verifier container from the
    snapshot with the verifier's mounts (`_mounts`, plus extra_mounts) and a disk watchdog; yield its Box.
    tests_dir: the hidden tests, mounted read-only from their volume (`tests_volume`); None: /tests is a
    fresh empty volume the caller fills before start (`start_box`).
    On exit the container and the snapshot are removed: at once, or in the background when `cleanup` is a
    list (its Future is appended; the sandbox's close waits for it). network_mode: "none", or
    "container:<id>" (a compose pod's namespace, where the sidecars listen on 127.0.0.1; sandboxing/compose.py).
    docker-py errors become VerifyError.
    """
    t0 = time.monotonic()
    phases: dict[str, float] = {}
    try:
        image = api.inspect_container(container_id)["Image"]
        entrypoint = tuple((api.inspect_image(image)["Config"] or {}).get("Entrypoint") or ())
        tc = prepare_toolchain(api, image, limits, labels)
        t1 = time.monotonic()
        tests = None if tests_dir is None else tests_volume(api, image, tests_dir, labels)
        t2 = time.monotonic()
        mounts = _mounts(tc, labels, private, tests) + list(extra_mounts)
        snapshot, tampered = _snapshot(api, container_id, name, labels, limits, mounts)
        phases.update(toolchain_s=t1 - t0, tests_s=t2 - t1, snapshot_s=time.monotonic() - t2)
    except docker.errors.APIError as e:
        raise VerifyError(f"verification of {name}: snapshot failed: {e.explanation or e}") from e
    vid = None
    t1 = time.monotonic()
    try:
        vid = api.create_container(
            snapshot,
            entrypoint=[],
            command=pristine(tc, tc.python, "-I", "-S", "-c", "import time; time.sleep(86400)"),
            labels=labels,
            name=f"{name}-verify",
            hostname="sandbox"
            if network_mode == "none"
            else None,  # a joined namespace has its own
            environment=_env(tc),
            host_config=host_config(api, limits, mounts, network_mode=network_mode),
        )["Id"]
        volumes = tuple(
            m["Source"]
            for m in api.inspect_container(vid).get("Mounts") or []
            if m.get("Source")
            and m.get("Type") == "volume"
            and m.get("Destination") not in (TOOLCHAIN, TESTS if tests else None)
        )
        budget = limits.storage_bytes if disk_budget is None else disk_budget
        watch = DiskWatch(
            api, vid, budget, limits.storage_check_s, volumes, max_files=limits.max_files
        ).start()
        phases["create_s"] = time.monotonic() - t1
        try:
            yield Box(vid, tc, watch, budget, phases, tampered, entrypoint)
        finally:
            watch.stop()
    except docker.errors.APIError as e:
        raise VerifyError(f"verification of {name} failed: {e.explanation or e}") from e
    finally:
        if cleanup is None:
            _remove(api, vid, snapshot, phases)
        else:
            cleanup.append(_cleaner.submit(_remove, api, vid, snapshot, phases))


_TARGETS = (TOOLCHAIN, TESTS, PRIVATE, "/etc/ld.so.preload", "/etc/nsswitch.conf")


def _mounting(call, *args) -> None:
    """`call(*args)`, a Docker call that mounts the verifier's files into the container (start, put_archive):
    an engine error about one of our mount targets (say /etc/nsswitch.conf turned into a directory by the
    agent) becomes _Unmountable; any other error passes."""
    try:
        call(*args)
    except docker.errors.APIError as e:
        why = str(e.explanation or e)
        if "mount" in why and any(t in why for t in _TARGETS):
            raise _Unmountable(why) from e
        raise


class _Unmountable(Exception):
    pass


def start_box(api, box: Box, files: list[tuple[str, bytes]]) -> str | None:
    """Put `files` ((dir, tar bytes)) into the created verifier container and start it; the tamper verdict
    (the reason) when a mount of ours cannot be made over the agent's files, else None."""
    if box.tampered is not None:
        log.warning("verification: tampered: %s", box.tampered)
        return box.tampered
    t0 = time.monotonic()
    try:
        for path, tar in files:
            _mounting(api.put_archive, box.id, path, tar)
        _mounting(api.start, box.id)
    except _Unmountable as e:
        why = f"the verifier cannot mount its files over the agent's: {e}"
        log.warning("verification: tampered: %s", why)
        return why
    box.phases["start_s"] = time.monotonic() - t0
    return None


# what the verifier's own environment adds (`_env`), unset before the image's ENTRYPOINT runs
_VERIFIER_ONLY = (
    "LD_LIBRARY_PATH LOCPATH GCONV_PATH LC_ALL PYTHONNOUSERSITE PYTHONDONTWRITEBYTECODE TEST_DIR "
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD PYTEST_ADDOPTS"
)
# a process whose command line is harbor's `sleep infinity`: the ENTRYPOINT exec'd its arguments
_EXECED = (
    "import os, sys\n"
    "def line(p):\n"
    "    try:\n"
    "        return open(f'/proc/{p}/cmdline', 'rb').read()\n"
    "    except OSError:\n"
    "        return b''\n"
    "sys.exit(0 if any(line(p) == b'sleep\\0infinity\\0' for p in os.listdir('/proc') if p.isdigit()) "
    "else 1)\n"
)
ENTRYPOINT_WAIT_S = 30.0  # the longest the tests wait for the ENTRYPOINT's set-up, seconds


def start_entrypoint(api, box: Box, deadline: float) -> None:
    """Run the task image's ENTRYPOINT in the started verifier container, in the background with the
    arguments `sleep infinity`, as the agent's container ran it (sandbox.py): the services and state
    it sets up (a daemon, /etc/hosts lines) are there for the tests, as in harbor, where test.sh runs
    in the agent's own container. It runs as the image's USER with the image's Config.Env (what the
    verifier adds to the environment unset). Returns once it has exec'd its arguments or ended, or
    after ENTRYPOINT_WAIT_S (one log line; the tests then run beside it), at the latest by `deadline`
    (time.monotonic()). No ENTRYPOINT: nothing is run."""
    tc = box.tc
    if not box.entrypoint:
        return
    if tc.shell is None:
        log.warning(
            "verification: the image has no bash or sh to start its ENTRYPOINT %s with; testing "
            "without it",
            list(box.entrypoint),
        )
        return
    t0 = time.monotonic()
    cmd = pristine(
        tc,
        tc.shell,
        "-c",
        f'unset {_VERIFIER_ONLY}; exec "$@" </dev/null >/dev/null 2>&1',
        "entrypoint",
        *box.entrypoint,
        "sleep",
        "infinity",
    )
    eid = api.exec_create(box.id, cmd, environment=list(tc.env), workdir=tc.workdir)["Id"]
    api.exec_start(eid, detach=True)
    probe = pristine(tc, tc.python, "-I", "-S", "-c", _EXECED)
    until = min(t0 + ENTRYPOINT_WAIT_S, deadline)
    while time.monotonic() < until:
        info = api.exec_inspect(eid)
        if not info.get("Running") and info.get("ExitCode") is not None:
            if info["ExitCode"] != 0:
                # said, not silent: the tests run without what it failed to set up
                log.warning(
                    "verification: the ENTRYPOINT %s ended with exit %d before exec'ing its "
                    "arguments; testing without what it would have set up",
                    list(box.entrypoint),
                    info["ExitCode"],
                )
            break
        # a generous limit: a probe past it kills the container (_exec)
        rc, _ = _exec(api, box.id, probe, _env(tc), "/", 30.0, "root")
        if rc == 0:
            break
        time.sleep(0.1)
    else:
        log.info(
            "verification: the ENTRYPOINT %s had not exec'd its arguments after %.0f s; testing beside it",
            list(box.entrypoint),
            time.monotonic() - t0,
        )
    box.phases["entrypoint_s"] = time.monotonic() - t0
