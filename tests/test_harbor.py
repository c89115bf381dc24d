"""Harbor task folders (Terminal-Bench 2.x): loading as published, test.sh shapes, refusals naming
the feature, the script verifier reading reward files the agent cannot plant, named reward parts,
oracles with side files. Fixtures in tests/fixtures/harbor/ are written in Harbor's shapes (no
published task copied). Builds use the real Docker engine on the local base image."""

import asyncio
import json
import re
import resource
import shutil
import tomllib
from pathlib import Path

import pytest

import reward
import sandbox
from configs import BASE_TAGS
from sandboxing import harbor_verifier, images
from sandboxing.verifier import VerifyError
from tasks import TaskError, load_tasks
from tasks.harbor import export_harbor, split_test_sh
from tasks.terminal_bench import split_run_tests
from tasks.validate import validate_task

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "harbor"
RUN_ID = "test-harbor"
INSTALL = "python3 -m pip install --no-cache-dir --break-system-packages pytest==8.4.1"
PIN = f"{INSTALL} || {INSTALL} --ignore-installed || python3 -c 'import pytest'\n"


ALL_OR_NOTHING = (
    "#!/bin/bash\npython3 -m pytest /tests/test_state.py\nif [ $? -eq 0 ]; then\n"
    "  echo 1 > /logs/verifier/reward.txt\nelse\n  echo 0 > /logs/verifier/reward.txt\nfi\n"
)


def copy_fixture(tmp_path: Path, name: str) -> Path:
    return Path(shutil.copytree(FIXTURES / name, tmp_path / name))


# ---------------------------------------------------------------- loading


def test_harbor_task_loads_id_metadata_resources_and_timeouts():
    task = {t.id: t for t in load_tasks(FIXTURES)}["hb-hello"]  # id: [task].name's part after '/'
    assert (task.difficulty, task.category, task.tags) == (
        "easy",
        "file-operations",
        ["fixture", "harbor"],
    )
    assert (task.agent_timeout_s, task.test_timeout_s) == (90.0, 120.0)
    assert (task.cpus, task.memory_mb, task.storage_mb) == (
        1,
        1024,
        2048,
    )  # memory = "1G", storage = "2G"
    assert task.instruction == (
        "Create /app/greeting.txt holding the line `hello, harbor` and /app/count.txt "
        "holding the number of\nlines of /app/words.txt."
    )  # canary line dropped
    assert task.context_dir == FIXTURES / "hb-hello" / "environment"
    assert task.solution == FIXTURES / "hb-hello" / "solution" / "solve.sh"
    assert task.solution_dir == FIXTURES / "hb-hello" / "solution"
    # one uvx pytest run over every test file, exit status to reward.txt: scored as harbor does
    assert task.verifier_script == ALL_OR_NOTHING and task.test_setup is None
    assert task.weights == {"reward": 1.0}
    assert task.build_setup == PIN  # uvx --with pins at build time; pytest-json-ctrf left out
    assert task.meta["author_name"] == "termrl" and task.meta["source"] == "harbor"
    # per-test credit, opted in: termrl's weighted pytest, equal parts
    (split,) = load_tasks(FIXTURES / "hb-hello", per_test_credit=True)
    assert split.verifier_script is None and split.test_setup is None
    assert split.weights == {"test_count": 0.5, "test_greeting": 0.5}
    assert split.build_setup == PIN


def test_harbor_defaults_and_a_reward_json_script_kept_as_a_script():
    task = {t.id: t for t in load_tasks(FIXTURES)}["hb-parts"]  # no [task]: the folder's name
    assert (task.difficulty, task.agent_timeout_s, task.test_timeout_s) == ("unknown", None, 120.0)
    assert (task.cpus, task.memory_mb, task.storage_mb) == (None, 1024, None)
    assert task.weights == {"reward": 1.0}
    dump = "json.dump({'correctness': $correctness, 'performance': $performance}, "
    assert task.verifier_script.splitlines() == [
        "#!/bin/bash",
        "correctness=0",
        "performance=0",
        "python3 -m pytest /tests/test_correctness.py && correctness=1",
        "python3 -m pytest /tests/test_performance.py && performance=1",
        'python3 -c "',
        "import json",
        dump + "open('/logs/verifier/reward.json', 'w'))",
        '"',
    ]


def test_plain_pytest_test_sh_with_exit_code_bookkeeping_is_termrls_pytest(tmp_path):
    (tmp_path / "test_outputs.py").write_text("def test_a():\n    pass\n")
    text = (
        "#!/bin/bash\n\n# Run tests (test dependencies already installed in Dockerfile)\n"
        "pytest /tests/test_outputs.py -rA\n\n_EXIT_CODE=$?\nif [ $_EXIT_CODE -eq 0 ]; then\n"
        "    echo 1 > /logs/verifier/reward.txt\nelse\n    echo 0 > /logs/verifier/reward.txt\nfi\n"
        "exit $_EXIT_CODE\n"
    )
    assert split_test_sh("t", text, tmp_path, per_test_credit=True) == (None, None, None)
    # by default kept as the script: its exit status is the reward, as harbor scores it
    assert split_test_sh("t", text, tmp_path) == (
        None,
        None,
        "#!/bin/bash\npython3 -m pytest /tests/test_outputs.py\n_EXIT_CODE=$?\n"
        "if [ $_EXIT_CODE -eq 0 ]; then\n    echo 1 > /logs/verifier/reward.txt\nelse\n"
        "    echo 0 > /logs/verifier/reward.txt\nfi\nexit $_EXIT_CODE\n",
    )


