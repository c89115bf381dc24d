"""Task folders written by a hostile author: every name and path a task file gives, and every file
termrl reads from the folder, stays inside it, or the task is refused in one line naming the field;
nothing of the host outside the folder (and termrl's own caches) is read or written. Each attack
below starts from an honest fixture and changes one thing; `host` is a folder outside every task
that holds what an attacker would want to read (a secret, a Dockerfile, a test file) or write to."""

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import sandbox
from sandboxing import images
from tasks import TaskError, load_tasks
from tasks.task import Task

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
HARBOR = FIXTURES / "harbor" / "hb-hello"
COMPOSE = FIXTURES / "harbor" / "hb-compose"
TB = FIXTURES / "terminal-bench" / "tb-hello"
NATIVE = FIXTURES / "tasks" / "fx-greeting"
SECRET = "host-secret-5f1c0e"  # what a host file holds; never in a task, a message or a container
RUN_ID = f"test-hostile-{os.getpid()}"
UP = "../" * 24  # more `..` than any path has parts: from anywhere to /


@pytest.fixture
def host(tmp_path) -> Path:
    """A folder outside every task folder, standing in for /etc, /root or /etc/cron.d."""
    d = tmp_path / "host"
    d.mkdir()
    (d / "secret.txt").write_text(SECRET + "\n")
    (d / "Dockerfile").write_text(f"FROM scratch\n# {SECRET}\n")
    (d / "test_host.py").write_text(f"def test_{SECRET.replace('-', '_')}():\n    pass\n")
    (d / "helper.sh").write_text(f"echo {SECRET}\n")
    (d / "task.toml").write_text(f'[task]\nname = "x/{SECRET}"\n')
    shutil.copytree(HARBOR / "tests", d / "tests")  # a tests/ folder a Harbor task would take
    return d


def _copy(fixture: Path, tmp_path: Path, name: str) -> Path:
    """The fixture copied to tmp_path/tasks/<name> (the id follows the folder's name)."""
    task_dir = tmp_path / "tasks" / name
    shutil.copytree(fixture, task_dir)
    toml = task_dir / "task.toml"
    if toml.is_file() and fixture.parent.name == "harbor":
        toml.write_text(toml.read_text().replace(f"termrl/{fixture.name}", f"termrl/{name}"))
    return task_dir


def _compose(task_dir: Path, sidecar: str) -> None:
    """environment/docker-compose.yaml: main depends on one sidecar given as YAML text."""
    (task_dir / "environment" / "docker-compose.yaml").write_text(
        "services:\n  main:\n    build: .\n" + sidecar
    )


def _link(link: Path, target: Path) -> None:
    if link.exists() or link.is_symlink():
        if link.is_dir() and not link.is_symlink():
            shutil.rmtree(link)
        else:
            link.unlink()
    link.symlink_to(target)


