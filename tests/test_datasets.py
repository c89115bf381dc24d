"""Published task formats as people write them: BuildKit heredocs, remote FROM images, Terminal-Bench
run-tests.sh / solution.yaml / docker-compose.yaml / test_weights.json, an application's own tests/, and
validation without an oracle. Fixtures are written here in the formats' shapes (no published task copied).
Builds use the real Docker engine, offline (build_network="none"), on the local base image."""

import asyncio
import json
import logging
import subprocess
from pathlib import Path

import docker
import pytest

import configs
import sandbox
from sandboxing import images
from sandboxing.dockerfile import expand_heredocs, parse, rewrite_from
from tasks import import_csv, load_tasks
from tasks.task import TaskError
from tasks.terminal_bench import split_run_tests
from tasks.validate import validate_task

ROOT = Path(__file__).resolve().parents[1]
BASE = configs.BASE_TAGS["bookworm"]
TB_IMAGE = "ghcr.io/laude-institute/t-bench/python-3-13:20250620"
TESTS = "from pathlib import Path\n\n\ndef test_out():\n    assert Path('/app/out.txt').read_text() == 'done\\n'\n"
UV_RUN_TESTS = """#!/bin/bash
# Install curl
apt-get update
apt-get install -y curl
curl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh
source $HOME/.local/bin/env
if [ "$PWD" = "/" ]; then
    exit 1
fi
uv init
uv add pytest==8.4.1 requests
export DATA=/tmp/data
uv run pytest $TEST_DIR/test_outputs.py -rA
"""


pytestmark = [pytest.mark.usefixtures("isolated_cache")]  # conftest: TERMRL_CACHE in tmp_path


def run_in_image(tag: str, cmd: str) -> str:
    client = docker.from_env()
    try:
        return client.containers.run(
            tag, ["bash", "-c", cmd], remove=True, network_mode="none", labels={"termrl": "1"}
        ).decode()
    finally:
        client.close()


def tb_task(root: Path, name="tb-demo", yaml_extra="", files: dict[str, str] | None = None) -> Path:
    """A Terminal-Bench task folder: task.yaml without category or timeouts, Dockerfile FROM the TB image."""
    d = root / name
    (d / "tests").mkdir(parents=True)
    (d / "task.yaml").write_text(
        "instruction: |-\n  Write done to /app/out.txt.\ndifficulty: unknown\n" + yaml_extra
    )
    (d / "Dockerfile").write_text(f"FROM {TB_IMAGE}\nWORKDIR /app\n")
    (d / "tests" / "test_outputs.py").write_text(TESTS)
    (d / "run-tests.sh").write_text(UV_RUN_TESTS)
    for name, text in (files or {}).items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(text)
    return d


# ---------------------------------------------------------------- Dockerfile parsing (pure)


def test_heredoc_bodies_are_not_instructions():
    text = "FROM x\nCOPY <<'EOF' /app/a.py\nRUN not an instruction\nEOF\nRUN <<-S\n\techo hi\n\tS\nWORKDIR /app\n"
    assert [(i.keyword, i.first, i.last, i.heredocs) for i in parse(text)] == [
        ("FROM", 1, 1, []),
        ("COPY", 2, 4, [("EOF", "RUN not an instruction\n")]),
        ("RUN", 5, 7, [("S", "echo hi\n")]),
        ("WORKDIR", 8, 8, []),
    ]


def test_copy_heredocs_become_build_context_files():
    text, files = expand_heredocs(
        "FROM x\nCOPY <<A <<B /app/dir/\none\nA\ntwo\nB\nCOPY <<EOF /app/c.txt\nthree\nEOF\n"
    )
    assert text == (
        "FROM x\nCOPY .termrl-heredocs/2/A .termrl-heredocs/2/B /app/dir/\n"
        "COPY .termrl-heredocs/7/EOF /app/c.txt\n"
    )
    assert files == {
        ".termrl-heredocs/2/A": b"one\n",
        ".termrl-heredocs/2/B": b"two\n",
        ".termrl-heredocs/7/EOF": b"three\n",
    }


def test_unclosed_heredoc_names_its_line():
    with pytest.raises(ValueError, match="^line 2: heredoc <<EOF has no closing 'EOF' line$"):
        parse("FROM x\nCOPY <<EOF /a\nbody\n")