def test_uvx_python_and_extra_deps_move_to_build_time(tmp_path):
    (tmp_path / "test_outputs.py").write_text("def test_a():\n    pass\n")
    text = (
        "uvx \\\n  -p 3.13 \\\n  -w pytest==8.4.1 \\\n  -w numpy==2.3.4 \\\n"
        "  -w pytest-json-ctrf==0.3.5 \\\n"
        "  pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA\n"
        "if [ $? -eq 0 ]; then\n  echo 1 > /logs/verifier/reward.txt\nelse\n"
        "  echo 0 > /logs/verifier/reward.txt\nfi\n"
    )
    install = (
        "python3 -m pip install --no-cache-dir --break-system-packages pytest==8.4.1 numpy==2.3.4"
    )
    assert split_test_sh("t", text, tmp_path, per_test_credit=True) == (
        f"{install} || {install} --ignore-installed\n",
        None,
        None,
    )


def test_terminal_bench_venv_activation_goes_with_the_dropped_uv_venv(tmp_path):
    text = (
        "uv venv .tbench-testing\nsource .tbench-testing/bin/activate\n"
        "source /opt/app/bin/activate\n"
        "uv pip install pytest==8.4.1\nuv run pytest $TEST_DIR/test_outputs.py -rA\n"
    )
    build, setup = split_run_tests("t", text, tmp_path)
    assert setup == "source /opt/app/bin/activate\n"  # a venv the image made itself stays activated
    assert (
        build
        == "python3 -m pip install --no-cache-dir pytest==8.4.1 || python3 -c 'import pytest'\n"
    )


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            '\n[[steps]]\nname = "one"\n',
            "field 'steps/one': is missing (the step's folder)",
        ),
        (
            '\n[[environment.mcp_servers]]\nname = "tools"\nurl = "http://tools:8000/mcp"\n',
            "field 'environment.mcp_servers': "
            "MCP servers ([[environment.mcp_servers]]) are not supported",
        ),
        (
            '\n[environment]\nos = "windows"\n',
            "field 'environment.os': 'windows' tasks are not supported",
        ),
        (
            "\n[environment]\ngpus = 1\n",
            "field 'environment.gpus': 1: accelerators in the task's container are not supported",
        ),
        (
            '\nmulti_step_reward_strategy = "mean"\n',
            "field 'multi_step_reward_strategy': applies to multi-step tasks only",
        ),
        (
            '\n[verifier.environment]\ndocker_image = "x"\n',
            "field 'verifier.environment': a separate verifier environment is not supported",
        ),
        (
            '\n[environment.env]\nTOKEN = "${TERMRL_TASK_UNSET_FOR_TEST}"\n',
            "field 'environment.env.TOKEN': ${TERMRL_TASK_UNSET_FOR_TEST} names "
            "TERMRL_TASK_UNSET_FOR_TEST, which is not set here, and has no default",
        ),
        (
            # set on every host, and never a task's to read
            '\n[environment.env]\nWHERE = "${HOME}"\n',
            "field 'environment.env.WHERE': ${HOME} names HOME, and termrl passes a task only "
            "TERMRL_TASK_* variables of its own, and has no default",
        ),
        (
            '\n[environment]\nworkdir = "app"\n',
            "field 'environment.workdir': must be an absolute path",
        ),
    ],
)
def test_unsupported_harbor_features_are_refused_with_one_line_naming_them(tmp_path, edit, message):
    d = copy_fixture(tmp_path, "hb-parts")
    text = (d / "task.toml").read_text()
    if "[environment]" in edit or "multi_step" in edit:
        text = text.replace("[environment]\nmemory_mb = 1024\n", "")
    if "multi_step" in edit:  # a top-level key: before the first table
        text, edit = edit + text, ""
    (d / "task.toml").write_text(text + edit)
    with pytest.raises(
        TaskError,
        match="^" + "task 'hb-parts', " + re.escape(message),
    ):
        load_tasks(d)


def test_compose_sidecars_are_parsed_in_dependency_order(tmp_path):
    d = copy_fixture(tmp_path, "hb-parts")
    (d / "environment" / "api").mkdir()
    (d / "environment" / "api" / "Dockerfile").write_text("FROM python:3.13-slim\n")
    (d / "environment" / "docker-compose.yaml").write_text(
        "services:\n  main:\n    cpus: 1\n    depends_on:\n      api: {condition: service_healthy}\n"
        "  api:\n    build: ./api\n    depends_on: [db]\n    expose: ['5000']\n"
        "    environment: [MODE=test, 'URL=${URL:-http://db:9}']\n"
        "    healthcheck:\n      test: [CMD, python3, -c, 'print(1)']\n      interval: 1m30s\n"
        "      retries: 3\n"
        "  db:\n    image: python:3.11-slim\n    command: python3 -m http.server 9\n"
    )
    (task,) = load_tasks(d)  # harbor supplies main's build context (environment/) itself
    assert task.dockerfile == (d / "environment" / "Dockerfile").resolve()
    assert [s.name for s in task.sidecars] == ["db", "api"]
    db, api = task.sidecars
    assert (db.image, db.command, db.dockerfile) == (
        "python:3.11-slim",
        "python3 -m http.server 9",
        None,
    )
    assert api.dockerfile == (d / "environment" / "api" / "Dockerfile").resolve()
    assert api.environment == {"MODE": "test", "URL": "http://db:9"}
    assert api.depends_on == ("db",)
    assert api.healthcheck == {
        "test": ["CMD", "python3", "-c", "print(1)"],
        "interval": 90 * 10**9,
        "retries": 3,
    }
    assert task.service_names == ("api", "db", "main")


