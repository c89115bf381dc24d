"""Task images: build (or reuse) the image of a task from its Dockerfile and build context.

A rollout's images are built on every listed Docker engine at once before its episodes start (`build_images`);
an image that failed on every engine fails each of the task's episodes (`build_error`).

Images are content-addressed (`termrl/task-<id>:<hash12>` over the Dockerfile, every context file and the
base image's id), built once per tag under a thread lock and a file lock, with the hidden tests left out of
the build context. Containers from these images are sandbox.py's concern.

Dockerfiles as people write them are made buildable by docker-py's classic builder without a registry:
BuildKit heredocs are expanded (sandboxing/dockerfile.py); a FROM image that is not present locally is replaced
by the local base its IMAGE_MAP entry names (one log line per mapping; an unmapped one is a per-task error);
the task's build_setup (test-only packages from a Terminal-Bench run-tests.sh) is run in a last layer.
Builds get a network only when the run allows it (`build_network`: "bridge", or "auto" = a Dockerfile that
fetches packages when a package mirror of this machine's apt or pip configuration answers), and then the
engine's bridge, never the host's network namespace (its loopback services stay out of reach), trusting
the host's CA bundle (networks that intercept TLS); containers at run time never get a network. Each build
runs under limits.BuildLimits: memory and processes of its RUN steps, and one wall clock for the whole
build (`_build`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import fcntl
import fnmatch
import functools
import hashlib
import importlib.util
import io
import json
import logging
import os
import re
import secrets
import socket
import ssl
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import docker
import docker.errors
import httpx
import requests.exceptions
import urllib3.exceptions

import configs
from sandboxing import hosts
from sandboxing.calls import docker_api
from sandboxing.dockerfile import expand_heredocs, rewrite_from
from sandboxing.dockerfile import parse as parse_dockerfile
from sandboxing.limits import BuildLimits

log = logging.getLogger("termrl.images")

# $BASE_IMAGE, else termrl/base:bookworm: the same default as configs.SandboxConfig.base_image.
BASE_IMAGE = configs.default_base_image()
# "pattern=local image" (fnmatch); the first match wins
IMAGE_MAP = configs.SandboxConfig().image_map
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
_NETWORK_RUN = re.compile(
    r"\b(apt-get|apt|apk|yum|dnf)\s+(update|install|add)\b|\bpip3?\s+install\b|\buv\s+(add|pip|sync)\b|"
    r"\b(curl|wget)\b|\bgit\s+clone\b|\b(npm|yarn|pnpm)\s+(install|ci|add)\b|\bgo\s+(get|mod)\b|"
    r"\bcargo\s+(install|build|fetch)\b|\bconda\s+install\b"
)


class ImageBuildError(RuntimeError):
    """A task image failed to build. `log_tail` holds the last lines of the build log."""

    def __init__(self, message: str, log_tail: str = ""):
        super().__init__(message + (f"\n--- build log (tail) ---\n{log_tail}" if log_tail else ""))
        self.log_tail = log_tail


def _lock_dir() -> Path:
    d = configs.cache_dir() / "locks"
    d.mkdir(parents=True, exist_ok=True)
    return d


_tag_locks: dict[str, threading.Lock] = collections.defaultdict(threading.Lock)


def _context_files(task) -> list[tuple[str, Path]]:
    """(name in the build context, host path) for every file sent to the builder, sorted.

    The tests directory is left out even when it lies inside the context: hidden tests must never be
    reachable from the image (a `COPY . /app` would otherwise leak them).
    """
    context = Path(task.context_dir)
    tests = Path(task.tests_dir).resolve() if task.tests_dir is not None else None
    out = []
    for root, dirs, files in os.walk(context):
        root_p = Path(root)
        dirs[:] = sorted(d for d in dirs if tests is None or (root_p / d).resolve() != tests)
        for f in sorted(files):
            out.append(((root_p / f).relative_to(context).as_posix(), root_p / f))
    return out


_logged_mappings: set[tuple[str, str]] = set()
_mapped: dict[str, list[tuple[str, str]]] = {}  # task id -> its latest (FROM image, stand-in) pairs
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # colour and cursor escapes (ECMA-48 CSI)
_APT_MISSING = re.compile(
    r"Unable to locate package (\S+)|Package '?([^' ]+)'? has no installation candidate"
)


def map_image(image: str, image_map=None, present=None) -> str | None:
    """The local image a FROM image maps to under image_map ("pattern=image", fnmatch, first match), or None.

    present(image) -> bool says whether an image is present locally (default: ask the Docker engine); a
    present image maps to itself. Raises ValueError for a malformed entry.
    """
    present = present or _present
    if present(image):
        return image
    for entry in IMAGE_MAP if image_map is None else image_map:
        pattern, sep, target = entry.partition("=")
        if not sep or not pattern.strip() or not target.strip():
            raise ValueError(f"sandbox.image_map entry {entry!r}: must be 'pattern=image'")
        if fnmatch.fnmatchcase(image, pattern.strip()):
            return target.strip()
    return None


def _present(image: str, host: str | None = None) -> bool:
    try:
        docker_api(60.0, host).inspect_image(image)
        return True
    except docker.errors.ImageNotFound:
        return False


def send_image(image: str, host: str | None) -> None:
    """Make `image` present on engine `host` by streaming it from the first listed engine
    (`docker save | docker load` through docker-py's get_image/load_image: no registry). Once per image and
    engine under a lock; an image already there (same name) is left as it is.

    Raises ImageBuildError naming the image and both engines when neither has it or the transfer fails.
    """
    src = hosts.default_url()
    if host in (None, src):
        return
    with _tag_locks[f"send {image} {host}"]:
        if _present(image, host):
            return
        log.info("sending image %s from %s to %s (docker save | docker load)", image, src, host)
        if not _present(image, src):
            raise ImageBuildError(
                f"image {image!r} is on neither {host} nor {src} (run scripts/setup.sh)"
            )
        try:
            for msg in docker_api(3600.0, host).load_image(
                docker_api(3600.0, src).get_image(image), quiet=True
            ):
                if msg.get("error"):
                    raise ImageBuildError(
                        f"sending image {image!r} from {src} to {host}: {msg['error']}"
                    )
        except docker.errors.APIError as e:
            raise ImageBuildError(
                f"sending image {image!r} from {src} to {host} failed: {e.explanation or e}"
            ) from e
        if not _present(image, host):
            raise ImageBuildError(
                f"sending image {image!r} from {src} to {host}: not there after the load"
            )


@functools.lru_cache(maxsize=1)
def _host_pip_env() -> tuple[tuple[str, str], ...]:
    """PIP_INDEX_URL / PIP_EXTRA_INDEX_URL / PIP_TRUSTED_HOST from this machine's pip configuration (http(s) only:
    file:// indexes and constraint files are host paths a build cannot see)."""
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    env = {}
    for line in out.splitlines():
        key, _, value = line.partition("=")
        name = key.rsplit(".", 1)[-1]
        urls = [u for u in value.strip("'\"").split() if u.startswith(("http://", "https://"))]
        if name in ("index-url", "extra-index-url") and urls:
            env[f"PIP_{name.upper().replace('-', '_')}"] = " ".join(urls)
        elif name == "trusted-host" and value.strip("'\""):
            env["PIP_TRUSTED_HOST"] = value.strip("'\"")
    return tuple(sorted(env.items()))


@functools.lru_cache(maxsize=1)
def mirrors_reachable() -> bool:
    """Whether a package mirror of this machine's configuration answers: the apt mirror of the host's Debian
    suite (scripts/apt_mirror.py) or the pip index (host pip config, else PyPI). One HTTP request each,
    5 s timeout; the answer is kept for the process."""
    spec = importlib.util.spec_from_file_location(
        "apt_mirror", Path(__file__).resolve().parents[1] / "scripts" / "apt_mirror.py"
    )
    apt_mirror = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(apt_mirror)
    suite = (
        next(
            (
                ln.split("=", 1)[1].strip()
                for ln in Path("/etc/os-release").read_text().splitlines()
                if ln.startswith("VERSION_CODENAME=")
            ),
            "",
        )
        if Path("/etc/os-release").is_file()
        else ""
    )
    pip_index = dict(_host_pip_env()).get("PIP_INDEX_URL", "https://pypi.org/simple/").split()[0]
    for url in [*apt_mirror.mirrors(suite)[:1], pip_index]:
        try:
            verify = (
                ssl.create_default_context(cafile=str(HOST_CA_BUNDLE))
                if HOST_CA_BUNDLE.is_file()
                else True
            )
            if httpx.head(url, timeout=5.0, follow_redirects=True, verify=verify).status_code < 500:
                return True
        except httpx.HTTPError:
            continue
    return False


def _network_mode(build_network: str, task) -> str:
    """'bridge' or 'none' for this task's build: "auto" gives the bridge only to a build that fetches
    packages (a RUN/ADD that installs or downloads, or a build_setup) when a mirror answers
    (configs.validate checks sandbox.build_network at start-up). Raises ValueError for another value."""
    if build_network == "auto":
        return "bridge" if _network_hint(task, "none") and mirrors_reachable() else "none"
    if build_network not in ("bridge", "none"):  # never the host's network namespace
        raise ValueError(f"build_network = {build_network!r}: must be 'auto', 'bridge' or 'none'")
    return build_network


def _with_host_trust(text: str, files: dict[str, bytes]) -> str:
    """After each FROM of an external image: the host's CA bundle and pip index settings, for builds that
    use the network (some networks intercept TLS with their own CA)."""
    if not HOST_CA_BUNDLE.is_file():
        return text
    files[".termrl-build/ca.crt"] = HOST_CA_BUNDLE.read_bytes()
    ca = "/usr/local/share/termrl-host-ca.crt"
    env = [("PIP_CERT", ca), ("SSL_CERT_FILE", ca), ("REQUESTS_CA_BUNDLE", ca), *_host_pip_env()]
    inject = [f"COPY .termrl-build/ca.crt {ca}", "ENV " + " ".join(f'{k}="{v}"' for k, v in env)]
    lines = text.splitlines()
    stages = {w.lower() for w in _stage_names(text)}
    for ins in reversed([i for i in parse_dockerfile(text) if i.keyword == "FROM"]):
        words = [w for w in ins.args.split() if not w.startswith("--")]
        if words and words[0].lower() not in stages:
            lines[ins.last : ins.last] = inject
    return "\n".join(lines) + "\n"


def _stage_names(text: str) -> set[str]:
    out = set()
    for ins in parse_dockerfile(text):
        words = ins.args.split()
        if ins.keyword == "FROM" and len(words) >= 3 and words[-2].lower() == "as":
            out.add(words[-1])
    return out


def prepare_dockerfile(
    task, base: str, image_map=None, network: str = "none", host: str | None = None
) -> tuple[str, dict[str, bytes], list[str]]:
    """The Dockerfile text to build, extra build-context files, and the FROM images it builds on.

    Steps: the task's build_setup appended as a last `RUN` layer (as root, the last USER restored);
    heredocs expanded; FROM images not present locally mapped by image_map (one log line per mapping);
    with network "bridge", the host's CA bundle and pip index settings after each FROM.
    Raises ImageBuildError naming the task for a malformed heredoc and an unmapped image that is not present.
    host: the Docker engine asked what is present (a sandbox.docker_hosts url; None = the first listed).
    """
    # Present here, or on the first engine, from which build_image sends it (send_image).
    present = (
        functools.partial(_present, host=host)
        if host in (None, hosts.default_url())
        else (lambda image: _present(image, host) or _present(image))
    )
    text = Path(task.dockerfile).read_text(encoding="utf-8", errors="replace")
    setup = task.build_setup
    if setup:
        users = [i.args for i in parse_dockerfile(text) if i.keyword == "USER"]
        text = (
            text.rstrip("\n")
            + f"\nUSER root\nRUN <<TERMRL_BUILD_SETUP\nset -e\n{setup.rstrip()}\nTERMRL_BUILD_SETUP\n"
        )
        text += (
            f"USER {users[-1]}\n" if users and users[-1].split(":")[0] not in ("root", "0") else ""
        )
    try:
        text, files = expand_heredocs(text)
    except ValueError as e:
        raise ImageBuildError(f"task {task.id}: {task.dockerfile}: {e}") from None
    used = []
    mapped = []

    def resolve(image: str) -> str:
        target = map_image(image, image_map, present)
        if target is None:
            raise ImageBuildError(
                f"task {task.id}: FROM {image} is not present locally and cannot be pulled (no "
                "registry); map it to a local image in sandbox.image_map ('pattern=image') or load it"
            )
        if target != image:
            mapped.append((image, target))
            if (task.id, image) not in _logged_mappings:
                _logged_mappings.add((task.id, image))
                log.info("task %s: FROM %s -> %s (sandbox.image_map)", task.id, image, target)
            if not present(target):
                raise ImageBuildError(
                    f"task {task.id}: FROM {image} maps to {target}, which is not present locally "
                    "(run scripts/setup.sh)"
                )
        used.append(target)
        return target

    text, _ = rewrite_from(text, resolve)
    if any(
        "$" in ins.args.split()[0]
        for ins in parse_dockerfile(text)
        if ins.keyword == "FROM" and ins.args
    ):
        used.append(base)  # FROM ${BASE_IMAGE}
    if network != "none":
        text = _with_host_trust(text, files)
    _mapped[task.id] = mapped
    return text, files, used


def _network_hint(task, mode: str) -> str:
    """' (needs network ...)' when the build failed offline at a step that fetches packages."""
    if mode != "none":
        return ""
    for ins in parse_dockerfile(
        Path(task.dockerfile).read_text(encoding="utf-8", errors="replace")
    ):
        if ins.keyword in ("RUN", "ADD") and _NETWORK_RUN.search(ins.args):
            return (
                f"needs network at build time (Dockerfile line {ins.first}: {ins.keyword} "
                f"{' '.join(ins.args.split())[:120]}) and no package mirror is reachable from this machine; "
            )
    if task.build_setup:
        return "needs network at build time (test-only packages from run-tests.sh) and no package mirror is reachable; "
    return ""


def build_image(
    task,
    base_image: str | None = None,
    image_map=None,
    build_network: str | None = None,
    host: str | None = None,
    limits: BuildLimits | None = None,
) -> str:
    """Build (or reuse) the image of a task; return its tag `termrl/task-<id>:<hash12>`.

    The hash is sha256 over the prepared Dockerfile (prepare_dockerfile), every build-context file (name,
    mode, content; the hidden tests dir excluded) and the ids of the images it builds FROM, so a changed
    file or base image gives a new tag and an unchanged task reuses the old one. Builds of one tag are
    serialised by a thread lock and an fcntl file lock, so concurrent requests from threads and processes
    build it once. The build passes `--build-arg BASE_IMAGE`.

    Args:
        task: a tasks.Task, or a sidecar's build (sandboxing/compose.py): `id` (str), `dockerfile` (Path),
            `context_dir` (Path), `tests_dir` (Path, or None: no hidden tests) and `build_setup` (str | None).
        base_image: the image `FROM ${BASE_IMAGE}` builds on; default BASE_IMAGE.
        image_map: "pattern=image" entries for FROM images not present locally; default IMAGE_MAP.
        build_network: "none", "bridge" or "auto" (bridge when mirrors_reachable()); default the config's.
        host: the Docker engine to build on (a sandbox.docker_hosts url; None = the first listed). An image
            it builds FROM that this engine lacks is sent from the first engine (send_image), no registry.
        limits: memory, processes and wall clock of the build; default the config's (BuildLimits).
    Raises:
        ValueError: task.id is not usable in an image name, task.dockerfile / task.context_dir is missing,
            or a malformed image_map entry (both knobs are checked at start-up by configs.validate).
        ImageBuildError: an image it builds FROM is missing or unmapped, or the build failed (`.log_tail` has
            the log's last lines; an offline build failing at a package install says it needs network; an
            apt package missing from a stand-in base is named with the mapping: `apt_missing`).
    """
    base = base_image or BASE_IMAGE
    if not re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,100}", str(task.id)):
        raise ValueError(
            f"task.id = {task.id!r}: must be lowercase letters, digits, '.', '_' or '-' (image name)"
        )
    dockerfile = Path(task.dockerfile)
    context = Path(task.context_dir)
    if not dockerfile.is_file():
        raise ValueError(f"task {task.id}: task.dockerfile = {str(dockerfile)!r} is not a file")
    if not context.is_dir():
        raise ValueError(f"task {task.id}: task.context_dir = {str(context)!r} is not a directory")
    mode = _network_mode(build_network or configs.SandboxConfig().build_network, task)
    text, extra, used = prepare_dockerfile(task, base, image_map, mode, host)
    files = _context_files(task)
    tag = _content_tag(task.id, _base_ids(task.id, used, host), text, files, extra)
    with (
        _tag_locks[tag],
        open(_lock_dir() / (tag.replace("/", "_").replace(":", "_") + ".lock"), "w") as lf,
    ):
        fcntl.flock(lf, fcntl.LOCK_EX)  # released when the file closes
        with contextlib.suppress(docker.errors.ImageNotFound):
            docker_api(60.0, host).inspect_image(tag)
            return tag
        log.info("building image %s (network %s)", tag, mode)
        try:
            _build(
                task.id,
                tag,
                base,
                text,
                files,
                extra,
                mode,
                host,
                limits or BuildLimits.from_config(configs.SandboxConfig()),
            )
        except ImageBuildError as e:
            raise _explained(task, mode, e) from None
    return tag


