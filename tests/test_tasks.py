"""tasks/: loaders (native, Terminal-Bench), their errors and oracle validation with real Docker (the CSV
importer: test_task_csv.py; generation: test_task_generation.py)."""

import asyncio
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from task_helpers import load_error

from tasks import Task, load_tasks

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
CSV_FIXTURE = FIXTURES / "tbrl_tasks.csv"
DOCKERFILE = (
    "ARG BASE_IMAGE=termrl/base:bookworm\nFROM ${BASE_IMAGE}\nWORKDIR /app\nCOPY files/ /app/\n"
)
TESTS = """import pytest


def test_alpha():
    assert False


def test_beta():
    assert False


@pytest.mark.parametrize("x", [1, 2])
def test_gamma(x):
    assert False


class TestGroup:
    def test_delta(self):
        assert False
"""


pytestmark = [pytest.mark.usefixtures("isolated_cache")]  # conftest: TERMRL_CACHE in tmp_path


def make_task(
    root: Path,
    weights: str = "test_alpha = 0.5\ntest_beta = 0.5",
    extra: str = "",
    task_id="t-basic",
    dockerfile: str | None = DOCKERFILE,
    tests: str = TESTS,
    folder: str | None = None,
) -> Path:
    """A native task folder under root; returns its path."""
    task_dir = root / (folder or task_id)
    (task_dir / "tests").mkdir(parents=True)
    (task_dir / "files").mkdir()
    (task_dir / "files" / "input.txt").write_text("input\n")
    (task_dir / "task.toml").write_text(
        f'id = "{task_id}"\ninstruction = "Do it."\ndifficulty = "easy"\ncategory = "files"\n{extra}\n'
        f"[weights]\n{weights}\n"
    )
    if dockerfile is not None:
        (task_dir / "Dockerfile").write_text(dockerfile)
    (task_dir / "tests" / "test_outputs.py").write_text(tests)
    (task_dir / "solution.sh").write_text("#!/bin/bash\ntrue\n")
    return task_dir


# ---------------------------------------------------------------- native format


def test_native_task_loads_every_field():
    (task,) = load_tasks(FIXTURES / "tasks" / "fx-greeting")
    task_dir = FIXTURES / "tasks" / "fx-greeting"
    assert task == Task(
        id="fx-greeting",
        instruction='Read the name in /app/name.txt and write a greeting "Hello, <name>!" to /app/greeting.txt.',
        difficulty="easy",
        category="file-operations",
        tags=["files", "fixture"],
        path=task_dir,
        dockerfile=task_dir / "Dockerfile",
        context_dir=task_dir,
        tests_dir=task_dir / "tests",
        weights={
            "test_greeting_exists": 0.3,
            "test_greeting_content": 0.4,
            "test_contains": 0.2,
            "test_name_untouched": 0.1,
        },
        solution=task_dir / "solution.sh",
        agent_timeout_s=60.0,
        test_timeout_s=60.0,
        max_turns=5,
        allowed_prepass={
            "test_name_untouched": "name.txt ships with the image; the test guards against the "
            "agent deleting it"
        },
    )


def test_folder_of_tasks_loads_sorted_by_id():
    assert [t.id for t in load_tasks(FIXTURES / "tasks")] == [
        "fx-bad-solution",
        "fx-greeting",
        "fx-prepass",
    ]


def test_defaults_for_optional_fields(tmp_path):
    (task,) = load_tasks(make_task(tmp_path))
    assert (
        task.tags,
        task.agent_timeout_s,
        task.test_timeout_s,
        task.max_turns,
        task.allowed_prepass,
    ) == ([], 300.0, 60.0, None, {})


def test_weights_may_name_class_methods_parametrized_functions_and_cases(tmp_path):
    (task,) = load_tasks(
        make_task(tmp_path, 'test_delta = 0.25\ntest_gamma = 0.25\n"test_gamma[1]" = 0.5')
    )
    assert task.weights == {"test_delta": 0.25, "test_gamma": 0.25, "test_gamma[1]": 0.5}