@pytest.mark.parametrize(
    "compose, message",
    [
        (
            "services:\n  main: {}\n  db:\n    image: x\n    volumes: [data:/var]\n",
            "field 'docker-compose.yaml: services.db.volumes': is not supported by termrl",
        ),
        (
            "services:\n  main: {environment: [A=1]}\n",
            "field 'docker-compose.yaml: services.main.environment': is not supported for main",
        ),
        (
            "services:\n  main: {}\n  db:\n    image: x\n    environment: [API_KEY]\n",
            "field 'docker-compose.yaml: services.db.environment.API_KEY': has no value, so compose "
            "would read it from the host's environment",
        ),
        (
            "services:\n  main: {}\n  db:\n    image: x\n    environment: {K: '${KEY}'}\n",
            r"field 'docker-compose.yaml: services.db.environment.K': \$\{KEY\} would be read",
        ),
        (
            "services:\n  main: {}\n  a: {image: x, depends_on: [b]}\n  b: {image: x, depends_on: [a]}\n",
            "field 'docker-compose.yaml: depends_on': a dependency cycle among a, b",
        ),
        (
            "services:\n  main: {depends_on: [nope]}\n",
            "field 'docker-compose.yaml: services.main.depends_on': 'nope' is not a sidecar",
        ),
        (
            "services:\n  main: {}\n  db: {build: {context: ., args: {A: 1}}}\n",
            "field 'docker-compose.yaml: services.db.build.args': is not supported",
        ),
        (
            "services:\n  db: {image: x}\n",
            "field 'docker-compose.yaml: services': has no service `main`",
        ),
    ],
)
def test_compose_fields_termrl_does_not_take_are_refused_by_name(tmp_path, compose, message):
    d = copy_fixture(tmp_path, "hb-parts")
    (d / "environment" / "docker-compose.yaml").write_text(compose)
    with pytest.raises(TaskError, match=message):
        load_tasks(d)


def test_prebuilt_docker_image_without_a_dockerfile_says_it_cannot_be_pulled(tmp_path):
    d = copy_fixture(tmp_path, "hb-parts")
    (d / "environment" / "Dockerfile").unlink()
    (d / "task.toml").write_text(
        (d / "task.toml").read_text() + 'docker_image = "someone/task:20251031"\n'
    )
    with pytest.raises(
        TaskError,
        match="field 'environment.docker_image': someone/task:20251031 is a prebuilt "
        "image that cannot be pulled here",
    ):
        load_tasks(d)


def test_a_folder_of_no_known_format_names_the_formats_tried(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "task.toml").write_text('title = "what"\n')
    with pytest.raises(TaskError) as e:
        load_tasks(tmp_path / "x")
    assert str(e.value) == (
        "task 'x', field 'task.toml': is no task format termrl reads: no `id` (native) and no "
        "instruction.md or environment/ beside it (Harbor); formats tried: native (task.toml with "
        "`id`), Harbor (task.toml beside instruction.md and environment/), "
        f"Terminal-Bench (task.yaml) [{tmp_path / 'x' / 'task.toml'}]"
    )


def test_allow_internet_is_said_once_at_load(tmp_path, caplog):
    d = copy_fixture(tmp_path, "hb-parts")
    (d / "task.toml").write_text((d / "task.toml").read_text() + "allow_internet = true\n")
    with caplog.at_level("WARNING", logger="termrl.tasks"):
        (task,) = load_tasks(d)
    assert task.meta["allow_internet"] == "true"
    assert caplog.messages == [
        "task hb-parts: allow_internet = true; termrl's sandboxes have no network, so it "
        "fails here wherever the agent or its tests download at run time"
    ]


def test_fields_harbor_accepts_and_termrl_does_not_take_are_each_said_in_one_line(tmp_path, caplog):
    d = copy_fixture(tmp_path, "hb-parts")
    text = (d / "task.toml").read_text().replace("[environment]\nmemory_mb = 1024\n", "")
    (d / "task.toml").write_text(
        'artifacts = ["/app/out.log"]\n'
        + text
        + '\n[agent]\nuser = "agent"\nnetwork_mode = "allowlist"\nallowed_hosts = ["example.invalid"]\n'
        + '\n[environment.healthcheck]\ncommand = "true"\n'
        + "\n[environment.extras]\nsome = 1\n"
    )
    with caplog.at_level("WARNING", logger="termrl.tasks"):
        (task,) = load_tasks(d)
    path = d / "task.toml"
    assert caplog.messages == [
        f"task hb-parts: artifacts is not taken: termrl collects no artifacts [{path}]",
        f"task hb-parts: agent.user is not taken: the agent runs as the image's USER [{path}]",
        f"task hb-parts: environment.healthcheck is not taken: termrl does not wait on it; the "
        f"ENTRYPOINT's services are up once it has run (DESIGN.md, Task format) [{path}]",
        f"task hb-parts: environment.extras is no harbor task.toml field; ignored [{path}]",
        'task hb-parts: agent.network_mode "allowlist": termrl\'s sandboxes have no network (no '
        "egress, no allowlist), so the task fails here wherever it downloads at run time "
        f"[{path}]",
    ]


