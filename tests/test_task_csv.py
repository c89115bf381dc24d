"""tasks/: the terminal-bench-rl CSV importer (`python -m tasks import-csv`) and its errors."""

import csv
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from task_helpers import load_error

from tasks import TaskError, import_csv, load_tasks

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"

# ---------------------------------------------------------------- terminal-bench-rl CSV

CSV_FIXTURE = FIXTURES / "tbrl_tasks.csv"


def write_csv(path: Path, rows: list[dict]) -> Path:
    """rows override fields of the fixture's first row."""
    with open(CSV_FIXTURE, newline="") as f:
        base = next(csv.DictReader(f))
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(base))
        writer.writeheader()
        writer.writerows({**base, **row} for row in rows)
    return path


def test_csv_import_round_trip(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="termrl.tasks"):
        imported = import_csv(CSV_FIXTURE, tmp_path / "out")
    assert caplog.messages == [
        "task 'csv-sum', field 'test_weights': key 'total_exists' has no 'test_' prefix; using 'test_total_exists'",
        "task 'csv-sum', field 'test_weights': weight of 'test_total_exists' is the string \"0.25\"; using 0.25",
    ]
    from_csv = load_tasks(CSV_FIXTURE)
    from_folders = load_tasks(tmp_path / "out")
    strip = lambda t: {
        k: v
        for k, v in vars(t).items()
        if k not in ("path", "dockerfile", "context_dir", "tests_dir")
    }
    assert (
        [strip(t) for t in from_csv]
        == [strip(t) for t in from_folders]
        == [strip(t) for t in imported]
    )
    total, upper = from_folders
    assert strip(total) == dict(
        id="csv-sum",
        instruction="Add up the numbers in /app/numbers.txt (one per line) and write the total to "
        "/app/total.txt.",
        difficulty="easy",
        category="data-processing",
        tags=["math", "files"],
        weights={"test_total_exists": 0.25, "test_total_value": 0.75},
        solution=None,
        agent_timeout_s=360.0,
        test_timeout_s=60.0,
        max_turns=None,
        test_setup=None,
        build_setup=None,
        allowed_prepass={},
        agent_modules=[],
        meta={
            "source": "terminal-bench-rl csv tbrl_tasks.csv",
            "title": "Sum a column",
            "use_case_category": "data analysis",
        },
        verifier_script=None,
        solution_dir=None,
        cpus=None,
        memory_mb=None,
        storage_mb=None,
        sidecars=(),
        service_names=(),
        oracle_turns=None,
        solution_env={},
        steps=(),
        step_reward="mean",
    )
    assert (
        upper.instruction
        == "Convert /app/in.txt to upper case.\nWrite the result to /app/out.txt; keep line order."
    )
    assert upper.meta["title"] == 'Uppercase, "quoted", multi-line'
    assert (tmp_path / "out" / "csv-sum" / "numbers.txt").read_text() == "10\n20\n30\n"
    assert (tmp_path / "out" / "csv-upper" / "data" / "in.txt").read_text() == "abc\ndef\n"
    assert (
        (tmp_path / "out" / "csv-upper" / "tests" / "test_outputs.py")
        .read_text()
        .endswith('assert Path("/app/out.txt").read_text() == "ABC\\nDEF\\n"\n')
    )
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["csv-sum", "csv-upper"]