def test_missing_dockerfile(tmp_path):
    task_dir = make_task(tmp_path, dockerfile=None)
    assert (
        load_error(task_dir)
        == f"task 't-basic', field 'dockerfile': missing Dockerfile [{task_dir / 'Dockerfile'}]"
    )


def test_malformed_toml(tmp_path):
    task_dir = make_task(tmp_path)
    (task_dir / "task.toml").write_text('id = "t-basic"\ninstruction = "unterminated\n')
    assert load_error(task_dir) == (
        "task 't-basic', field 'task.toml': malformed TOML: Illegal character '\\n' "
        f"(at line 2, column 28) [{task_dir / 'task.toml'}]"
    )


def test_agent_modules_are_read_and_checked(tmp_path):
    [task] = load_tasks(make_task(tmp_path / "a", extra='agent_modules = ["mypkg", "numpy"]'))
    assert task.agent_modules == ["mypkg", "numpy"]
    task_dir = make_task(tmp_path / "b", extra='agent_modules = ["my-pkg"]')
    assert load_error(task_dir) == (
        "task 't-basic', field 'agent_modules': must be a list of top-level module "
        f'names (identifiers), got ["my-pkg"] [{task_dir / "task.toml"}]'
    )


def test_unknown_field_is_refused(tmp_path):
    task_dir = make_task(tmp_path, extra="weight = 1")
    assert load_error(task_dir) == (
        "task 't-basic', field 'weight': unknown field (known: id, instruction, difficulty, "
        "category, tags, agent_timeout_s, test_timeout_s, max_turns, weights, "
        f"allowed_prepass, meta, tests_dir, test_setup, build_setup, agent_modules) [{task_dir / 'task.toml'}]"
    )


def test_bad_difficulty(tmp_path):
    task_dir = make_task(tmp_path)
    toml = (task_dir / "task.toml").read_text().replace('"easy"', '"trivial"')
    (task_dir / "task.toml").write_text(toml)
    assert load_error(task_dir) == (
        "task 't-basic', field 'difficulty': must be one of easy, medium, hard, "
        f'extremely_hard, unknown, got "trivial" [{task_dir / "task.toml"}]'
    )


def test_missing_weights_is_an_error_not_equal_weights(tmp_path):
    task_dir = make_task(tmp_path)
    toml = (task_dir / "task.toml").read_text().split("[weights]")[0]
    (task_dir / "task.toml").write_text(toml)
    assert load_error(task_dir) == (
        "task 't-basic', field 'weights': is missing; give each scored test a weight "
        f"[{task_dir / 'task.toml'}]"
    )


def test_duplicate_ids_in_a_folder(tmp_path):
    first = make_task(tmp_path, folder="a")
    second = make_task(tmp_path, folder="b")
    assert (
        load_error(tmp_path)
        == f"task 't-basic', field 'id': duplicate id: {first} and {second} [{second}]"
    )


def test_a_refused_task_does_not_block_the_others(tmp_path, caplog):
    make_task(tmp_path, folder="a", task_id="t-good")
    bad = make_task(tmp_path, folder="b", task_id="t-bad", weights="test_alpha = 1\ntest_nope = 0")
    refused = []
    with caplog.at_level(logging.WARNING, logger="termrl.tasks"):
        tasks = load_tasks(tmp_path, refused=refused)
    assert [t.id for t in tasks] == ["t-good"]
    assert [(e.task_id, e.field, e.path) for e in refused] == [
        ("t-bad", "weights", bad / "task.toml")
    ]
    assert (
        caplog.messages == []
    )  # the caller that collects `refused` reports it; said once, not twice
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="termrl.tasks"):
        assert [t.id for t in load_tasks(tmp_path)] == ["t-good"]
    assert caplog.messages == [
        f"refused task 't-bad', field 'weights': 'test_nope' names a test that does not exist; "
        f"tests found: test_alpha, test_beta, test_delta, test_gamma [{bad / 'task.toml'}]"
    ]


