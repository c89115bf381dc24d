"""Bounded reads out of a container (sandboxing/archive.py): the size and type of the entry are
checked from the headers before a byte of its body is read, and every reader of the harness uses it
(the sandbox's read_file, the JUnit report, Harbor's reward files). Hostile entries are written by a
container of our own: a 256 MiB sparse file, a folder, links to /dev/zero and to the huge file, a
named pipe.
"""

import asyncio
import io
import os
import resource
import tarfile

import pytest

import sandbox
from sandboxing import archive, harbor_verifier, images, verifier
from sandboxing.reaping import labels

RUN_ID = f"test-archive-{os.getpid()}"
MiB = 1 << 20
HOSTILE = (
    "truncate -s 256M /big && mkdir /dir && echo 0.5 > /small && ln -s /dev/zero /zero "
    "&& ln -s /big /tobig && ln -s small /rel && mkfifo /pipe"
)


def tar_of(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo(name)
        info.type = kind
        info.size = len(data) if kind == tarfile.REGTYPE else 0
        tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    return buf.getvalue()


def test_a_member_over_the_cap_is_refused_from_its_header_without_reading_its_body():
    raw = io.BytesIO(tar_of("big", b"x" * MiB))
    with pytest.raises(
        archive.TooLargeError, match="the report /big has 1048576 bytes, over the cap of 65536"
    ):
        archive._read_member(raw, "/big", 1 << 16, "the report")
    # one tar record of 10 KiB read, not the 1 MiB body
    assert raw.tell() <= 10240


def test_a_folder_or_link_member_is_refused_naming_its_kind():
    for kind, name in ((tarfile.DIRTYPE, "a directory"), (tarfile.SYMTYPE, "a symbolic link")):
        with pytest.raises(archive.NotAFileError, match=f"x /p is not a regular file: {name}$"):
            archive._read_member(io.BytesIO(tar_of("p", kind=kind)), "/p", 1 << 16, "x")


def test_a_cut_archive_is_an_error_and_a_good_one_reads_back():
    whole = tar_of("f", b"0.75\n")
    assert archive._read_member(io.BytesIO(whole), "/f", 1 << 16, "x") == b"0.75\n"
    with pytest.raises(archive.EntryError, match="x /f"):
        archive._read_member(io.BytesIO(whole[:515]), "/f", 1 << 16, "x")


@pytest.fixture(scope="module")
def hostile(docker_client):
    api = docker_client.api
    cid = api.create_container(
        images.BASE_IMAGE,
        entrypoint=[],
        command=["sh", "-c", HOSTILE],
        labels=labels(RUN_ID),
        host_config=api.create_host_config(network_mode="none"),
    )["Id"]
    try:
        api.start(cid)
        assert api.wait(cid, timeout=60)["StatusCode"] == 0
        yield api, cid
    finally:
        api.remove_container(cid, force=True, v=True)


@pytest.mark.docker
@pytest.mark.parametrize(
    "path, links, error, message",
    [
        ("/big", 0, archive.TooLargeError, "r /big has 268435456 bytes, over the cap of 65536"),
        ("/dir", 0, archive.NotAFileError, "r /dir is not a regular file: a directory"),
        (
            "/zero",
            0,
            archive.NotAFileError,
            "r /zero is not a regular file: a symbolic link to /dev/zero",
        ),
        (
            "/zero",
            8,
            archive.NotAFileError,
            "r /dev/zero is not a regular file: a character device",
        ),
        (
            "/tobig",
            0,
            archive.NotAFileError,
            "r /tobig is not a regular file: a symbolic link to /big",
        ),
        ("/tobig", 8, archive.TooLargeError, "r /big has 268435456 bytes, over the cap of 65536"),
        ("/pipe", 0, archive.NotAFileError, "r /pipe is not a regular file: a named pipe"),
        ("/none", 0, FileNotFoundError, "r /none: no such file"),
    ],
)
def test_hostile_entries_are_refused_before_their_body_is_read(
    hostile, path, links, error, message
):
    api, cid = hostile
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(error) as e:
        archive.read_file(api, cid, path, 1 << 16, "r", links=links)
    assert str(e.value).startswith(message)
    # KiB: nothing near the 256 MiB the engine would have streamed
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0 < 16 << 10


@pytest.mark.docker
def test_a_regular_file_and_a_relative_link_read_back(hostile):
    api, cid = hostile
    assert archive.read_file(api, cid, "/small", 16, "r") == b"0.5\n"
    assert archive.read_file(api, cid, "/rel", 16, "r", links=1) == b"0.5\n"
    with pytest.raises(archive.TooLargeError, match="r /small has 4 bytes, over the cap of 3"):
        archive.read_file(api, cid, "/small", 3, "r")


@pytest.mark.docker
def test_every_reader_of_the_harness_refuses_the_hostile_entries(hostile):
    api, cid = hostile
    with pytest.raises(
        verifier.VerifyError,
        match="^the JUnit report /tobig is not a regular file: a symbolic link to /big$",
    ):
        verifier.read_report(api, cid, "/tobig")
    with pytest.raises(
        verifier.VerifyError,
        match="^the reward file /big has 268435456 bytes, over the cap of 65536$",
    ):
        harbor_verifier._read(api, cid, "/big")
    with pytest.raises(
        verifier.VerifyError, match="^the reward file /dir is not a regular file: a directory$"
    ):
        harbor_verifier._read(api, cid, "/dir")
    assert harbor_verifier._read(api, cid, "/none") is None
    assert harbor_verifier._read(api, cid, "/small") == b"0.5\n"


@pytest.mark.docker
def test_the_sandboxs_read_file_follows_links_and_refuses_devices_and_huge_files(docker_client):
    async def go():
        async with await sandbox.Sandbox.start(images.BASE_IMAGE, run_id=RUN_ID) as sb:
            await sb.exec(
                "truncate -s 256M /tmp/big && ln -s /dev/zero /tmp/zero && ln -s /tmp/big /tmp/tobig "
                "&& echo hi > /tmp/s && ln -s s /tmp/rel"
            )
            assert await sb.read_file("/tmp/rel") == b"hi\n"
            with pytest.raises(
                ValueError,
                match="^read_file: '/tmp/tobig' is 268435456 bytes, more than max_bytes=1048576$",
            ):
                await sb.read_file("/tmp/tobig", max_bytes=1 << 20)
            with pytest.raises(
                archive.NotAFileError,
                match=r"^read_file in sandbox \S+: /dev/zero is not a regular file: a character device$",
            ):
                await sb.read_file("/tmp/zero")

    asyncio.run(go())
