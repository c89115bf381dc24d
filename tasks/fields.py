"""Field checks shared by the task loaders (native, Terminal-Bench, terminal-bench-rl CSV) and the final
assembly of a Task from a folder (Dockerfile, hidden tests, weights, pre-passes)."""

import json
import re
from pathlib import Path

from tasks.checks import check_allowed_prepass, check_dockerfile, check_weights, find_tests
from tasks.paths import inside
from tasks.task import DIFFICULTIES, Task, TaskError

ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")  # also a valid docker image name component


def text_field(task_id, data, key, path, required=True, default=None) -> str | None:
    value = data.get(key, default)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        what = (
            "is missing"
            if key not in data
            else f"must be a non-empty string, got {json.dumps(value)}"
        )
        raise TaskError(task_id, key, what, path)
    return value.strip()


def positive_field(task_id, data, key, path, default, integer=False):
    value = data.get(key, default)
    if value is None:
        return None
    kind = int if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kind) or value <= 0:
        noun = "a positive integer" if integer else "a positive number"
        raise TaskError(task_id, key, f"must be {noun}, got {json.dumps(value)}", path)
    return value if integer else float(value)


def difficulty_field(task_id, value, path, key="difficulty") -> str:
    if not isinstance(value, str):
        raise TaskError(
            task_id, key, f"must be one of {', '.join(DIFFICULTIES)}, got {json.dumps(value)}", path
        )
    normal = value.strip().lower().replace(" ", "_").replace("-", "_")
    if normal not in DIFFICULTIES:
        raise TaskError(
            task_id, key, f"must be one of {', '.join(DIFFICULTIES)}, got {json.dumps(value)}", path
        )
    return normal


def tags_field(task_id, value, path) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, str) and t.strip() for t in value):
        raise TaskError(
            task_id, "tags", f"must be a list of non-empty strings, got {json.dumps(value)}", path
        )
    return [t.strip() for t in value]


def modules_field(task_id, value, path) -> list[str]:
    """task.toml `agent_modules`: a list of top-level Python module names (identifiers), default []."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(
        isinstance(m, str) and m.isidentifier() for m in value
    ):
        raise TaskError(
            task_id,
            "agent_modules",
            f"must be a list of top-level module names (identifiers), got {json.dumps(value)}",
            path,
        )
    return list(value)


def check_id(task_id, value, path) -> str:
    if not isinstance(value, str) or not ID_PATTERN.match(value):
        raise TaskError(
            task_id,
            "id",
            f"must match {ID_PATTERN.pattern} (lowercase letters, digits, '_', '.', '-'), "
            f"got {json.dumps(value)}",
            path,
        )
    return value


def finish_task(
    task_id,
    task_dir: Path,
    *,
    instruction,
    difficulty,
    category,
    tags,
    agent_timeout_s,
    test_timeout_s,
    max_turns,
    raw_weights,
    raw_prepass,
    normalize,
    weights_field,
    source_path,
    meta,
    tests_name: str = "tests",
    dockerfile: Path | None = None,
    context_dir: Path | None = None,
    solution: Path | None = None,
    test_setup: str | None = None,
    build_setup: str | None = None,
) -> Task:
    """Checks shared by every format (Dockerfile, hidden tests, weights, pre-passes) -> Task.

    tests_name: the task folder's hidden-tests folder; dockerfile / context_dir default to the task folder's
    Dockerfile and the folder itself; solution defaults to the folder's solution.sh when present.
    """
    dockerfile = dockerfile or inside(task_id, "Dockerfile", task_dir, "Dockerfile")
    context_dir = context_dir or task_dir
    check_dockerfile(task_id, dockerfile, context_dir, tests_name)
    tests_dir = inside(task_id, "tests", task_dir, tests_name)
    tests = find_tests(task_id, tests_dir)
    if raw_weights is None:
        raise TaskError(
            task_id, weights_field, "is missing; give each scored test a weight", source_path
        )
    weights = check_weights(task_id, raw_weights, tests, normalize, weights_field, source_path)
    if solution is None and (task_dir / "solution.sh").is_file():
        solution = inside(task_id, "solution.sh", task_dir, "solution.sh")
    return Task(
        id=task_id,
        instruction=instruction,
        difficulty=difficulty,
        category=category,
        tags=tags,
        path=task_dir,
        dockerfile=dockerfile,
        context_dir=context_dir,
        tests_dir=tests_dir,
        weights=weights,
        solution=solution,
        agent_timeout_s=agent_timeout_s,
        test_timeout_s=test_timeout_s,
        max_turns=max_turns,
        test_setup=test_setup,
        build_setup=build_setup,
        allowed_prepass=check_allowed_prepass(task_id, raw_prepass, tests, source_path),
        meta=meta,
    )
