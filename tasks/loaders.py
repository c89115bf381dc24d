"""Read tasks from disk: native folders (task.toml), Terminal-Bench folders (task.yaml), terminal-bench-rl CSVs.

Formats:
- native (DESIGN.md "Task format"): task.toml, Dockerfile, optional files/, tests/test_*.py (or the folder
  task.toml's `tests_dir` names), solution.sh, optional oracle_turns.json (the oracle turn by turn).
- Terminal-Bench task folder: see tasks/terminal_bench.py.
- terminal-bench-rl CSV: one task per row, columns CSV_COLUMNS; `tags` pipe-separated, `test_functions`
  pytest source, `test_weights` JSON {name: weight}, `additional_files` JSON {relative path: content}.
  A CSV is materialised into native folders (import_csv), with the weights checked and rewritten clean.
  The hidden tests go to tests/, or to hidden_tests/ when the row's own files use tests/ (an application's
  unit tests, copied into the image by its Dockerfile). The CSV has no timeouts: `tb tasks create`'s 360/60 s.

One bad task never blocks the rest: load_tasks and import_csv skip a refused task, log one line for it
(task, field, reason, a path that exists) and hand the TaskError back in `refused`; they raise only when
no task could be loaded, or on the first refusal with strict=True.
"""

import csv
import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import tomllib
from pathlib import Path, PurePosixPath

import configs
from tasks.checks import read_oracle_turns
from tasks.fields import (
    check_id,
    difficulty_field,
    finish_task,
    modules_field,
    positive_field,
    tags_field,
    text_field,
)
from tasks.harbor import is_harbor, load_harbor, overlay_dir
from tasks.paths import check_task_paths, inside
from tasks.task import Task, TaskError
from tasks.terminal_bench import TB_AGENT_TIMEOUT_S, TB_TEST_TIMEOUT_S, load_terminal_bench

log = logging.getLogger("termrl.tasks")

NATIVE_FIELDS = (
    "id",
    "instruction",
    "difficulty",
    "category",
    "tags",
    "agent_timeout_s",
    "test_timeout_s",
    "max_turns",
    "weights",
    "allowed_prepass",
    "meta",
    "tests_dir",
    "test_setup",
    "build_setup",
    "agent_modules",
)
CSV_COLUMNS = (
    "task_id",
    "difficulty",
    "title",
    "use_case_category",
    "prompt",
    "category",
    "tags",
    "dockerfile",
    "test_functions",
    "test_weights",
    "additional_files",
)
DEFAULT_AGENT_TIMEOUT_S = 300.0
DEFAULT_TEST_TIMEOUT_S = 60.0
RESERVED_FILES = ("task.toml", "Dockerfile", "solution.sh", "hidden_tests", "oracle_turns.json")
ORACLE_TURNS = "oracle_turns.json"  # the oracle turn by turn (tasks/checks.read_oracle_turns)
HIDDEN_TESTS = "hidden_tests"  # hidden-tests folder of a CSV row whose own files use tests/


# ---------------------------------------------------------------- native