def test_a_task_opts_into_per_test_credit_in_its_own_task_toml(tmp_path):
    d = copy_fixture(tmp_path, "hb-hello")
    toml = d / "task.toml"
    toml.write_text(toml.read_text() + "\n[metadata.termrl]\nper_test_credit = true\n")
    (task,) = load_tasks(d)
    assert task.weights == {"test_count": 0.5, "test_greeting": 0.5}
    assert task.verifier_script is None and task.meta["per_test_credit"] == "true"
    toml.write_text(toml.read_text().replace("per_test_credit = true", 'per_test_credit = "yes"'))
    with pytest.raises(
        TaskError,
        match="field 'metadata.termrl.per_test_credit': must be true or false, got \"yes\"",
    ):
        load_tasks(d)


def test_environment_env_and_workdir_become_the_images_and_verifier_env_the_scripts(
    tmp_path, monkeypatch
):
    d = copy_fixture(tmp_path, "hb-parts")
    monkeypatch.setenv("TERMRL_TASK_TOKEN", "from-host")
    monkeypatch.setenv("TERMRL_TEST_SECRET", "never-read")
    (d / "task.toml").write_text(
        (d / "task.toml").read_text()
        + 'workdir = "/srv/work"\n'
        + '\n[environment.env]\nGREETING = "say \\"$HOME\\" \\\\ hi"\n'
        + 'TOKEN = "${TERMRL_TASK_TOKEN}"\nLEVEL = "${TERMRL_UNSET_FOR_TEST:-3}"\n'
        + 'OTHER = "${TERMRL_TEST_SECRET:-default}"\n'
        + '\n[solution.env]\nANSWER = "42"\n'
        + '\n[verifier.env]\nSTRICT = "it\'s on"\n'
    )
    (task,) = load_tasks(d)
    original = (FIXTURES / "hb-parts" / "environment" / "Dockerfile").read_text()
    assert task.dockerfile.read_text() == original + (
        'ENV GREETING="say \\"\\$HOME\\" \\\\ hi"\nENV TOKEN="from-host"\nENV LEVEL="3"\n'
        # a variable of the host outside TERMRL_TASK_*: its default, never the host's value
        'ENV OTHER="default"\nWORKDIR /srv/work\n'
    )
    assert task.solution_env == {"ANSWER": "42"}
    assert task.verifier_script.splitlines()[:2] == ["#!/bin/bash", "export STRICT='it'\"'\"'s on'"]
    # termrl's own pytest (per-test credit) takes no [verifier.env]: refused, never dropped
    d2 = copy_fixture(tmp_path, "hb-hello")
    (d2 / "task.toml").write_text((d2 / "task.toml").read_text() + '\n[verifier.env]\nA = "1"\n')
    with pytest.raises(TaskError, match="field 'verifier.env': per-test credit runs termrl's own"):
        load_tasks(d2, per_test_credit=True)


# ---------------------------------------------------------------- reward files and parts


def test_reward_json_wins_over_reward_txt_and_bad_files_are_errors():
    assert harbor_verifier.parse_rewards(b'{"a": 1, "b": 0.5}', b"0\n") == {"a": 1.0, "b": 0.5}
    assert harbor_verifier.parse_rewards(None, b" 1\n") == {"reward": 1.0}
    with pytest.raises(
        VerifyError, match="wrote neither /logs/verifier/reward.json nor reward.txt"
    ):
        harbor_verifier.parse_rewards(None, None)
    with pytest.raises(VerifyError, match=r"reward.txt must hold one number, got 'yes'"):
        harbor_verifier.parse_rewards(None, b"yes")
    with pytest.raises(VerifyError, match=r"reward.json: 'a' = 2 must be a number in \[0, 1\]"):
        harbor_verifier.parse_rewards(b'{"a": 2}', None)
    with pytest.raises(VerifyError, match="must be a non-empty flat object of numbers"):
        harbor_verifier.parse_rewards(b"[1]", None)


def test_named_parts_score_their_mean_or_the_reward_key():
    class R:
        tests, timed_out, error, skipped, tampered = {}, False, None, [], None

    r = R()
    r.parts = {"correctness": 1.0, "performance": 0.0}
    v = reward.verify(r, {"reward": 1.0})
    assert (v.score, v.resolved, v.passed, v.failed) == (
        0.5,
        False,
        ["correctness"],
        ["performance"],
    )
    r.parts = {"reward": 0.25, "style": 1.0}
    assert reward.verify(r, {"reward": 1.0}).score == 0.25


