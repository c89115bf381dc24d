"""Read tasks from disk: native folders (task.toml), Terminal-Bench folders (task.yaml), terminal-bench-rl CSVs.

Formats:
- native (DESIGN.md "Task format"): task.toml, Dockerfile, optional files/, tests/test_*.py, solution.sh.
- Terminal-Bench task folder (github.com/laude-institute/terminal-bench): task.yaml (`instruction`, or the
  older `descriptions` list with key "base"; difficulty, category, tags, max_agent_timeout_sec,
  max_test_timeout_sec), Dockerfile, run-tests.sh, tests/, solution.sh. Every test function gets the
  same weight. run-tests.sh is not run: termrl runs tests/ with the container's `python3 -m pytest`.
- terminal-bench-rl CSV: one task per row, columns CSV_COLUMNS; `tags` pipe-separated, `test_functions`
  pytest source, `test_weights` JSON {name: weight}, `additional_files` JSON {relative path: content}.
  A CSV is materialised into native folders (import_csv), with the weights checked and rewritten clean.
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

import yaml

import configs

from tasks.checks import check_allowed_prepass, check_dockerfile, check_weights, find_tests
from tasks.task import DIFFICULTIES, Task, TaskError

log = logging.getLogger("termrl.tasks")

NATIVE_FIELDS = ("id", "instruction", "difficulty", "category", "tags", "agent_timeout_s", "test_timeout_s",
                 "max_turns", "weights", "allowed_prepass", "meta")
CSV_COLUMNS = ("task_id", "difficulty", "title", "use_case_category", "prompt", "category", "tags", "dockerfile",
               "test_functions", "test_weights", "additional_files")
DEFAULT_AGENT_TIMEOUT_S = 300.0
DEFAULT_TEST_TIMEOUT_S = 60.0
TB_AGENT_TIMEOUT_S = 180.0  # Terminal-Bench's defaults when task.yaml omits them
TB_TEST_TIMEOUT_S = 30.0
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")  # also a valid docker image name component
RESERVED_FILES = ("task.toml", "Dockerfile", "solution.sh", "tests")


# ---------------------------------------------------------------- field helpers

def _text(task_id, data, key, path, required=True, default=None) -> str | None:
    value = data.get(key, default)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        what = "is missing" if key not in data else f"must be a non-empty string, got {json.dumps(value)}"
        raise TaskError(task_id, key, what, path)
    return value.strip()


def _positive(task_id, data, key, path, default, integer=False):
    value = data.get(key, default)
    if value is None:
        return None
    kind = int if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kind) or value <= 0:
        noun = "a positive integer" if integer else "a positive number"
        raise TaskError(task_id, key, f"must be {noun}, got {json.dumps(value)}", path)
    return value if integer else float(value)


def _difficulty(task_id, value, path, key="difficulty") -> str:
    if not isinstance(value, str):
        raise TaskError(task_id, key, f"must be one of {', '.join(DIFFICULTIES)}, got {json.dumps(value)}", path)
    normal = value.strip().lower().replace(" ", "_").replace("-", "_")
    if normal not in DIFFICULTIES:
        raise TaskError(task_id, key, f"must be one of {', '.join(DIFFICULTIES)}, got {json.dumps(value)}", path)
    return normal


def _tags(task_id, value, path) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, str) and t.strip() for t in value):
        raise TaskError(task_id, "tags", f"must be a list of non-empty strings, got {json.dumps(value)}", path)
    return [t.strip() for t in value]


def _check_id(task_id, value, path) -> str:
    if not isinstance(value, str) or not ID_PATTERN.match(value):
        raise TaskError(task_id, "id", f"must match {ID_PATTERN.pattern} (lowercase letters, digits, '_', '.', '-'), "
                                       f"got {json.dumps(value)}", path)
    return value


def _finish(task_id, task_dir: Path, *, instruction, difficulty, category, tags, agent_timeout_s, test_timeout_s,
            max_turns, raw_weights, raw_prepass, normalize, weights_field, source_path, meta) -> Task:
    """Checks shared by every format (Dockerfile, tests, weights, pre-passes) -> Task."""
    dockerfile = task_dir / "Dockerfile"
    check_dockerfile(task_id, dockerfile, task_dir)
    tests_dir = task_dir / "tests"
    tests = find_tests(task_id, tests_dir)
    if raw_weights is None:
        raise TaskError(task_id, weights_field, "is missing; give each scored test a weight", source_path)
    weights = check_weights(task_id, raw_weights, tests, normalize, weights_field, source_path)
    solution = task_dir / "solution.sh"
    return Task(id=task_id, instruction=instruction, difficulty=difficulty, category=category, tags=tags,
                path=task_dir, dockerfile=dockerfile, context_dir=task_dir, tests_dir=tests_dir, weights=weights,
                solution=solution if solution.is_file() else None, agent_timeout_s=agent_timeout_s,
                test_timeout_s=test_timeout_s, max_turns=max_turns,
                allowed_prepass=check_allowed_prepass(task_id, raw_prepass, tests, source_path), meta=meta)


# ---------------------------------------------------------------- native

def load_native(task_dir: Path, normalize_weights: bool = False) -> Task:
    """A native task folder (task.toml + Dockerfile + tests/ [+ files/, solution.sh]) -> Task.

    Raises TaskError naming the task and field for malformed TOML, unknown or missing fields, bad values,
    and everything checks.py refuses.
    """
    task_dir = Path(task_dir)
    toml_path = task_dir / "task.toml"
    try:
        data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise TaskError(task_dir.name, "task.toml", f"malformed TOML: {e}", toml_path) from e
    except UnicodeDecodeError as e:
        raise TaskError(task_dir.name, "task.toml", f"not UTF-8: {e}", toml_path) from e
    if "id" not in data:
        raise TaskError(task_dir.name, "id", "is missing", toml_path)
    task_id = _check_id(task_dir.name, data["id"], toml_path)
    unknown = sorted(set(data) - set(NATIVE_FIELDS))
    if unknown:
        raise TaskError(task_id, unknown[0], f"unknown field (known: {', '.join(NATIVE_FIELDS)})", toml_path)
    meta = data.get("meta", {})
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise TaskError(task_id, "meta", "must be a table of string values", toml_path)
    return _finish(
        task_id, task_dir, instruction=_text(task_id, data, "instruction", toml_path),
        difficulty=_difficulty(task_id, data.get("difficulty"), toml_path),
        category=_text(task_id, data, "category", toml_path), tags=_tags(task_id, data.get("tags"), toml_path),
        agent_timeout_s=_positive(task_id, data, "agent_timeout_s", toml_path, DEFAULT_AGENT_TIMEOUT_S),
        test_timeout_s=_positive(task_id, data, "test_timeout_s", toml_path, DEFAULT_TEST_TIMEOUT_S),
        max_turns=_positive(task_id, data, "max_turns", toml_path, None, integer=True),
        raw_weights=data.get("weights"), raw_prepass=data.get("allowed_prepass"), normalize=normalize_weights,
        weights_field="weights", source_path=toml_path, meta=dict(meta))


def _toml_str(s: str) -> str:
    # Multi-line literal strings keep instructions and reasons readable; JSON escapes are valid TOML
    # basic-string escapes except that TOML also forbids a raw DEL.
    if "\n" in s and "'''" not in s and not s.endswith("'") and \
            all(c in "\n\t" or (ord(c) >= 0x20 and c != "\x7f") for c in s):
        return "'''\n" + s + "'''"
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


def render_task_toml(task_id: str, instruction: str, difficulty: str, category: str, tags: list[str],
                     weights: dict[str, float], agent_timeout_s: float = DEFAULT_AGENT_TIMEOUT_S,
                     test_timeout_s: float = DEFAULT_TEST_TIMEOUT_S, max_turns: int | None = None,
                     allowed_prepass: dict[str, str] | None = None, meta: dict[str, str] | None = None) -> str:
    """The text of a native task.toml (the inverse of load_native for these fields)."""
    lines = [f"id = {_toml_str(task_id)}", f"instruction = {_toml_str(instruction)}",
             f"difficulty = {_toml_str(difficulty)}", f"category = {_toml_str(category)}",
             f"tags = [{', '.join(_toml_str(t) for t in tags)}]",
             f"agent_timeout_s = {float(agent_timeout_s)!r}", f"test_timeout_s = {float(test_timeout_s)!r}"]
    if max_turns is not None:
        lines.append(f"max_turns = {int(max_turns)}")
    lines += ["", "[weights]"] + [f"{_toml_str(k)} = {float(v)!r}" for k, v in weights.items()]
    if allowed_prepass:
        lines += ["", "[allowed_prepass]"] + [f"{_toml_str(k)} = {_toml_str(v)}" for k, v in allowed_prepass.items()]
    if meta:
        lines += ["", "[meta]"] + [f"{_toml_str(k)} = {_toml_str(v)}" for k, v in meta.items()]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- Terminal-Bench

def load_terminal_bench(task_dir: Path) -> Task:
    """A Terminal-Bench task folder -> Task with equal weights over the test functions found by `ast`.

    Raises TaskError for malformed YAML, a missing instruction/difficulty/category, and everything
    checks.py refuses.
    """
    task_dir = Path(task_dir)
    yaml_path = task_dir / "task.yaml"
    task_id = _check_id(task_dir.name, task_dir.name, yaml_path)
    try:
        data = yaml.safe_load(yaml_path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise TaskError(task_id, "task.yaml", f"malformed YAML: {e}", yaml_path) from e
    if not isinstance(data, dict):
        raise TaskError(task_id, "task.yaml", f"must be a mapping, got {type(data).__name__}", yaml_path)
    if "instruction" not in data and isinstance(data.get("descriptions"), list):
        bases = [d.get("description") for d in data["descriptions"] if isinstance(d, dict) and d.get("key") == "base"]
        data = {**data, "instruction": bases[0] if bases else None}
    agent_timeout = _positive(task_id, data, "max_agent_timeout_sec", yaml_path, TB_AGENT_TIMEOUT_S)
    test_timeout = _positive(task_id, data, "max_test_timeout_sec", yaml_path, TB_TEST_TIMEOUT_S)
    tests = find_tests(task_id, task_dir / "tests")
    equal = {name: 1.0 / len(tests) for name in sorted(tests)}
    return _finish(
        task_id, task_dir, instruction=_text(task_id, data, "instruction", yaml_path),
        difficulty=_difficulty(task_id, data.get("difficulty"), yaml_path),
        category=_text(task_id, data, "category", yaml_path), tags=_tags(task_id, data.get("tags"), yaml_path),
        agent_timeout_s=agent_timeout, test_timeout_s=test_timeout, max_turns=None, raw_weights=equal,
        raw_prepass=None, normalize=True, weights_field="weights", source_path=yaml_path,
        meta={"source": "terminal-bench"})


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
                    count = len(header) + len(row.get(None, [])) - sum(v is None for v in row.values())
                    raise TaskError(name, "row", f"line {line}: {count} fields, the header has {len(header)}", csv_path)
                rows.append({**row, "_line": str(line)})
                line = reader.line_num + 1
        except csv.Error as e:
            raise TaskError(name, "csv", f"malformed CSV at line {reader.line_num + 1}: {e}", csv_path) from e
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
        raise TaskError(task_id, field, f"file name {json.dumps(name)} must be a relative path inside the task, "
                                        f"not one of {', '.join(RESERVED_FILES)}", path)
    return rel


def _materialise_row(row: dict[str, str], task_dir: Path, csv_path: Path, normalize: bool) -> Task:
    task_id = row["task_id"].strip()
    for key in ("dockerfile", "test_functions"):
        if not row[key].strip():
            raise TaskError(task_id, key, "is empty", csv_path)
    weights = _json_field(task_id, row, "test_weights", csv_path, None)
    files = _json_field(task_id, row, "additional_files", csv_path, {})
    task_dir.mkdir(parents=True)
    (task_dir / "Dockerfile").write_text(row["dockerfile"], encoding="utf-8")
    (task_dir / "tests").mkdir()
    (task_dir / "tests" / "test_outputs.py").write_text(row["test_functions"], encoding="utf-8")
    for name, content in files.items():
        rel = _safe_relpath(task_id, "additional_files", name, csv_path)
        if not isinstance(content, str):
            raise TaskError(task_id, "additional_files", f"content of {json.dumps(name)} must be a string", csv_path)
        (task_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (task_dir / rel).write_text(content, encoding="utf-8")
    meta = {"source": f"terminal-bench-rl csv {csv_path.name}", "title": row["title"].strip(),
            "use_case_category": row["use_case_category"].strip()}
    task = _finish(
        task_id, task_dir, instruction=_text(task_id, {"prompt": row["prompt"]}, "prompt", csv_path),
        difficulty=_difficulty(task_id, row["difficulty"], csv_path),
        category=_text(task_id, {"category": row["category"]}, "category", csv_path),
        tags=[t.strip() for t in row["tags"].split("|") if t.strip()],
        agent_timeout_s=DEFAULT_AGENT_TIMEOUT_S, test_timeout_s=DEFAULT_TEST_TIMEOUT_S, max_turns=None,
        raw_weights=weights, raw_prepass=None, normalize=normalize, weights_field="test_weights",
        source_path=csv_path, meta=meta)
    (task_dir / "task.toml").write_text(render_task_toml(
        task.id, task.instruction, task.difficulty, task.category, task.tags, task.weights,
        task.agent_timeout_s, task.test_timeout_s, meta=meta), encoding="utf-8")
    return task


def import_csv(csv_path: Path | str, out_dir: Path | str, normalize_weights: bool = False) -> list[Task]:
    """Materialise every row of a terminal-bench-rl CSV as a native task folder out_dir/<task_id>/.

    All or nothing: rows are written to a scratch folder inside out_dir and moved into place only when
    every row loads. The written task.toml holds the checked weights (prefixes and numeric strings fixed,
    rescaled if normalize_weights). Returns the tasks loaded back from out_dir.
    Raises TaskError for any bad row, a duplicate task_id, or an existing out_dir/<task_id>.
    """
    csv_path, out_dir = Path(csv_path), Path(out_dir)
    rows = read_csv_rows(csv_path)
    if not rows:
        raise TaskError(csv_path.name, "rows", "the CSV has a header but no tasks", csv_path)
    seen: dict[str, str] = {}
    for row in rows:
        task_id = row["task_id"].strip()
        if not task_id:
            raise TaskError(f"line {row['_line']}", "task_id", "is empty", csv_path)
        _check_id(task_id, task_id, csv_path)
        if task_id in seen:
            raise TaskError(task_id, "task_id", f"duplicate id (lines {seen[task_id]} and {row['_line']})", csv_path)
        seen[task_id] = row["_line"]
        if (out_dir / task_id).exists():
            raise TaskError(task_id, "task_id", f"{out_dir / task_id} already exists", csv_path)
    out_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".import-", dir=out_dir))
    try:
        for row in rows:
            _materialise_row(row, scratch / row["task_id"].strip(), csv_path, normalize_weights)
        for task_id in seen:
            os.rename(scratch / task_id, out_dir / task_id)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return [load_native(out_dir / task_id) for task_id in seen]


def load_csv(csv_path: Path | str, normalize_weights: bool = False) -> list[Task]:
    """A terminal-bench-rl CSV -> tasks, materialised once per CSV content under configs.cache_dir()/csv/."""
    csv_path = Path(csv_path)
    digest = hashlib.sha256(b"termrl-csv-v1\0" + csv_path.read_bytes() + bytes([normalize_weights])).hexdigest()[:16]
    target = configs.cache_dir() / "csv" / f"{csv_path.stem}-{digest}"
    if not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".csv-", dir=target.parent))
        try:
            import_csv(csv_path, scratch / "tasks", normalize_weights)
            try:
                os.rename(scratch / "tasks", target)
            except OSError:  # another process materialised the same CSV first; its copy is identical
                pass
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return [load_native(target / row["task_id"].strip()) for row in read_csv_rows(csv_path)]


# ---------------------------------------------------------------- entry point

def _load_folder(task_dir: Path, normalize_weights: bool) -> Task:
    if (task_dir / "task.toml").is_file():
        return load_native(task_dir, normalize_weights)
    if (task_dir / "task.yaml").is_file():
        return load_terminal_bench(task_dir)
    raise TaskError(task_dir.name, "task.toml", "the folder has neither task.toml (native) nor task.yaml "
                                                "(Terminal-Bench)", task_dir)


def load_tasks(path: Path | str, normalize_weights: bool = False) -> list[Task]:
    """Load tasks from a path, sorted by id.

    path: a native task folder (task.toml), a Terminal-Bench task folder (task.yaml), a folder of such
        folders (subfolders whose names start with '.' or '_' are skipped), or a terminal-bench-rl .csv.
    normalize_weights: rescale weights that do not sum to 1 (with a logged warning) instead of raising.
    Raises FileNotFoundError if path does not exist; TaskError (naming task, field and file) for any bad
    task, and for duplicate ids.
    """
    path = Path(path).resolve()
    if not path.exists():
        raise FileNotFoundError(f"tasks path {path} does not exist")
    if path.is_file():
        if path.suffix.lower() != ".csv":
            raise TaskError(path.name, "path", "a tasks file must be a terminal-bench-rl .csv", path)
        return sorted(load_csv(path, normalize_weights), key=lambda t: t.id)
    if (path / "task.toml").is_file() or (path / "task.yaml").is_file():
        return [_load_folder(path, normalize_weights)]
    folders = [p for p in sorted(path.iterdir()) if p.is_dir() and not p.name.startswith((".", "_"))]
    if not folders:
        raise TaskError(path.name, "path", "no task folders found", path)
    tasks: dict[str, Task] = {}
    for folder in folders:
        task = _load_folder(folder, normalize_weights)
        if task.id in tasks:
            raise TaskError(task.id, "id", f"duplicate id: {tasks[task.id].path} and {task.path}", folder)
        tasks[task.id] = task
    return sorted(tasks.values(), key=lambda t: t.id)