def load_native(task_dir: Path, normalize_weights: bool = False) -> Task:
    """A native task folder (task.toml + Dockerfile + tests/ [+ files/, solution.sh]) -> Task.

    Raises TaskError naming the task and field for malformed TOML, unknown or missing fields, bad values,
    and everything checks.py refuses.
    """
    task_dir = Path(task_dir)
    toml_path = task_dir / "task.toml"
    data = _read_toml(task_dir)
    if "id" not in data:
        raise TaskError(task_dir.name, "id", "is missing", toml_path)
    task_id = check_id(task_dir.name, data["id"], toml_path)
    unknown = sorted(set(data) - set(NATIVE_FIELDS))
    if unknown:
        raise TaskError(
            task_id, unknown[0], f"unknown field (known: {', '.join(NATIVE_FIELDS)})", toml_path
        )
    meta = data.get("meta", {})
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise TaskError(task_id, "meta", "must be a table of string values", toml_path)
    tests_name = text_field(task_id, data, "tests_dir", toml_path, default="tests")
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", tests_name):
        raise TaskError(
            task_id,
            "tests_dir",
            f"must be a folder name inside the task, got {json.dumps(tests_name)}",
            toml_path,
        )
    task = finish_task(
        task_id,
        task_dir,
        instruction=text_field(task_id, data, "instruction", toml_path),
        difficulty=difficulty_field(task_id, data.get("difficulty"), toml_path),
        category=text_field(task_id, data, "category", toml_path),
        tags=tags_field(task_id, data.get("tags"), toml_path),
        agent_timeout_s=positive_field(
            task_id, data, "agent_timeout_s", toml_path, DEFAULT_AGENT_TIMEOUT_S
        ),
        test_timeout_s=positive_field(
            task_id, data, "test_timeout_s", toml_path, DEFAULT_TEST_TIMEOUT_S
        ),
        max_turns=positive_field(task_id, data, "max_turns", toml_path, None, integer=True),
        raw_weights=data.get("weights"),
        raw_prepass=data.get("allowed_prepass"),
        normalize=normalize_weights,
        weights_field="weights",
        source_path=toml_path,
        meta=dict(meta),
        tests_name=tests_name,
        test_setup=text_field(task_id, data, "test_setup", toml_path, required=False),
        build_setup=text_field(task_id, data, "build_setup", toml_path, required=False),
    )
    task.agent_modules = modules_field(task_id, data.get("agent_modules"), toml_path)
    oracle_turns = task_dir / ORACLE_TURNS
    if oracle_turns.is_file():
        inside(task_id, ORACLE_TURNS, task_dir, ORACLE_TURNS)
        read_oracle_turns(task_id, oracle_turns)
        task.oracle_turns = oracle_turns
    return task


def _toml_str(s: str) -> str:
    # Multi-line literal strings keep instructions and reasons readable; JSON escapes are valid TOML
    # basic-string escapes except that TOML also forbids a raw DEL.
    if (
        "\n" in s
        and "'''" not in s
        and not s.endswith("'")
        and all(c in "\n\t" or (ord(c) >= 0x20 and c != "\x7f") for c in s)
    ):
        return "'''\n" + s + "'''"
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


def render_task_toml(
    task_id: str,
    instruction: str,
    difficulty: str,
    category: str,
    tags: list[str],
    weights: dict[str, float],
    agent_timeout_s: float = DEFAULT_AGENT_TIMEOUT_S,
    test_timeout_s: float = DEFAULT_TEST_TIMEOUT_S,
    max_turns: int | None = None,
    allowed_prepass: dict[str, str] | None = None,
    meta: dict[str, str] | None = None,
    tests_dir: str = "tests",
) -> str:
    """The text of a native task.toml (the inverse of load_native for these fields)."""
    lines = [
        f"id = {_toml_str(task_id)}",
        f"instruction = {_toml_str(instruction)}",
        f"difficulty = {_toml_str(difficulty)}",
        f"category = {_toml_str(category)}",
        f"tags = [{', '.join(_toml_str(t) for t in tags)}]",
        f"agent_timeout_s = {float(agent_timeout_s)!r}",
        f"test_timeout_s = {float(test_timeout_s)!r}",
    ]
    if max_turns is not None:
        lines.append(f"max_turns = {int(max_turns)}")
    if tests_dir != "tests":
        lines.append(f"tests_dir = {_toml_str(tests_dir)}")
    lines += ["", "[weights]"] + [f"{_toml_str(k)} = {float(v)!r}" for k, v in weights.items()]
    if allowed_prepass:
        lines += ["", "[allowed_prepass]"] + [
            f"{_toml_str(k)} = {_toml_str(v)}" for k, v in allowed_prepass.items()
        ]
    if meta:
        lines += ["", "[meta]"] + [f"{_toml_str(k)} = {_toml_str(v)}" for k, v in meta.items()]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- terminal-bench-rl CSV


