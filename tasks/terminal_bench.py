"""Terminal-Bench task folders (harness terminal-bench <= 0.2.x, github.com/laude-institute/terminal-bench).

A folder holds task.yaml, Dockerfile, docker-compose.yaml, run-tests.sh, tests/ and solution.sh or
solution.yaml. What termrl takes from each, following the harness (terminal_bench/harness/harness.py):

- task.yaml: `instruction` (or the older `descriptions` list: `base`, plus `problem` when present),
  difficulty (easy/medium/hard/unknown), category (optional, default "software_engineering"), tags,
  max_agent_timeout_sec (default 360 s), max_test_timeout_sec (default 60 s).
- docker-compose.yaml: one service; its `build` (context, dockerfile) or `image` gives the image. Tasks
  with several services (sidecars) are refused.
- run-tests.sh (with the `$TEST_DIR/*.sh` helpers it sources or runs): package installs (apt-get, pip,
  uv add / uv pip install; the uv installer itself) become Task.build_setup, run at image build time since
  sandboxes have no network; the pytest command is the verifier's own; the rest becomes Task.test_setup.
- solution.sh, else solution.yaml (a list of {command, min_timeout_sec, block, append_enter} keystrokes
  sent to tmux) turned into a bash script that sends the same keys to a tmux session in the container.
- test_weights.json (terminal-bench-rl's addition): {test name: weight}; without it every test weighs the
  same. A malformed one is logged and the equal weights are used, as Terminal-Bench ignores the file.
"""

import hashlib
import json
import logging
import re
import shlex
from pathlib import Path

import yaml

import configs
from tasks.checks import check_weights, find_tests
from tasks.fields import (
    check_id,
    difficulty_field,
    finish_task,
    positive_field,
    tags_field,
    text_field,
)
from tasks.paths import IMAGE_REF, inside, write_once
from tasks.task import Task, TaskError

log = logging.getLogger("termrl.tasks")

TB_AGENT_TIMEOUT_S = 360.0  # terminal_bench.handlers.trial_handler.Task defaults
TB_TEST_TIMEOUT_S = 60.0
TB_CATEGORY = "software_engineering"
_SOURCED = re.compile(
    r"^\s*(?:source|\.|bash|sh)\s+[\"']?\$\{?TEST_DIR\}?/([\w./-]+\.sh)[\"']?\s*$"
)
_APT = re.compile(r"^\s*(?:sudo\s+)?apt(?:-get)?\s+(update|install)\b(.*)$")
_PIP = re.compile(
    r"^\s*(?:uv\s+add|uv\s+pip\s+install|(?:python3?\s+-m\s+)?pip3?\s+install)\s+(.*)$"
)
_UV_SETUP = re.compile(
    r"astral\.sh/uv|^\s*(?:source|\.)\s+\$HOME/\.local/bin/env\b|^\s*uv\s+(?:init|venv|sync)\b"
)
_UV_VENV = re.compile(r"^\s*uv\s+venv\b(?:\s+(?:-\S+\s+)*([^\s-][^\s;&|]*))?")
_ACTIVATE = re.compile(r"^\s*(?:source|\.)\s+[\"']?([^\s\"']+)/bin/activate[\"']?\s*$")
_PYTEST = re.compile(r"^\s*(?:uv\s+run\s+)?(?:python3?\s+-m\s+)?pytest\b")


def _script_lines(task_id: str, text: str, tests_dir: Path, depth: int = 0) -> list[str]:
    """run-tests.sh lines (continuations joined), with `source/bash $TEST_DIR/x.sh` helpers inlined."""
    out = []
    for line in text.replace("\\\n", " ").splitlines():
        m = _SOURCED.match(line)
        helper = tests_dir / m.group(1) if m else None
        if helper is not None and helper.is_file() and depth < 3:
            # inlined into the test setup: a host file's text must not reach the container
            inside(task_id, "run-tests.sh", tests_dir.parent, helper.absolute())
            out += _script_lines(
                task_id, helper.read_text(encoding="utf-8", errors="replace"), tests_dir, depth + 1
            )
        else:
            out.append(line)
    return out