# ---------------------------------------------------------------- in Docker


@pytest.mark.docker
def test_oracle_validates_both_fixtures_with_their_own_solutions(docker_client):
    tasks = [t for t in load_tasks(FIXTURES) if t.id != "hb-compose"]  # test_compose.py

    async def main():
        return await asyncio.gather(*(validate_task(t) for t in tasks))

    results = {r.task_id: r for r in asyncio.run(main())}
    assert {k: (r.verdict, r.reasons) for k, r in results.items()} == {
        "hb-hello": ("valid", []),
        "hb-parts": ("valid", []),
    }
    assert results["hb-parts"].after.parts == {"correctness": 1.0, "performance": 1.0}


async def _scripted(task, commands: list[str]):
    image = await asyncio.to_thread(images.build_image, task)
    async with await sandbox.Sandbox.start(image, run_id=RUN_ID) as sb:
        for cmd in commands:
            r = await sb.exec(cmd, timeout=30)
            assert r.exit_code == 0, (cmd, r.output)
        return await sb.run_tests(task.tests_dir, timeout=60, script=task.verifier_script)


@pytest.mark.docker
def test_all_or_nothing_by_default_per_test_credit_opted_in(docker_client):
    # half solved: greeting.txt right, count.txt missing
    half = ["echo 'hello, harbor' > /app/greeting.txt"]
    (harbor,) = load_tasks(FIXTURES / "hb-hello")
    (split,) = load_tasks(FIXTURES / "hb-hello", per_test_credit=True)

    async def main():
        image = await asyncio.to_thread(images.build_image, harbor)
        async with await sandbox.Sandbox.start(image, run_id=RUN_ID) as sb:
            for cmd in half:
                assert (await sb.exec(cmd, timeout=30)).exit_code == 0
            whole = await sb.run_tests(harbor.tests_dir, timeout=60, script=harbor.verifier_script)
            parts = await sb.run_tests(split.tests_dir, timeout=60)
            return whole, parts

    whole, parts = asyncio.run(main())
    assert reward.verify(whole, harbor.weights).score == 0.0  # harbor: pytest exited 1 -> 0
    assert reward.verify(parts, split.weights).score == 0.5


def _env_task(tmp_path: Path) -> Path:
    """A Harbor task whose oracle and tests need [environment.env], [solution.env],
    [verifier.env] and [environment].workdir."""
    d = tmp_path / "hb-env"
    (d / "environment").mkdir(parents=True)
    (d / "tests").mkdir()
    (d / "solution").mkdir()
    (d / "environment" / "Dockerfile").write_text("FROM python:3.12-slim\nWORKDIR /app\n")
    (d / "instruction.md").write_text("Write $GREETING to out.txt in the working directory.\n")
    (d / "task.toml").write_text(
        'version = "1.4"\n\n[environment]\nworkdir = "/srv/work"\n'
        '\n[environment.env]\nGREETING = "hello from env"\n'
        '\n[solution.env]\nANSWER = "${TERMRL_UNSET_FOR_TEST:-42}"\n'
        '\n[verifier.env]\nEXPECTED_ANSWER = "42"\n'
    )
    (d / "solution" / "solve.sh").write_text(
        '#!/bin/bash\necho "$GREETING" > out.txt\necho "$ANSWER" > answer.txt\n'
    )
    (d / "tests" / "test_env.py").write_text(
        "import os\nfrom pathlib import Path\n\n\n"
        "def test_env():\n"
        '    assert Path("/srv/work/out.txt").read_text() == "hello from env\\n"\n'
        '    assert Path("/srv/work/answer.txt").read_text() == os.environ["EXPECTED_ANSWER"] + "\\n"\n'
        '    assert os.getcwd() == "/srv/work" and os.environ["GREETING"] == "hello from env"\n'
    )
    (d / "tests" / "test.sh").write_text(
        "#!/bin/bash\npytest /tests/test_env.py -rA\n"
        "if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; "
        "else echo 0 > /logs/verifier/reward.txt; fi\n"
    )
    return d


@pytest.mark.docker
def test_env_tables_and_workdir_reach_the_agent_the_oracle_and_the_verifier(
    tmp_path, docker_client
):
    (task,) = load_tasks(_env_task(tmp_path))

    async def main():
        image = await asyncio.to_thread(images.build_image, task)
        async with await sandbox.Sandbox.start(image, run_id=RUN_ID) as sb:
            seen = await sb.exec('pwd; echo "$GREETING|${EXPECTED_ANSWER-}|${ANSWER-}"', timeout=30)
            command = await sandbox.put_solution(sb, task, "/tmp/solution.sh")
            assert (await sb.exec(command, timeout=60)).exit_code == 0
            report = await sb.run_tests(task.tests_dir, timeout=60, script=task.verifier_script)
            return seen.output, report

    seen, report = asyncio.run(main())
    # the agent has the environment's variables, neither the oracle's nor the verifier's
    assert seen == "/srv/work\nhello from env||\n"
    assert reward.verify(report, task.weights).score == 1.0