def read_csv_rows(csv_path: Path) -> list[dict[str, str]]:
    """Rows of a terminal-bench-rl CSV as dicts; each also gets '_line' (its first line number, str).

    Raises TaskError (task = the CSV file name) for missing columns, ragged rows and malformed CSV.
    """
    csv.field_size_limit(2**31 - 1)  # Dockerfiles and test sources exceed the 128 KiB default
    name = Path(csv_path).name
    rows = []
    with open(csv_path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f, strict=True)
        try:
            header = reader.fieldnames
            if not header:
                raise TaskError(name, "header", "the CSV is empty", csv_path)
            missing = [c for c in CSV_COLUMNS if c not in header]
            if missing:
                raise TaskError(name, "header", f"missing columns: {', '.join(missing)}", csv_path)
            line = reader.line_num + 1
            for row in reader:
                if None in row or None in row.values():
                    count = (
                        len(header) + len(row.get(None, [])) - sum(v is None for v in row.values())
                    )
                    raise TaskError(
                        name,
                        "row",
                        f"line {line}: {count} fields, the header has {len(header)}",
                        csv_path,
                    )
                rows.append({**row, "_line": str(line)})
                line = reader.line_num + 1
        except csv.Error as e:
            raise TaskError(
                name, "csv", f"malformed CSV at line {reader.line_num + 1}: {e}", csv_path
            ) from e
    return rows


def _json_field(task_id, row, key, path, default):
    text = row[key].strip()
    if not text:
        return default
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise TaskError(task_id, key, f"malformed JSON: {e}", path) from e
    if not isinstance(value, dict):
        raise TaskError(task_id, key, f"must be a JSON object, got {type(value).__name__}", path)
    return value


def _safe_relpath(task_id, field, name, path) -> PurePosixPath:
    rel = PurePosixPath(name)
    if not name or rel.is_absolute() or ".." in rel.parts or rel.parts[0] in RESERVED_FILES:
        raise TaskError(
            task_id,
            field,
            f"file name {json.dumps(name)} must be a relative path inside the task, "
            f"not one of {', '.join(RESERVED_FILES)}",
            path,
        )
    return rel


def _hidden_tests_name(files: dict) -> str:
    """tests/ for the hidden tests, unless the row's own files use tests/ (then HIDDEN_TESTS)."""
    return HIDDEN_TESTS if any(str(name).split("/")[0] == "tests" for name in files) else "tests"