def test_from_rewrite_leaves_stages_and_build_args_alone():
    text = "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nFROM golang:1.21 AS build\nFROM build\nFROM --platform=linux/amd64 ubuntu:24.04\n"  # noqa: E501
    new, changes = rewrite_from(text, lambda image: "local/" + image.split(":")[0])
    assert changes == [("golang:1.21", "local/golang"), ("ubuntu:24.04", "local/ubuntu")]
    assert (
        new
        == "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nFROM local/golang AS build\nFROM build\nFROM local/ubuntu\n"
    )


def test_image_map_first_match_wins_and_present_images_stay():
    entries = ("ghcr.io/laude-institute/t-bench/python-3-13:*=local/py", "ghcr.io/*=local/any")
    assert images.map_image(TB_IMAGE, entries, present=lambda i: False) == "local/py"
    assert images.map_image("ghcr.io/x/y:1", entries, present=lambda i: False) == "local/any"
    assert images.map_image("swebench/sweb.eval:latest", entries, present=lambda i: False) is None
    assert images.map_image(TB_IMAGE, entries, present=lambda i: True) == TB_IMAGE
    with pytest.raises(ValueError, match="entry 'nonsense': must be 'pattern=image'"):
        images.map_image("a", ("nonsense",), present=lambda i: False)


# ---------------------------------------------------------------- Terminal-Bench semantics (loader)


def test_run_tests_installs_move_to_build_time_and_the_rest_to_test_setup(tmp_path):
    build, setup = split_run_tests("t", UV_RUN_TESTS, tmp_path)
    assert build == (
        'missing=\'\'; for p in curl; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; '
        'done; if [ -n "$missing" ]; then apt-get update && apt-get install -y $missing; fi\n'
        "python3 -m pip install --no-cache-dir pytest==8.4.1 requests\n"
    )
    assert setup == 'if [ "$PWD" = "/" ]; then\n    exit 1\nfi\nexport DATA=/tmp/data\n'


def test_run_tests_helpers_sourced_from_test_dir_are_read(tmp_path):
    (tmp_path / "setup.sh").write_text("uv init\nuv add pytest\nmkdir -p /tmp/w\n")
    build, setup = split_run_tests(
        "t", "source $TEST_DIR/setup.sh\nbash $TEST_DIR/run.sh\n", tmp_path
    )
    assert build == "python3 -m pip install --no-cache-dir pytest || python3 -c 'import pytest'\n"
    assert setup == "mkdir -p /tmp/w\nbash $TEST_DIR/run.sh\n"  # run.sh is absent: kept as written


def test_terminal_bench_defaults_and_test_weights(tmp_path, caplog):
    d = tb_task(tmp_path, files={"test_weights.json": json.dumps({"out": 1})})
    (task,) = load_tasks(d)
    assert (
        task.difficulty,
        task.category,
        task.agent_timeout_s,
        task.test_timeout_s,
        task.weights,
    ) == ("unknown", "software_engineering", 360.0, 60.0, {"test_out": 1.0})
    (d / "test_weights.json").write_text('{"out": "Hello"}')
    with caplog.at_level(logging.WARNING, logger="termrl.tasks"):
        (task,) = load_tasks(d)
    assert task.weights == {"test_out": 1.0}
    assert caplog.messages[-1].startswith(
        f"task 'tb-demo': ignoring {d / 'test_weights.json'} (task 'tb-demo', "
        "field 'test_weights.json': weight of 'test_out' is not a number"
    )


def test_solution_yaml_becomes_a_tmux_script(tmp_path):
    d = tb_task(
        tmp_path,
        files={
            "solution.yaml": "- command: echo done > out.txt\n  min_timeout_sec: 0.5\n"
            "  block: true\n  append_enter: true\n- command: C-o\n"
            "  append_enter: false\n"
        },
    )
    (task,) = load_tasks(d)
    assert task.solution.read_text().splitlines()[3:] == [
        'tmux new-session -d -s oracle -x 200 -y 50 -c "$PWD"',
        "tmux send-keys -t oracle 'echo done > out.txt; tmux wait-for -S oracle-step' Enter",
        "tmux wait-for oracle-step",
        "sleep 0.5",
        "tmux send-keys -t oracle C-o",
        "sleep 0.3",
        "sleep 1",
        "tmux kill-session -t oracle",
    ]


