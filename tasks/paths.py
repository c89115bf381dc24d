"""Every path a task file names, or termrl reads from a task folder, checked to stay inside it.

A published task folder is third-party input and termrl runs as root: a name or path taken from it
(a compose `build.dockerfile`, a sidecar's name, instruction.md, tests/, solution/, ...) must not
lead termrl to read or write a host file outside the folder. `inside` refuses, in one line naming
the field, a path with a `..` part, an absolute path, and one whose resolution (symlinks followed)
leaves the folder; a symlink that stays inside is allowed. `check_task_paths` applies it to every
path of a loaded Task, and to every file of its solution/ (which put_solution copies whole).
Symlinks in the build context and in tests/ that are not read on the host stay links: Docker's build
context and the verifier's copy keep them as links, resolved inside the container.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path, PurePosixPath

from tasks.task import Task, TaskError

# compose's service-name charset (compose-spec: [a-zA-Z0-9._-]+), starting with a letter or digit so
# that no name is `.` or `..`
SERVICE_NAME = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_.-]*")
# a Docker image reference: [registry/]repository[:tag][@digest], nothing else (no whitespace, so no
# second Dockerfile line from an `image:` value)
IMAGE_REF = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9._/:@-]*")


def inside(
    task_id: str,
    field: str,
    root: Path,
    path: Path | str,
    source: Path | None = None,
    folder: str = "the task folder",
) -> Path:
    """root / path, checked to stay inside root: path is relative (or absolute and lexically under
    root), has no `..` part, and resolves (every symlink followed) to root itself or below it.

    folder: how the message names root. Returns the unresolved path (root / path), the name errors
    and Task fields show. Raises TaskError(task_id, field, ..., source or the path) otherwise.
    """
    root = Path(root)
    given = Path(path)
    if given.is_absolute():
        bases = [b for b in (root.absolute(), root.resolve()) if given.is_relative_to(b)]
        if not bases:
            raise TaskError(task_id, field, f"{str(path)!r} is outside {folder}", source or root)
        given = given.relative_to(bases[0])
    if ".." in PurePosixPath(given.as_posix()).parts:
        raise TaskError(
            task_id,
            field,
            f"{str(path)!r} has a '..' part; paths stay inside {folder}",
            source or root / given,
        )
    full = root / given
    real, real_root = full.resolve(), root.resolve()
    if real != real_root and real_root not in real.parents:
        raise TaskError(
            task_id,
            field,
            f"{given.as_posix()} resolves to {real}, outside {folder} (a symlink leaving it)",
            source or full,
        )
    return full


def files_inside(
    task_id: str, field: str, root: Path, folder: Path, name: str = "the task folder"
) -> list[Path]:
    """The files under folder (a folder of root), each checked with `inside` (name: root's, in
    the message): a symlink among them that leaves root is refused, not followed. Links to folders
    are not descended into (pathlib's rglob), so their files are never read. Returns them sorted."""
    out = []
    for p in sorted(Path(folder).rglob("*")):
        if p.is_symlink() or p.is_file():
            inside(task_id, field, root, p.absolute(), folder=name)
            if p.is_file():
                out.append(p)
    return out


def check_task_paths(task: Task, cache_dirs: tuple[Path, ...] = ()) -> Task:
    """Every path of a loaded Task inside its folder (`inside`): the Dockerfile and build context,
    the hidden tests, the oracle (and every file of its solution/ folder), oracle_turns.json, and
    each sidecar's Dockerfile and context. A sidecar's Dockerfile may also lie in one of cache_dirs
    (termrl's own, e.g. the `FROM <image>` Dockerfile it writes for a Terminal-Bench `image:`).
    Returns the task. Raises TaskError naming the field."""
    root = Path(task.path)
    fields = [
        ("dockerfile", task.dockerfile),
        ("context_dir", task.context_dir),
        ("tests", task.tests_dir),
        ("solution", task.solution),
        ("oracle_turns", task.oracle_turns),
    ]
    for side in task.sidecars:
        fields += [
            (f"services.{side.name}.build.dockerfile", side.dockerfile),
            (f"services.{side.name}.build.context", side.context_dir),
        ]
    for field, path in fields:
        if path is None:
            continue
        if not any(Path(path).resolve().is_relative_to(Path(d).resolve()) for d in cache_dirs):
            inside(task.id, field, root, Path(path).absolute())
    if task.solution_dir is not None:
        inside(task.id, "solution", root, Path(task.solution_dir).absolute())
        # put_solution copies solution/ whole and follows no link out of it
        files_inside(task.id, "solution", task.solution_dir, task.solution_dir, "solution/")
    return task


def write_once(out: Path, text: str) -> Path:
    """Write `text` to `out` unless it exists, and return `out`. For files under configs.cache_dir()
    named by a digest of their content, so an existing file already holds `text`: written to a unique
    temporary file beside it and renamed, so a concurrent reader (another rank, another loader) never
    sees a partial file. Raises OSError when the folder cannot be written."""
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would differ from a plain write's mode
        os.replace(tmp, out)
    return out