def _materialise_row(row: dict[str, str], task_dir: Path, csv_path: Path, normalize: bool) -> Task:
    task_id = row["task_id"].strip()
    for key in ("dockerfile", "test_functions"):
        if not row[key].strip():
            raise TaskError(task_id, key, "is empty", csv_path)
    weights = _json_field(task_id, row, "test_weights", csv_path, None)
    files = _json_field(task_id, row, "additional_files", csv_path, {})
    tests_name = _hidden_tests_name(files)
    task_dir.mkdir(parents=True)
    (task_dir / "Dockerfile").write_text(row["dockerfile"], encoding="utf-8")
    (task_dir / tests_name).mkdir()
    (task_dir / tests_name / "test_outputs.py").write_text(row["test_functions"], encoding="utf-8")
    for name, content in files.items():
        rel = _safe_relpath(task_id, "additional_files", name, csv_path)
        if not isinstance(content, str):
            raise TaskError(
                task_id,
                "additional_files",
                f"content of {json.dumps(name)} must be a string",
                csv_path,
            )
        (task_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (task_dir / rel).write_text(content, encoding="utf-8")
    meta = {
        "source": f"terminal-bench-rl csv {csv_path.name}",
        "title": row["title"].strip(),
        "use_case_category": row["use_case_category"].strip(),
    }
    task = finish_task(
        task_id,
        task_dir,
        instruction=text_field(task_id, {"prompt": row["prompt"]}, "prompt", csv_path),
        difficulty=difficulty_field(task_id, row["difficulty"], csv_path),
        category=text_field(task_id, {"category": row["category"]}, "category", csv_path),
        tags=[t.strip() for t in row["tags"].split("|") if t.strip()],
        agent_timeout_s=TB_AGENT_TIMEOUT_S,
        test_timeout_s=TB_TEST_TIMEOUT_S,
        max_turns=None,
        raw_weights=weights,
        raw_prepass=None,
        normalize=normalize,
        weights_field="test_weights",
        source_path=csv_path,
        meta=meta,
        tests_name=tests_name,
    )
    (task_dir / "task.toml").write_text(
        render_task_toml(
            task.id,
            task.instruction,
            task.difficulty,
            task.category,
            task.tags,
            task.weights,
            task.agent_timeout_s,
            task.test_timeout_s,
            meta=meta,
            tests_dir=tests_name,
        ),
        encoding="utf-8",
    )
    return task


def _refuse(error: TaskError, refused: list | None, strict: bool) -> None:
    """Keep a refused task's error in `refused` for the caller to report, or log one line when the caller
    collects nothing (raise it when strict). Never both: a CLI that reports `refused` would say it twice."""
    if strict:
        raise error
    if refused is not None:
        refused.append(error)
    else:
        log.warning("refused %s", " ".join(str(error).split()))


def _row_problem(
    row: dict[str, str], seen: dict[str, str], out_dir: Path, csv_path: Path
) -> TaskError | None:
    task_id = row["task_id"].strip()
    if not task_id:
        return TaskError(f"line {row['_line']}", "task_id", "is empty", csv_path)
    if task_id in seen:
        return TaskError(
            task_id, "task_id", f"duplicate id (lines {seen[task_id]} and {row['_line']})", csv_path
        )
    try:
        check_id(task_id, task_id, csv_path)
    except TaskError as e:
        return e
    if (out_dir / task_id).exists():
        return TaskError(
            task_id, "task_id", "a task folder of that name already exists", out_dir / task_id
        )
    return None


def import_csv(
    csv_path: Path | str,
    out_dir: Path | str,
    normalize_weights: bool = False,
    strict: bool = False,
    refused: list[TaskError] | None = None,
) -> list[Task]:
    """Materialise each row of a terminal-bench-rl CSV as a native task folder out_dir/<task_id>/.

    Row by row: a row is written to a scratch folder inside out_dir and moved into place when it loads;
    a refused row (bad field, duplicate id, existing out_dir/<task_id>) is logged in one line, appended to
    `refused` as a TaskError naming the CSV and the row's line, and skipped. The written task.toml holds the
    checked weights (prefixes and numeric strings fixed, rescaled if normalize_weights). Returns the tasks
    loaded back from out_dir, in row order.
    Raises TaskError for an unreadable CSV, when no row could be imported, or (strict) at the first refusal.
    """
    csv_path, out_dir = Path(csv_path), Path(out_dir)
    if not csv_path.is_file():
        raise TaskError(
            csv_path.name,
            "csv",
            f"{str(csv_path)!r} is not a file"
            if csv_path.exists()
            else f"{str(csv_path)!r} does not exist",
        )
    if out_dir.exists() and not out_dir.is_dir():
        raise TaskError(csv_path.name, "out_dir", f"{str(out_dir)!r} exists and is not a directory")
    rows = read_csv_rows(csv_path)
    if not rows:
        raise TaskError(csv_path.name, "rows", "the CSV has a header but no tasks", csv_path)
    out_dir.mkdir(parents=True, exist_ok=True)
    seen: dict[str, str] = {}
    done, errors = [], []
    for row in rows:
        problem = _row_problem(row, seen, out_dir, csv_path)
        task_id = row["task_id"].strip()
        seen.setdefault(task_id, row["_line"])
        if problem is None:
            scratch = Path(tempfile.mkdtemp(prefix=f".import-{task_id}-", dir=out_dir))
            try:
                _materialise_row(row, scratch / task_id, csv_path, normalize_weights)
                os.rename(scratch / task_id, out_dir / task_id)
                done.append(task_id)
            except TaskError as e:  # name the CSV row, not the scratch folder that is about to go
                problem = TaskError(
                    e.task_id, e.field, f"{e.message} (CSV line {row['_line']})", csv_path
                )
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
        if problem is not None:
            errors.append(problem)
            _refuse(problem, refused, strict)
    if not done:
        raise TaskError(
            csv_path.name,
            "rows",
            f"none of the {len(rows)} rows could be imported; first refusal: {errors[0]}",
            csv_path,
        )
    return [load_native(out_dir / task_id) for task_id in done]


def load_csv(
    csv_path: Path | str,
    normalize_weights: bool = False,
    strict: bool = False,
    refused: list[TaskError] | None = None,
) -> list[Task]:
    """A terminal-bench-rl CSV -> the tasks of its good rows, materialised once per CSV content under
    configs.cache_dir()/csv/. Refused rows are reported (logged, appended to `refused`) on every load.
    Raises TaskError as import_csv does."""
    csv_path = Path(csv_path)
    digest = hashlib.sha256(
        b"termrl-csv-v2\0" + csv_path.read_bytes() + bytes([normalize_weights])
    ).hexdigest()[:16]
    target = configs.cache_dir() / "csv" / f"{csv_path.stem}-{digest}"
    if not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".csv-", dir=target.parent))
        try:
            errors: list[TaskError] = []
            import_csv(csv_path, scratch / "tasks", normalize_weights, strict, refused=errors)
            (scratch / "tasks" / "_refused.json").write_text(
                json.dumps(
                    [{"task_id": e.task_id, "field": e.field, "message": e.message} for e in errors]
                )
            )
            try:
                os.rename(scratch / "tasks", target)
            except (
                OSError
            ):  # another process materialised the same CSV first; its copy is identical
                pass
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    for e in json.loads((target / "_refused.json").read_text()):
        _refuse(TaskError(e["task_id"], e["field"], e["message"], csv_path), refused, strict)
    return [load_native(p.parent) for p in sorted(target.glob("*/task.toml"))]