@pytest.mark.docker
def test_a_planted_reward_json_is_never_read_and_parts_are_per_part(docker_client):
    task = {t.id: t for t in load_tasks(FIXTURES)}["hb-parts"]
    forged = [
        "mkdir -p /logs/verifier",
        """echo '{"correctness": 1, "performance": 1}' > /logs/verifier/reward.json""",
        "echo 1 > /logs/verifier/reward.txt",
        "sort -n /app/numbers.txt > /app/sorted.txt",
    ]
    report = asyncio.run(_scripted(task, forged))
    assert report.parts == {"correctness": 1.0, "performance": 0.0}  # only sorting was done
    assert reward.verify(report, task.weights).score == 0.5


@pytest.mark.docker
def test_a_script_that_writes_no_reward_file_is_an_error_not_a_zero(tmp_path, docker_client):
    task = {t.id: t for t in load_tasks(FIXTURES)}["hb-parts"]
    task.verifier_script = "#!/bin/bash\necho checking\nexit 0\n"
    with pytest.raises(
        sandbox.SandboxError,
        match="tests/test.sh wrote neither /logs/verifier/reward.json nor "
        "reward.txt \\(test.sh exit code 0\\); output tail:\nchecking\n",
    ):
        asyncio.run(_scripted(task, []))


@pytest.mark.docker
def test_a_script_past_its_timeout_is_an_error_not_a_zero(tmp_path, docker_client):
    # harbor's verifier timeout is an exception of the trial, never a reward
    task = {t.id: t for t in load_tasks(FIXTURES)}["hb-parts"]
    task.verifier_script = "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\nsleep 600\n"

    async def go():
        image = await asyncio.to_thread(images.build_image, task)
        async with await sandbox.Sandbox.start(image, run_id=RUN_ID) as sb:
            return await sb.run_tests(task.tests_dir, timeout=3, script=task.verifier_script)

    with pytest.raises(sandbox.SandboxError, match="tests/test.sh ran past its 3 s"):
        asyncio.run(go())


@pytest.mark.docker
def test_the_image_entrypoint_starts_its_services_before_the_agent_shell(tmp_path, docker_client):
    d = copy_fixture(tmp_path, "hb-parts")
    (d / "environment" / "start.sh").write_text(
        '#!/bin/bash\necho up > /tmp/service-state\n(while true; do sleep 1; done) &\nexec "$@"\n'
    )
    (d / "environment" / "Dockerfile").write_text(
        (d / "environment" / "Dockerfile").read_text()
        + "COPY start.sh /start.sh\nRUN chmod +x /start.sh\n"
        'ENTRYPOINT ["/start.sh"]\n'
    )
    (task,) = load_tasks(d)

    async def main():
        image = await asyncio.to_thread(images.build_image, task)
        async with await sandbox.Sandbox.start(image, run_id=RUN_ID) as sb:
            first = await sb.exec(
                "for i in $(seq 50); do [ -f /tmp/service-state ] && break; sleep 0.1; done; "
                "cat /tmp/service-state; ps -eo args | grep -c '^sleep infinity'",
                timeout=30,
            )
            return first.output.split()

    assert asyncio.run(main()) == [
        "up",
        "1",
    ]  # the script ran, then exec'd harbor's `sleep infinity`


def _service_task(tmp_path: Path) -> Path:
    """A Harbor task whose ENTRYPOINT starts a loopback HTTP service the tests read: state that no
    snapshot of the agent's files carries."""
    d = tmp_path / "hb-service"
    for sub in ("environment", "tests", "solution"):
        (d / sub).mkdir(parents=True)
    (d / "environment" / "start.sh").write_text(
        "#!/bin/bash\nmkdir -p /tmp/site && echo served > /tmp/site/index.html\n"
        "python3 -m http.server 8765 --bind 127.0.0.1 --directory /tmp/site >/dev/null 2>&1 &\n"
        "until python3 -c \"import socket; socket.create_connection(('127.0.0.1', 8765))\" "
        "2>/dev/null; do sleep 0.1; done\n"
        'exec "$@"\n'
    )
    (d / "environment" / "Dockerfile").write_text(
        "FROM python:3.12-slim\nWORKDIR /app\nCOPY start.sh /start.sh\nRUN chmod +x /start.sh\n"
        'ENTRYPOINT ["/start.sh"]\n'
    )
    (d / "instruction.md").write_text("Copy what http://127.0.0.1:8765/ serves to /app/copy.txt.\n")
    (d / "task.toml").write_text('version = "1.4"\n')
    (d / "solution" / "solve.sh").write_text(
        '#!/bin/bash\npython3 -c "import urllib.request as u; '
        "open('/app/copy.txt', 'wb').write(u.urlopen('http://127.0.0.1:8765/').read())\"\n"
    )
    (d / "tests" / "test_service.py").write_text(
        "import urllib.request\nfrom pathlib import Path\n\n\n"
        "def test_copy():\n"
        '    assert Path("/app/copy.txt").read_text() == "served\\n"\n\n\n'
        "def test_service_still_serves():\n"
        '    assert urllib.request.urlopen("http://127.0.0.1:8765/").read() == b"served\\n"\n'
    )
    (d / "tests" / "test.sh").write_text(
        "#!/bin/bash\npytest /tests/test_service.py -rA\n"
        "if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; "
        "else echo 0 > /logs/verifier/reward.txt; fi\n"
    )
    return d


