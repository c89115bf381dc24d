"""Disk limits that hold on overlay2 over ext4 (sandboxing/disk.py): real Docker, bounded sizes.

Every writer here is bounded (at most 256 MiB written per test, against limits of 64 MiB) and its
container removed at the end, so no test can fill the host.
"""

import asyncio
import itertools
import os
import textwrap

import docker.errors
import pytest

import sandbox
from sandbox import DiskLimitError, Limits, Sandbox
from sandboxing import disk, images, verifier
from sandboxing.disk import ENTRY_BYTES, OverLimit, Usage, layer_usage, over_limit
from sandboxing.reaping import labels

RUN_ID = f"test-disk-{os.getpid()}"
MiB = 1 << 20
# 8 files of 32 MiB, 0.2 s apart: 256 MiB at most, each file under the 64 MiB per-file limit
FILLER = "for i in 1 2 3 4 5 6 7 8; do fallocate -l 32M /tmp/fill$i || exit 9; sleep 0.2; done"
# six 60 MiB sparse files: no block on disk, 360 MiB once a snapshot writes them out
SPARSE = "for i in 1 2 3 4 5 6; do truncate -s 60M /tmp/sparse$i || exit 9; done"
# 200 sparse files of 1 MiB: each far under the cap, 200 MiB together
SMALL_SPARSE = (
    "mkdir /tmp/s && cd /tmp/s && for i in $(seq 200); do truncate -s 1M f$i || exit 9; done"
)
# 900 nested folders under /app: the host path of the deepest passes PATH_MAX
DEEP = (
    "python3 -c \"import os\nos.chdir('/app')\nfor i in range(900):\n"
    "    os.mkdir('dddd')\n    os.chdir('dddd')\n\""
)
# 4 files of 32 MiB, each under the per-file limit: 128 MiB against a cap of 64
FILL = "for i in 1 2 3 4; do fallocate -l 32M /tmp/fill$i || exit 9; sleep 0.3; done; sleep 2"
# the same, with 96 MiB at the bottom (3 files of 32 MiB): only a walk that reaches it sees it
DEEP_FILL = DEEP.removesuffix('"') + (
    "for i in range(3):\n    f = os.open(str(i), os.O_WRONLY | os.O_CREAT)\n"
    '    os.posix_fallocate(f, 0, 32 << 20)\n"'
)
OVER_64 = (
    r"wrote \d+\.\d MiB or more to disk, over its limit of 64 MiB \(sandbox.storage_mb\): killed"
)


def run(coro):
    return asyncio.run(coro)


def small_box(storage_mb: int = 64, check_s: float = 0.25, max_files: int = 100_000) -> Sandbox:
    limits = Limits(storage_bytes=storage_mb * MiB, storage_check_s=check_s, max_files=max_files)
    return run(Sandbox.start(images.BASE_IMAGE, limits=limits, run_id=RUN_ID))


def upper_dir(client, cid: str) -> str:
    return client.api.inspect_container(cid)["GraphDriver"]["Data"]["UpperDir"]


def cost(path) -> int:
    st = os.stat(path)
    return max(st.st_size, st.st_blocks * 512, ENTRY_BYTES)


def test_layer_usage_counts_apparent_size_once_per_inode(tmp_path):
    (tmp_path / "a").write_bytes(b"x" * 10000)
    os.link(tmp_path / "a", tmp_path / "a2")  # the same inode: counted once
    with open(
        tmp_path / "sparse", "wb"
    ) as f:  # a 1 GiB hole: free on disk, written in full by a commit
        f.truncate(1 << 30)
    (tmp_path / "d").mkdir()
    expected = cost(tmp_path / "a") + (1 << 30) + cost(tmp_path / "d")
    assert layer_usage([str(tmp_path)], 1 << 40) == Usage(expected, 3)
    assert layer_usage([str(tmp_path / "gone")], 1) == Usage(0, 0)


def test_layer_usage_stops_just_past_either_limit(tmp_path):
    for i in range(100):
        (tmp_path / f"e{i}").touch()
    # each empty file is charged one block, and the walk stops at the first entry past a limit
    assert layer_usage([str(tmp_path)], 10 * ENTRY_BYTES) == Usage(11 * ENTRY_BYTES, 11)
    assert layer_usage([str(tmp_path)], 1 << 40, max_files=20) == Usage(21 * ENTRY_BYTES, 21)