def _packages(args: str) -> list[str]:
    """Package arguments of an install line (flags, redirections and `&& ...` tails dropped)."""
    args = re.split(r"&&|\|\||;|\||>", args)[0]
    return [a for a in shlex.split(args, comments=True) if not a.startswith("-")]


def split_run_tests(task_id: str, text: str, tests_dir: Path) -> tuple[str | None, str | None]:
    """run-tests.sh text -> (build_setup, test_setup): package installs for build time, the rest for test time.

    apt-get install lines give apt packages (installed at build time when missing: `dpkg -s` first, so
    an offline build of an image that has them passes); pip / uv add / uv pip install lines give pip
    packages; the uv installer, `uv init/venv/sync`, `apt-get update` and the pytest command itself are
    dropped (the verifier runs pytest), and so is the `source X/bin/activate` of a venv X made by a dropped
    `uv venv X` (it would not exist). Comments and blank lines are dropped; None when nothing remains.
    """
    apt, pip, rest, venvs = [], [], [], set()
    for line in _script_lines(task_id, text, tests_dir):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if m := _UV_VENV.match(line):  # dropped below, so the activation of that venv goes with it
            venvs.add((m.group(1) or ".venv").rstrip("/"))
        if (m := _ACTIVATE.match(line)) and m.group(1).rstrip("/") in venvs:
            continue
        if m := _APT.match(line):
            apt += _packages(m.group(2)) if m.group(1) == "install" else []
        elif m := _PIP.match(line):
            pip += [p for p in _packages(m.group(1)) if p not in ("install",)]
        elif not _UV_SETUP.search(line) and not _PYTEST.match(line):
            rest.append(line)
    build = []
    if apt:
        pkgs = " ".join(shlex.quote(p) for p in dict.fromkeys(apt))
        build.append(
            f'missing=\'\'; for p in {pkgs}; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done; '
            'if [ -n "$missing" ]; then apt-get update && apt-get install -y $missing; fi'
        )
    if pip:
        pkgs = " ".join(shlex.quote(p) for p in dict.fromkeys(pip))
        install = f"python3 -m pip install --no-cache-dir {pkgs}"
        if all(
            re.split(r"[=<>!~\[]", p)[0].lower() == "pytest" for p in pip
        ):  # offline: the image's own pytest does
            install += " || python3 -c 'import pytest'"
        build.append(install)
    return ("\n".join(build) + "\n" if build else None), ("\n".join(rest) + "\n" if rest else None)


def solution_from_yaml(task_id: str, path: Path) -> Path:
    """solution.yaml (Terminal-Bench keystroke steps) -> a bash script replaying them in tmux; returns its path
    (under configs.cache_dir()/solutions/, named by content).

    Each step's `command` is sent with `tmux send-keys` (so `C-o` is a key name, as in the harness), then
    Enter if `append_enter`; `block: true` waits until the command returns; `min_timeout_sec` is waited
    after the step. Raises TaskError (field 'solution.yaml') for malformed YAML or steps.
    """
    try:
        steps = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise TaskError(task_id, "solution.yaml", f"malformed YAML: {e}", path) from e
    if not isinstance(steps, list) or not steps:
        raise TaskError(
            task_id, "solution.yaml", "must be a non-empty list of {command: ...} steps", path
        )
    lines = [
        "#!/bin/bash",
        "# generated by termrl from solution.yaml",
        "set -e",
        'tmux new-session -d -s oracle -x 200 -y 50 -c "$PWD"',
    ]
    for i, step in enumerate(steps):
        if not isinstance(step, dict) or not isinstance(step.get("command"), str):
            raise TaskError(
                task_id,
                "solution.yaml",
                f"step {i + 1} must be a mapping with a string 'command'",
                path,
            )
        wait = step.get("min_timeout_sec", 0.0)
        if isinstance(wait, bool) or not isinstance(wait, (int, float)) or wait < 0:
            raise TaskError(
                task_id,
                "solution.yaml",
                f"step {i + 1}: min_timeout_sec must be a number >= 0",
                path,
            )
        command, enter, block = (
            step["command"],
            step.get("append_enter", True),
            step.get("block", False),
        )
        if block and enter:
            lines.append(
                f"tmux send-keys -t oracle {shlex.quote(command + '; tmux wait-for -S oracle-step')} Enter"
            )
            lines.append("tmux wait-for oracle-step")
        else:
            lines.append(
                f"tmux send-keys -t oracle {shlex.quote(command)}" + (" Enter" if enter else "")
            )
        lines.append(f"sleep {max(float(wait), 0.3):g}")
    lines += ["sleep 1", "tmux kill-session -t oracle"]
    text = "\n".join(lines) + "\n"
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return write_once(configs.cache_dir() / "solutions" / f"{task_id}-{digest}.sh", text)


