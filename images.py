"""Task images: build (or reuse) the image of a task from its Dockerfile and build context.

Images are content-addressed (`termrl/task-<id>:<hash12>` over the Dockerfile, every context file and the
base image's id), built once per tag under a thread lock and a file lock, with the hidden tests left out of
the build context. Containers from these images are sandbox.py's concern.
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import hashlib
import io
import logging
import os
import re
import tarfile
import threading
from pathlib import Path

import docker
import docker.errors

import configs
from sandbox import docker_api

log = logging.getLogger("termrl.images")

# $BASE_IMAGE, else termrl/base:bookworm: the same default as configs.SandboxConfig.base_image.
BASE_IMAGE = configs.default_base_image()


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
    tests = Path(task.tests_dir).resolve() if getattr(task, "tests_dir", None) else None
    out = []
    for root, dirs, files in os.walk(context):
        root_p = Path(root)
        dirs[:] = sorted(d for d in dirs if tests is None or (root_p / d).resolve() != tests)
        for f in sorted(files):
            out.append(((root_p / f).relative_to(context).as_posix(), root_p / f))
    return out


def build_image(task, base_image: str | None = None) -> str:
    """Build (or reuse) the image of a task; return its tag `termrl/task-<id>:<hash12>`.

    The hash is sha256 over the Dockerfile, every build-context file (name, mode, content; the tests dir
    excluded) and the base image's id, so a changed file or base image gives a new tag and an unchanged
    task reuses the old one. Builds of one tag are serialised by a thread lock and an fcntl file lock, so
    concurrent requests from threads and processes build it once. The build passes `--build-arg BASE_IMAGE`.

    Args:
        task: has `id` (str), `dockerfile` (Path), `context_dir` (Path), optionally `tests_dir` (Path).
        base_image: the image the Dockerfile builds FROM; default BASE_IMAGE.
    Raises:
        ValueError: task.id is not usable in an image name, or task.dockerfile / task.context_dir is missing.
        ImageBuildError: the base image is missing or the build failed (`.log_tail` has the log's last lines).
    """
    base = base_image or BASE_IMAGE
    if not re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,100}", str(task.id)):
        raise ValueError(f"task.id = {task.id!r}: must be lowercase letters, digits, '.', '_' or '-' (image name)")
    dockerfile, context = Path(task.dockerfile), Path(task.context_dir)
    if not dockerfile.is_file():
        raise ValueError(f"task {task.id}: task.dockerfile = {str(dockerfile)!r} is not a file")
    if not context.is_dir():
        raise ValueError(f"task {task.id}: task.context_dir = {str(context)!r} is not a directory")
    api = docker_api(60.0)
    try:
        base_id = api.inspect_image(base)["Id"]
    except docker.errors.ImageNotFound:
        raise ImageBuildError(f"task {task.id}: base image {base!r} not found (run scripts/setup.sh)") from None

    files = _context_files(task)
    h = hashlib.sha256(b"termrl-image-v1\0" + base_id.encode() + b"\0" + dockerfile.read_bytes())
    for name, path in files:
        h.update(f"\0{name}\0{path.lstat().st_mode:o}\0".encode())
        h.update(os.readlink(path).encode() if path.is_symlink() else path.read_bytes())
    tag = f"termrl/task-{task.id}:{h.hexdigest()[:12]}"

    with _tag_locks[tag], open(_lock_dir() / (tag.replace("/", "_").replace(":", "_") + ".lock"), "w") as lf:
        fcntl.flock(lf, fcntl.LOCK_EX)  # released when the file closes
        with contextlib.suppress(docker.errors.ImageNotFound):
            api.inspect_image(tag)
            return tag
        log.info("building image %s", tag)
        _build(task.id, tag, base, dockerfile, files)
    return tag


def _build(task_id: str, tag: str, base: str, dockerfile: Path, files: list[tuple[str, Path]]) -> None:
    """Send the context as a tar built here (so the tests dir is left out) and stream the build log."""
    buf = io.BytesIO()
    df_name = ".termrl.Dockerfile"
    # Listed in .dockerignore, the builder still reads these two but COPY never copies them into the image.
    ignore = b"".join(p.read_bytes() for n, p in files if n == ".dockerignore") + f"\n{df_name}\n.dockerignore\n".encode()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, path in files:
            if name != ".dockerignore":
                tar.add(path, arcname=name, recursive=False)
        for name, data in ((df_name, dockerfile.read_bytes()), (".dockerignore", ignore)):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    tail: collections.deque[str] = collections.deque(maxlen=40)
    try:
        for chunk in docker_api(3600.0).build(fileobj=buf, custom_context=True, tag=tag, dockerfile=df_name, rm=True,
                                         forcerm=True, pull=False, decode=True, buildargs={"BASE_IMAGE": base},
                                         network_mode="none", labels={"termrl.task": task_id}):
            if "stream" in chunk:
                tail.extend(line for line in chunk["stream"].rstrip("\n").split("\n"))
            if "error" in chunk:
                tail.append(chunk["error"].rstrip())
                raise ImageBuildError(f"task {task_id}: building {tag} failed: {chunk['error'].strip()}",
                                      "\n".join(tail))
    except docker.errors.APIError as e:
        raise ImageBuildError(f"task {task_id}: building {tag} failed: {e.explanation or e}", "\n".join(tail)) from e