def test_import_csv_cli(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "tasks", "import-csv", str(CSV_FIXTURE), str(tmp_path / "out")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert (
        out.stdout == f"imported 2 task(s) into {tmp_path / 'out'}, 0 refused: csv-sum, csv-upper\n"
    )
    again = subprocess.run(
        [sys.executable, "-m", "tasks", "import-csv", str(CSV_FIXTURE), str(tmp_path / "out")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 2
    first = (
        f"task 'csv-sum', field 'task_id': a task folder of that name already exists "
        f"[{tmp_path / 'out' / 'csv-sum'}]"
    )
    assert again.stdout == (
        f"refused csv-sum: task_id: a task folder of that name already exists [{tmp_path / 'out' / 'csv-sum'}]\n"
        f"refused csv-upper: task_id: a task folder of that name already exists [{tmp_path / 'out' / 'csv-upper'}]\n"
        f"error: task 'tbrl_tasks.csv', field 'rows': none of the 2 rows could be imported; first refusal: {first} "
        f"[{CSV_FIXTURE}]\n"
    )
    assert "refused" not in again.stderr  # each refusal said once, not again as a log line


def test_csv_duplicate_ids(tmp_path):
    path = write_csv(tmp_path / "dup.csv", [{}, {}])
    assert (
        load_error(path)
        == f"task 'csv-sum', field 'task_id': duplicate id (lines 2 and 16) [{path}]"
    )


def test_csv_missing_columns(tmp_path):
    path = tmp_path / "cols.csv"
    path.write_text("task_id,prompt\nx,y\n")
    assert load_error(path) == (
        "task 'cols.csv', field 'header': missing columns: difficulty, title, "
        "use_case_category, category, tags, dockerfile, test_functions, test_weights, "
        f"additional_files [{path}]"
    )


def test_csv_ragged_row(tmp_path):
    path = write_csv(tmp_path / "ragged.csv", [{}])
    path.write_text(path.read_text() + "extra,row\n")
    assert (
        load_error(path)
        == f"task 'ragged.csv', field 'row': line 16: 2 fields, the header has 11 [{path}]"
    )


def test_csv_malformed_quoting(tmp_path):
    path = write_csv(tmp_path / "quotes.csv", [{}])
    path.write_text(path.read_text() + 'a,"b"c,d\n')
    assert load_error(path) == (
        "task 'quotes.csv', field 'csv': malformed CSV at line 16: ',' expected after '\"' "
        f"[{path}]"
    )


def test_csv_malformed_weights_json(tmp_path):
    path = write_csv(tmp_path / "json.csv", [{"test_weights": "{'test_total_value': 1}"}])
    assert load_error(path) == (
        "task 'csv-sum', field 'test_weights': malformed JSON: Expecting property name "
        f"enclosed in double quotes: line 1 column 2 (char 1) (CSV line 2) [{path}]"
    )


def test_csv_malformed_additional_files_json(tmp_path):
    path = write_csv(tmp_path / "files.csv", [{"additional_files": "[1, 2]"}])
    assert load_error(path) == (
        "task 'csv-sum', field 'additional_files': must be a JSON object, got list (CSV line 2) "
        f"[{path}]"
    )


def test_csv_additional_file_outside_the_task(tmp_path):
    path = write_csv(
        tmp_path / "escape.csv", [{"additional_files": json.dumps({"../evil.txt": "x"})}]
    )
    assert load_error(path) == (
        "task 'csv-sum', field 'additional_files': file name \"../evil.txt\" must be a relative "
        "path inside the task, not one of task.toml, Dockerfile, solution.sh, hidden_tests, "
        f"oracle_turns.json (CSV line 2) [{path}]"
    )


def test_csv_weights_naming_a_missing_test(tmp_path):
    path = write_csv(
        tmp_path / "missing.csv",
        [{"test_weights": json.dumps({"test_total_value": 1, "test_x": 0})}],
    )
    assert load_error(path) == (
        "task 'csv-sum', field 'test_weights': 'test_x' names a test that does not exist; "
        f"tests found: test_total_exists, test_total_value (CSV line 2) [{path}]"
    )


def test_csv_weights_not_summing_to_one_normalised_on_request(tmp_path):
    path = write_csv(
        tmp_path / "sum.csv",
        [{"test_weights": json.dumps({"test_total_value": 2, "test_total_exists": 2})}],
    )
    assert load_error(path) == (
        "task 'csv-sum', field 'test_weights': weights sum to 4, not 1 (normalize_weights=True "
        "or `python -m tasks validate/import-csv --normalize-weights` rescales them) (CSV line 2) "
        f"[{path}]"
    )
    (task,) = load_tasks(path, normalize_weights=True)
    assert task.weights == {"test_total_value": 0.5, "test_total_exists": 0.5}


def test_csv_bad_row_is_refused_and_the_rest_import(tmp_path):
    path = write_csv(tmp_path / "half.csv", [{}, {"task_id": "csv-bad", "test_weights": "{}"}])
    refused = []
    imported = import_csv(path, tmp_path / "out", refused=refused)
    assert [t.id for t in imported] == ["csv-sum"]
    assert [str(e) for e in refused] == [
        f"task 'csv-bad', field 'test_weights': is empty; give each scored test a weight (CSV line 16) [{path}]"
    ]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "csv-sum"
    ]  # no scratch folder left
    with pytest.raises(TaskError, match="^task 'csv-bad', field 'test_weights': is empty"):
        import_csv(path, tmp_path / "strict", strict=True)