def test_nothing_loadable_is_an_error(tmp_path):
    bad = make_task(tmp_path, folder="b", task_id="t-bad", weights="test_nope = 1")
    assert load_error(tmp_path, strict=False).startswith(
        f"task '{tmp_path.name}', field 'tasks': no task could be loaded: 1 refused; first: task 't-bad', field 'weights'"  # noqa: E501
    )
    assert bad.is_dir()


def test_folder_without_task_file(tmp_path):
    make_task(tmp_path)
    (tmp_path / "notes").mkdir()
    assert load_error(tmp_path) == (
        "task 'notes', field 'task.toml': the folder holds no task file; formats "
        "tried: native (task.toml with `id`), Harbor (task.toml beside instruction.md "
        f"and environment/), Terminal-Bench (task.yaml) [{tmp_path / 'notes'}]"
    )


# ---------------------------------------------------------------- weights


def test_weight_naming_a_missing_test(tmp_path):
    task_dir = make_task(tmp_path, "test_alpha = 0.5\ntest_omega = 0.5")
    assert load_error(task_dir) == (
        "task 't-basic', field 'weights': 'test_omega' names a test that does not exist; "
        "tests found: test_alpha, test_beta, test_delta, test_gamma "
        f"[{task_dir / 'task.toml'}]"
    )


def test_case_of_a_function_that_is_not_parametrized(tmp_path):
    task_dir = make_task(tmp_path, '"test_alpha[1]" = 1.0')
    assert load_error(task_dir) == (
        "task 't-basic', field 'weights': 'test_alpha[1]' names a case of 'test_alpha', "
        f"which is not parametrized [{task_dir / 'task.toml'}]"
    )


def test_non_numeric_weight(tmp_path):
    task_dir = make_task(tmp_path, "test_alpha = true\ntest_beta = 0.5")
    assert load_error(task_dir) == (
        "task 't-basic', field 'weights': weight of 'test_alpha' must be a number, "
        f"got true [{task_dir / 'task.toml'}]"
    )


def test_negative_weight(tmp_path):
    task_dir = make_task(tmp_path, "test_alpha = -0.5\ntest_beta = 1.5")
    assert load_error(task_dir) == (
        "task 't-basic', field 'weights': weight of 'test_alpha' is negative: -0.5 "
        f"[{task_dir / 'task.toml'}]"
    )


def test_weights_not_summing_to_one(tmp_path):
    task_dir = make_task(tmp_path, "test_alpha = 1\ntest_beta = 3")
    assert load_error(task_dir) == (
        "task 't-basic', field 'weights': weights sum to 4, not 1 (normalize_weights=True "
        f"or `python -m tasks validate/import-csv --normalize-weights` rescales them) [{task_dir / 'task.toml'}]"
    )


def test_normalize_weights_rescales_with_a_warning(tmp_path, caplog):
    task_dir = make_task(tmp_path, "test_alpha = 1\ntest_beta = 3")
    with caplog.at_level(logging.WARNING, logger="termrl.tasks"):
        (task,) = load_tasks(task_dir, normalize_weights=True)
    assert task.weights == {"test_alpha": 0.25, "test_beta": 0.75}
    assert caplog.messages == [
        "task 't-basic', field 'weights': weights sum to 4; rescaled to sum to 1"
    ]


def test_key_without_test_prefix_is_normalised_with_a_warning(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="termrl.tasks"):
        (task,) = load_tasks(make_task(tmp_path, "alpha = 0.5\ntest_beta = 0.5"))
    assert task.weights == {"test_alpha": 0.5, "test_beta": 0.5}
    assert caplog.messages == [
        "task 't-basic', field 'weights': key 'alpha' has no 'test_' prefix; using 'test_alpha'"
    ]