# (id, fixture, attack(task_dir, host), the field the refusal names)
ATTACKS = [
    (
        "sidecar-name-climbs-to-a-host-folder",
        COMPOSE,
        lambda d, h: _compose(
            d, f'  "{UP}{h.as_posix().lstrip("/")}":\n    image: python:3.11-slim\n'
        ),
        "docker-compose.yaml: services.'",
    ),
    (
        "sidecar-name-with-a-newline",
        COMPOSE,
        lambda d, h: _compose(d, '  "kv\\nRUN echo pwned":\n    image: python:3.11-slim\n'),
        "docker-compose.yaml: services.'kv",
    ),
    (
        "sidecar-name-with-a-nul",
        COMPOSE,
        lambda d, h: _compose(d, '  "kv\\0x":\n    image: python:3.11-slim\n'),
        "docker-compose.yaml: services.'kv",
    ),
    (
        "sidecar-name-dot-dot",
        COMPOSE,
        lambda d, h: _compose(d, '  "..":\n    image: python:3.11-slim\n'),
        "docker-compose.yaml: services.'..'",
    ),
    (
        "sidecar-image-with-a-second-dockerfile-line",
        COMPOSE,
        lambda d, h: _compose(
            d, f'  kv:\n    image: "python:3.11-slim\\nCOPY {h}/secret.txt /s"\n'
        ),
        "docker-compose.yaml: services.kv.image",
    ),
    (
        "sidecar-dockerfile-is-a-host-path",
        COMPOSE,
        lambda d, h: _compose(
            d, f"  kv:\n    build:\n      context: kv\n      dockerfile: {h}/Dockerfile\n"
        ),
        "docker-compose.yaml: services.kv.build.dockerfile",
    ),
    (
        "sidecar-dockerfile-climbs-with-dot-dot",
        COMPOSE,
        lambda d, h: _compose(
            d, f"  kv:\n    build:\n      context: kv\n      dockerfile: {UP}{h}/Dockerfile\n"
        ),
        "docker-compose.yaml: services.kv.build.dockerfile",
    ),
    (
        "sidecar-dockerfile-through-a-symlinked-folder",
        COMPOSE,
        lambda d, h: (
            _link(d / "environment" / "kv" / "conf", h),
            _compose(
                d, "  kv:\n    build:\n      context: kv\n      dockerfile: conf/Dockerfile\n"
            ),
        ),
        "docker-compose.yaml: services.kv.build.dockerfile",
    ),
    (
        "main-dockerfile-is-a-host-path",
        COMPOSE,
        lambda d, h: (d / "environment" / "docker-compose.yaml").write_text(
            f"services:\n  main:\n    build:\n      context: .\n      dockerfile: {h}/Dockerfile\n"
        ),
        "docker-compose.yaml: services.main.build.dockerfile",
    ),
    (
        "container-name-with-a-newline",
        COMPOSE,
        lambda d, h: _compose(
            d, '  kv:\n    image: python:3.11-slim\n    container_name: "kv\\n10.0.0.1 db"\n'
        ),
        "docker-compose.yaml: services.kv.container_name",
    ),
    (
        "instruction-is-a-symlink-to-a-host-file",
        HARBOR,
        lambda d, h: _link(d / "instruction.md", h / "secret.txt"),
        "instruction.md",
    ),
    (
        "task-toml-is-a-symlink-to-a-host-file",
        HARBOR,
        lambda d, h: _link(d / "task.toml", h / "task.toml"),
        "task.toml",
    ),
    (
        "test-file-is-a-symlink-to-a-host-file",
        HARBOR,
        lambda d, h: _link(d / "tests" / "test_state.py", h / "test_host.py"),
        "tests",
    ),
    (
        "test-sh-is-a-symlink-to-a-host-file",
        HARBOR,
        lambda d, h: _link(d / "tests" / "test.sh", h / "helper.sh"),
        "tests/test.sh",
    ),
    (
        "tests-folder-is-a-symlink-to-a-host-folder",
        HARBOR,
        lambda d, h: _link(d / "tests", h / "tests"),
        "tests",
    ),
    (
        "environment-folder-is-a-symlink-to-a-host-folder",
        HARBOR,
        lambda d, h: _link(d / "environment", h),
        "environment",
    ),
    (
        "solution-side-file-is-a-symlink-to-a-host-file",
        HARBOR,
        lambda d, h: _link(d / "solution" / "count.py", h / "secret.txt"),
        "solution",
    ),
    (
        "solve-sh-is-a-symlink-to-a-host-file",
        HARBOR,
        lambda d, h: _link(d / "solution" / "solve.sh", h / "helper.sh"),
        "solution",
    ),
    (
        "native-solution-sh-is-a-symlink-to-a-host-file",
        NATIVE,
        lambda d, h: _link(d / "solution.sh", h / "helper.sh"),
        "solution.sh",
    ),
    (
        "native-dockerfile-is-a-symlink-to-a-host-file",
        NATIVE,
        lambda d, h: _link(d / "Dockerfile", h / "Dockerfile"),
        "Dockerfile",
    ),
    (
        "native-oracle-turns-is-a-symlink-to-a-host-file",
        NATIVE,
        lambda d, h: _link(d / "oracle_turns.json", h / "secret.txt"),
        "oracle_turns.json",
    ),
    (
        "tb-run-tests-sources-a-helper-linked-to-a-host-file",
        TB,
        lambda d, h: (
            _link(d / "tests" / "setup.sh", h / "helper.sh"),
            (d / "run-tests.sh").write_text(
                "source $TEST_DIR/setup.sh\npython3 -m pytest $TEST_DIR/test_outputs.py -rA\n"
            ),
        ),
        "run-tests.sh",
    ),
    (
        "tb-compose-dockerfile-climbs-with-dot-dot",
        TB,
        lambda d, h: (d / "docker-compose.yaml").write_text(
            "services:\n  client:\n    build:\n      context: .\n"
            f"      dockerfile: {UP}{h}/Dockerfile\n"
        ),
        "docker-compose.yaml: services.client.build.dockerfile",
    ),
    (
        "tb-compose-image-with-a-second-dockerfile-line",
        TB,
        lambda d, h: (d / "docker-compose.yaml").write_text(
            'services:\n  client:\n    image: "python:3.11-slim\\nRUN echo pwned"\n'
        ),
        "docker-compose.yaml",
    ),
    (
        "tb-weights-is-a-symlink-to-a-host-file",
        TB,
        lambda d, h: _link(d / "test_weights.json", h / "secret.txt"),
        "test_weights.json",
    ),
    (
        "tb-solution-yaml-is-a-symlink-to-a-host-file",
        TB,
        lambda d, h: (
            (d / "solution.sh").unlink(),
            _link(d / "solution.yaml", h / "secret.txt"),
        ),
        "solution.yaml",
    ),
    (
        # held before as well: compose's env_file is not a field termrl reads
        "sidecar-env-file-climbs-with-dot-dot",
        COMPOSE,
        lambda d, h: _compose(
            d, f"  kv:\n    image: python:3.11-slim\n    env_file: {UP}{h}/secret.txt\n"
        ),
        "docker-compose.yaml: services.kv.env_file",
    ),
]


