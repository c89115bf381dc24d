"""Disk limits that hold on overlay2 over ext4 (sandboxing/disk.py): real Docker, bounded sizes.

Every writer here is bounded (at most 256 MiB written per test, against limits of 64 MiB) and its
container removed at the end, so no test can fill the host.
"""

import asyncio
import os
import textwrap

import docker.errors
import pytest

import sandbox
from sandbox import DiskLimitError, Limits, Sandbox
from sandboxing import images
from sandboxing.disk import ENTRY_BYTES, layer_bytes

RUN_ID = f"test-disk-{os.getpid()}"
MiB = 1 << 20
# 8 files of 32 MiB, 0.2 s apart: 256 MiB at most, each file under the 64 MiB per-file limit
FILLER = "for i in 1 2 3 4 5 6 7 8; do fallocate -l 32M /tmp/fill$i || exit 9; sleep 0.2; done"


def run(coro):
    return asyncio.run(coro)


def small_box(storage_mb: int = 64) -> Sandbox:
    return run(
        Sandbox.start(
            images.BASE_IMAGE,
            limits=Limits(storage_bytes=storage_mb * MiB, storage_check_s=0.25),
            run_id=RUN_ID,
        )
    )


def upper_dir(client, cid: str) -> str:
    return client.api.inspect_container(cid)["GraphDriver"]["Data"]["UpperDir"]


def test_layer_bytes_counts_blocks_once_per_inode_and_stops_past_the_limit(tmp_path):
    (tmp_path / "a").write_bytes(b"x" * 10000)  # 3 ext4 blocks
    os.link(tmp_path / "a", tmp_path / "a2")  # the same inode: counted once
    with open(tmp_path / "sparse", "wb") as f:  # a 1 GiB hole costs no disk
        f.truncate(1 << 30)
    (tmp_path / "d").mkdir()
    blocks = os.stat(tmp_path / "a").st_blocks * 512
    dir_cost = max(os.stat(tmp_path / "d").st_blocks * 512, ENTRY_BYTES)
    assert layer_bytes([str(tmp_path)], 1 << 40) == blocks + ENTRY_BYTES + dir_cost
    for i in range(100):
        (tmp_path / "d" / f"e{i}").touch()
    assert layer_bytes([str(tmp_path)], 10 * ENTRY_BYTES) <= 11 * ENTRY_BYTES + blocks + dir_cost
    assert layer_bytes([str(tmp_path / "gone")], 1) == 0


@pytest.mark.docker
def test_one_file_cannot_grow_past_the_limit(docker_client):
    box = small_box()
    try:
        r = run(
            box.exec(
                "fallocate -l 256M /tmp/big; echo rc=$?; ls -s /tmp/big 2>&1 | cut -c1-20",
                timeout=30,
            )
        )
        # SIGXFSZ ends fallocate (128 + 25) and the file holds no block
        assert "File size limit exceeded" in r.output and "rc=153\n0 /tmp/big\n" in r.output
        assert box.disk_exceeded is None  # nothing was written: the sandbox goes on
        assert run(box.exec("echo ok")).output == "ok\n"
    finally:
        run(box.close())


@pytest.mark.docker
def test_a_sandbox_writing_past_storage_mb_is_killed_and_the_host_disk_freed(docker_client):
    box = small_box()
    try:
        upper = upper_dir(docker_client, box.id)
        with pytest.raises(
            DiskLimitError, match=r"over its limit of 64 MiB \(sandbox.storage_mb\): killed"
        ):
            run(box.exec(FILLER, timeout=60))
        assert 64 * MiB < box.disk_exceeded <= 256 * MiB + MiB
        assert docker_client.api.inspect_container(box.id)["State"]["Running"] is False
        with pytest.raises(DiskLimitError):  # no restart: the episode is over
            run(box.exec("echo again"))
        with pytest.raises(DiskLimitError):
            run(box.run_tests(os.path.dirname(__file__), timeout=10))
    finally:
        run(box.close())
    assert not os.path.exists(
        upper
    )  # the layer is gone with the container: the host got its disk back
    with pytest.raises(docker.errors.NotFound):
        docker_client.api.inspect_container(box.id)


@pytest.mark.docker
def test_a_background_writer_is_caught_before_verification(docker_client, tmp_path):
    box = small_box()
    try:
        (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
        r = run(box.exec(f"({FILLER}) >/dev/null 2>&1 &", timeout=10))
        assert r.exit_code == 0
        with pytest.raises(DiskLimitError):
            for _ in range(60):  # the watchdog kills the sandbox while it is idle
                run(asyncio.sleep(0.25))
                run(box.run_tests(tmp_path, timeout=30))
    finally:
        run(box.close())


@pytest.mark.docker
def test_tests_that_write_past_what_is_left_are_stopped_with_a_disk_limit_error(
    docker_client, tmp_path
):
    box = small_box()
    try:
        (tmp_path / "test_fill.py").write_text(
            textwrap.dedent(f"""
            import subprocess
            def test_fill():
                subprocess.run({FILLER!r}, shell=True, check=True)
            """)
        )
        report = run(box.run_tests(tmp_path, timeout=60))
        assert report.error.startswith("disk_limit: the verifier container held ")
        assert (
            report.error.endswith(" MiB left of sandbox.storage_mb; killed") and report.tests == {}
        )
    finally:
        run(box.close())
    left = docker_client.api.containers(all=True, filters={"label": [f"termrl.run_id={RUN_ID}"]})
    assert left == []


def test_sandbox_config_storage_mb_reaches_the_limits():
    from configs import SandboxConfig

    limits = Limits.from_config(SandboxConfig(storage_mb=100))
    assert limits.storage_bytes == 100 * MiB
    assert [(u.name, u.soft, u.hard) for u in limits.ulimits()] == [("fsize", 100 * MiB, 100 * MiB)]
    assert sandbox.Limits().storage_bytes == 2048 * MiB
