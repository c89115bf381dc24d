"""Limits come from the researcher, not the task: a task's resource request is clamped under the run's
sandbox limits (one warning line), and image builds run under memory, process and wall-clock limits with
no network unless the run allows it, and then never the host's loopback services. Attacking task files and
Dockerfiles of our own against the real engine."""

import asyncio
import http.server
import logging
import os
import threading
import types

import pytest

import sandbox
from sandboxing import images
from sandboxing.limits import BuildLimits

RUN_ID = f"test-task-limits-{os.getpid()}"


def task(**request) -> types.SimpleNamespace:
    """A task's resource request as the loaders set it (Task.memory_mb, cpus, storage_mb; None = none)."""
    asked = {"memory_mb": None, "cpus": None, "storage_mb": None, **request}
    return types.SimpleNamespace(id=f"greedy-{os.getpid()}", **asked)


def test_a_task_asking_for_more_than_the_run_allows_is_clamped_and_said_once(caplog):
    run = sandbox.Limits(memory_bytes=1 << 30, cpus=1.0, storage_bytes=2048 << 20)
    greedy = task(memory_mb=65536, cpus=64.0, storage_mb=1 << 20)
    with caplog.at_level(logging.WARNING, logger="termrl.sandbox"):
        got = run.for_task(greedy)
        run.for_task(greedy)
    assert (got.memory_bytes, got.cpus, got.storage_bytes) == (1 << 30, 1.0, 2048 << 20)
    said = [r.getMessage() for r in caplog.records if "clamped" in r.getMessage()]
    assert said == [
        f"task {greedy.id} asks for memory 65536 MiB, cpus 64, storage 1048576 MiB: clamped to "
        "the run's sandbox limits (memory 1024 MiB, cpus 1, storage 2048 MiB)"
    ]


def test_a_task_asking_for_less_gets_what_it_asks_and_nothing_is_said(caplog):
    run = sandbox.Limits(memory_bytes=1 << 30, cpus=1.0)
    with caplog.at_level(logging.WARNING, logger="termrl.sandbox"):
        modest = task(memory_mb=256, cpus=0.5)
        modest.id = "modest"
        got = run.for_task(modest)
    assert (got.memory_bytes, got.cpus, got.storage_bytes) == (256 << 20, 0.5, run.storage_bytes)
    assert [r for r in caplog.records if "clamped" in r.getMessage()] == []


@pytest.mark.docker
def test_the_container_of_a_greedy_task_gets_the_runs_memory_not_the_tasks(docker_client):
    limits = sandbox.Limits().for_task(task(memory_mb=65536, cpus=64.0))

    async def go():
        async with await sandbox.Sandbox.start(
            images.BASE_IMAGE, limits=limits, run_id=RUN_ID
        ) as sb:
            return docker_client.api.inspect_container(sb.id)["HostConfig"]

    host = asyncio.run(go())
    assert (host["Memory"], host["NanoCpus"]) == (1 << 30, 1_000_000_000)


# ---- image builds ---------------------------------------------------------------------------------------


def build(tmp_path, name: str, run: str, limits: BuildLimits, network: str = "none") -> str:
    d = tmp_path / name
    d.mkdir()
    (d / "Dockerfile").write_text(f"FROM {images.BASE_IMAGE}\n{run}\n")
    spec = types.SimpleNamespace(
        id=f"limits-{name}-{os.getpid()}",
        dockerfile=d / "Dockerfile",
        context_dir=d,
        tests_dir=None,
        build_setup=None,
    )
    return images.build_image(spec, build_network=network, limits=limits)


@pytest.mark.docker
def test_a_build_step_past_the_build_memory_is_killed(tmp_path, docker_client):
    # 768 MiB touched page by page under a 256 MiB build limit
    run = (
        "RUN python3 -c \"b = bytearray(768 << 20); b[::4096] = b'x' * len(b[::4096]); "
        "print('allocated', 768)\""
    )
    with pytest.raises(images.ImageBuildError) as e:
        build(tmp_path, "balloon", run, BuildLimits(memory_bytes=256 << 20))
    assert "returned a non-zero code: 137" in str(e.value)
    assert "allocated 768" not in e.value.log_tail


# 200 children that sleep 3 s each (a child exits at once after its sleep: no grandchildren)
FORKS = (
    'RUN python3 -c "import os, time; '
    "[os.fork() == 0 and (time.sleep(3), os._exit(0)) for _ in range(200)]; print('forked', 200)\""
)


@pytest.mark.docker
def test_a_build_step_past_the_build_processes_cannot_fork(tmp_path, docker_client):
    with pytest.raises(images.ImageBuildError) as e:
        build(tmp_path, "forks", FORKS, BuildLimits(pids=64))
    assert "BlockingIOError: [Errno 11] Resource temporarily unavailable" in e.value.log_tail
    assert "forked 200" not in e.value.log_tail


@pytest.mark.docker
def test_a_build_that_keeps_printing_ends_at_its_wall_clock(tmp_path, docker_client):
    # a line every half second: a timeout that restarts with each line would never fire
    run = 'RUN python3 -c "import time; [(print(i, flush=True), time.sleep(0.5)) for i in range(600)]"'
    with pytest.raises(images.ImageBuildError) as e:
        build(tmp_path, "chatty", run, BuildLimits(deadline_s=8.0))
    assert (
        str(e.value)
        .splitlines()[0]
        .endswith("ran past its wall clock of 8 s (sandbox.build_timeout_s): cancelled")
    )


class _Seen(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self):  # noqa: N802 - http.server's name
        self.hits.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"host loopback service\n")

    def log_message(self, *args):
        pass


@pytest.mark.docker
def test_a_build_with_network_never_reaches_the_hosts_loopback_services(tmp_path, docker_client):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Seen)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    run = (
        'RUN python3 -c "import urllib.request; '
        f"print(urllib.request.urlopen('http://127.0.0.1:{port}/secret', timeout=5).read())\""
    )
    try:
        with pytest.raises(images.ImageBuildError):
            build(tmp_path, "loopback", run, BuildLimits(), network="bridge")
    finally:
        server.shutdown()
    assert _Seen.hits == []


def test_auto_gives_a_build_the_bridge_never_the_hosts_network(monkeypatch, tmp_path):
    monkeypatch.setattr(images, "mirrors_reachable", lambda: True)
    (tmp_path / "Dockerfile").write_text("FROM scratch\n")
    fetcher = types.SimpleNamespace(dockerfile=tmp_path / "Dockerfile", build_setup="pip install x")
    assert images._network_mode("auto", fetcher) == "bridge"
    assert images._network_mode("none", fetcher) == "none"
    with pytest.raises(
        ValueError, match="build_network = 'host': must be 'auto', 'bridge' or 'none'"
    ):
        images._network_mode("host", fetcher)