def test_key_without_prefix_naming_no_test(tmp_path):
    task_dir = make_task(tmp_path, "omega = 0.5\ntest_beta = 0.5")
    assert load_error(task_dir) == (
        "task 't-basic', field 'weights': 'omega' names no test (nor does 'test_omega'); "
        "tests found: test_alpha, test_beta, test_delta, test_gamma "
        f"[{task_dir / 'task.toml'}]"
    )


def test_two_keys_naming_one_test(tmp_path):
    task_dir = make_task(tmp_path, "alpha = 0.5\ntest_alpha = 0.5")
    assert load_error(task_dir) == (
        "task 't-basic', field 'weights': two keys name the test 'test_alpha' "
        f"[{task_dir / 'task.toml'}]"
    )


def test_string_weight_is_converted_with_a_warning(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="termrl.tasks"):
        (task,) = load_tasks(make_task(tmp_path, 'test_alpha = "0.5"\ntest_beta = 0.5'))
    assert task.weights == {"test_alpha": 0.5, "test_beta": 0.5}
    assert caplog.messages == [
        "task 't-basic', field 'weights': weight of 'test_alpha' is the string \"0.5\"; using 0.5"
    ]


def test_non_numeric_string_weight(tmp_path):
    task_dir = make_task(tmp_path, 'test_alpha = "abc"\ntest_beta = 0.5')
    assert load_error(task_dir) == (
        "task 't-basic', field 'weights': weight of 'test_alpha' is not a number: \"abc\" "
        f"[{task_dir / 'task.toml'}]"
    )


def test_allowed_prepass_needs_an_existing_test_and_a_reason(tmp_path):
    task_dir = make_task(tmp_path, extra='[allowed_prepass]\ntest_alpha = ""\n')
    assert load_error(task_dir) == (
        "task 't-basic', field 'allowed_prepass': 'test_alpha' needs a reason "
        f"(a non-empty string) [{task_dir / 'task.toml'}]"
    )


# ---------------------------------------------------------------- Dockerfile and tests


def test_dockerfile_copying_tests_is_refused(tmp_path):
    task_dir = make_task(tmp_path, dockerfile=DOCKERFILE + "COPY tests/ /tests/\n")
    assert load_error(task_dir) == (
        "task 't-basic', field 'dockerfile': line 5: 'COPY tests/ /tests/' copies the "
        "hidden tests (tests/) into the image; they are copied in only at verification time "
        f"[{task_dir / 'Dockerfile'}]"
    )


def test_dockerfile_copying_the_whole_context_is_refused(tmp_path):
    task_dir = make_task(tmp_path, dockerfile=DOCKERFILE + "COPY --chown=root \\\n    . /app\n")
    assert load_error(task_dir) == (
        "task 't-basic', field 'dockerfile': line 5: 'COPY --chown=root     . /app' copies "
        "the hidden tests (tests/) into the image; they are copied in only at verification time "
        f"[{task_dir / 'Dockerfile'}]"
    )


def test_dockerfile_copying_the_solution_is_refused(tmp_path):
    task_dir = make_task(tmp_path, dockerfile=DOCKERFILE + 'COPY ["solution.sh", "/app/"]\n')
    assert load_error(task_dir) == (
        "task 't-basic', field 'dockerfile': line 5: 'COPY [\"solution.sh\", \"/app/\"]' "
        f"copies solution.sh into the image [{task_dir / 'Dockerfile'}]"
    )


def test_dockerfile_copying_a_missing_or_empty_folder_is_refused(tmp_path):
    task_dir = make_task(tmp_path)
    (task_dir / "files" / "input.txt").unlink()
    assert load_error(task_dir) == (
        "task 't-basic', field 'dockerfile': line 4: 'COPY files/ /app/': files/ is missing "
        f"from the build context (or holds no files) [{task_dir / 'Dockerfile'}]"
    )