# ---------------------------------------------------------------- entry point


def _read_toml(task_dir: Path) -> dict:
    toml_path = inside(task_dir.name, "task.toml", task_dir, "task.toml")
    try:
        return tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise TaskError(task_dir.name, "task.toml", f"malformed TOML: {e}", toml_path) from e
    except UnicodeDecodeError as e:
        raise TaskError(task_dir.name, "task.toml", f"not UTF-8: {e}", toml_path) from e


FORMATS_TRIED = (
    "native (task.toml with `id`), Harbor (task.toml beside instruction.md and environment/), "
    "Terminal-Bench (task.yaml)"
)


def _own_dirs() -> tuple[Path, ...]:
    """termrl's cache folders a task's paths may point into: the Dockerfiles and oracle scripts
    termrl writes for Terminal-Bench's `image:` services and solution.yaml (tasks/terminal_bench.py),
    and the Dockerfiles with a Harbor task's [environment] env and workdir (tasks/harbor.py)."""
    return (configs.cache_dir() / "compose", configs.cache_dir() / "solutions", overlay_dir())


def _load_folder(task_dir: Path, normalize_weights: bool, per_test_credit: bool = False) -> Task:
    """One task folder in whichever format it is; a folder of none of them names the formats tried."""
    if (task_dir / "task.toml").is_file():
        data = _read_toml(task_dir)
        if "id" in data:
            return check_task_paths(load_native(task_dir, normalize_weights), _own_dirs())
        if is_harbor(task_dir, data):
            return check_task_paths(load_harbor(task_dir, data, per_test_credit), _own_dirs())
        raise TaskError(
            task_dir.name,
            "task.toml",
            f"is no task format termrl reads: no `id` (native) and no "
            f"instruction.md or environment/ beside it (Harbor); formats tried: {FORMATS_TRIED}",
            task_dir / "task.toml",
        )
    if (task_dir / "task.yaml").is_file():
        return check_task_paths(load_terminal_bench(task_dir), _own_dirs())
    raise TaskError(
        task_dir.name,
        "task.toml",
        f"the folder holds no task file; formats tried: {FORMATS_TRIED}",
        task_dir,
    )