async def build_images(
    tasks: list, cfg: configs.SandboxConfig
) -> dict[str, dict[str, str | Exception]]:
    """Each task's image on every listed Docker engine (hosts.urls()), all built at once, each
    build_image in a worker thread (a build blocks for minutes), with cfg's base_image, image_map,
    build_network and build limits. Returns task id -> engine url -> tag, or the Exception its build raised: a failed
    build is reported per trajectory (build_error), never raised here."""
    images: dict[str, dict[str, str | Exception]] = {}

    async def build(task, host: str) -> None:
        try:
            tag = await asyncio.to_thread(
                build_image,
                task,
                cfg.base_image,
                cfg.image_map,
                cfg.build_network,
                host,
                BuildLimits.from_config(cfg),
            )
        except Exception as e:
            # reported per trajectory
            tag = e
        images.setdefault(task.id, {})[host] = tag

    unique = {t.id: t for t in tasks}.values()
    await asyncio.gather(*(build(t, h) for t in unique for h in hosts.urls()))
    return images


def build_error(image: dict) -> Exception | None:
    """The error of a task's image ({engine url: tag or Exception}, from build_images) when it
    failed to build on every engine (the first engine's), else None."""
    if not all(isinstance(x, Exception) for x in image.values()):
        return None
    return next(iter(image.values()))