def test_compose_with_several_services_is_refused(tmp_path):
    d = tb_task(
        tmp_path,
        files={
            "docker-compose.yaml": "services:\n  client:\n    build: .\n  db:\n    image: postgres\n"
        },
    )
    refused = []
    with pytest.raises(TaskError, match="no task could be loaded: 1 refused"):
        load_tasks(tmp_path, refused=refused)
    assert [str(e) for e in refused] == [
        "task 'tb-demo', field 'docker-compose.yaml': has 2 services (client, db); termrl runs one container per task, "
        f"so multi-service tasks are not supported [{d / 'docker-compose.yaml'}]"
    ]


def test_compose_service_build_context_and_dockerfile(tmp_path):
    d = tb_task(
        tmp_path,
        files={
            "docker-compose.yaml": "services:\n  client:\n    build:\n      context: env\n"
            "      dockerfile: Custom.Dockerfile\n",
            "env/Custom.Dockerfile": "FROM x\n",
        },
    )
    (task,) = load_tasks(d)
    assert (task.dockerfile, task.context_dir) == (d / "env" / "Custom.Dockerfile", d / "env")


# ---------------------------------------------------------------- CSV: an application's own tests/


def test_csv_row_with_its_own_tests_keeps_them_in_the_build_context(tmp_path):
    row = {
        "task_id": "app-tests",
        "difficulty": "medium",
        "title": "t",
        "use_case_category": "",
        "prompt": "Fix it.",
        "category": "debugging",
        "tags": "python",
        "dockerfile": f"FROM {BASE}\nCOPY tests/ /app/tests/\n",
        "test_functions": TESTS,
        "test_weights": '{"test_out": 1.0}',
        "additional_files": json.dumps({"tests/test_unit.py": "def test_unit():\n    pass\n"}),
    }
    path = tmp_path / "rows.csv"
    with open(path, "w", newline="") as f:
        import csv

        writer = csv.DictWriter(f, fieldnames=list(row))
        writer.writeheader()
        writer.writerow(row)
    (task,) = import_csv(path, tmp_path / "out")
    assert task.tests_dir == tmp_path / "out" / "app-tests" / "hidden_tests"
    names = [name for name, _ in images._context_files(task)]
    assert names == ["Dockerfile", "task.toml", "tests/test_unit.py"]
    assert list(task.weights) == ["test_out"]


# ---------------------------------------------------------------- builds (real Docker, offline)


@pytest.mark.docker
def test_heredocs_multi_stage_and_a_mapped_from_build_offline(tmp_path, caplog):
    d = tb_task(tmp_path)
    (d / "Dockerfile").write_text(
        f"FROM {TB_IMAGE} AS build\nRUN <<EOF\nmkdir -p /out\necho built > /out/b.txt\nEOF\n"
        f"FROM {TB_IMAGE}\nWORKDIR /app\nCOPY --from=build /out/b.txt /app/b.txt\n"
        "COPY <<'EOF' /app/a.py\nprint('hi $HOME')\nEOF\nRUN python3 <<PY\nopen('/app/c.txt', 'w').write('c\\n')\nPY\n"
    )
    (d / "run-tests.sh").write_text("uv add pytest\n")
    (task,) = load_tasks(d)
    entries = (f"ghcr.io/laude-institute/t-bench/python-3-13:*={BASE}",)
    with caplog.at_level(logging.INFO, logger="termrl.images"):
        tag = images.build_image(task, image_map=entries, build_network="none")
    assert f"task tb-demo: FROM {TB_IMAGE} -> {BASE} (sandbox.image_map)" in caplog.messages
    assert (
        run_in_image(tag, "cat /app/b.txt /app/a.py /app/c.txt") == "built\nprint('hi $HOME')\nc\n"
    )


