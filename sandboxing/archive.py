"""Bounded reads out of a container: one regular file through the engine's archive API, its size and
type checked before a byte of its body is read.

Everything the harness reads from a sandbox or a verifier container (a file the agent asks for, the
JUnit report, Harbor's reward files) is written by code the agent controls, so it may be a 256 MiB
sparse file (free on the agent's disk, 256 MiB in the archive), a folder, or a link to /dev/zero.
`read_file` streams the tar (never joins the archive in memory): the engine's stat header (lstat of
the path, before the body) and then the tar member's header are checked against the cap and the
type; the socket is never read past the cap plus `HEADER_SLACK`. The harness's memory per read is
therefore about 2 x cap (the pieces and the joined bytes) + HEADER_SLACK at most, and nothing for an
entry refused (DESIGN.md; BENCHMARKS.md: bench/bench_hostile_reads.py).
"""

from __future__ import annotations

import io
import posixpath
import tarfile

import docker.errors
from docker.utils import decode_json_header

# tar headers, PAX records (long names, xattrs) and padding read besides the member's body, bytes
HEADER_SLACK = 1 << 20

# Go FileMode's type bits in the engine's stat header (X-Docker-Container-Path-Stat), most telling first
_MODE_KINDS = (
    (1 << 31, "a directory"),
    (1 << 27, "a symbolic link"),
    (1 << 21, "a character device"),
    (1 << 26, "a block device"),
    (1 << 25, "a named pipe"),
    (1 << 24, "a socket"),
    (1 << 19, "an irregular file"),
)

# tar member types that are not a regular file
_TAR_KINDS = {
    tarfile.DIRTYPE: "a directory",
    tarfile.SYMTYPE: "a symbolic link",
    tarfile.LNKTYPE: "a hard link",
    tarfile.CHRTYPE: "a character device",
    tarfile.BLKTYPE: "a block device",
    tarfile.FIFOTYPE: "a named pipe",
}


class EntryError(ValueError):
    """The entry at a path is not one regular file under the cap (the message names the path)."""


class NotAFileError(EntryError):
    """The entry at a path is a folder, a link, a device, ...: `kind` says which ("a directory")."""

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


class TooLargeError(EntryError):
    """The regular file at a path has `size` bytes, more than the reader's `cap`."""

    def __init__(self, message: str, size: int, cap: int):
        super().__init__(message)
        self.size = size
        self.cap = cap


class _Bounded(io.RawIOBase):
    """A raw reader over the HTTP body that refuses to read past `budget` bytes in all."""

    def __init__(self, raw, budget: int, what: str):
        self.raw = raw
        self.left = budget
        self.what = what

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self.left <= 0:
            raise EntryError(f"{self.what}: the archive streamed past its cap")
        data = self.raw.read(min(len(b), self.left))
        b[: len(data)] = data
        self.left -= len(data)
        return len(data)


def _stat_kind(stat: dict) -> str | None:
    mode = int(stat.get("mode", 0))
    return next((kind for bit, kind in _MODE_KINDS if mode & bit), None)


def read_file(api, cid: str, path: str, cap: int, what: str = "file", links: int = 0) -> bytes:
    """The bytes of the regular file at `path` (absolute, in container `cid`), at most `cap` bytes,
    read through `GET /containers/{cid}/archive` as a stream.

    Order: the engine's stat header (an lstat) is checked first (type, then size), then the tar
    member's header; only then is the body read, and never more than cap + HEADER_SLACK bytes in all
    leave the socket. The response is closed on every path (the engine stops writing).

    Args:
        api: a docker-py APIClient. cap: bytes (> 0). what: the name in messages ("the JUnit report").
        links: how many symbolic links may be followed (the engine's linkTarget); 0 = a link is
            refused like a folder.
    Returns:
        the file's bytes (len <= cap).
    Raises:
        FileNotFoundError: no such path (or no such container).
        NotAFileError: the path is a directory, a link (beyond `links`), a device, a pipe, a socket;
            the message is "<what> <path> is not a regular file: <kind>".
        TooLargeError: the file has more than cap bytes ("<what> <path> has N bytes, over the cap of C").
        EntryError: the archive does not hold the file as announced (a changed file, a bad tar).
        docker.errors.APIError: the engine failed otherwise.
    """
    url = api._url("/containers/{0}/archive", cid)
    res = api._get(url, params={"path": path}, stream=True, headers={"Accept-Encoding": "identity"})
    try:
        try:
            api._raise_for_status(res)
        except docker.errors.NotFound as e:
            raise FileNotFoundError(f"{what} {path}: no such file ({e.explanation or e})") from None
        header = res.headers.get("x-docker-container-path-stat")
        stat = decode_json_header(header) if header else {}
        target = stat.get("linkTarget")
        if target and links > 0:
            res.close()
            return read_file(
                api, cid, posixpath.join(posixpath.dirname(path), target), cap, what, links - 1
            )
        kind = _stat_kind(stat)
        if kind is not None:
            if target:
                kind = f"{kind} to {target}"
            raise NotAFileError(f"{what} {path} is not a regular file: {kind}", kind)
        size = int(stat.get("size", 0))
        if size > cap:
            raise TooLargeError(f"{what} {path} has {size} bytes, over the cap of {cap}", size, cap)
        return _read_member(res.raw, path, cap, what)
    finally:
        res.close()


def _read_member(raw, path: str, cap: int, what: str) -> bytes:
    """The first member of the tar streamed by `raw`: checked as a regular file under cap by its
    header, then read."""
    reader = _Bounded(raw, cap + HEADER_SLACK, f"{what} {path}")
    try:
        with tarfile.open(fileobj=reader, mode="r|") as tar:
            member = tar.next()
            if member is None:
                raise EntryError(f"{what} {path}: the engine's archive is empty")
            if not member.isreg():
                kind = _TAR_KINDS.get(member.type, f"tar type {member.type!r}")
                raise NotAFileError(f"{what} {path} is not a regular file: {kind}", kind)
            if member.size > cap:
                raise TooLargeError(
                    f"{what} {path} has {member.size} bytes, over the cap of {cap}",
                    member.size,
                    cap,
                )
            body = tar.extractfile(member)
            # in pieces of 1 MiB: a whole read would hold the tar stream's buffers beside the result
            chunks = []
            while chunk := body.read(1 << 20):
                chunks.append(chunk)
            data = b"".join(chunks)
    except tarfile.TarError as e:
        raise EntryError(f"{what} {path}: the engine's archive does not read as tar: {e}") from e
    if len(data) != member.size:
        raise EntryError(f"{what} {path}: {len(data)} of {member.size} bytes arrived")
    return data