@pytest.mark.docker
def test_the_verifier_runs_the_image_entrypoint_so_its_services_are_up_for_the_tests(
    tmp_path, docker_client
):
    d = _service_task(tmp_path)
    (task,) = load_tasks(d)
    (split,) = load_tasks(d, per_test_credit=True)

    async def main():
        image = await asyncio.to_thread(images.build_image, task)
        async with await sandbox.Sandbox.start(image, run_id=RUN_ID) as sb:
            command = await sandbox.put_solution(sb, task, "/tmp/solution.sh")
            assert (await sb.exec(command, timeout=60)).exit_code == 0
            whole = await sb.run_tests(task.tests_dir, timeout=60, script=task.verifier_script)
            parts = await sb.run_tests(split.tests_dir, timeout=60)
            return whole, parts

    whole, parts = asyncio.run(main())
    assert reward.verify(whole, task.weights).score == 1.0
    assert parts.tests == {"test_copy": True, "test_service_still_serves": True}


# ---------------------------------------------------------------- export


NATIVE = Path(__file__).resolve().parent / "fixtures" / "tasks"


def test_export_harbor_loads_back_as_the_same_tasks(tmp_path):
    native = load_tasks(NATIVE)
    written = export_harbor(native, tmp_path / "out")
    assert [p.name for p in written] == [t.id for t in native]
    again = load_tasks(tmp_path / "out")
    keys = (
        "id",
        "instruction",
        "difficulty",
        "category",
        "tags",
        "weights",
        "agent_timeout_s",
        "test_timeout_s",
        "max_turns",
        "allowed_prepass",
        "meta",
        "test_setup",
        "build_setup",
        "verifier_script",
    )
    assert [[getattr(t, k) for k in keys] for t in again] == [
        [getattr(t, k) for k in keys] for t in native
    ]
    assert [t.solution.read_bytes() for t in again] == [t.solution.read_bytes() for t in native]
    greeting = tmp_path / "out" / "fx-greeting"
    # no network line: harbor 0.25 runs `allow_internet = false` only with a registry's egress image
    exported = tomllib.loads((greeting / "task.toml").read_text())
    assert exported["environment"] == {}
    assert sorted(
        p.relative_to(greeting).as_posix() for p in greeting.rglob("*") if p.is_file()
    ) == [
        "environment/Dockerfile",
        "environment/files/name.txt",
        "instruction.md",
        "solution/solve.sh",
        "task.toml",
        "tests/test.sh",
        "tests/test_outputs.py",
    ]
    with pytest.raises(FileExistsError, match="export into an empty folder"):
        export_harbor(native[:1], tmp_path / "out")


@pytest.mark.docker
def test_exported_test_sh_writes_the_weighted_reward_as_harbor_reads_it(tmp_path, docker_client):
    (task,) = [t for t in load_tasks(NATIVE) if t.id == "fx-greeting"]
    (root,) = export_harbor([task], tmp_path)

    # as harbor runs it: in the agent's container, /tests uploaded after the solution
    async def main():
        image = await asyncio.to_thread(images.build_image, task)
        async with await sandbox.Sandbox.start(image, run_id=RUN_ID) as sb:
            await sb.write_file("/tmp/solve.sh", (root / "solution" / "solve.sh").read_bytes())
            assert (
                await sb.exec("bash /tmp/solve.sh && rm /app/name.txt", timeout=60)
            ).exit_code == 0
            for p in (root / "tests").iterdir():
                await sb.write_file(f"/tests/{p.name}", p.read_bytes())
            await sb.exec("bash /tests/test.sh", timeout=120)
            return (
                await sb.read_file("/logs/verifier/reward.json"),
                await sb.read_file("/logs/verifier/reward.txt"),
            )

    parts, txt = asyncio.run(main())
    # name.txt deleted after solving: only test_name_untouched (weight 0.1) fails
    assert json.loads(parts) == {
        "reward": pytest.approx(0.9),
        "test_contains": 1.0,
        "test_greeting_content": 1.0,
        "test_greeting_exists": 1.0,
        "test_name_untouched": 0.0,
    }
    assert float(txt) == pytest.approx(0.9)


def test_environment_tests_folder_is_the_apps_own_and_upper_case_folder_ids_are_lowered(tmp_path):
    d = copy_fixture(tmp_path, "hb-parts").rename(tmp_path / "Sort_Numbers")
    (d / "environment" / "tests").mkdir()
    (d / "environment" / "tests" / "test_app.py").write_text("def test_app():\n    pass\n")
    dockerfile = d / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "COPY tests/ /app/tests/\nCOPY . /src/\n")
    (task,) = load_tasks(d)  # the hidden tests are outside environment/: no COPY can reach them
    assert task.id == "sort_numbers"


def test_python_3_11_images_map_to_the_python_3_11_base():
    assert images.map_image("python:3.11-slim", present=lambda i: False) == BASE_TAGS["bookworm"]
    assert (
        images.map_image("python:3.12-slim@sha256:0a1b", present=lambda i: False)
        == BASE_TAGS["trixie"]
    )