def _base_ids(task_id: str, used: list[str], host: str | None) -> list[str]:
    """The image ids of the images a build is FROM, each sent to `host` first when it lacks them."""
    api = docker_api(60.0, host)
    ids = []
    for image in used:
        send_image(image, host)
        try:
            ids.append(api.inspect_image(image)["Id"])
        except docker.errors.ImageNotFound:
            raise ImageBuildError(
                f"task {task_id}: base image {image!r} not found (run scripts/setup.sh)"
            ) from None
    return ids


def _content_tag(task_id: str, ids: list[str], text: str, files, extra: dict[str, bytes]) -> str:
    """termrl/task-<id>:<sha256[:12] over the base ids, the Dockerfile, context files and extras>."""
    h = hashlib.sha256(b"termrl-image-v2\0" + "\0".join(ids).encode() + b"\0" + text.encode())
    for name, path in files:
        h.update(f"\0{name}\0{path.lstat().st_mode:o}\0".encode())
        h.update(os.readlink(path).encode() if path.is_symlink() else path.read_bytes())
    for name, data in sorted(extra.items()):
        h.update(f"\0{name}\0".encode() + data)
    return f"termrl/task-{task_id}:{h.hexdigest()[:12]}"


def _explained(task, mode: str, e: ImageBuildError) -> ImageBuildError:
    """A failed build's error with its likely cause first: an apt package the stand-in base's Debian
    suite does not have (named, with the FROM mapping: there is no Ubuntu mirror here), or a package
    step that needed the network an offline build lacks; else e itself."""
    first = str(e).split(": ", 2)[-1].splitlines()[0]
    plain = _ANSI.sub("", e.log_tail)  # apt colours its errors on a terminal-like build log
    missing = next((m.group(1) or m.group(2) for m in _APT_MISSING.finditer(plain)), None)
    mapped = _mapped.get(task.id) or []
    if missing and mapped and mode != "none":  # offline, apt finds no package at all
        image, target = mapped[-1]
        err = ImageBuildError(
            f"task {task.id}: apt package {missing!r} does not exist in {target}, the Debian base "
            f"that stands in for FROM {image} (sandbox.image_map; no mirror of {image}'s "
            f"distribution here): install it under its Debian name, or load a real {image} "
            f"image locally; build failed: {first}",
            e.log_tail,
        )
        err.apt_missing = missing
        return err
    hint = _network_hint(task, mode)
    if hint:
        return ImageBuildError(f"task {task.id}: {hint}build failed: {first}", e.log_tail)
    return e