def compose_build(task_id: str, task_dir: Path) -> tuple[Path, Path]:
    """(Dockerfile, build context) from docker-compose.yaml's single service, or the folder's Dockerfile.

    A service with only `image:` gets a generated one-line Dockerfile (FROM that image) in the cache.
    Raises TaskError (field 'docker-compose.yaml') for malformed YAML, several services, or a service with
    neither build nor a literal image.
    """
    path = task_dir / "docker-compose.yaml"
    if not path.is_file():
        path = task_dir / "docker-compose.yml"
    if not path.is_file():
        return task_dir / "Dockerfile", task_dir
    inside(task_id, "docker-compose.yaml", task_dir, path.name)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as e:
        raise TaskError(task_id, "docker-compose.yaml", f"malformed YAML: {e}", path) from e
    services = data.get("services") if isinstance(data, dict) else None
    if not isinstance(services, dict) or not services:
        raise TaskError(task_id, "docker-compose.yaml", "has no services", path)
    if len(services) > 1:
        raise TaskError(
            task_id,
            "docker-compose.yaml",
            f"has {len(services)} services ({', '.join(services)}); "
            "termrl runs one container per task, so multi-service tasks are not supported",
            path,
        )
    ((name, service),) = services.items()
    service = service if isinstance(service, dict) else {}
    build = service.get("build")
    if isinstance(build, str):
        build = {"context": build}
    if isinstance(build, dict):
        where = f"docker-compose.yaml: services.{name}.build"
        named = str(build.get("context", "."))
        context = inside(task_id, f"{where}.context", task_dir, named, path).resolve()
        name_in_context = str(build.get("dockerfile", "Dockerfile"))
        inside(task_id, f"{where}.dockerfile", task_dir, Path(named) / name_in_context, path)
        dockerfile = context / name_in_context
        return dockerfile, context
    image = service.get("image")
    if not isinstance(image, str) or not IMAGE_REF.fullmatch(image.strip()):
        raise TaskError(
            task_id,
            "docker-compose.yaml",
            f"service '{name}' has neither `build` nor a literal `image` reference",
            path,
        )
    generated = (
        configs.cache_dir()
        / "compose"
        / f"{task_id}-{hashlib.sha256(image.encode()).hexdigest()[:12]}"
    )
    generated.mkdir(parents=True, exist_ok=True)
    (generated / "Dockerfile").write_text(f"FROM {image.strip()}\n", encoding="utf-8")
    return generated / "Dockerfile", generated