def test_test_file_that_is_not_python(tmp_path):
    task_dir = make_task(tmp_path, tests="def test_alpha(:\n    pass\n")
    assert load_error(task_dir) == (
        "task 't-basic', field 'tests': not valid Python (line 1): invalid syntax "
        f"[{task_dir / 'tests' / 'test_outputs.py'}]"
    )


# ---------------------------------------------------------------- Terminal-Bench


def test_terminal_bench_folder_gets_equal_weights_over_test_functions():
    task_dir = FIXTURES / "terminal-bench" / "tb-hello"
    (task,) = load_tasks(task_dir)
    assert task == Task(
        id="tb-hello",
        instruction='Create a file called hello.txt in /app with "Hello, world!" as its content.',
        difficulty="easy",
        category="file-operations",
        tags=["file-operations"],
        path=task_dir,
        dockerfile=task_dir / "Dockerfile",
        context_dir=task_dir,
        tests_dir=task_dir / "tests",
        weights={
            "test_hello_file_content": 1 / 3,
            "test_hello_file_exists": 1 / 3,
            "test_hello_words": 1 / 3,
        },
        solution=task_dir / "solution.sh",
        agent_timeout_s=360.0,
        test_timeout_s=60.0,
        max_turns=None,
        allowed_prepass={},
        meta={"source": "terminal-bench"},
    )
    assert [t.id for t in load_tasks(FIXTURES / "terminal-bench")] == ["tb-hello"]


def test_terminal_bench_malformed_yaml(tmp_path):
    task_dir = tmp_path / "tb-broken"
    shutil.copytree(FIXTURES / "terminal-bench" / "tb-hello", task_dir)
    (task_dir / "task.yaml").write_text("instruction: [unclosed\n")
    message = load_error(task_dir)
    assert message.startswith(
        "task 'tb-broken', field 'task.yaml': malformed YAML: while parsing a flow sequence"
    )
    assert message.endswith(f"[{task_dir / 'task.yaml'}]")


def test_terminal_bench_older_descriptions_format(tmp_path):
    task_dir = tmp_path / "tb-old"
    shutil.copytree(FIXTURES / "terminal-bench" / "tb-hello", task_dir)
    (task_dir / "task.yaml").write_text(
        "descriptions:\n  - key: base\n    description: Say hi.\n"
        "difficulty: medium\ncategory: files\n"
    )
    (task,) = load_tasks(task_dir)
    assert (task.instruction, task.difficulty, task.agent_timeout_s, task.test_timeout_s) == (
        "Say hi.",
        "medium",
        360.0,
        60.0,
    )


# ---------------------------------------------------------------- validation (real Docker)


@pytest.mark.docker
def test_validate_cli_catches_prepassing_tests_and_a_failing_solution():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "tasks",
            "validate",
            "--tasks",
            str(FIXTURES / "tasks"),
            "--jobs",
            "3",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, (
        out.stdout + out.stderr
    )  # one task is valid; --strict makes any failure count
    summary = out.stdout[out.stdout.index("3 task(s):") :]
    summary = (
        summary[: summary.index(" (")] + summary[summary.index("s)\n") + 2 :]
    )  # drop the wall time
    assert summary == (
        "3 task(s): 1 valid, 0 fail before without an oracle, 2 invalid or defective, 0 refused at loading\n"
        "  fx-bad-solution: invalid: tests fail after the solution: test_answer_value\n"
        "  fx-prepass: defective: tests pass before the solution: test_log_exists (fix the tests, or list them under "
        "[allowed_prepass] with a reason)\n"
    )


@pytest.mark.docker
def test_validate_task_reports_per_test_results():
    from tasks.validate import validate_task

    (task,) = load_tasks(FIXTURES / "tasks" / "fx-greeting")
    result = asyncio.run(validate_task(task))
    assert (result.ok, result.reasons, result.solution_exit_code) == (True, [], 0)
    # untouched: only the allowed pre-pass passes; parametrized cases are reported per case
    assert result.before.tests == {
        "test_greeting_exists": False,
        "test_greeting_content": False,
        "test_contains[Hello]": False,
        "test_contains[Ada]": False,
        "test_name_untouched": True,
    }
    assert result.after.tests == {name: True for name in result.before.tests}
    assert result.destroyed.tests == {
        name: False for name in result.before.tests
    }  # after `rm -rf /app`