def _build(
    task_id: str,
    tag: str,
    base: str,
    text: str,
    files: list[tuple[str, Path]],
    extra: dict[str, bytes],
    network: str,
    host: str | None,
    limits: BuildLimits,
) -> None:
    """Send the context as a tar built here (so the tests dir is left out) and stream the build log,
    under `limits`: memory (swap equal) of each RUN step's container, its processes in a cgroup of
    their own (`_build_cgroup`), and the whole build's wall clock: past limits.deadline_s the connection
    is shut, which makes the engine cancel the build and kill its step (a per-line socket timeout would
    restart with every line the build prints)."""
    buf = io.BytesIO()
    df_name = ".termrl.Dockerfile"
    # Listed in .dockerignore, the builder still reads these two but COPY never copies them into the image.
    ignore = (
        b"".join(p.read_bytes() for n, p in files if n == ".dockerignore")
        + f"\n{df_name}\n.dockerignore\n".encode()
    )
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, path in files:
            if name != ".dockerignore" and name not in extra:
                tar.add(path, arcname=name, recursive=False)
        for name, data in (
            (df_name, text.encode()),
            (".dockerignore", ignore),
            *sorted(extra.items()),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    tail: collections.deque[str] = collections.deque(maxlen=40)
    api = docker_api(limits.deadline_s + 60.0, host)
    params = {
        "t": tag,
        "dockerfile": df_name,
        "rm": "1",
        "forcerm": "1",
        "pull": "0",
        "buildargs": json.dumps({"BASE_IMAGE": base}),
        "networkmode": network,
        "labels": json.dumps({"termrl.task": task_id}),
        "memory": limits.memory_bytes,
        "memswap": limits.memory_bytes,
    }
    expired = threading.Event()
    with _build_cgroup(api, host, limits.pids) as parent:
        if parent:
            params["cgroupparent"] = parent
        try:
            res = api._post(
                api._url("/build"),
                data=buf,
                params=params,
                headers={"Content-Type": "application/tar"},
                stream=True,
            )
            with contextlib.closing(res):
                api._raise_for_status(res)
                sock = api._get_raw_response_socket(res)
                sock = getattr(sock, "_sock", sock)  # a SocketIO over the engine's unix socket

                def expire():
                    expired.set()
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)

                timer = threading.Timer(limits.deadline_s, expire)
                timer.daemon = True
                timer.start()
                try:
                    for chunk in api._stream_helper(res, decode=True):
                        if "stream" in chunk:
                            tail.extend(chunk["stream"].rstrip("\n").split("\n"))
                        if "error" in chunk:
                            tail.append(chunk["error"].rstrip())
                            raise ImageBuildError(
                                f"task {task_id}: building {tag} failed: {chunk['error'].strip()}",
                                "\n".join(tail),
                            )
                finally:
                    timer.cancel()
        except (
            docker.errors.APIError,
            OSError,
            ValueError,
            requests.exceptions.RequestException,
            urllib3.exceptions.HTTPError,
        ) as e:  # the connection shut at the deadline ends the read with any of these
            if not expired.is_set():
                why = e.explanation if isinstance(e, docker.errors.APIError) else e
                raise ImageBuildError(
                    f"task {task_id}: building {tag} failed: {why or e}", "\n".join(tail)
                ) from e
        if expired.is_set():
            raise ImageBuildError(
                f"task {task_id}: building {tag} ran past its wall clock of {limits.deadline_s:g} s "
                "(sandbox.build_timeout_s): cancelled",
                "\n".join(tail),
            )


