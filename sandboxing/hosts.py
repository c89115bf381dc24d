"""Docker engines for sandboxes: the list of endpoints, their clients, capacity, placement,
back-off.

`sandbox.docker_hosts` lists Docker engines, each `URL` or `URL=N` (N: most episodes in flight on
it): `local` (the engine `docker.from_env()` finds: $DOCKER_HOST or the default socket),
`unix:///path`, `tcp://host:port` (TLS with client certificates, always: ca.pem, cert.pem, key.pem
from $DOCKER_CERT_PATH/<host:port>/ or $DOCKER_CERT_PATH/, default ~/.docker) or `ssh://user@host`
(the OpenSSH client and its config). docker-py speaks all three. Empty: the local engine alone,
unlimited.

An episode takes a slot on the least-loaded engine that has room (`place`, a pure function of the
engines' states); its sandbox, verifier and task image live on that engine. An engine that stops
answering fails only the episodes it holds (their reward is None with the error; rollout.py), then
backs off (2 s, doubling to 60 s) and is probed with a ping when its back-off ends; it takes
episodes again once it answers. Caps and counts are per process (per rank).

Peers do the same by listing engines: Orca-Agent-RL spreads 256 containers over 4 CPU nodes'
daemons.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors
import docker.tls
import requests.exceptions

import configs
from sandboxing import admission

log = logging.getLogger("termrl.hosts")

# the engine docker.from_env() finds; its name in sandbox.docker_hosts is the knob's (configs.py)
LOCAL = configs.LOCAL_DOCKER_HOST
MEMORY_SHARE = 0.8  # of an engine's MemTotal that episodes may take (the rest: its dockerd, the OS)
DISK_SHARE = 0.9  # of the free disk under its data root that episodes may take
# Disk of one episode at the default sandbox.storage_mb (admission.episode_bytes), for callers
# that give none.
EPISODE_DISK_BYTES = admission.episode_bytes(0, configs.SandboxConfig.storage_mb)[1]
BACKOFF_BASE_S, BACKOFF_MAX_S = 2.0, 60.0
PING_TIMEOUT_S = 5.0


class NoEngineError(RuntimeError):
    """No listed Docker engine can take an episode now; the message says why for each one."""


# --------------------------------------------------------------------------------------------------
# -------
# Pure functions over engine states (tests/test_hosts.py checks them with hand-computed cases)


@dataclass
class EngineState:
    """What placement knows of one engine. Times are time.monotonic() seconds."""

    url: str  # "local", "unix:///run/termrl-docker2.sock", "tcp://10.0.0.5:2376", "ssh://u@h"
    cap: int = 0  # most episodes in flight at once; 0 = no limit
    in_flight: int = 0  # episodes holding a slot now
    down_until: float | None = None  # backing off until then; None = answering
    failures: int = 0  # consecutive failures (the back-off doubles with each)
    placed: int = 0  # episodes placed here so far
    failed: int = 0  # episodes that failed because this engine stopped answering


# `URL` or `URL=N` -> (url, cap): the entry's syntax is the knob's, checked at start-up (configs.py).
parse_entry = configs.parse_docker_host


def load(e: EngineState) -> float:
    """Share of the engine's cap in use (in_flight / cap); in_flight itself when cap is 0 (no
    limit)."""
    return e.in_flight / e.cap if e.cap else float(e.in_flight)


def has_room(e: EngineState, now: float) -> bool:
    """Answering (or its back-off is over: it gets tried) and under its cap."""
    return (e.down_until is None or now >= e.down_until) and (e.cap == 0 or e.in_flight < e.cap)


def place(engines: list[EngineState], now: float) -> int:
    """Index of the engine the next episode goes to: the least loaded (`load`) of those with room;
    ties go to fewer episodes in flight, then to the earlier entry.

    Raises:
        NoEngineError: no engine has room; the message names each engine with its reason
            ("full 8/8", "backing off 12.0 s more").
    """
    fits = [i for i, e in enumerate(engines) if has_room(e, now)]
    if fits:
        return min(fits, key=lambda i: (load(engines[i]), engines[i].in_flight, i))
    why = [
        f"{e.url}: backing off {e.down_until - now:.1f} s more"
        if e.down_until is not None and now < e.down_until
        else f"{e.url}: full {e.in_flight}/{e.cap}"
        for e in engines
    ]
    raise NoEngineError("no Docker engine has room for an episode: " + "; ".join(why))


def backoff_s(failures: int) -> float:
    """Seconds an engine rests after its `failures`-th failure in a row: 2, 4, 8, ... at most 60."""
    return min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2 ** max(0, failures - 1))


def episodes_fit(mem_total: int, episode_mem: int, disk_free: int | None, episode_disk: int) -> int:
    """Episodes one engine can hold at once from what it reports: admission.episodes_fit (the one
    rule, also the trainer's host admission) of MEMORY_SHARE x mem_total and, when known,
    DISK_SHARE x disk_free; episode_mem, episode_disk from admission.episode_bytes. Bytes."""
    disk = None if disk_free is None else DISK_SHARE * disk_free
    return admission.episodes_fit(MEMORY_SHARE * mem_total, episode_mem, disk, episode_disk)


# --------------------------------------------------------------------------------------------------
# -------
# Clients


_lock = threading.Lock()
_clients: dict[tuple[str, float], docker.APIClient] = {}
_engines: list[EngineState] = [EngineState(LOCAL)]  # configure() replaces it
_configured = False


def _tls(url: str) -> docker.tls.TLSConfig:
    """Client certificates for a tcp:// engine: $DOCKER_CERT_PATH/<host:port>/ if present, else the
    folder."""
    root = Path(os.environ.get("DOCKER_CERT_PATH") or Path.home() / ".docker")
    hostport = url.removeprefix("tcp://")
    d = root / hostport if (root / hostport).is_dir() else root
    files = {n: d / n for n in ("ca.pem", "cert.pem", "key.pem")}
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        raise ValueError(
            f"sandbox.docker_hosts entry {url!r}: TLS needs {', '.join(missing)} (an engine on tcp "
            "without client certificates would give root to anyone who reaches it)"
        )
    return docker.tls.TLSConfig(
        client_cert=(str(files["cert.pem"]), str(files["key.pem"])),
        ca_cert=str(files["ca.pem"]),
        verify=True,
    )


def client(url: str, timeout: float = 60.0, pool: int = 64) -> docker.APIClient:
    """A process-wide docker-py low-level client for engine `url` with this socket timeout
    (seconds).

    Raises docker.errors.DockerException when the engine does not answer (the API version is asked).
    """
    with _lock:
        c = _clients.get((url, timeout))
    if c is not None:
        return c
    if url == LOCAL:
        c = docker.from_env(timeout=timeout, max_pool_size=pool).api
    elif url.startswith("tcp://"):
        c = docker.APIClient(base_url=url, tls=_tls(url), timeout=timeout, max_pool_size=pool)
    else:  # unix:// and ssh://
        c = docker.APIClient(
            base_url=url,
            timeout=timeout,
            max_pool_size=pool,
            use_ssh_client=url.startswith("ssh://"),
        )
    with _lock:
        return _clients.setdefault((url, timeout), c)


def unreachable(exc: BaseException | None) -> bool:
    """Whether an error (or one it was raised from) says the engine did not answer: connection
    refused or reset, socket missing, read timeout, the API version could not be fetched."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(
            exc,
            (
                requests.exceptions.ConnectionError,
                requests.exceptions.Timeout,
                ConnectionError,
                TimeoutError,
                asyncio.TimeoutError,
            ),
        ):
            return True
        no_version = "fetching server API version" in str(exc)
        if isinstance(exc, docker.errors.DockerException) and no_version:
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def ping(url: str) -> bool:
    """Whether engine `url` answers `GET /_ping` within PING_TIMEOUT_S."""
    try:
        return bool(client(url, PING_TIMEOUT_S).ping())
    except Exception:  # noqa: BLE001 - any failure means: not answering
        return False