def load_tasks(
    path: Path | str,
    normalize_weights: bool = False,
    strict: bool = False,
    refused: list[TaskError] | None = None,
    per_test_credit: bool = False,
) -> list[Task]:
    """Load tasks from a path, sorted by id; a refused task is skipped and reported, the rest load.

    path: a native task folder (task.toml), a Terminal-Bench task folder (task.yaml), a folder of such
        folders (subfolders whose names start with '.' or '_' are skipped), or a terminal-bench-rl .csv.
    normalize_weights: rescale weights that do not sum to 1 (with a logged warning) instead of refusing.
    strict: raise at the first refused task instead of skipping it.
    refused: if given, each refused task's TaskError (task, field, reason, path) is appended; each is also
        logged as one warning line.
    per_test_credit: Harbor tasks whose test.sh is one all-or-nothing pytest run are scored per test
        (equal weights, partial credit) instead of as Harbor scores them (tasks/harbor.py load_harbor).
    Raises FileNotFoundError if path does not exist; TaskError when no task could be loaded (a single task
    folder: its own error), or with strict at the first refusal (a bad task, a duplicate id).
    """
    path = Path(path).resolve()
    if not path.exists():
        raise FileNotFoundError(f"tasks path {path} does not exist")
    if path.is_file():
        if path.suffix.lower() != ".csv":
            raise TaskError(
                path.name, "path", "a tasks file must be a terminal-bench-rl .csv", path
            )
        return _counted(
            sorted(load_csv(path, normalize_weights, strict, refused), key=lambda t: t.id), path
        )
    if any(
        (path / name).is_file() for name in ("task.toml", "task.yaml", "Dockerfile")
    ):  # one task folder
        return _counted([_load_folder(path, normalize_weights, per_test_credit)], path)
    folders = [
        p for p in sorted(path.iterdir()) if p.is_dir() and not p.name.startswith((".", "_"))
    ]
    if not folders:
        raise TaskError(path.name, "path", "no task folders found", path)
    tasks: dict[str, Task] = {}
    errors: list[TaskError] = []
    for folder in folders:
        try:
            task = _load_folder(folder, normalize_weights, per_test_credit)
            if task.id in tasks:
                raise TaskError(
                    task.id, "id", f"duplicate id: {tasks[task.id].path} and {task.path}", folder
                )
            tasks[task.id] = task
        except TaskError as e:
            errors.append(e)
            _refuse(e, refused, strict)
    if not tasks:
        raise TaskError(
            path.name,
            "tasks",
            f"no task could be loaded: {len(errors)} refused; first: {errors[0]}",
            path,
        )
    return _counted(sorted(tasks.values(), key=lambda t: t.id), path)


def _counted(tasks: list[Task], path: Path) -> list[Task]:
    """tasks, after one warning line when some import the agent's module into pytest's process
    (agent_modules): their reward is forgeable by the agent (sandboxing/verifier.py `forgeable`)."""
    fenced = [t.id for t in tasks if t.agent_modules]
    if fenced:
        log.warning(
            "%d of %d tasks in %s import the agent's module into pytest's process (agent_modules): "
            "their reward is forgeable by the agent (%s)",
            len(fenced),
            len(tasks),
            path,
            ", ".join(fenced[:5]) + (", ..." if len(fenced) > 5 else ""),
        )
    return tasks