@contextlib.contextmanager
def _build_cgroup(api, host: str | None, pids: int):
    """The cgroup parent of one build's step containers, `/termrl-build/<random>`, made on this
    machine with pids.max = `pids` (cgroup v1's pids hierarchy, or v2 with the pids controller), and
    removed after the build; yields its path for the engine, or None (one warning line per process)
    where it cannot be made: an engine on another machine, one whose cgroup driver is systemd, or a
    cgroup file system this process cannot write."""
    why = None
    if host not in (None, hosts.LOCAL):
        why = "the engine runs on another machine"
    else:
        info = api.info()
        if info.get("CgroupDriver") != "cgroupfs":
            why = f"the engine's cgroup driver is {info.get('CgroupDriver')!r}, not cgroupfs"
    name = f"/termrl-build/{secrets.token_hex(6)}"
    made = None
    if why is None:
        v1 = Path("/sys/fs/cgroup/pids")
        made = (v1 if v1.is_dir() else Path("/sys/fs/cgroup")) / name.lstrip("/")
        try:
            made.mkdir(parents=True)
            (made / "pids.max").write_text(f"{pids}\n")
        except OSError as e:
            why = f"{made} cannot be made ({e.strerror})"
            made = None
    if why is not None and why not in _cgroup_said:
        _cgroup_said.add(why)
        log.warning("image builds run without a process limit: %s", why)
    try:
        yield name if made else None
    finally:
        if made is not None:
            _remove_cgroups(name)


def _remove_cgroups(name: str, tries: int = 25) -> None:
    """Remove the build's cgroup `name` from every hierarchy (v1 has one per controller), the engine's
    step cgroups inside first; the engine removes a cancelled or failed step's container just after
    the build's stream ends, so this tries for a few seconds until none is left."""
    for _ in range(tries):
        tops = list(Path("/sys/fs/cgroup").glob("*" + name)) + list(
            Path("/sys/fs/cgroup").glob(name.lstrip("/"))
        )
        for top in tops:
            for d in sorted((p for p in top.rglob("*") if p.is_dir()), reverse=True):
                with contextlib.suppress(OSError):
                    d.rmdir()
            with contextlib.suppress(OSError):
                top.rmdir()
        if not any(top.exists() for top in tops):
            return
        time.sleep(0.2)
    log.warning("the build cgroup %s is still in use; left for the engine", name)


_cgroup_said: set[str] = set()