# --------------------------------------------------------------------------------------------------
# -------
# The process's engines: configure at start-up, acquire/release a slot per episode


def info_line(url: str, info: dict, disk_free: int | None, fit: int, cap: int) -> str:
    """One start-up line per engine: what it reports and the episodes it takes."""
    disk = (
        f"{disk_free / 2**30:.0f} GiB free"
        if disk_free is not None
        else "disk free unknown (remote)"
    )
    return (
        f"[hosts] {url}: {info.get('NCPU', '?')} CPUs, "
        f"{info.get('MemTotal', 0) / 2**30:.1f} GiB, {disk}; "
        f"fits {fit} episodes, cap {cap}"
    )


def _disk_free(url: str, info: dict) -> int | None:
    """Free bytes under the engine's data root when it is on this machine (a unix socket), else
    None."""
    root = info.get("DockerRootDir")
    if url.startswith(("ssh://", "tcp://")) or not root or not os.path.isdir(root):
        return None
    st = os.statvfs(root)
    return st.f_bavail * st.f_frsize


def configure(entries, episode_mem: int, episode_disk: int = EPISODE_DISK_BYTES) -> list[str]:
    """Make `entries` (sandbox.docker_hosts) this process's engines; return one line per engine.

    Empty entries: the local engine alone with no cap (nothing asked of it). Otherwise each engine
    is asked for `docker info`; its cap is N from `URL=N` or, without one, what fits (episodes_fit).
    Two engines on one machine both report all of its memory: give them caps.
    Raises:
        ValueError: naming the entry: malformed, listed twice, not answering, or fits no episode.
    """
    global _engines, _configured
    if not entries:
        with _lock:
            _engines = [EngineState(LOCAL)]
            _configured = False
        return []
    states = []
    lines = []
    for entry in entries:
        url, cap = parse_entry(entry)
        if any(s.url == url for s in states):
            raise ValueError(f"sandbox.docker_hosts entry {entry!r}: {url} is listed twice")
        try:
            info = client(url).info()
        except Exception as e:
            raise ValueError(
                f"sandbox.docker_hosts entry {entry!r}: the engine does not answer: {e}"
            ) from e
        disk = _disk_free(url, info)
        fit = episodes_fit(int(info.get("MemTotal") or 0), episode_mem, disk, episode_disk)
        if fit < 1:
            raise ValueError(
                f"sandbox.docker_hosts entry {entry!r}: the engine cannot take one episode "
                f"({episode_mem >> 20} MiB of memory and {episode_disk >> 20} MiB of disk each): "
                + info_line(url, info, disk, fit, 0).removeprefix("[hosts] ")
            )
        cap = min(cap, fit) if cap else fit
        states.append(EngineState(url, cap))
        lines.append(info_line(url, info, disk, fit, cap))
    with _lock:
        _engines = states
        _configured = True
    return lines