@pytest.mark.docker
def test_unmapped_image_is_a_clear_per_task_error(tmp_path):
    d = tb_task(tmp_path)
    (task,) = load_tasks(d)
    with pytest.raises(
        images.ImageBuildError,
        match=f"^task tb-demo: FROM {TB_IMAGE} is not present locally and "
        r"cannot be pulled \(no registry\); map it",
    ):
        images.build_image(task, image_map=(), build_network="none")


@pytest.mark.docker
def test_offline_build_that_installs_packages_says_it_needs_network(tmp_path):
    d = tb_task(tmp_path)
    (d / "Dockerfile").write_text(f"FROM {BASE}\nRUN apt-get update && apt-get install -y cowsay\n")
    (task,) = load_tasks(d)
    with pytest.raises(images.ImageBuildError) as info:
        images.build_image(task, build_network="none")
    assert str(info.value).startswith(
        "task tb-demo: needs network at build time (Dockerfile line 2: RUN apt-get "
        "update && apt-get install -y cowsay) and no package mirror is reachable"
    )


# ---------------------------------------------------------------- validation without an oracle


def _native(root: Path, name: str, tests: str, solution: bool) -> Path:
    d = root / name
    (d / "tests").mkdir(parents=True)
    (d / "task.toml").write_text(
        f'id = "{name}"\ninstruction = "x"\ndifficulty = "easy"\ncategory = "c"\n'
        "[weights]\ntest_out = 1.0\n"
    )
    (d / "Dockerfile").write_text(f"FROM {BASE}\nWORKDIR /app\n")
    (d / "tests" / "test_outputs.py").write_text(tests)
    if solution:
        (d / "solution.sh").write_text("echo done > /app/out.txt\n")
    return d


@pytest.mark.docker
def test_validation_without_an_oracle_has_its_own_verdicts(tmp_path):
    fails = load_tasks(_native(tmp_path, "no-oracle", TESTS, False))[0]
    passes = load_tasks(_native(tmp_path, "pre-passes", "def test_out():\n    pass\n", False))[0]

    async def both():
        return await asyncio.gather(validate_task(fails), validate_task(passes))

    a, b = asyncio.run(both())
    assert (a.ok, a.verdict, a.reasons, a.after) == (True, "fails before; no oracle", [], None)
    assert (b.ok, b.verdict) == (False, "defective")
    assert b.reasons == [
        "tests pass before the solution: test_out (fix the tests, or list them under "
        "[allowed_prepass] with a reason)",
        "tests pass after `rm -rf /app`: test_out (a test must also check what should be kept)",
    ]
    assert (a.destroyed.tests, b.destroyed.tests) == ({"test_out": False}, {"test_out": True})


@pytest.mark.docker
def test_validate_cli_reports_refused_tasks_and_goes_on(tmp_path):
    _native(tmp_path, "no-oracle", TESTS, False)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "task.yaml").write_text("instruction: [unclosed\n")
    out = subprocess.run(
        ["python3", "-m", "tasks", "validate", "--tasks", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith(
        "refused broken: task.yaml: malformed YAML: while parsing a flow sequence"
    )
    assert (
        "1 task(s): 0 valid, 1 fail before without an oracle, 0 invalid or defective, 1 refused at loading"
        in out.stdout
    )
    strict = subprocess.run(
        ["python3", "-m", "tasks", "validate", "--tasks", str(tmp_path), "--strict"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert strict.returncode == 1


@pytest.mark.docker
def test_solution_yaml_oracle_solves_the_task_in_a_sandbox(tmp_path):
    d = tb_task(
        tmp_path,
        files={
            "solution.yaml": "- command: echo done > out.txt\n  block: true\n  append_enter: true\n"
        },
    )
    (d / "Dockerfile").write_text(f"FROM {BASE}\nWORKDIR /app\n")
    (d / "run-tests.sh").write_text("uv add pytest\n")  # offline: the base image's pytest does
    (task,) = load_tasks(d)
    tag = images.build_image(task, build_network="none")

    async def run():
        async with await sandbox.Sandbox.start(tag) as sb:
            await sb.write_file("/tmp/solution.sh", task.solution.read_bytes())
            result = await sb.exec("bash /tmp/solution.sh", timeout=60)
            return result.exit_code, await sb.read_file("/app/out.txt")

    assert asyncio.run(run()) == (0, b"done\n")
