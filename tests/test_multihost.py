"""Sandboxes over two real Docker engines on this machine (sandbox.docker_hosts,
sandboxing/hosts.py).

The second engine is a real dockerd with its own socket, data root and exec root, started by
scripts/second_engine.sh (idempotent; the base images are sent from the first engine by save/load).
"""

import json
import os
import subprocess
import sys
import time

import pytest
from train_helpers import E2E_ARGS

import sandbox
from sandboxing import hosts

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASKS = os.path.join(ROOT, "data", "tasks")
SCRIPT = os.path.join(ROOT, "scripts", "second_engine.sh")
SECOND = "unix:///run/termrl-docker2.sock"


def engine_cli(*args: str) -> list[str]:
    r = subprocess.run(
        ["docker", "-H", SECOND, *args], capture_output=True, text=True, timeout=120, check=False
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def start_second() -> None:
    r = subprocess.run(
        ["bash", SCRIPT, "start", "2"], capture_output=True, text=True, timeout=600, check=False
    )
    assert r.returncode == 0 and r.stdout.strip() == SECOND, r.stderr


pytestmark = [
    pytest.mark.docker,
    pytest.mark.model_run,
]  # a second real engine; evaluate.py and torchrun


@pytest.fixture(scope="module")
def second_engine():
    if os.geteuid() != 0:
        pytest.skip("starting a second dockerd needs root (scripts/second_engine.sh)")
    start_second()
    yield SECOND
    start_second()  # a test that stopped it leaves it running for the next ones
    cache = engine_cli("volume", "ls", "-q", "--filter", "label=termrl.toolchain")
    if cache:  # the suite leaves nothing of its own on either engine
        engine_cli("volume", "rm", *cache)


def task_dir(tmp_path, *ids):
    d = tmp_path / "tasks"
    d.mkdir()
    for i in ids:
        (d / i).symlink_to(os.path.join(TASKS, i))
    return str(d)


def leftovers(label: str) -> dict[str, list[str]]:
    """What carries `label` on the second engine: containers (all states), snapshot images, and
    every volume (nothing else uses this engine) but the verifier's toolchain cache, which stays
    for the next verification of that image (label termrl.toolchain; removed at the module's end)."""
    cache = set(engine_cli("volume", "ls", "-q", "--filter", "label=termrl.toolchain"))
    return {
        "containers": engine_cli("ps", "-aq", "--filter", f"label={label}"),
        "images": engine_cli("images", "-q", "--filter", f"label={label}"),
        "volumes": [v for v in engine_cli("volume", "ls", "-q") if v not in cache],
    }


def test_an_evaluation_spreads_over_both_engines_verifies_on_both_and_leaves_nothing(
    second_engine, tmp_path
):
    run_id = f"test-multihost-{os.getpid()}"
    out = tmp_path / "eval"
    r = subprocess.run(
        [
            sys.executable,
            "evaluate.py",
            "--oracle",
            "--tasks",
            task_dir(tmp_path, "write-hello-file", "count-lines"),
            "--k",
            "2",
            "--out-dir",
            str(out),
            "--run-id",
            run_id,
            "--no-progress",
            # 4 x 2 x 256 MiB of memory and of disk: all 4 episodes admitted at once on a loaded or
            # full host (at the defaults, 1 GiB and 2 GiB, a host with under 8 GiB of available RAM
            # or 16 GiB of free disk runs them in waves, and a slot freed on one engine takes an
            # episode the alternation would have given the other)
            "--sandbox.memory-mb",
            "256",
            "--sandbox.storage-mb",
            "256",
            "--sandbox.docker-hosts",
            "local=2",
            f"{second_engine}=2",
        ],
        cwd=ROOT,
        capture_output=True,
        check=False,
        text=True,
        # the first verification on the second engine fills its toolchain cache: minutes on a loaded host
        timeout=840,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    # 2 tasks x 2 episodes, both caps 2: least-loaded placement alternates and fills both
    assert summary["engines"] == {
        "local": {"episodes": 2, "errors": 0},
        second_engine: {"episodes": 2, "errors": 0},
    }
    assert summary["overall"]["resolved_rate"] == 1.0 and summary["overall"]["errors"] == 0
    assert f"[hosts] {second_engine}: " in r.stderr and "cap 2" in r.stderr
    lines = [json.loads(x) for x in (out / "trajectories.jsonl").read_text().splitlines()]
    there = [x for x in lines if x["docker_host"] == second_engine]
    assert len(there) == 2 and all(
        x["test_report"]["tests"] and all(x["test_report"]["tests"].values()) for x in there
    )
    assert leftovers(f"termrl.run_id={run_id}") == {"containers": [], "images": [], "volumes": []}
    local = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=termrl.run_id={run_id}"],
        capture_output=True,
        check=False,
        text=True,
        timeout=60,
    ).stdout.split()
    assert local == []
    # the task images were built once on the second engine and are reused by content tag
    tags = set(engine_cli("images", "--format", "{{.Repository}}:{{.Tag}}"))
    assert any(t.startswith("termrl/task-write-hello-file:") for t in tags)
    assert any(t.startswith("termrl/task-count-lines:") for t in tags)


def test_a_stopped_engine_fails_only_its_own_episodes_and_the_run_finishes_on_the_other(
    second_engine, tmp_path
):
    run_id = f"test-multihost-kill-{os.getpid()}"
    out = tmp_path / "eval"
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["```bash\ntrue\n```"]))
    p = subprocess.Popen(
        [
            sys.executable,
            "evaluate.py",
            "--engine",
            "scripted",
            "--script",
            str(script),
            # the second engine's episodes must still be waiting for their reply when it stops:
            # the stop takes a second or two after the test sees both of them there
            "--script-delay-s",
            "10",
            "--tasks",
            task_dir(tmp_path, "write-hello-file"),
            "--k",
            "6",
            "--rollout.max-turns",
            "1",
            "--out-dir",
            str(out),
            "--run-id",
            run_id,
            "--no-progress",
            "--allow-errors",  # the second engine's episodes error by design
            # 4 in flight admitted whatever the host's load and free disk (as above)
            "--sandbox.memory-mb",
            "256",
            "--sandbox.storage-mb",
            "256",
            "--sandbox.docker-hosts",
            "local=2",
            f"{second_engine}=2",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 300
        while len(engine_cli("ps", "-q", "--filter", f"label=termrl.run_id={run_id}")) < 2:
            assert p.poll() is None and time.monotonic() < deadline, (
                "the run placed nothing on the second engine"
            )
            time.sleep(0.5)
        subprocess.run(["bash", SCRIPT, "stop", "2"], check=True, timeout=120)
        stdout, stderr = p.communicate(timeout=600)
    finally:
        if p.poll() is None:
            p.kill()
        start_second()
    assert p.returncode == 0, stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    # 2 on each engine at once; the second one's 2 fail; the 2 waiting go to the first once it has
    # room
    assert summary["engines"] == {
        "local": {"episodes": 4, "errors": 0},
        second_engine: {"episodes": 2, "errors": 2},
    }
    assert f"engines: local: 4 episodes, 0 errors; {second_engine}: 2 episodes, 2 errors" in stdout
    lines = [json.loads(x) for x in (out / "trajectories.jsonl").read_text().splitlines()]
    failed = [x for x in lines if x["reward"] is None]
    assert len(failed) == 2 and all(
        x["error"].startswith(f"Docker engine {second_engine} stopped answering") for x in failed
    )
    assert all(
        x["reward"] is not None and x["test_report"] is not None
        for x in lines
        if x["docker_host"] == "local"
    )
    # the run's final reap could not reach the stopped engine; the next reap that reaches it cleans
    # up
    hosts.configure(("local", f"{second_engine}=2"), 2 << 30)
    try:
        assert sandbox.reap(run_id=run_id) == 2  # the two sandboxes, stopped with their engine
    finally:
        hosts.configure((), 0)
    assert leftovers(f"termrl.run_id={run_id}") == {"containers": [], "images": [], "volumes": []}


def test_two_training_steps_over_both_engines(second_engine, tmp_path):
    from judge_server import JudgeServer

    from hf import weights

    model = weights.save_tiny_random(tmp_path / "qwen3")
    out = tmp_path / "run"
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node=2",
        "train.py",
        "--preset",
        "cpu-smollm2",
        "--policy.path",
        str(model),
        "--out-dir",
        str(out),
        "--steps",
        "2",
        *E2E_ARGS,
        "--rollout.max-turns",  # one turn each: the placement is what is checked
        "1",
        "--sandbox.docker-hosts",
        "local=1",
        f"{second_engine}=1",
    ]
    with JudgeServer(default_score=0.8, input_tokens=1000, output_tokens=50) as judge:
        r = subprocess.run(
            cmd + ["--reward.judge-backends", f"openai:judge-m@{judge.url}"],
            cwd=ROOT,
            env=dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1"),
            capture_output=True,
            check=False,
            text=True,
            timeout=900,
        )
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    records = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [(x["step"], x["episodes"], x["episodes_failed"]) for x in records] == [
        (1, 4, 0),
        (2, 4, 0),
    ]
    for step in (1, 2):
        for rank in (0, 1):
            lines = [
                json.loads(x)
                for x in (out / "trajectories" / f"step_{step:06d}_rank{rank}.jsonl")
                .read_text()
                .splitlines()
            ]
            # each rank's two episodes: one slot on each engine (caps are per rank)
            assert sorted(x["docker_host"] for x in lines) == sorted(["local", second_engine])
            assert all(x["reward"] is not None for x in lines)
    run_ids = next(x for x in (r.stdout + r.stderr).splitlines() if "sandbox run ids" in x).rsplit(
        " ", 1
    )[1]
    for run_id in run_ids.split(","):
        assert leftovers(f"termrl.run_id={run_id}") == {
            "containers": [],
            "images": [],
            "volumes": [],
        }


CHILD = """
import asyncio, sys, time
import configs, sandbox
from sandboxing import hosts
hosts.configure(("local=1", sys.argv[1] + "=1"), 2 << 30)
async def main():
    image, rid = configs.DEFAULT_BASE_IMAGE, sys.argv[2]
    a = await sandbox.Sandbox.start(image, run_id=rid, host=await hosts.acquire())
    b = await sandbox.Sandbox.start(image, run_id=rid, host=await hosts.acquire())
    print(a.host, a.id, b.host, b.id, flush=True)
    time.sleep(600)
asyncio.run(main())
"""


def test_after_a_kill_9_of_the_owner_its_sandboxes_stop_on_both_engines_and_reap_removes_them(
    second_engine,
):
    run_id = f"test-multihost-kill9-{os.getpid()}"
    p = subprocess.Popen(
        [sys.executable, "-c", CHILD, second_engine, run_id],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        where = dict(zip(*[iter(p.stdout.readline().split())] * 2))
    finally:
        p.kill()  # SIGKILL: no exit hook runs
        p.wait()
    assert sorted(where) == sorted(["local", second_engine])  # one on each: both caps are 1

    def state(url, cid):
        cmd = ["docker"] + (["-H", url] if url != "local" else [])
        r = subprocess.run(
            cmd + ["inspect", "-f", "{{.State.Status}}", cid],
            capture_output=True,
            check=False,
            text=True,
        )
        return r.stdout.strip() if r.returncode == 0 else "gone"

    deadline = time.monotonic() + 60
    while any(state(u, c) != "exited" for u, c in where.items()) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert {u: state(u, c) for u, c in where.items()} == {
        u: "exited" for u in where
    }  # the dead man
    hosts.configure(("local", second_engine), 2 << 30)
    try:
        assert sandbox.reap() >= 2  # unfiltered: dead owners' containers, on every listed engine
    finally:
        hosts.configure((), 0)
    assert {u: state(u, c) for u, c in where.items()} == {u: "gone" for u in where}