def urls() -> list[str]:
    """The endpoints of this process's engines, in their listed order."""
    with _lock:
        return [e.url for e in _engines]


def default_url() -> str:
    """The first listed engine: where work without a placement goes (image builds of tools,
    reaping)."""
    with _lock:
        return _engines[0].url


def states() -> list[EngineState]:
    """Copies of the engines' states (for summaries and tests)."""
    with _lock:
        return [dataclasses.replace(e) for e in _engines]


async def acquire(poll_s: float = 0.1) -> str:
    """Take a slot on the least-loaded engine with room; return its url. Waits while every answering
    engine is full. An engine whose back-off is over is pinged first and used again if it answers.

    Raises:
        NoEngineError: every engine is backing off (none answers); the message names each.
    """
    while True:
        now = time.monotonic()
        with _lock:
            due = [e for e in _engines if e.down_until is not None and now >= e.down_until]
            for e in due:  # other episodes skip it while this one pings it
                e.down_until = now + PING_TIMEOUT_S + 1.0
        for e in due:  # tried again once its back-off is over
            ok = await asyncio.to_thread(ping, e.url)
            with _lock:
                if ok:
                    log.warning("engine %s answers again; placing episodes on it", e.url)
                    e.down_until = None
                    e.failures = 0
                else:
                    e.failures += 1
                    e.down_until = time.monotonic() + backoff_s(e.failures)
        with _lock:
            try:
                e = _engines[place(_engines, time.monotonic())]
                e.in_flight += 1
                e.placed += 1
                return e.url
            except NoEngineError:
                if all(x.down_until is not None for x in _engines):
                    raise
        await asyncio.sleep(poll_s)


def release(url: str, error: BaseException | None = None) -> bool:
    """Give back the slot taken by acquire(). With an error that says the engine did not answer
    (`unreachable`) and a failed ping, the engine backs off; returns whether it did. Blocking (a
    ping): call it from a worker thread."""
    down = error is not None and unreachable(error) and not ping(url)
    with _lock:
        for e in _engines:
            if e.url != url:
                continue
            e.in_flight = max(0, e.in_flight - 1)
            if down:
                e.failed += 1
                if e.down_until is None:  # the first episode to notice starts the back-off
                    e.failures += 1
                    e.down_until = time.monotonic() + backoff_s(e.failures)
                    log.warning(
                        "engine %s stopped answering (%s); backing off %.0f s",
                        url,
                        type(error).__name__,
                        backoff_s(e.failures),
                    )
    return down


def host_resources() -> tuple[int, int]:
    """(bytes of RAM available now: MemAvailable of /proc/meminfo, bytes free for containers:
    statvfs of the engine's data root, `docker info` DockerRootDir, or of the nearest parent this
    process can reach)."""
    with open("/proc/meminfo") as f:
        ram = next(int(line.split()[1]) << 10 for line in f if line.startswith("MemAvailable:"))
    path = Path(client(default_url()).info().get("DockerRootDir") or "/var/lib/docker")
    while True:
        try:
            st = os.statvfs(path)
            return ram, st.f_bavail * st.f_frsize
        # not readable by this user (a docker-group member): its parent's filesystem
        except OSError:
            if path == path.parent:
                raise
            path = path.parent
