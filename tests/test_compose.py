"""Harbor compose tasks: the agent's `main` and its sidecars in one network namespace that has only
`lo` (sandboxing/compose.py), verified by the task's own test.sh through the sidecar, all removed
after. The fixture tests/fixtures/harbor/hb-compose is a key-value HTTP sidecar built from the base.
"""

import asyncio
import os
import shutil
from pathlib import Path

import pytest

import sandbox
from sandboxing import images
from tasks import load_tasks

FIXTURE = Path(__file__).parent / "fixtures" / "harbor" / "hb-compose"
RUN_ID = f"test-compose-{os.getpid()}"


def _containers(client, run_id: str) -> list:
    return client.containers.list(all=True, filters={"label": [f"termrl.run_id={run_id}"]})


async def _pod(task, run_id: str):
    image = await asyncio.to_thread(images.build_image, task)
    return await sandbox.start_sandbox(task, image, run_id=run_id)


@pytest.mark.docker
def test_the_oracle_talks_to_its_sidecar_and_test_sh_verifies_through_it(docker_client):
    (task,) = load_tasks(FIXTURE)
    run_id = f"{RUN_ID}-oracle"

    async def main():
        sb = await _pod(task, run_id)
        try:
            out = {
                "main": (
                    await sb.exec("cut -d: -f1 /proc/net/dev | tail -n +3", timeout=60)
                ).output,
                "hosts": (await sb.exec("getent hosts kv main", timeout=60)).output,
            }
            for c in _containers(docker_client, run_id):
                role = c.labels.get("termrl.role", "main container")
                out[role] = c.exec_run(["cat", "/proc/net/dev"]).output.decode()
            solve = await sb.exec(await sandbox.put_solution(sb, task, "/tmp/s.sh"), timeout=120)
            assert solve.exit_code == 0, solve.output
            report = await sb.run_tests(task.tests_dir, timeout=120, script=task.verifier_script)
        finally:
            await sb.close()
        return out, report

    out, report = asyncio.run(main())
    assert out["main"].split() == ["lo"]  # no interface but loopback: nothing outside is reachable
    for role in ("holder", "sidecar kv", "main container"):
        names = [ln.split(":")[0].strip() for ln in out[role].splitlines()[2:]]
        assert names == ["lo"], (role, out[role])
    assert sorted(out["hosts"].split()) == sorted(["127.0.0.1", "kv", "127.0.0.1", "main"])
    assert report.parts == {"stored": 1.0, "written": 1.0, "reward": 1.0}, report.output
    assert _containers(docker_client, run_id) == []  # holder, sidecar and main removed by close


@pytest.mark.docker
def test_untouched_compose_task_scores_zero_and_validates(docker_client):
    from tasks.validate import validate_task

    (task,) = load_tasks(FIXTURE)
    result = asyncio.run(validate_task(task))
    assert (result.verdict, result.reasons) == ("valid", [])
    assert result.before.parts == {"stored": 0.0, "written": 0.0, "reward": 0.0}
    assert result.after.parts == {"stored": 1.0, "written": 1.0, "reward": 1.0}


@pytest.mark.docker
def test_no_process_of_the_agent_lives_on_into_verification(tmp_path, docker_client):
    (task,) = load_tasks(shutil.copytree(FIXTURE, tmp_path / "hb-compose"))
    # a listener the agent leaves behind would share the namespace with the verifier and the sidecar
    task.verifier_script = (
        "#!/bin/bash\nmkdir -p /logs/verifier\n"
        "if grep -q ':270F .* 0A ' /proc/net/tcp; then echo 0; else echo 1; fi"
        " > /logs/verifier/reward.txt\n"
    )
    run_id = f"{RUN_ID}-leftover"

    async def main():
        sb = await _pod(task, run_id)
        try:
            await sb.exec(
                "setsid nohup python3 -m http.server 9999 >/dev/null 2>&1 & sleep 2; "
                "grep -c ':270F .* 0A ' /proc/net/tcp",
                timeout=60,
            )
            return await sb.run_tests(task.tests_dir, timeout=60, script=task.verifier_script)
        finally:
            await sb.close()

    assert asyncio.run(main()).parts == {"reward": 1.0}
    assert _containers(docker_client, run_id) == []


@pytest.mark.docker
def test_a_sidecar_that_exits_fails_the_start_by_name_and_leaves_nothing(tmp_path, docker_client):
    d = shutil.copytree(FIXTURE, tmp_path / "hb-compose")
    (d / "environment" / "kv" / "Dockerfile").write_text(
        'FROM python:3.11-slim\nCMD ["python3", "-c", "print(\'no store today\'); raise SystemExit(3)"]\n'
    )
    (task,) = load_tasks(d)
    run_id = f"{RUN_ID}-exits"
    with pytest.raises(
        sandbox.SandboxError,
        match="task hb-compose: sidecar 'kv' exited with code 3; log tail:\nno store today",
    ):
        asyncio.run(_pod(task, run_id))
    assert _containers(docker_client, run_id) == []


@pytest.mark.docker
def test_reap_removes_a_pod_left_by_its_run(docker_client):
    (task,) = load_tasks(FIXTURE)
    run_id = f"{RUN_ID}-reap"
    sb = asyncio.run(_pod(task, run_id))
    sb._closed = True  # as if its owner died without closing it
    sb._session.close()
    assert len(_containers(docker_client, run_id)) == 3  # holder, sidecar, main
    assert sandbox.reap(run_id=run_id) == 3
    assert _containers(docker_client, run_id) == []