def test_stats_cli_prints_counts_by_category_and_difficulty(tmp_path):
    make_task(tmp_path, task_id="t-one")
    make_task(tmp_path, task_id="t-two", extra='tags = ["x"]').joinpath("task.toml").write_text(
        (tmp_path / "t-two" / "task.toml")
        .read_text()
        .replace('"easy"', '"hard"')
        .replace('"files"', '"games"')
    )
    out = subprocess.run(
        [sys.executable, "-m", "tasks", "stats", "--tasks", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (out.returncode, out.stdout) == (
        0,
        "| category | easy | hard | total |\n|---|---:|---:|---:|\n"
        "| files | 1 | 0 | 1 |\n| games | 0 | 1 | 1 |\n"
        "| **total** | **1** | **1** | **2** |\n",
    )
    missing = subprocess.run(
        [sys.executable, "-m", "tasks", "stats", "--tasks", str(tmp_path / "nope")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (missing.returncode, missing.stdout) == (
        2,
        f"error: tasks path {tmp_path / 'nope'} does not exist\n",
    )


@pytest.mark.docker
def test_validate_sample_flag_draws_a_seeded_subset():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "tasks",
            "validate",
            "--tasks",
            str(FIXTURES / "tasks"),
            "--sample",
            "0",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (out.returncode, out.stdout) == (
        2,
        "error: sample = 0: must be >= 1 (omit it to validate every task)\n",
    )


@pytest.mark.docker
def test_validate_flags_a_test_that_rm_rf_app_passes(tmp_path):
    from tasks.validate import validate_task

    gone = "from pathlib import Path\n\n\ndef test_input_removed():\n    assert not Path('/app/input.txt').exists()\n"
    task_dir = make_task(
        tmp_path, weights="test_input_removed = 1.0", tests=gone, task_id="t-destroy"
    )
    (task_dir / "solution.sh").write_text("#!/bin/bash\nrm /app/input.txt\n")
    (task,) = load_tasks(task_dir)
    result = asyncio.run(validate_task(task))
    assert (result.ok, result.verdict, result.reasons) == (
        False,
        "defective",
        [
            "tests pass after `rm -rf /app`: test_input_removed (a test must also check what should "
            "be kept)"
        ],
    )
    assert (result.before.tests, result.destroyed.tests, result.after.tests) == (
        {"test_input_removed": False},
        {"test_input_removed": True},
        {"test_input_removed": True},
    )


@pytest.mark.docker
def test_validate_reports_a_failing_solution_script_and_a_failing_build(tmp_path):
    from tasks.validate import validate_tasks

    crash = make_task(tmp_path / "tasks", task_id="t-crash")
    (crash / "solution.sh").write_text("#!/bin/bash\necho boom\nexit 3\n")
    make_task(tmp_path / "tasks", task_id="t-broken", dockerfile=DOCKERFILE + "RUN exit 7\n")
    (csv_task,) = [t for t in load_tasks(CSV_FIXTURE) if t.id == "csv-upper"]
    tasks = load_tasks(tmp_path / "tasks") + [csv_task]
    results = asyncio.run(validate_tasks(tasks, jobs=3))
    assert [r.task_id for r in results] == ["t-broken", "t-crash", "csv-upper"]
    broken_result, crash_result, csv_result = results
    assert broken_result.reason.startswith("image build failed: ImageBuildError: task t-broken: ")
    assert (crash_result.ok, crash_result.reasons, crash_result.solution_exit_code) == (
        False,
        ["solution.sh exited with code 3: boom"],
        3,
    )
    assert (csv_result.ok, csv_result.verdict, csv_result.reasons) == (
        True,
        "fails before; no oracle",
        [],
    )