@pytest.mark.docker
@pytest.mark.parametrize("suite, python", [("bookworm", "3.11"), ("trixie", "3.13")])
def test_base_images_behave_like_the_python_images_they_stand_in_for(docker_client, suite, python):
    script = (
        "ln -s /usr/bin/python3 /usr/bin/python && python -c 'import sys; print(sys.version[:4])'"
        " && python3 -c 'import pytest, numpy; print(pytest.__file__, numpy.__file__)'"
        " && ls /usr/lib/python3/dist-packages | wc -l && pip uninstall -y -q pytest numpy"
        " && python3 -c 'import pytest' 2>&1 | tail -1"
    )
    out = docker_client.containers.run(
        BASE_TAGS[suite],
        ["bash", "-c", script],
        remove=True,
        network_mode="none",
        labels={"termrl": "1"},
    ).decode()
    lines = out.splitlines()
    assert lines[0].strip() == python  # the Python the image names
    site = f"/usr/local/lib/python{python}/dist-packages"
    assert lines[1].split() == [f"{site}/pytest/__init__.py", f"{site}/numpy/__init__.py"]
    assert lines[2] == "0"  # nothing Debian-owned for pip to trip over
    assert lines[-1] == "ModuleNotFoundError: No module named 'pytest'"  # pip replaced it


@pytest.mark.docker
def test_an_apt_package_the_stand_in_debian_lacks_is_named_with_the_mapping(
    tmp_path, docker_client
):
    if not images.mirrors_reachable():
        pytest.skip("no package mirror reachable from this machine")
    d = copy_fixture(tmp_path, "hb-parts")
    (d / "environment" / "Dockerfile").write_text(
        "FROM ubuntu:24.04\nRUN apt-get update && apt-get install -y --no-install-recommends "
        "python3.12-venv\n"
    )
    (task,) = load_tasks(d)
    with pytest.raises(images.ImageBuildError) as e:
        images.build_image(task, build_network="bridge")
    assert e.value.apt_missing == "python3.12-venv"
    assert str(e.value).startswith(
        f"task hb-parts: apt package 'python3.12-venv' does not exist in {BASE_TAGS['trixie']}, "
        "the Debian base that stands in for FROM ubuntu:24.04 (sandbox.image_map; no mirror of "
        "ubuntu:24.04's distribution here)"
    )


def test_a_wildcard_copy_of_environment_loads_where_no_oracle_lies(tmp_path):
    d = copy_fixture(tmp_path, "hb-parts")
    dockerfile = d / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "COPY * /app/\n")
    (task,) = load_tasks(d)  # environment/ holds no solution.sh: `*` cannot reach the oracle
    assert task.id == "hb-parts"
    (d / "environment" / "solution.sh").write_text("echo leaked\n")
    with pytest.raises(TaskError, match="'COPY \\* /app/' copies solution.sh into the image"):
        load_tasks(d)


@pytest.mark.docker
@pytest.mark.parametrize(
    "attack, message",
    [
        (
            "mkdir -p /logs/verifier/reward.txt && echo 1 > /logs/verifier/reward.txt/a",
            "the reward file /logs/verifier/reward.txt is not a regular file: a directory",
        ),
        (
            "ln -s /dev/zero /logs/verifier/reward.txt",
            "the reward file /logs/verifier/reward.txt is not a regular file: a symbolic link to /dev/zero",
        ),
        (
            "truncate -s 256M /tmp/huge && ln -s /tmp/huge /logs/verifier/reward.txt",
            "the reward file /logs/verifier/reward.txt is not a regular file: a symbolic link to /tmp/huge",
        ),
        (
            "truncate -s 256M /logs/verifier/reward.txt",
            "the reward file /logs/verifier/reward.txt has 268435456 bytes, over the cap of 65536",
        ),
    ],
    ids=["folder", "link-to-dev-zero", "link-to-huge-file", "sparse-256M"],
)
def test_a_hostile_reward_file_is_an_error_read_without_its_body(docker_client, attack, message):
    # test.sh runs the agent's program, as a task's tests do; the program shapes the reward file
    task = {t.id: t for t in load_tasks(FIXTURES)}["hb-parts"]
    task.verifier_script = "#!/bin/bash\nbash /app/attack.sh\n"
    plant = f"cat > /app/attack.sh <<'EOF'\n{attack}\nEOF"
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(sandbox.SandboxError, match=re.escape(message + " (test.sh exit code 0)")):
        asyncio.run(_scripted(task, [plant]))
    # KiB: the 256 MiB is never read into this process
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0 < 64 << 10


def test_a_solution_with_its_own_variables_is_refused_as_demonstration_turns(tmp_path):
    from tasks.oracle import solution_turns

    d = copy_fixture(tmp_path, "hb-parts")
    (d / "task.toml").write_text((d / "task.toml").read_text() + '\n[solution.env]\nANSWER = "42"\n')
    (task,) = load_tasks(d)
    with pytest.raises(
        TaskError,
        match=r"field 'solution.env': \['ANSWER'\]: a solution with its own variables cannot be "
        r"acted out as turns",
    ):
        solution_turns(task, max_turns=8)
    # without [solution.env] the same solution splits into turns
    (task,) = load_tasks(FIXTURES / "hb-parts")
    assert solution_turns(task, max_turns=8)[0]["capture"] == {}