@pytest.mark.parametrize("name, fixture, attack, field", ATTACKS, ids=[a[0] for a in ATTACKS])
def test_a_task_naming_a_path_outside_its_folder_is_refused_in_one_line(
    tmp_path, host, name, fixture, attack, field
):
    task_dir = _copy(fixture, tmp_path, name)
    attack(task_dir, host)
    with pytest.raises(TaskError) as info:
        load_tasks(task_dir)
    error = info.value
    assert error.field.startswith(field), str(error)
    text = str(error)
    assert "\n" not in text and "\x00" not in text
    assert SECRET not in text  # named by path at most, never by content
    assert sorted(p.name for p in host.iterdir()) == [
        "Dockerfile",
        "helper.sh",
        "secret.txt",
        "task.toml",
        "test_host.py",
        "tests",
    ]
    assert (host / "Dockerfile").read_text() == f"FROM scratch\n# {SECRET}\n"


def test_a_symlink_that_stays_inside_the_task_folder_is_followed(tmp_path):
    """An honest folder may link within itself: the solution's side file and a test helper."""
    task_dir = _copy(HARBOR, tmp_path, "hb-links")
    solution = task_dir / "solution"
    (solution / "count_impl.py").write_bytes((solution / "count.py").read_bytes())
    _link(solution / "count.py", Path("count_impl.py"))
    (task_dir / "docs").mkdir()
    (task_dir / "docs" / "prompt.md").write_text("Count the words in /app/words.txt.\n")
    _link(task_dir / "instruction.md", Path("docs/prompt.md"))
    (task,) = load_tasks(task_dir)
    assert task.instruction == "Count the words in /app/words.txt."
    assert task.solution_dir == task_dir / "solution"


def _solution_task(tmp_path: Path, host: Path) -> Task:
    """A Task as a loader bypassed would hand it over: solution/ holds solve.sh, an honest link to
    a side file inside solution/, and a link to a host file."""
    task_dir = tmp_path / "raw"
    (task_dir / "solution").mkdir(parents=True)
    (task_dir / "solution" / "solve.sh").write_text("cat /solution/data.txt\n")
    (task_dir / "solution" / "real.txt").write_text("inside\n")
    _link(task_dir / "solution" / "data.txt", Path("real.txt"))
    _link(task_dir / "solution" / "zz-secret.txt", host / "secret.txt")
    return Task(
        id="raw",
        instruction="x",
        difficulty="easy",
        category="x",
        tags=[],
        path=task_dir,
        dockerfile=task_dir / "Dockerfile",
        context_dir=task_dir,
        tests_dir=task_dir / "tests",
        weights={"test_x": 1.0},
        solution=task_dir / "solution" / "solve.sh",
        agent_timeout_s=60.0,
        test_timeout_s=60.0,
        solution_dir=task_dir / "solution",
    )


