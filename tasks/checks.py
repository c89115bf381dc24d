"""Static checks shared by every task loader: test discovery, weights, allowed pre-passes, Dockerfile.

Test names are found with `ast` (no test code is imported or run): module-level functions and methods of
`Test*` classes whose names start with `test`, in every tests/**/test_*.py, as pytest collects them by
default. A function (or class) decorated with `pytest.mark.parametrize` is marked parametrized; its
JUnit names are `name[case-id]`, so a weight may name the function (all cases) or one `name[...]` case.
"""

import ast
import fnmatch
import json
import logging
import math
import posixpath
import re
import string
from pathlib import Path

from sandboxing.dockerfile import copy_sources
from sandboxing.dockerfile import parse as parse_dockerfile
from tasks.paths import inside
from tasks.task import TaskError

log = logging.getLogger("termrl.tasks")


def _is_parametrize(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr == "parametrize"


def find_tests(task_id: str, tests_dir: Path) -> dict[str, bool]:
    """Test function names in tests_dir/**/test_*.py and **/*_test.py -> whether the function is parametrized.

    Raises TaskError (field 'tests') if the folder or test files are missing, a file is not valid
    Python, or no test function is found.
    """
    if not tests_dir.is_dir():
        raise TaskError(task_id, "tests", "missing tests/ folder", tests_dir)
    files = sorted(
        set(tests_dir.rglob("test_*.py")) | set(tests_dir.rglob("*_test.py"))
    )  # pytest's defaults
    if not files:
        raise TaskError(
            task_id, "tests", f"no test_*.py or *_test.py files in {tests_dir.name}/", tests_dir
        )
    tests: dict[str, bool] = {}
    for file in files:
        # a test file that is a symlink out of the task folder would be read here, on the host
        inside(task_id, "tests", tests_dir.parent, file.absolute())
        try:
            tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
        except (SyntaxError, UnicodeDecodeError) as e:
            line = getattr(e, "lineno", None)
            raise TaskError(
                task_id, "tests", f"not valid Python (line {line}): {getattr(e, 'msg', e)}", file
            ) from e
        for node in tree.body:
            funcs, class_param = [node], False
            if isinstance(node, ast.ClassDef):
                if not node.name.startswith("Test"):
                    continue
                funcs, class_param = node.body, any(_is_parametrize(d) for d in node.decorator_list)
            for fn in funcs:
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name.startswith(
                    "test"
                ):
                    param = class_param or any(_is_parametrize(d) for d in fn.decorator_list)
                    tests[fn.name] = tests.get(fn.name, False) or param
    if not tests:
        raise TaskError(task_id, "tests", "no test functions (def test_...) found", tests_dir)
    return tests


def _known(tests: dict[str, bool]) -> str:
    return ", ".join(sorted(tests))


def _resolve_name(
    task_id: str, field: str, key: str, tests: dict[str, bool], path: Path | None
) -> str:
    """A test name as written in a weights/allowed_prepass table -> the checked test name."""
    base, bracket, _ = key.partition("[")
    if key in tests or (bracket and key.endswith("]") and tests.get(base)):
        return key
    if bracket and base in tests:
        raise TaskError(
            task_id, field, f"'{key}' names a case of '{base}', which is not parametrized", path
        )
    if not key.startswith("test"):
        prefixed = f"test_{key}"
        if prefixed in tests or (bracket and tests.get(f"test_{base}")):
            log.warning(
                "task '%s', field '%s': key '%s' has no 'test_' prefix; using '%s'",
                task_id,
                field,
                key,
                prefixed,
            )
            return prefixed
        raise TaskError(
            task_id,
            field,
            f"'{key}' names no test (nor does '{prefixed}'); tests found: {_known(tests)}",
            path,
        )
    raise TaskError(
        task_id,
        field,
        f"'{key}' names a test that does not exist; tests found: {_known(tests)}",
        path,
    )


def _weight_value(task_id: str, field: str, name: str, value, path: Path | None) -> float:
    """A weight as written (number, or a numeric string from a public dataset) -> float >= 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TaskError(
            task_id, field, f"weight of '{name}' must be a number, got {json.dumps(value)}", path
        )
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise TaskError(
                task_id, field, f"weight of '{name}' is not a number: {json.dumps(value)}", path
            ) from None
        log.warning(
            "task '%s', field '%s': weight of '%s' is the string %s; using %r",
            task_id,
            field,
            name,
            json.dumps(value),
            number,
        )
        value = number
    value = float(value)
    if not math.isfinite(value):
        raise TaskError(task_id, field, f"weight of '{name}' is not finite: {value}", path)
    if value < 0:
        raise TaskError(task_id, field, f"weight of '{name}' is negative: {value:g}", path)
    return value


def check_weights(
    task_id: str,
    raw,
    tests: dict[str, bool],
    normalize: bool = False,
    field: str = "weights",
    path: Path | None = None,
) -> dict[str, float]:
    """Check a {test name: weight} table against the tests found; return it with float weights summing to 1.

    Keys without the `test_` prefix become `test_<key>` (with a logged warning) when that test exists;
    numeric strings become floats (with a warning). Weights must sum to 1 within 1e-6; with
    normalize=True they are divided by their sum instead (with a warning).
    Raises TaskError for: a non-table, an empty table, unknown tests, two keys naming the same test,
    non-numeric, non-finite or negative weights, a zero sum, a sum != 1 without normalize.
    """
    if not isinstance(raw, dict):
        raise TaskError(
            task_id, field, f"must be a table of test name -> weight, got {json.dumps(raw)}", path
        )
    if not raw:
        raise TaskError(task_id, field, "is empty; give each scored test a weight", path)
    weights: dict[str, float] = {}
    for key, value in raw.items():
        name = _resolve_name(task_id, field, str(key), tests, path)
        if name in weights:
            raise TaskError(task_id, field, f"two keys name the test '{name}'", path)
        weights[name] = _weight_value(task_id, field, name, value, path)
    total = sum(weights.values())
    if total <= 0:
        raise TaskError(task_id, field, "weights sum to 0", path)
    if abs(total - 1.0) > 1e-6:
        if not normalize:
            raise TaskError(
                task_id,
                field,
                f"weights sum to {total:g}, not 1 (normalize_weights=True or "
                "`python -m tasks validate/import-csv --normalize-weights` "
                "rescales them)",
                path,
            )
        log.warning(
            "task '%s', field '%s': weights sum to %g; rescaled to sum to 1", task_id, field, total
        )
        weights = {name: w / total for name, w in weights.items()}
    return weights


def check_allowed_prepass(
    task_id: str, raw, tests: dict[str, bool], path: Path | None = None
) -> dict[str, str]:
    """Check the {test name: reason} table of tests allowed to pass before the solution runs.

    Raises TaskError (field 'allowed_prepass') for a non-table, unknown tests or an empty reason.
    """
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise TaskError(
            task_id,
            "allowed_prepass",
            f"must be a table of test name -> reason, got {json.dumps(raw)}",
            path,
        )
    allowed = {}
    for key, reason in raw.items():
        name = _resolve_name(task_id, "allowed_prepass", str(key), tests, path)
        if not isinstance(reason, str) or not reason.strip():
            raise TaskError(
                task_id, "allowed_prepass", f"'{name}' needs a reason (a non-empty string)", path
            )
        allowed[name] = reason.strip()
    return allowed


def _helper(source: str, tests_name: str, context_dir: Path | None) -> bool:
    """`COPY tests/<file>` of one existing file that is no hidden test (a data file or script the image
    needs, as Terminal-Bench tasks do): not test_*.py / *_test.py / conftest.py, no wildcard."""
    parts = posixpath.normpath(source).lstrip("/").split("/")
    if (
        context_dir is None
        or len(parts) < 2
        or parts[0] != tests_name
        or any(c in source for c in "*?[$")
    ):
        return False
    name = parts[-1]
    return (context_dir / Path(*parts)).is_file() and not (
        fnmatch.fnmatch(name, "test_*.py")
        or fnmatch.fnmatch(name, "*_test.py")
        or name == "conftest.py"
    )


def check_dockerfile(
    task_id: str,
    dockerfile: Path,
    context_dir: Path | None = None,
    tests_name: str | None = "tests",
) -> None:
    """The Dockerfile parses, no COPY/ADD puts the hidden tests (context folder `tests_name`) or solution.sh
    into the image, and (given context_dir) every plain COPY/ADD source exists in the build context with at
    least one file in it.

    Tests must reach the container only at verification time, or the agent could read (or edit) them.
    `COPY . ...` or a wildcard matching the tests folder is refused too; one helper file of the tests
    folder that is no test (`_helper`) is allowed. tests_name None: the hidden tests are outside the
    build context (Harbor's environment/), so no COPY can reach them. BuildKit heredoc sources
    (`COPY <<EOF /dest`) are no build context (sandboxing/dockerfile.py expands them); `--from=` stages are not
    either; sources with wildcards or variables are not checked for existence (docker resolves them).
    Raises TaskError (field 'dockerfile').
    """
    if not dockerfile.is_file():
        raise TaskError(task_id, "dockerfile", "missing Dockerfile", dockerfile)
    text = dockerfile.read_text(encoding="utf-8", errors="replace")
    try:
        instructions = parse_dockerfile(text)
    except ValueError as e:
        raise TaskError(task_id, "dockerfile", str(e), dockerfile) from e
    for ins in instructions:
        if ins.keyword not in ("COPY", "ADD"):
            continue
        line = f"{ins.keyword} {ins.args}"
        try:
            flags, sources, _ = copy_sources(ins)
        except ValueError as e:
            raise TaskError(
                task_id, "dockerfile", f"line {ins.first}: cannot parse '{line}': {e}", dockerfile
            ) from e
        if any(f.startswith("--from") for f in flags):
            continue
        for source in sources:
            if "://" in source:
                continue
            first = posixpath.normpath(source).lstrip("/").split("/")[0]
            if (
                tests_name is not None
                and (first == "." or fnmatch.fnmatch(tests_name, first))
                and not _helper(source, tests_name, context_dir)
            ):
                raise TaskError(
                    task_id,
                    "dockerfile",
                    f"line {ins.first}: '{line}' copies the hidden tests "
                    f"({tests_name}/) into the image; they are copied in only at verification time",
                    dockerfile,
                )
            # a wildcard reaches the oracle only where the context holds one (Harbor's environment/ never)
            if fnmatch.fnmatch("solution.sh", posixpath.normpath(source).lstrip("/")) and (
                context_dir is None or (context_dir / "solution.sh").exists()
            ):
                raise TaskError(
                    task_id,
                    "dockerfile",
                    f"line {ins.first}: '{line}' copies solution.sh into the image",
                    dockerfile,
                )
            if context_dir is not None and not any(c in source for c in "*?[$"):
                target = context_dir / posixpath.normpath(source).lstrip("/")
                if not (
                    target.is_file()
                    or (target.is_dir() and any(p.is_file() for p in target.rglob("*")))
                ):
                    raise TaskError(
                        task_id,
                        "dockerfile",
                        f"line {ins.first}: '{line}': {source} is missing from "
                        "the build context (or holds no files)",
                        dockerfile,
                    )


def read_oracle_turns(task_id: str, path: Path) -> list[dict]:
    """A task's oracle_turns.json -> its steps, each {"command": str, "capture": {var: regex}}.

    The file is {"steps": [{"command": ..., "capture": {...}}, ...]}: the oracle acted out one command per
    turn. Step i's command is a str.format template over the variables earlier steps captured; a capture
    regex (Python `re`, exactly one group) is searched in its own step's command output and its group
    becomes the variable. So every value an observation reveals reaches a later command through a capture.
    Checked here: the shape above (capture optional, default {}); each regex compiles with one group;
    a command's fields are plain names captured by an earlier step; each variable is captured once and
    used by a later step; the last step captures nothing.
    Raises TaskError (field 'oracle_turns') naming the step and what is wrong.
    """

    def refuse(message: str) -> TaskError:
        return TaskError(task_id, "oracle_turns", message, path)

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise refuse(f"not valid JSON: {e}") from e
    if not isinstance(data, dict) or set(data) != {"steps"}:
        raise refuse('must be a JSON object with the one key "steps"')
    steps = data["steps"]
    if not isinstance(steps, list) or not steps:
        raise refuse('"steps" must be a non-empty list')
    captured: dict[str, int] = {}
    used: set[str] = set()
    out = []
    for number, step in enumerate(steps, start=1):
        if not isinstance(step, dict) or not set(step) <= {"command", "capture"}:
            raise refuse(f'step {number}: must be an object with "command" and optional "capture"')
        command = step.get("command")
        if not isinstance(command, str) or not command.strip():
            raise refuse(f'step {number}: "command" must be a non-empty string')
        try:
            fields = [
                (name, spec, conversion)
                for _, name, spec, conversion in string.Formatter().parse(command)
                if name is not None
            ]
        except ValueError as e:
            raise refuse(f"step {number}: command is not a str.format template: {e}") from e
        for name, spec, conversion in fields:
            if spec or conversion or name not in captured:
                raise refuse(
                    f"step {number}: command field {{{name}}} is not a variable an earlier step captures"
                )
            used.add(name)
        capture = step.get("capture", {})
        if not isinstance(capture, dict):
            raise refuse(f'step {number}: "capture" must be an object of variable -> regex')
        for name, regex in capture.items():
            if not name.isidentifier() or name in captured:
                raise refuse(f"step {number}: capture name {name!r} is not a new identifier")
            if not isinstance(regex, str):
                raise refuse(f"step {number}: capture {name!r} must be a regex string")
            try:
                groups = re.compile(regex).groups
            except re.error as e:
                raise refuse(f"step {number}: capture {name!r}: bad regex {regex!r}: {e}") from e
            if groups != 1:
                raise refuse(
                    f"step {number}: capture {name!r}: regex {regex!r} has {groups} groups, needs 1"
                )
            captured[name] = number
        out.append({"command": command, "capture": dict(capture)})
    if out[-1]["capture"]:
        raise refuse(
            f"step {len(out)}: the last step captures {sorted(out[-1]['capture'])}, which no step uses"
        )
    unused = sorted(set(captured) - used)
    if unused:
        raise refuse(
            f"step {captured[unused[0]]}: captures {unused[0]!r}, which no later step uses"
        )
    return out