def nest(root, depth: int, name: str = "dddd") -> int:
    """Create depth nested folders under root, each opened by descriptor (the host path passes
    PATH_MAX past about 800 levels), and a 10,000-byte file at the bottom; what layer_usage should
    count for them."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    total = 0
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
            st = os.fstat(fd)
            total += max(st.st_size, st.st_blocks * 512, ENTRY_BYTES)
        f = os.open("f", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(f, b"x" * 10000)
        os.close(f)
        return total + max(10000, os.stat("f", dir_fd=fd).st_blocks * 512)
    finally:
        os.close(fd)


def test_layer_usage_walks_folders_nested_past_path_max(tmp_path):
    # 900 levels of "dddd/": a 4,500-character path, which a walk by path cannot open
    expected = nest(tmp_path, 900)
    assert layer_usage([str(tmp_path)], 1 << 40) == Usage(expected, 901)


def test_a_tree_the_walk_cannot_finish_is_over_the_limit(tmp_path, monkeypatch):
    # a full binary tree 6 levels deep: visiting its first leaf keeps each ancestor open
    for leaf in itertools.product("ab", repeat=6):
        (tmp_path.joinpath(*leaf)).mkdir(parents=True)
    monkeypatch.setattr(disk, "MAX_OPEN_DIRS", 3)
    usage = layer_usage([str(tmp_path)], 1 << 40)
    assert usage.error == "more than 3 nested folders with subfolders beside them"
    assert over_limit(usage, 64 * MiB, 100_000) == (
        "has a writable layer the disk watchdog cannot measure (more than 3 nested folders with "
        "subfolders beside them), counted as over its limit of 64 MiB (sandbox.storage_mb)"
    )
    # with the default the same tree is measured in full: 2 + 4 + ... + 64 folders
    monkeypatch.undo()
    assert layer_usage([str(tmp_path)], 1 << 40).files == 126


def test_over_limit_names_the_limit_and_its_knob():
    assert over_limit(Usage(64 * MiB, 100), 64 * MiB, 100) is None
    assert over_limit(
        Usage(
            70 * MiB,
            5,
        ),
        64 * MiB,
        100,
    ) == ("wrote 70.0 MiB or more to disk, over its limit of 64 MiB (sandbox.storage_mb)")
    assert over_limit(Usage(MiB, 101), 64 * MiB, 100) == (
        "holds 101 files or more, over its limit of 100 files (sandbox.max_files)"
    )


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
        assert report.error.startswith("disk_limit: the verifier container wrote ")
        assert report.error.endswith(" MiB (sandbox.storage_mb); killed") and report.tests == {}
    finally:
        run(box.close())
    left = docker_client.api.containers(all=True, filters={"label": [f"termrl.run_id={RUN_ID}"]})
    assert left == []


@pytest.mark.docker
def test_tests_that_create_more_files_than_the_sandbox_may_hold_are_stopped_by_count(
    docker_client, tmp_path
):
    # the verifier container's watchdog counts entries with the sandbox's max_files, not the default
    box = small_box(max_files=1000)
    try:
        (tmp_path / "test_many.py").write_text(
            textwrap.dedent("""
            import os, time
            def test_many():
                os.makedirs("/tmp/many", exist_ok=True)
                for i in range(5000):
                    open(f"/tmp/many/{i}", "w").close()
                time.sleep(30)
            """)
        )
        report = run(box.run_tests(tmp_path, timeout=60))
        assert report.error.startswith("disk_limit: the verifier container holds ")
        assert report.error.endswith(
            " files or more, over its limit of 1000 files (sandbox.max_files); killed"
        )
        assert report.tests == {}
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


def snapshots(client, box) -> list:
    return client.api.images(filters={"label": f"termrl.verifies={box.name}"})


@pytest.mark.docker
@pytest.mark.parametrize("writer", [SPARSE, SMALL_SPARSE], ids=["six-60M", "200x1M"])
def test_sparse_files_count_in_full_and_the_sandbox_is_killed(docker_client, writer):
    box = small_box()
    try:
        with pytest.raises(DiskLimitError, match=OVER_64):
            run(box.exec(f"{writer}; sleep 10", timeout=30))
        assert box.disk_exceeded > 64 * MiB
        assert docker_client.api.inspect_container(box.id)["State"]["Running"] is False
    finally:
        run(box.close())


@pytest.mark.docker
def test_a_huge_number_of_empty_files_is_killed_at_max_files(docker_client):
    box = small_box(max_files=1000)
    try:
        # 5,000 empty files: 20 MiB charged, well under 64 MiB; the count is the limit
        with pytest.raises(
            DiskLimitError,
            match=r"holds 1001 files or more, over its limit of 1000 files \(sandbox.max_files\): killed",
        ):
            run(
                box.exec(
                    "mkdir /tmp/e && cd /tmp/e && seq 5000 | xargs touch; sleep 10", timeout=30
                )
            )
        assert box.disk_over.startswith("holds 1001 files or more")
    finally:
        run(box.close())


@pytest.mark.docker
def test_a_sparse_layer_over_the_cap_is_never_committed(docker_client, tmp_path):
    # the watchdog asleep (one check an hour): only the checks of verification see the layer
    box = small_box(check_s=3600.0)
    try:
        (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
        assert run(box.exec(SPARSE, timeout=30)).exit_code == 0
        assert box.disk_exceeded is None
        # the verifier itself (no sandbox pre-check): the frozen layer is measured before the commit
        api = sandbox.docker_api(120.0)
        own = {**labels(RUN_ID), "termrl.verifies": box.name}
        args = (api, box.id, box.name, own, box.limits, tmp_path, 30.0)
        with pytest.raises(OverLimit, match=OVER_64.removesuffix(": killed")) as e:
            verifier.run_tests_blocking(*args)
        assert e.value.usage.bytes > 64 * MiB
        assert snapshots(docker_client, box) == []
        # through the sandbox: a disk-limit episode, the sandbox killed, no snapshot either
        with pytest.raises(DiskLimitError, match=OVER_64):
            run(box.run_tests(tmp_path, timeout=30))
        assert docker_client.api.inspect_container(box.id)["State"]["Running"] is False
        assert snapshots(docker_client, box) == []
    finally:
        run(box.close())


@pytest.mark.docker
def test_a_sandbox_within_its_caps_is_verified_as_before(docker_client, tmp_path):
    box = small_box(check_s=3600.0)
    try:
        (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
        # one 40 MiB sparse file: 40 MiB counted, under 64
        assert run(box.exec("truncate -s 40M /tmp/sparse", timeout=30)).exit_code == 0
        report = run(box.run_tests(tmp_path, timeout=30))
        assert (report.tests, report.error) == ({"test_x": True}, None)
    finally:
        run(box.close())


def test_sandbox_config_max_files_reaches_the_limits():
    from configs import SandboxConfig

    assert Limits.from_config(SandboxConfig(max_files=500)).max_files == 500
    assert Limits().max_files == 100_000


@pytest.mark.docker
def test_a_deep_folder_does_not_turn_the_watchdog_off(docker_client):
    box = small_box()
    try:
        assert run(box.exec(DEEP, timeout=60)).exit_code == 0
        # two checks pass over the deep tree (a walk by path raised ENAMETOOLONG and ended the watch)
        run(asyncio.sleep(0.6))
        assert box.disk_exceeded is None
        with pytest.raises(DiskLimitError, match=OVER_64):
            run(box.exec(FILL, timeout=60))
        assert 64 * MiB < box.disk_exceeded <= 128 * MiB + 2 * MiB
        assert docker_client.api.inspect_container(box.id)["State"]["Running"] is False
    finally:
        run(box.close())


@pytest.mark.docker
def test_a_deep_folder_over_the_cap_at_verification_is_a_disk_limit_episode(
    docker_client, tmp_path
):
    # the watchdog asleep: only the checks of verification see the layer
    box = small_box(check_s=3600.0)
    try:
        (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
        assert run(box.exec(DEEP_FILL, timeout=60)).exit_code == 0
        api = sandbox.docker_api(120.0)
        own = {**labels(RUN_ID), "termrl.verifies": box.name}
        args = (api, box.id, box.name, own, box.limits, tmp_path, 30.0)
        # the frozen check before the commit: the disk limit's reason, not a raw OSError
        with pytest.raises(OverLimit, match=OVER_64.removesuffix(": killed")):
            verifier.run_tests_blocking(*args)
        assert snapshots(docker_client, box) == []
        with pytest.raises(DiskLimitError, match=OVER_64):
            run(box.run_tests(tmp_path, timeout=30))
        assert docker_client.api.inspect_container(box.id)["State"]["Running"] is False
    finally:
        run(box.close())