def tb_weights(task_id: str, task_dir: Path, tests: dict[str, bool]) -> dict[str, float]:
    """test_weights.json if present and well-formed, else equal weights over the test functions."""
    equal = {name: 1.0 / len(tests) for name in sorted(tests)}
    path = task_dir / "test_weights.json"
    if not path.is_file():
        return equal
    inside(task_id, "test_weights.json", task_dir, path.name)
    try:
        return check_weights(
            task_id,
            json.loads(path.read_text(encoding="utf-8")),
            tests,
            True,
            "test_weights.json",
            path,
        )
    except (json.JSONDecodeError, UnicodeDecodeError, TaskError) as e:
        log.warning(
            "task '%s': ignoring %s (%s); every test weighs the same, as in Terminal-Bench",
            task_id,
            path,
            e,
        )
        return equal


def _instruction(data: dict) -> str | None:
    if isinstance(data.get("instruction"), str):
        return data["instruction"]
    if not isinstance(data.get("descriptions"), list):
        return None
    texts = {
        d.get("key"): d.get("description") for d in data["descriptions"] if isinstance(d, dict)
    }
    parts = [texts[k] for k in ("base", "problem") if isinstance(texts.get(k), str)]
    return "\n\n".join(parts) or None


def load_terminal_bench(task_dir: Path) -> Task:
    """A Terminal-Bench task folder -> Task (see the module docstring for what is taken from where).

    Raises TaskError for malformed YAML, a missing instruction or difficulty, a multi-service compose file,
    a malformed solution.yaml, and everything checks.py refuses.
    """
    task_dir = Path(task_dir)
    yaml_path = task_dir / "task.yaml"
    task_id = check_id(task_dir.name, task_dir.name, yaml_path)
    inside(task_id, "task.yaml", task_dir, yaml_path.name)
    try:
        data = yaml.safe_load(yaml_path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise TaskError(task_id, "task.yaml", f"malformed YAML: {e}", yaml_path) from e
    if not isinstance(data, dict):
        raise TaskError(
            task_id, "task.yaml", f"must be a mapping, got {type(data).__name__}", yaml_path
        )
    data = {
        **data,
        "instruction": _instruction(data),
        "category": data.get("category") or TB_CATEGORY,
    }
    tests_dir = task_dir / "tests"
    tests = find_tests(task_id, tests_dir)
    dockerfile, context = compose_build(task_id, task_dir)
    build_setup = test_setup = None
    run_tests = task_dir / "run-tests.sh"
    if run_tests.is_file():
        inside(task_id, "run-tests.sh", task_dir, run_tests.name)
        build_setup, test_setup = split_run_tests(
            task_id, run_tests.read_text(encoding="utf-8", errors="replace"), tests_dir
        )
    solution = task_dir / "solution.sh"
    if solution.is_file():
        inside(task_id, "solution.sh", task_dir, solution.name)
    elif (task_dir / "solution.yaml").is_file():
        inside(task_id, "solution.yaml", task_dir, "solution.yaml")
        solution = solution_from_yaml(task_id, task_dir / "solution.yaml")
    return finish_task(
        task_id,
        task_dir,
        instruction=text_field(task_id, data, "instruction", yaml_path),
        difficulty=difficulty_field(task_id, data.get("difficulty"), yaml_path),
        category=text_field(task_id, data, "category", yaml_path),
        tags=tags_field(task_id, data.get("tags"), yaml_path),
        agent_timeout_s=positive_field(
            task_id, data, "max_agent_timeout_sec", yaml_path, TB_AGENT_TIMEOUT_S
        ),
        test_timeout_s=positive_field(
            task_id, data, "max_test_timeout_sec", yaml_path, TB_TEST_TIMEOUT_S
        ),
        max_turns=None,
        raw_weights=tb_weights(task_id, task_dir, tests),
        raw_prepass=None,
        normalize=True,
        weights_field="weights",
        source_path=yaml_path,
        meta={"source": "terminal-bench"},
        dockerfile=dockerfile,
        context_dir=context,
        solution=solution if solution.is_file() else None,
        test_setup=test_setup,
        build_setup=build_setup,
    )