@pytest.mark.docker
def test_put_solution_follows_no_symlink_out_of_solution(tmp_path, host, docker_client):
    """The oracle's copy (the oracle episodes, `tasks validate`, the warm start): a link out of
    solution/ refuses the copy, naming the file; none of the host file reaches the container."""
    task = _solution_task(tmp_path, host)

    async def main():
        sb = await sandbox.Sandbox.start(images.BASE_IMAGE, run_id=RUN_ID)
        try:
            with pytest.raises(ValueError) as info:
                await sandbox.put_solution(sb, task, "/tmp/s.sh")
            seen = await sb.exec(f"grep -rs {SECRET} / --include='*.txt' -l; true", timeout=60)
            # the honest part alone: the link inside solution/ is copied as its file
            (task.path / "solution" / "zz-secret.txt").unlink()
            command = await sandbox.put_solution(sb, task, "/tmp/s.sh")
            ran = await sb.exec(command, timeout=60)
        finally:
            await sb.close()
        return str(info.value), seen.output, command, ran

    message, seen, command, ran = asyncio.run(main())
    assert message == (
        f"task raw: solution/zz-secret.txt is a symlink to {host / 'secret.txt'}, outside "
        "solution/; not followed"
    )
    assert seen.strip() == ""
    assert command == "bash /solution/solve.sh"
    assert (ran.exit_code, ran.output) == (0, "inside\n")


@pytest.mark.docker
def test_put_solution_follows_no_symlinked_single_script_out_of_the_task(
    tmp_path, host, docker_client
):
    task = _solution_task(tmp_path, host)
    _link(task.path / "solution.sh", host / "helper.sh")
    task.solution_dir, task.solution = None, task.path / "solution.sh"

    async def main():
        sb = await sandbox.Sandbox.start(images.BASE_IMAGE, run_id=RUN_ID)
        try:
            with pytest.raises(ValueError) as info:
                await sandbox.put_solution(sb, task, "/tmp/s.sh")
            there = await sb.exec("cat /tmp/s.sh", timeout=60)
        finally:
            await sb.close()
        return str(info.value), there

    message, there = asyncio.run(main())
    assert message.startswith("task raw: the solution ") and "outside the task folder" in message
    assert there.exit_code != 0 and SECRET not in there.output


@pytest.mark.docker
def test_tasks_validate_on_a_hostile_set_refuses_each_attack_and_touches_no_host_file(
    tmp_path, host, docker_client
):
    """`python -m tasks validate` on a set holding an honest task and compose tasks that try to
    write a host file through a sidecar's name, read one through a sidecar's Dockerfile path, and
    read one through instruction.md and solution/: the honest task validates, each attacker is
    refused in one line naming its field, no host file is written, no host text is shown."""
    shutil.copytree(NATIVE, tmp_path / "tasks" / "fx-greeting")
    plant = host / "cron.d"
    plant.mkdir()
    attacks = {
        "atk-name": lambda d: _compose(
            d, f'  "{UP}{plant.as_posix().lstrip("/")}":\n    image: {images.BASE_IMAGE}\n'
        ),
        "atk-dockerfile": lambda d: _compose(
            d, f"  kv:\n    build:\n      context: kv\n      dockerfile: {UP}{host}/Dockerfile\n"
        ),
        "atk-instruction": lambda d: _link(d / "instruction.md", host / "secret.txt"),
        "atk-solution": lambda d: _link(d / "solution" / "leak.txt", host / "secret.txt"),
    }
    for name, attack in attacks.items():
        attack(_copy(COMPOSE, tmp_path, name))
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "tasks",
            "validate",
            "--tasks",
            str(tmp_path / "tasks"),
            "--jobs",
            "1",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = r.stdout + r.stderr
    assert list(plant.iterdir()) == []
    assert SECRET not in out
    assert r.returncode == 0, out[-3000:]
    refused = sorted(ln.split(":")[0] for ln in r.stdout.splitlines() if ln.startswith("refused "))
    assert refused == [f"refused {n}" for n in sorted(attacks)], out[-3000:]
    assert "1 valid" in r.stdout and "4 refused at loading" in r.stdout, r.stdout[-2000:]


def test_export_harbor_copies_a_context_symlink_as_a_link_and_reads_no_host_file(tmp_path, host):
    """A link in the build context stays a link (Docker resolves it in the image, not on the host):
    export-harbor writes the same link and never the host file's bytes."""
    from tasks.harbor import export_harbor

    task_dir = _copy(NATIVE, tmp_path, "fx-greeting")
    _link(task_dir / "files" / "leak.txt", host / "secret.txt")
    (task,) = load_tasks(task_dir)
    (out,) = export_harbor([task], tmp_path / "export")
    leak = out / "environment" / "files" / "leak.txt"
    assert leak.is_symlink() and os.readlink(leak) == str(host / "secret.txt")
    files = [p for p in out.rglob("*") if p.is_file() and not p.is_symlink()]
    assert files and not [p for p in files if SECRET in p.read_text(errors="replace")]
