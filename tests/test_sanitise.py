"""Nothing a container or a task file holds reaches the researcher's terminal or logs raw: every
terminal-active character is shown escaped (bookkeeping/sanitise.py), at each place termrl prints
or logs such text."""

import io
import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bookkeeping.sanitise import install_log_sanitiser, printable
from evaluate import failed_run_line
from sandboxing import images
from tasks import TaskError, load_tasks

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = Path(__file__).parent / "fixtures" / "harbor" / "hb-compose"
# what an agent program or a sidecar prints to take over a terminal: OSC 52 (sets the clipboard),
# cursor up + erase line (hides the line above), clear screen, an 8-bit CSI, a right-to-left override
ATTACK = "ok\x1b]52;c;aGFja2Vk\x07\x1b[1A\x1b[2K\x1b[2J\x9b31m\u202eevil\u2066x\u2069\x00\r\n"
SHOWN = (
    "ok\\x1b]52;c;aGFja2Vk\\x07\\x1b[1A\\x1b[2K\\x1b[2J\\x9b31m\\u202eevil\\u2066x\\u2069"
    "\\x00\\x0d\\x0a"
)
# every character a terminal acts on; none may be printed raw
RAW = [chr(c) for c in (*range(0x00, 0x09), *range(0x0A, 0x20), *range(0x7F, 0xA0))] + [
    *"\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
]


def _raw_in(text: str) -> list[str]:
    return [hex(ord(c)) for c in RAW if c in text and c != "\n"]


def test_printable_escapes_every_terminal_active_character_and_keeps_the_rest():
    assert printable(ATTACK) == SHOWN
    assert printable("a\tb — ü ✓ 日本") == "a\tb — ü ✓ 日本"  # tab and printable Unicode kept
    assert printable("one\ntwo\r", keep_newlines=True) == "one\ntwo\\x0d"
    assert printable("bad \udcff byte") == "bad \\udcff byte"  # surrogateescape'd, printable
    assert printable(ValueError("x\x1by")) == "x\\x1by"
    assert _raw_in(printable("".join(RAW))) == []


def test_the_most_common_error_line_of_evaluate_shows_an_agent_programs_bytes_escaped():
    summary = {"overall": {"episodes": 2, "errors": 2}, "top_error": f"SandboxError: {ATTACK}"}
    line = failed_run_line(summary)
    assert line == (
        "error: all 2 episodes errored, nothing was scored; most common error: "
        f"SandboxError: {SHOWN}"
    )
    assert _raw_in(line) == []


def test_a_task_error_shows_the_task_files_text_escaped(tmp_path):
    task_dir = tmp_path / "t"
    task_dir.mkdir()
    (task_dir / "task.toml").write_text('id = "t"\n"\\u001b[2J\\u202e" = 1\n')
    with pytest.raises(TaskError) as info:
        load_tasks(task_dir)
    assert info.value.field == "\x1b[2J\u202e"  # the field as given, for code that reads it
    assert str(info.value).startswith("task 't', field '\\x1b[2J\\u202e': unknown field")
    assert _raw_in(str(info.value)) == []


def test_log_records_carry_container_text_escaped():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    log = logging.getLogger("termrl.test-sanitise")
    log.addHandler(handler)
    log.propagate = False
    before = logging.getLogRecordFactory()
    try:
        install_log_sanitiser()
        install_log_sanitiser()  # idempotent: one layer
        log.warning("task %s episode %d: %s", "t", 3, ATTACK)
        log.warning("an exception: %s", RuntimeError("\x1b]52;c;eA==\x07"))
        log.warning("termrl's own\nmessage")
    finally:
        logging.setLogRecordFactory(before)
        log.removeHandler(handler)
    assert stream.getvalue() == (
        f"task t episode 3: {SHOWN}\nan exception: \\x1b]52;c;eA==\\x07\ntermrl's own\nmessage\n"
    )


@pytest.mark.model_run
@pytest.mark.docker
def test_evaluate_prints_a_sidecars_escape_sequences_escaped(tmp_path):
    """A sidecar that prints terminal escapes and exits: every episode errors with its log's tail,
    and evaluate's console lines show the bytes escaped."""
    task_dir = tmp_path / "tasks" / "esc-sidecar"
    shutil.copytree(COMPOSE, task_dir)
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text().replace("termrl/hb-compose", "termrl/esc-sidecar"))
    emit = r"printf 'ok\033]52;c;aGFja2Vk\007\033[1A\033[2K\033[2J\342\200\256evil'; exit 3"
    (task_dir / "environment" / "docker-compose.yaml").write_text(
        "services:\n  main:\n    depends_on: [kv]\n"
        f"  kv:\n    image: {images.BASE_IMAGE}\n    command: {json.dumps(['sh', '-c', emit])}\n"
        '    expose: ["8080"]\n'  # waited for: its exit fails the start
    )
    r = subprocess.run(
        [
            sys.executable,
            "evaluate.py",
            "--oracle",
            "--tasks",
            str(tmp_path / "tasks"),
            "--k",
            "1",
            "--out-dir",
            str(tmp_path / "eval"),
            "--no-progress",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        errors="surrogateescape",
        timeout=600,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert r.returncode == 1, r.stderr[-3000:]
    assert "most common error: SandboxError: task esc-sidecar: sidecar 'kv' exited with code 3" in (
        r.stderr
    ), r.stderr[-3000:]
    assert "ok\\x1b]52;c;aGFja2Vk\\x07\\x1b[1A\\x1b[2K\\x1b[2J\\u202eevil" in r.stderr
    assert _raw_in(r.stdout + r.stderr) == []
