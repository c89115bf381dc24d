"""Harbor task folders (Terminal-Bench 2.x and most newer sets; task.toml 1.4 as harbor 0.25 reads
it, harborframework.com).

A folder holds task.toml, instruction.md, environment/ (Dockerfile, or docker-compose.yaml whose
service `main` is the agent's container), tests/test.sh (+ the files it uses) and optionally
solution/ (solve.sh and its side files, copied to /solution). What termrl takes from each, following
harbor's TaskConfig:

- `[task].name` "org/name": the id is the part after `/`; without `[task]` the folder's name.
- `[metadata]` (free-form): difficulty (absent = "unknown"), category (absent =
  "software_engineering"), tags. Other keys are kept in Task.meta as text.
- `[agent].timeout_sec` -> agent_timeout_s (absent: termrl's episode limit);
  `[verifier].timeout_sec` -> test_timeout_s (absent: harbor's 600 s).
- `[environment]`: cpus, memory_mb (or the older `memory = "2G"`), storage_mb (or `storage`) ->
  Task.cpus, memory_mb, storage_mb. `docker_image` names a prebuilt image that cannot be pulled
  here: environment/Dockerfile is built instead when it exists.
- `[environment.env]` and `[environment].workdir` -> ENV / WORKDIR lines appended to a copy of the
  Dockerfile (`_overlay`): the agent's container, the oracle and the verifier all have them.
  `[solution.env]` -> Task.solution_env (the oracle's command); `[verifier.env]` -> exported at the
  top of the verifier script.
- tests/test.sh (harbor runs it after the agent and reads /logs/verifier/reward.txt or reward.json):
  installs (apt-get, the uv installer, `uvx -w/--with`, `pip install`, `uv pip install`, `uv add`)
  move to build time (Task.build_setup); the rest is kept as Task.verifier_script, run in the
  verifier container with pytest and uv invocations rewritten to the image's `python3 -m pytest`,
  and scored from its reward files, as harbor scores it. Opt-in per_test_credit: one pytest run
  whose exit status is written to reward.txt becomes termrl's weighted pytest (equal weights per
  test, JUnit), partial credit harbor does not give.
- `[[steps]]` (multi-step tasks, `_steps`): Task.steps, each with steps/<name>/instruction.md, its test.sh
  (split as above; /tests = the task's tests/ with the step's over it), `[steps.verifier.env]` over
  `[verifier.env]`, its timeouts, oracle, workdir/ and min_reward; `multi_step_reward_strategy` ->
  Task.step_reward. rollout.py runs the steps, reward.roll_up_steps rolls their rewards up.
- environment/docker-compose.yaml: `main` is the agent's container, the other services are sidecars
  (tasks/compose.py parses them; sandboxing/compose.py runs them in main's network namespace).

Every other field harbor accepts is refused or warned in one line naming it (`_refusals`,
`_field_lines`): refused `[[environment.mcp_servers]]`, `os = "windows"`,
accelerators, a separate verifier environment, and compose fields termrl does not support
(tasks/compose.py); warned network policy (sandboxes have no network), users, healthchecks,
artifacts, skills, and keys harbor does not know.
"""

import dataclasses
import hashlib
import json
import logging
import os
import re
import shlex
import shutil
import tempfile
import tomllib
from pathlib import Path

import configs
from tasks.checks import check_allowed_prepass, check_dockerfile, check_weights, find_tests
from tasks.compose import Compose, parse_compose
from tasks.fields import check_id, difficulty_field, positive_field, tags_field
from tasks.paths import check_task_paths, files_inside, inside, write_once
from tasks.task import Step, Task, TaskError

log = logging.getLogger("termrl.tasks")

HARBOR_TEST_TIMEOUT_S = 600.0  # harbor VerifierConfig.timeout_sec default
HARBOR_CATEGORY = "software_engineering"
SCRIPT_WEIGHTS = {
    "reward": 1.0
}  # a verifier_script task is scored from its reward files, not by test name
_CANARY = re.compile(r"^\s*(?:#|<!--)?.*canary GUID.*$", re.IGNORECASE)
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([GMK])B?\s*$", re.IGNORECASE)
_APT = re.compile(r"^\s*(?:sudo\s+)?apt(?:-get)?\s+(?:-\S+\s+)*(update|install)\b(.*)$")
_PIP = re.compile(
    r"^\s*(?:uv\s+add|uv\s+pip\s+install|(?:python3?\s+-m\s+)?pip3?\s+install)\s+(.*)$"
)
_DROP = re.compile(
    r"astral\.sh/uv|^\s*(?:source|\.)\s+\S*(?:\.local/bin/env|/bin/activate)\b"
    r"|^\s*uv\s+(?:init|venv|sync)\b"
)
_CTRF = (
    "--ctrf",
    "--json-ctrf",
    "--json-report-file",
)  # report plugins' options taking a file argument


def _size_mb(task_id: str, value, key: str, path: Path) -> int:
    """`memory = "2G"` / "512M" / "1024K" -> MiB, as harbor's _parse_size_to_mb."""
    m = _SIZE.match(value) if isinstance(value, str) else None
    if m is None:
        raise TaskError(
            task_id,
            f"environment.{key}",
            f'must be a size like "2G" or "512M", got {json.dumps(value)}',
            path,
        )
    n = float(m.group(1)) * {"G": 1024, "M": 1, "K": 1 / 1024}[m.group(2).upper()]
    return max(1, int(n))


def _resource(task_id: str, env: dict, key: str, old: str | None, path: Path) -> int | None:
    value = env.get(key)
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0
    ):
        raise TaskError(
            task_id,
            f"environment.{key}",
            f"must be a positive number, got {json.dumps(value)}",
            path,
        )
    if value is None and old is not None and env.get(old) is not None:
        return _size_mb(task_id, env[old], old, path)
    return None if value is None else int(value)


def _table(task_id: str, data: dict, key: str, path: Path) -> dict:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise TaskError(
            task_id, key, f"must be a table, got {json.dumps(value, default=str)}", path
        )
    return value


def _timeout(
    task_id: str, table: dict, name: str, path: Path, default: float | None
) -> float | None:
    value = table.get("timeout_sec", default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise TaskError(
            task_id,
            f"{name}.timeout_sec",
            f"must be a positive number, got {json.dumps(value)}",
            path,
        )
    return float(value)


def is_harbor(task_dir: Path, data: dict) -> bool:
    """A task.toml without termrl's `id` beside instruction.md or environment/ is Harbor's."""
    return "id" not in data and (
        (task_dir / "instruction.md").is_file() or (task_dir / "environment").is_dir()
    )


# ---------------------------------------------------------------- tests/test.sh


def _logical_lines(text: str) -> list[str]:
    """Lines with `\\` continuations joined, comments and blank lines dropped."""
    out = []
    for line in text.replace("\\\n", " ").splitlines():
        if line.strip() and not line.strip().startswith("#"):
            out.append(line)
    return out


def _blocks(lines: list[str]) -> list[list[str]]:
    """Top-level statements: an `if ... fi` block is one item (nested ifs counted), every other line
    its own."""
    out, depth, cur = [], 0, []
    for line in lines:
        words = re.findall(r"(?:^|[;\s])(if|fi)(?=[;\s]|$)", line)
        cur.append(line)
        for w in words:
            depth += 1 if w == "if" else -1
        if depth <= 0:
            out.append(cur)
            cur, depth = [], 0
    if cur:
        out.append(cur)
    return out


def _is_exit_status_block(block: list[str]) -> bool:
    """harbor's `if [ $? -eq 0 ]; then echo 1 > reward.txt; else echo 0 > ...; fi` (or via
    _EXIT_CODE)."""
    text = "\n".join(block)
    return (
        "reward.txt" in text
        and bool(re.search(r"\$\?|-eq\s+0", text))
        and "reward.json" not in text
    )


_VALUED = (
    "-w",
    "--with",
    "-p",
    "--python",
    "--from",
    "--with-requirements",
    "--index-url",
    "--extra-index-url",
)


def _pytest_parts(task_id: str, line: str) -> tuple[list[str], list[str]] | None:
    """A pytest invocation (`pytest`, `python3 -m pytest`, `uv run [python -m] pytest`, `uvx [opts]
    pytest`) -> (pip requirements from uvx -w/--with, pytest args with report-file options dropped);
    None when the line runs no pytest. `&& x=1` tails are not part of the args."""
    head = line.split("&&")[0].split("||")[0]
    try:
        words = shlex.split(head, comments=True)
    except ValueError:
        return None
    reqs = []
    if words[:1] == ["uvx"] or words[:2] == ["uv", "run"]:
        i = 1 if words[0] == "uvx" else 2
        while i < len(words) and words[i].startswith("-"):
            if words[i] in ("-w", "--with") and i + 1 < len(words):
                reqs.append(words[i + 1])
            elif words[i].startswith("--with="):
                reqs.append(words[i].split("=", 1)[1])
            i += 2 if words[i] in _VALUED else 1
        words = words[i:]
    if words[:3] in (["python3", "-m", "pytest"], ["python", "-m", "pytest"]):
        words = words[3:]
    elif words[:1] == ["pytest"]:
        words = words[1:]
    else:
        return None
    args, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word in _CTRF:
            skip = True
        elif not word.startswith(_CTRF) and word not in ("-rA", "-p", "ctrf"):
            args.append(word)
    return reqs, args


def _packages(args: str) -> list[str]:
    args = re.split(r"&&|\|\||;|\||>", args)[0]
    return [a for a in shlex.split(args, comments=True) if not a.startswith("-")]


def _build_setup(apt: list[str], pip: list[str]) -> str | None:
    build = []
    if apt:
        pkgs = " ".join(shlex.quote(p) for p in dict.fromkeys(apt))
        build.append(
            f"missing=''; for p in {pkgs}; do "
            'dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done; '
            'if [ -n "$missing" ]; then apt-get update && apt-get install -y $missing; fi'
        )
    pip = [
        p for p in dict.fromkeys(pip) if not p.lower().startswith("pytest-json-ctrf")
    ]  # termrl writes JUnit
    if pip:
        pkgs = " ".join(shlex.quote(p) for p in pip)
        install = f"python3 -m pip install --no-cache-dir --break-system-packages {pkgs}"
        # A distro-owned copy (Debian's python3-pytest) cannot be uninstalled by pip: install beside
        # it.
        install += f" || {install} --ignore-installed"
        if all(
            re.split(r"[=<>!~\[]", p)[0].lower() == "pytest" for p in pip
        ):  # offline: the image's pytest
            install += " || python3 -c 'import pytest'"
        build.append(install)
    return "\n".join(build) + "\n" if build else None


def split_test_sh(
    task_id: str, text: str, tests_dir: Path, per_test_credit: bool = False
) -> tuple[str | None, str | None, str | None]:
    """tests/test.sh -> (build_setup, test_setup, verifier_script).

    Installs move to build_setup (apt packages missing from the image, pip requirements from `uvx
    -w`, `pip install`, `uv pip install`, `uv add`; pytest-json-ctrf left out since termrl writes
    JUnit); the uv installer, `source .../env`, `uv venv/init`, venv activation and `apt-get update`
    are dropped. verifier_script is the script with its installs dropped and each pytest invocation
    run as `python3 -m pytest <args>`, test_setup None: scored as Harbor scores it (an
    all-or-nothing Terminal-Bench test.sh gives 1.0 only when its one pytest run passes).
    per_test_credit (opt-in): when what remains is one pytest run over every hidden test file whose
    exit status goes to reward.txt, the verifier runs its own weighted pytest instead (equal weights
    per test: partial credit, which Harbor does not give): verifier_script is None and the other
    lines (if any) are test_setup.
    """
    apt, pip, kept, runs = [], [], [], []
    for block in _blocks(_logical_lines(text)):
        if '"$PWD" = "/"' in block[0]:  # harbor's WORKDIR guard: termrl runs from the image WORKDIR
            continue
        if len(block) == 1:
            line = block[0]
            if m := _APT.match(line):
                apt += (
                    [p for p in _packages(m.group(2)) if p != "curl"]
                    if m.group(1) == "install"
                    else []
                )
                continue
            if (m := _PIP.match(line)) and _pytest_parts(task_id, line) is None:
                pip += [p for p in _packages(m.group(1)) if p != "install"]
                continue
            if _DROP.search(line):
                continue
            if (parts := _pytest_parts(task_id, line)) is not None:
                pip += parts[0]
                runs.append(parts[1])
                head = line.split("&&")[0].split("||")[0]
                lead = head[: len(head) - len(head.lstrip())]
                kept.append(
                    f"{lead}python3 -m pytest {' '.join(shlex.quote(a) for a in parts[1])} "
                    f"{line[len(head) :].strip()}".rstrip()
                )
                continue
        kept.append("\n".join(block))
    build = _build_setup(apt, pip)
    files = {p.name for p in tests_dir.glob("test_*.py")} | {
        p.name for p in tests_dir.glob("*_test.py")
    }
    simple = (
        per_test_credit
        and len(runs) == 1
        and all(
            _is_exit_status_block(k.splitlines()) or _pytest_line(k) or _trivial(k) for k in kept
        )
    )
    if simple:
        named = {Path(a).name for a in runs[0] if a.endswith(".py")}
        dirs = [a for a in runs[0] if not a.endswith(".py") and not a.startswith("-")]
        simple = bool(files) and (
            named == files
            or (not named and all(d.rstrip("/").endswith("tests") or "TEST_DIR" in d for d in dirs))
        )
        simple = simple and not any(
            a.startswith("-") and a not in ("-q", "-v", "-x", "-s") for a in runs[0]
        )
    if simple:
        return build, None, None
    return build, None, "#!/bin/bash\n" + "\n".join(kept) + "\n"


def _pytest_line(line: str) -> bool:
    return line.lstrip().startswith("python3 -m pytest ")


def _trivial(line: str) -> bool:
    """Lines harbor-shaped scripts carry around the one pytest run: the `$PWD = /` guard, the
    exit-code bookkeeping (`result=$?`), the reward folder's variable and mkdir, `exit`, `set -uo
    pipefail`, `cd`."""
    s = line.strip()
    return bool(
        re.match(
            r"^(?:\w+=\$\?|\w+=\"?/logs/verifier/?\"?|mkdir -p \S+|exit\b.*"
            r"|set(?:\s+[-+]\w+)+(?:\s+pipefail)?|cd\s+\S+|echo\b[^>]*)$",
            s,
        )
    ) or ('"$PWD" = "/"' in s and "reward" not in s)


# ---------------------------------------------------------------- environment/


def _dockerfile(
    task_id: str, task_dir: Path, env: dict, toml_path: Path
) -> tuple[Path, Path, Compose | None]:
    """(main's Dockerfile, its build context, the parsed compose file or None)."""
    env_dir = inside(task_id, "environment", task_dir, "environment")
    compose = None
    if (env_dir / "docker-compose.yaml").is_file():
        inside(
            task_id, "environment/docker-compose.yaml", task_dir, "environment/docker-compose.yaml"
        )
        compose = parse_compose(task_id, env_dir)
        dockerfile, context = compose.dockerfile, compose.context_dir
    else:
        dockerfile, context = env_dir / "Dockerfile", env_dir
    image = env.get("docker_image")
    if dockerfile.is_file():
        if image:
            log.info(
                "task %s: docker_image %s cannot be pulled here (no registry); building %s instead",
                task_id,
                image,
                dockerfile,
            )
        return dockerfile, context, compose
    if isinstance(image, str) and image.strip():
        generated = task_dir / "environment" / ".termrl-prebuilt.Dockerfile"
        raise TaskError(
            task_id,
            "environment.docker_image",
            f"{image} is a prebuilt image that cannot be pulled "
            f"here (no registry) and {dockerfile} does not exist to build it from; load the image "
            f"locally and write `FROM {image}` to {generated.with_name('Dockerfile')}",
            toml_path,
        )
    raise TaskError(
        task_id,
        "environment",
        f"missing {dockerfile} (harbor: environment/Dockerfile, "
        "docker-compose.yaml or [environment].docker_image)",
        dockerfile,
    )


# ---------------------------------------------------------------- the task


# task.toml 1.4 (harbor.models.task.config.TaskConfig): every key harbor accepts, per table. Keys
# termrl honours are read where they are used; the others get one warning or refusal line here.
_KNOWN = {
    "": {
        "version",
        "schema_version",
        "task",
        "metadata",
        "verifier",
        "agent",
        "environment",
        "solution",
        "source",
        "multi_step_reward_strategy",
        "steps",
        "artifacts",
    },
    "task": {"name", "version", "description", "authors", "keywords"},
    "agent": {"timeout_sec", "user", "network_mode", "allowed_hosts"},
    "verifier": {
        "timeout_sec",
        "env",
        "user",
        "environment_mode",
        "environment",
        "collect",
        "network_mode",
        "allowed_hosts",
    },
    "environment": {
        "build_timeout_sec",
        "docker_image",
        "os",
        "cpus",
        "memory_mb",
        "storage_mb",
        "memory",
        "storage",
        "gpus",
        "gpu_types",
        "tpu",
        "mcp_servers",
        "env",
        "skills_dir",
        "healthcheck",
        "workdir",
        "allow_internet",
        "network_mode",
        "allowed_hosts",
    },
    "solution": {"env"},
}
# accepted by harbor, without effect on what termrl runs or scores: one warning line each
_WARNED = {
    "environment.build_timeout_sec": "termrl's own build limit applies",
    "environment.skills_dir": "termrl's agent loads no skills",
    "environment.healthcheck": "termrl does not wait on it; the ENTRYPOINT's services are up once it "
    "has run (DESIGN.md, Task format)",
    "agent.user": "the agent runs as the image's USER",
    "verifier.user": "the verifier runs test.sh as the image's USER",
    "verifier.collect": "termrl collects no artifacts",
    "artifacts": "termrl collects no artifacts",
}
_DEFAULTS = {"environment.build_timeout_sec": 600.0}  # harbor's own: nothing asked of termrl
# the phases' network policy fields ([environment]'s are said by `_meta`)
_NETWORK = ("agent", "verifier")


def _table_keys(data: dict, tables: dict[str, set[str]]):
    """(dotted name, key, value, known) for every key of each table of `data` that `tables` names ("" is the
    top level), known when `tables` lists it; a table that is absent or no table is skipped."""
    for table, known in tables.items():
        section = data if not table else data.get(table)
        if not isinstance(section, dict):
            continue
        for key, value in section.items():
            yield (f"{table}.{key}" if table else key), key, value, key in known


def _field_lines(task_id: str, data: dict, path: Path) -> None:
    """One warning line per task.toml field harbor accepts and termrl does not act on, and per key
    harbor does not know either (harbor ignores those too)."""
    for name, _key, value, known in _table_keys(data, _KNOWN):
        if not known:
            log.warning(
                "task %s: %s is no harbor task.toml field; ignored [%s]", task_id, name, path
            )
        elif name in _WARNED and value not in (None, [], {}, _DEFAULTS.get(name)):
            log.warning("task %s: %s is not taken: %s [%s]", task_id, name, _WARNED[name], path)
    for table in _NETWORK:
        section = data.get(table)
        if not isinstance(section, dict):
            continue
        mode = section.get("network_mode")
        if mode in ("public", "allowlist") or section.get("allowed_hosts"):
            log.warning(
                "task %s: %s.network_mode %s: termrl's sandboxes have no network (no egress, no "
                "allowlist), so the task fails here wherever it downloads at run time [%s]",
                task_id,
                table,
                json.dumps(mode or "allowlist"),
                path,
            )


def _refusals(task_id: str, data: dict, env: dict, verifier: dict, path: Path) -> None:
    if data.get("multi_step_reward_strategy") is not None and not data.get("steps"):
        raise TaskError(
            task_id, "multi_step_reward_strategy", "applies to multi-step tasks only", path
        )
    if env.get("mcp_servers"):
        raise TaskError(
            task_id,
            "environment.mcp_servers",
            "MCP servers ([[environment.mcp_servers]]) are not supported",
            path,
        )
    if str(env.get("os", "linux")).lower() != "linux":
        raise TaskError(
            task_id, "environment.os", f"{env['os']!r} tasks are not supported (linux only)", path
        )
    for key in ("gpus", "tpu", "gpu_types"):
        if env.get(key):
            raise TaskError(
                task_id,
                f"environment.{key}",
                f"{json.dumps(env[key], default=str)}: accelerators in the task's container are not "
                "supported",
                path,
            )
    if verifier.get("environment") or verifier.get("environment_mode") == "separate":
        raise TaskError(
            task_id,
            "verifier.environment",
            "a separate verifier environment is not supported",
            path,
        )


_ENV_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# the only variables of termrl's environment a task's `${VAR}` may read (env_table)
HOST_ENV_PREFIX = "TERMRL_TASK_"
_ENV_TEMPLATE = re.compile(r"\$\{([^}:]+)(?::-(.*))?\}")  # harbor's utils.env._TEMPLATE_PATTERN
_WORKDIR = re.compile(r"^/[A-Za-z0-9_.@+/-]*$")


def env_table(task_id: str, table: dict, name: str, path: Path) -> dict[str, str]:
    """`[<name>.env]` -> {variable: value}: a value that is entirely `${VAR}` or `${VAR:-default}`
    takes VAR from termrl's own environment (harbor's resolve_env_vars) only when VAR starts with
    HOST_ENV_PREFIX, else the default: a downloaded task must not copy the host's variables (keys,
    tokens) into an image the agent reads or a trajectory logs; other values are literal.
    Raises TaskError naming the field: not a table of strings, a bad variable name, a control
    character in a value, a `${VAR}` without a default that is not a HOST_ENV_PREFIX variable set here."""
    value = table.get("env", {})
    if not isinstance(value, dict):
        raise TaskError(task_id, f"{name}.env", f"must be a table, got {json.dumps(value)}", path)
    out = {}
    for key, v in value.items():
        if not _ENV_KEY.match(key) or not isinstance(v, str):
            raise TaskError(
                task_id,
                f"{name}.env.{key}",
                f'must be NAME = "string" (NAME a shell variable name), got {json.dumps(v)}',
                path,
            )
        if m := _ENV_TEMPLATE.fullmatch(v):
            var, default = m.group(1), m.group(2)
            host = os.environ.get(var) if var.startswith(HOST_ENV_PREFIX) else None
            if host is None and default is None:
                why = (
                    "which is not set here"
                    if var.startswith(HOST_ENV_PREFIX)
                    else f"and termrl passes a task only {HOST_ENV_PREFIX}* variables of its own"
                )
                raise TaskError(
                    task_id,
                    f"{name}.env.{key}",
                    f"{v} names {var}, {why}, and has no default",
                    path,
                )
            v = host if host is not None else default
        if any(ord(c) < 32 or ord(c) == 127 for c in v):
            raise TaskError(task_id, f"{name}.env.{key}", "a control character in the value", path)
        out[key] = v
    return out


def _workdir(task_id: str, env: dict, path: Path) -> str | None:
    value = env.get("workdir")
    if value is not None and (not isinstance(value, str) or not _WORKDIR.match(value)):
        raise TaskError(
            task_id,
            "environment.workdir",
            f"must be an absolute path of letters, digits and ._@+/-, got {json.dumps(value)}",
            path,
        )
    return value


def _docker_quote(value: str) -> str:
    """A Dockerfile ENV value in double quotes: `\\`, `"` and `$` (Docker's own substitution)
    escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'


def _overlay(task_id: str, dockerfile: Path, env: dict[str, str], workdir: str | None) -> Path:
    """The task's Dockerfile with `ENV` ([environment.env]) and `WORKDIR` ([environment].workdir)
    appended, written once per content under configs.cache_dir()/harbor/: the agent's container,
    the oracle's run and the verifier (a snapshot of that container) then all have them, as in
    harbor, where they apply to every command in the environment. Unchanged when both are empty."""
    if not env and workdir is None:
        return dockerfile
    text = dockerfile.read_text(encoding="utf-8", errors="replace").rstrip("\n") + "\n"
    text += "".join(f"ENV {k}={_docker_quote(v)}\n" for k, v in env.items())
    text += f"WORKDIR {workdir}\n" if workdir else ""
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    return write_once(overlay_dir() / f"{task_id}-{digest}" / "Dockerfile", text)


def overlay_dir() -> Path:
    """Where `_overlay` writes the Dockerfiles with a task's [environment] env and workdir."""
    return configs.cache_dir() / "harbor"


def _env_prefix(env: dict[str, str]) -> str:
    """`export K=V` lines setting `env` in a bash script."""
    return "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())


def _task_id(task_dir: Path, data: dict | None, toml_path: Path) -> tuple[str, dict]:
    """(the id: `[task].name` after `/`, lower-cased, else the folder's name; task.toml's data)."""
    if data is None:
        inside(task_dir.name, "task.toml", task_dir, "task.toml")
        try:
            data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as e:
            raise TaskError(task_dir.name, "task.toml", f"malformed TOML: {e}", toml_path) from e
    info = _table(task_dir.name, data, "task", toml_path)
    name = info.get("name", task_dir.name) if info else task_dir.name
    if not isinstance(name, str) or not name.strip():
        raise TaskError(
            task_dir.name,
            "task.name",
            f"must be a non-empty string, got {json.dumps(name)}",
            toml_path,
        )
    # harbor allows upper case; a docker image name does not
    return check_id(task_dir.name, name.rsplit("/", 1)[-1].strip().lower(), toml_path), data


def _instruction(task_id: str, task_dir: Path, rel: str = "instruction.md") -> str:
    path = task_dir / rel
    if path.is_file():  # the prompt: a symlink to a host file would put that file before the policy
        inside(task_id, rel, task_dir, rel)
    if not path.is_file():
        raise TaskError(task_id, rel, "is missing", path)
    text = "\n".join(
        ln for ln in path.read_text(encoding="utf-8").splitlines() if not _CANARY.match(ln)
    ).strip()
    if not text:
        raise TaskError(task_id, rel, "is empty", path)
    return text


def _verification(
    task_id: str,
    task_dir: Path,
    meta_in: dict,
    toml_path: Path,
    per_test_credit: bool,
    verifier_env: dict[str, str],
) -> dict:
    """Task fields from tests/test.sh: weights, build_setup, test_setup, verifier_script, and for
    termrl's own exported tasks (EXPORT_MARK) allowed_prepass and max_turns from [metadata.termrl].
    verifier_env ([verifier.env]) is exported at the top of the kept script."""
    inside(task_id, "tests", task_dir, "tests")
    test_sh = task_dir / "tests" / "test.sh"
    if test_sh.is_file():
        inside(task_id, "tests/test.sh", task_dir, "tests/test.sh")
    if not test_sh.is_file():
        raise TaskError(task_id, "tests/test.sh", "is missing (harbor's verifier script)", test_sh)
    # every file of tests/ goes into the verifier container: none may be a link out of the task
    files_inside(task_id, "tests", task_dir, task_dir / "tests")
    test_text = test_sh.read_text(encoding="utf-8", errors="replace")
    exported = meta_in.get("termrl") if EXPORT_MARK in test_text else None
    if isinstance(exported, dict):  # termrl's own task (export_harbor): its fields come back
        tests = find_tests(task_id, task_dir / "tests")
        weights = check_weights(
            task_id, exported.get("weights"), tests, False, "metadata.termrl.weights", toml_path
        )
        return dict(
            weights=weights,
            allowed_prepass=check_allowed_prepass(
                task_id, exported.get("allowed_prepass"), tests, toml_path
            ),
            max_turns=positive_field(task_id, exported, "max_turns", toml_path, None, integer=True),
            build_setup=exported.get("build_setup"),
            test_setup=exported.get("test_setup"),
            verifier_script=None,
        )
    build_setup, test_setup, script = split_test_sh(
        task_id, test_text, task_dir / "tests", per_test_credit
    )
    if script is None:
        if verifier_env:
            raise TaskError(
                task_id,
                "verifier.env",
                "per-test credit runs termrl's own pytest, which takes no [verifier.env]; load the "
                "task without per_test_credit",
                toml_path,
            )
        tests = find_tests(task_id, task_dir / "tests")
        weights = {n: 1.0 / len(tests) for n in sorted(tests)}  # equal parts: partial credit
    else:
        weights = dict(SCRIPT_WEIGHTS)
        if verifier_env:
            head, _, body = script.partition("\n")
            script = f"{head}\n{_env_prefix(verifier_env)}{body}"
    return dict(
        weights=weights, build_setup=build_setup, test_setup=test_setup, verifier_script=script
    )


def _per_test_credit(task_id: str, meta_in: dict, default: bool, path: Path) -> bool:
    """`[metadata.termrl] per_test_credit = true|false` (a task's own choice), else `default`."""
    own = meta_in.get("termrl")
    if not isinstance(own, dict) or "per_test_credit" not in own:
        return default
    if not isinstance(own["per_test_credit"], bool):
        raise TaskError(
            task_id,
            "metadata.termrl.per_test_credit",
            f"must be true or false, got {json.dumps(own['per_test_credit'])}",
            path,
        )
    return own["per_test_credit"]


def _meta(task_id: str, meta_in: dict, env: dict, exported: bool) -> dict[str, str]:
    """Task.meta: [metadata]'s other keys as text, the source, and allow_internet (said in one line)."""
    meta = {
        k: v if isinstance(v, str) else json.dumps(v, default=str)
        for k, v in meta_in.items()
        if k not in ("difficulty", "category", "tags", "termrl")
    }
    if isinstance(meta_in.get("termrl"), dict) and "per_test_credit" in meta_in["termrl"]:
        meta["per_test_credit"] = json.dumps(meta_in["termrl"]["per_test_credit"])
    if not exported:
        meta.setdefault("source", "harbor")
    if (
        env.get("allow_internet") is True
        or env.get("network_mode") in ("public", "allowlist")
        or env.get("allowed_hosts")
    ):
        log.warning(
            "task %s: allow_internet = true; termrl's sandboxes have no network, so it fails here "
            "wherever the agent or its tests download at run time",
            task_id,
        )
        meta["allow_internet"] = "true"
    return meta


# ---------------------------------------------------------------- [[steps]]

# harbor.models.task.config.StepConfig: every key harbor accepts in a step, per table
_STEP_KNOWN = {
    "": {"name", "agent", "verifier", "min_reward", "healthcheck", "artifacts"},
    "agent": _KNOWN["agent"],
    "verifier": _KNOWN["verifier"],
}
_STEP_WARNED = {
    "healthcheck": "termrl does not wait on a step's healthcheck",
    "artifacts": "termrl collects no artifacts",
    "agent.user": _WARNED["agent.user"],
    "verifier.user": _WARNED["verifier.user"],
    "verifier.collect": _WARNED["verifier.collect"],
}
STEP_REWARDS = ("mean", "final")  # harbor MultiStepRewardStrategy
# harbor.models.task.step_name.validate_step_name: a portable directory name
_STEP_NAME_BAD = re.compile(r'[\x00-\x1f\x7f<>:"/\\|?*]')


def _step_name(task_id: str, i: int, step: dict, seen: set[str], path: Path) -> str:
    name = step.get("name")
    field = f"steps[{i}].name"
    if (
        not isinstance(name, str)
        or not name.strip()
        or name in (".", "..")
        or name.endswith((".", " "))
        or _STEP_NAME_BAD.search(name)
        or len(name.encode()) > 255
    ):
        raise TaskError(
            task_id,
            field,
            f"must be a portable directory name under steps/ (no path separators, control or "
            f"reserved characters, trailing dot or space), got {json.dumps(name)}",
            path,
        )
    if name.casefold() in seen:
        raise TaskError(task_id, field, f"{name!r} names a step twice (case-insensitive)", path)
    seen.add(name.casefold())
    return name


def _min_reward(task_id: str, i: int, value, path: Path) -> dict[str, float] | None:
    """`min_reward = x` -> {"reward": x}; a table of key -> threshold as is; absent -> None."""
    if value is None:
        return None
    table = {"reward": value} if not isinstance(value, dict) else value
    for x in table.values():
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise TaskError(
                task_id,
                f"steps[{i}].min_reward",
                f"must be a number or a table of numbers, got {json.dumps(value, default=str)}",
                path,
            )
    return {k: float(x) for k, x in table.items()}


def _step_lines(task_id: str, i: int, step: dict, path: Path) -> None:
    """Refuse a step's separate verifier environment; one warning line per step field termrl does
    not act on, as `_field_lines` for the task's own tables."""
    verifier = step.get("verifier") if isinstance(step.get("verifier"), dict) else {}
    if verifier.get("environment") or verifier.get("environment_mode") == "separate":
        raise TaskError(
            task_id,
            f"steps[{i}].verifier.environment",
            "a separate verifier environment is not supported",
            path,
        )
    for name, key, value, known in _table_keys(step, _STEP_KNOWN):
        if not known:
            log.warning(
                "task %s: steps[%d].%s is no harbor task.toml field; ignored [%s]",
                task_id,
                i,
                name,
                path,
            )
        elif name in _STEP_WARNED and value not in (None, [], {}):
            log.warning(
                "task %s: steps[%d].%s is not taken: %s [%s]",
                task_id,
                i,
                name,
                _STEP_WARNED[name],
                path,
            )
        elif key in ("network_mode", "allowed_hosts") and value not in (None, []):
            log.warning(
                "task %s: steps[%d].%s: termrl's sandboxes have no network [%s]",
                task_id,
                i,
                name,
                path,
            )


def _merged_tests(task_id: str, name: str, shared: Path | None, own: Path | None) -> Path:
    """The step's /tests: the task's shared tests/ with the step's tests/ copied over it (harbor's
    Verifier._resolve_tests uploads both to /tests, the step's last). One folder alone is used as
    is; both are merged once per content under overlay_dir() (a unique temporary folder renamed)."""
    if shared is None or own is None:
        return own if own is not None else shared
    files: dict[str, Path] = {}
    for folder in (shared, own):
        for p in files_inside(task_id, "tests", folder.parent, folder):
            files[p.relative_to(folder).as_posix()] = p
    digest = hashlib.sha256()
    for rel, p in sorted(files.items()):
        digest.update(rel.encode() + b"\0" + p.read_bytes() + b"\0")
    out = overlay_dir() / f"{task_id}-{name.encode().hex()[:32]}-{digest.hexdigest()[:16]}"
    if not out.is_dir():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
        for rel, p in files.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, tmp / rel)
        try:
            os.rename(tmp, out)
        except OSError:  # another loader renamed the same content first
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def _steps(
    task_id: str, task_dir: Path, data: dict, verifier_env: dict[str, str], toml_path: Path
) -> tuple[tuple[Step, ...], str | None, str]:
    """task.toml [[steps]] -> (the Steps, their tests' build_setup merged, the roll-up strategy).

    Each step reads steps/<name>/instruction.md, its test.sh (steps/<name>/tests/test.sh, else the
    task's tests/test.sh; its installs move to build time as for one test.sh: split_test_sh, scored
    as harbor scores it), [steps.verifier.env] over [verifier.env], its timeouts (else the task's),
    its oracle (steps/<name>/solution/solve.sh, else the task's solution/solve.sh), workdir/ and
    min_reward. Raises TaskError naming the task and the step's field."""
    raw = data["steps"]
    if not isinstance(raw, list) or not all(isinstance(x, dict) for x in raw):
        raise TaskError(task_id, "steps", "must be an array of tables ([[steps]])", toml_path)
    strategy = data.get("multi_step_reward_strategy") or "mean"
    if strategy not in STEP_REWARDS:
        raise TaskError(
            task_id,
            "multi_step_reward_strategy",
            f"must be one of {', '.join(STEP_REWARDS)}, got {json.dumps(strategy)}",
            toml_path,
        )
    shared = task_dir / "tests"
    shared = inside(task_id, "tests", task_dir, "tests") if shared.is_dir() else None
    agent_s = _timeout(task_id, _table(task_id, data, "agent", toml_path), "agent", toml_path, None)
    test_s = _timeout(
        task_id,
        _table(task_id, data, "verifier", toml_path),
        "verifier",
        toml_path,
        HARBOR_TEST_TIMEOUT_S,
    )
    top_solve = task_dir / "solution" / "solve.sh"
    steps, builds, seen = [], [], set()
    for i, raw_step in enumerate(raw):
        name = _step_name(task_id, i, raw_step, seen, toml_path)
        _step_lines(task_id, i, raw_step, toml_path)
        where = f"steps/{name}"
        root = inside(task_id, where, task_dir, where)
        if not root.is_dir():
            raise TaskError(task_id, where, "is missing (the step's folder)", root)
        instruction = _instruction(task_id, task_dir, f"{where}/instruction.md")
        own = root / "tests" if (root / "tests").is_dir() else None
        if own is not None:
            inside(task_id, f"{where}/tests", task_dir, f"{where}/tests")
            files_inside(task_id, f"{where}/tests", task_dir, own)
        if shared is not None:
            files_inside(task_id, "tests", task_dir, shared)
        test_sh = next(
            (d / "test.sh" for d in (own, shared) if d is not None and (d / "test.sh").is_file()),
            None,
        )
        if test_sh is None:
            raise TaskError(
                task_id,
                f"{where}/tests/test.sh",
                "is missing, and so is the task's tests/test.sh (harbor's verifier script)",
                root,
            )
        tests = _merged_tests(task_id, name, shared, own)
        text = test_sh.read_text(encoding="utf-8", errors="replace")
        build, _, script = split_test_sh(task_id, text, tests)
        builds.append(build)
        agent = _table(task_id, raw_step, "agent", toml_path)
        verifier = _table(task_id, raw_step, "verifier", toml_path)
        env = {**verifier_env, **env_table(task_id, verifier, f"steps[{i}].verifier", toml_path)}
        if env:
            head, _, body = script.partition("\n")
            script = f"{head}\n{_env_prefix(env)}{body}"
        solve = root / "solution" / "solve.sh"
        if (root / "solution").is_dir() and not solve.is_file():
            raise TaskError(
                task_id, f"{where}/solution/solve.sh", "is missing from the step's solution/", root
            )
        solve = solve if solve.is_file() else top_solve if top_solve.is_file() else None
        workdir = root / "workdir"
        if workdir.is_dir():
            files_inside(task_id, f"{where}/workdir", task_dir, workdir)
        steps.append(
            Step(
                name=name,
                instruction=instruction,
                tests_dir=tests,
                verifier_script=script,
                test_timeout_s=_timeout(
                    task_id, verifier, f"steps[{i}].verifier", toml_path, test_s
                ),
                agent_timeout_s=_timeout(task_id, agent, f"steps[{i}].agent", toml_path, agent_s),
                solution=solve,
                solution_dir=solve.parent if solve is not None else None,
                workdir_dir=workdir if workdir.is_dir() else None,
                min_reward=_min_reward(task_id, i, raw_step.get("min_reward"), toml_path),
            )
        )
    if not steps:
        raise TaskError(task_id, "steps", "is empty", toml_path)
    build = "".join(dict.fromkeys(b for b in builds if b)) or None
    return tuple(steps), build, strategy


async def prepare_step(sb, task_id: str, step: Step, timeout_s: float) -> None:
    """Before a step's turns (rollout.py) or its oracle (tasks validate): its workdir/ files copied
    into the working directory of `sb` (a sandbox.Sandbox), then its setup.sh run there, each
    command within timeout_s seconds (harbor MultiStepTrial._upload_step_workdir, _run_step_setup).
    Raises RuntimeError naming the task and step when setup.sh fails or times out (harbor aborts
    the trial there)."""
    if step.workdir_dir is None:
        return
    workdir = (await sb.exec("pwd", timeout=timeout_s)).output.strip() or "/"
    root = Path(step.workdir_dir)
    for f in sorted(root.rglob("*")):
        if f.is_file():
            rel = f.relative_to(root).as_posix()
            await sb.write_file(
                f"{workdir.rstrip('/')}/{rel}", f.read_bytes(), f.stat().st_mode & 0o777
            )
    if (root / "setup.sh").is_file():
        r = await sb.exec(
            f"bash {shlex.quote(workdir.rstrip('/') + '/setup.sh')}", timeout=timeout_s
        )
        if r.exit_code != 0 or r.timed_out:
            raise RuntimeError(
                f"task {task_id} step {step.name}: workdir/setup.sh exited {r.exit_code}"
                f"{' (timed out)' if r.timed_out else ''}: {r.output[-500:]}"
            )


def load_harbor(task_dir: Path, data: dict | None = None, per_test_credit: bool = False) -> Task:
    """A Harbor task folder -> Task (see the module docstring for what is taken from where).

    per_test_credit: score a Terminal-Bench-shaped all-or-nothing test.sh (one pytest run, its exit
    status the reward) per test with equal weights (partial credit) instead of as Harbor does (1.0
    only when every test passes); a task's own `[metadata.termrl] per_test_credit` wins.

    Raises TaskError naming the task and field: malformed task.toml, a missing instruction.md,
    environment/Dockerfile or tests/test.sh, a refused feature, bad resource values, a Dockerfile
    that copies the hidden tests, a compose field termrl does not support, and (pytest-shaped
    test.sh) what find_tests refuses.
    """
    task_dir = Path(task_dir)
    toml_path = task_dir / "task.toml"
    task_id, data = _task_id(task_dir, data, toml_path)
    meta_in = _table(task_id, data, "metadata", toml_path)
    env = _table(task_id, data, "environment", toml_path)
    verifier = _table(task_id, data, "verifier", toml_path)
    agent = _table(task_id, data, "agent", toml_path)
    solution = _table(task_id, data, "solution", toml_path)
    _refusals(task_id, data, env, verifier, toml_path)
    _field_lines(task_id, data, toml_path)
    credit = _per_test_credit(task_id, meta_in, per_test_credit, toml_path)
    verifier_env = env_table(task_id, verifier, "verifier", toml_path)
    steps, step_reward = (), "mean"
    if data.get("steps") is not None:
        if credit:
            log.warning(
                "task %s: per_test_credit is not taken: each step's test.sh is scored as harbor "
                "scores it",
                task_id,
            )
        steps, build, step_reward = _steps(task_id, task_dir, data, verifier_env, toml_path)
        instruction = steps[0].instruction
        fields = dict(
            weights=dict(SCRIPT_WEIGHTS),
            build_setup=build,
            test_setup=None,
            verifier_script=steps[0].verifier_script,
        )
    else:
        instruction = _instruction(task_id, task_dir)
        fields = _verification(task_id, task_dir, meta_in, toml_path, credit, verifier_env)
    dockerfile, context, compose = _dockerfile(task_id, task_dir, env, toml_path)
    hidden = task_dir.resolve() / "tests"
    inside = Path(context).resolve() in (hidden.parent, *hidden.parent.parents)  # not harbor's
    check_dockerfile(task_id, dockerfile, context, "tests" if inside else None)
    for side in compose.sidecars if compose else ():
        if side.dockerfile is not None:
            check_dockerfile(task_id, side.dockerfile, side.context_dir, None)
    solve = task_dir / "solution" / "solve.sh"
    solve = steps[0].solution if steps else solve if solve.is_file() else None
    overlay = _overlay(
        task_id,
        dockerfile,
        env_table(task_id, env, "environment", toml_path),
        _workdir(task_id, env, toml_path),
    )
    task = Task(
        id=task_id,
        instruction=instruction,
        difficulty=difficulty_field(
            task_id, meta_in.get("difficulty", "unknown"), toml_path, "metadata.difficulty"
        ),
        category=str(meta_in.get("category") or HARBOR_CATEGORY),
        tags=tags_field(task_id, meta_in.get("tags"), toml_path),
        path=task_dir,
        dockerfile=overlay,
        context_dir=context,
        tests_dir=steps[0].tests_dir if steps else task_dir / "tests",
        solution=solve,
        solution_env=env_table(task_id, solution, "solution", toml_path),
        agent_timeout_s=_timeout(task_id, agent, "agent", toml_path, None),
        test_timeout_s=_timeout(task_id, verifier, "verifier", toml_path, HARBOR_TEST_TIMEOUT_S),
        meta=_meta(task_id, meta_in, env, "allowed_prepass" in fields),  # exported
        solution_dir=solve.parent if solve is not None else None,
        cpus=_resource(task_id, env, "cpus", None, toml_path),
        memory_mb=_resource(task_id, env, "memory_mb", "memory", toml_path),
        storage_mb=_resource(task_id, env, "storage_mb", "storage", toml_path),
        sidecars=compose.sidecars if compose else (),
        service_names=compose.names if compose else (),
        steps=steps,
        step_reward=step_reward,
        **fields,
    )
    for step in steps:  # every step's oracle folder is checked as the first one's
        check_task_paths(
            dataclasses.replace(task, solution=step.solution, solution_dir=step.solution_dir),
            (overlay_dir(),),
        )
    return check_task_paths(task, (overlay_dir(),))


# ---------------------------------------------------------------- export

EXPORT_MARK = "# termrl-export: weighted pytest"  # the first comment of an exported test.sh
_EXPORT_SCORE = r"""
import json, xml.etree.ElementTree as ET
weights = json.loads(WEIGHTS)
cases = {}
try:
    root = ET.parse("/logs/verifier/junit.xml").getroot()
except (OSError, ET.ParseError) as e:
    raise SystemExit(f"no JUnit report from pytest: {e}")
for c in root.iter("testcase"):
    skip = [x for x in c if x.tag == "skipped" and x.get("type") != "pytest.xfail"]
    bad = bool(skip) or any(x.tag in ("failure", "error") for x in c)
    cases[c.get("name")] = cases.get(c.get("name"), True) and not bad
parts = {}
for k in weights:  # a key without brackets covers its parametrized cases (termrl reward.verify)
    hits = [ok for n, ok in cases.items() if n == k or ("[" not in k and n.startswith(k + "["))]
    parts[k] = 1.0 if hits and all(hits) else 0.0
score = sum(weights[k] * parts[k] for k in weights) / sum(weights.values())
json.dump({"reward": score, **parts}, open("/logs/verifier/reward.json", "w"))
open("/logs/verifier/reward.txt", "w").write(f"{score}\n")
"""


def _q(s: str) -> str:
    return json.dumps(s)  # an ASCII JSON string is a TOML basic string


def _export_test_sh(task: Task) -> str:
    weights = json.dumps(task.weights, sort_keys=True)
    lines = [
        "#!/bin/bash",
        EXPORT_MARK + " (tasks/harbor.py export_harbor); per-test parts in reward.json",
        "mkdir -p /logs/verifier",
    ]
    if task.test_setup:
        lines += ["(", task.test_setup.rstrip(), ") || exit 1"]
    lines += [
        "python3 -m pytest /tests -rA -p no:cacheprovider --junitxml=/logs/verifier/junit.xml",
        f"WEIGHTS={shlex.quote(weights)} python3 - <<'TERMRL_SCORE'",
        _EXPORT_SCORE.strip().replace(
            "json.loads(WEIGHTS)", "json.loads(__import__('os').environ['WEIGHTS'])"
        ),
        "TERMRL_SCORE",
        "",
    ]
    return "\n".join(lines)


def _export_toml(task: Task) -> str:
    lines = [
        'version = "1.0"',
        "",
        "[task]",
        f"name = {_q('termrl/' + task.id)}",
        "",
        "[metadata]",
        f"difficulty = {_q(task.difficulty)}",
        f"category = {_q(task.category)}",
        f"tags = [{', '.join(_q(t) for t in task.tags)}]",
    ]
    for key, value in sorted(task.meta.items()):
        if key not in ("difficulty", "category", "tags", "termrl"):
            lines.append(f"{_q(key)} = {_q(value)}")
    lines += ["", "[verifier]", f"timeout_sec = {float(task.test_timeout_s)!r}"]
    if task.agent_timeout_s:
        lines += ["", "[agent]", f"timeout_sec = {float(task.agent_timeout_s)!r}"]
    # No network line: harbor 0.25 reads `allow_internet = false` as network_mode "no-network",
    # which its Docker environment enforces with an egress-control sidecar image pulled from a
    # registry. termrl's sandboxes have no network whatever task.toml says (sandbox.py).
    lines += [
        "",
        "[environment]",
        "# termrl runs it without network; harbor's default (public) needs no egress image",
    ]
    termrl = {"weights": task.weights}
    for key in ("allowed_prepass", "max_turns", "build_setup", "test_setup"):
        if getattr(task, key):
            termrl[key] = getattr(task, key)
    lines += ["", "[metadata.termrl]"] + [f"{key} = {_toml_value(v)}" for key, v in termrl.items()]
    return "\n".join(lines) + "\n"


def _toml_value(v) -> str:
    """A str, int, float or flat dict of them as TOML (JSON numbers and ASCII strings are
    TOML's)."""
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_q(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"
    return _q(v) if isinstance(v, str) else repr(float(v)) if isinstance(v, float) else str(int(v))


def _copy_entry(src: Path, dest: Path) -> None:
    """A file's bytes, or a symlink as the same link (never followed: its target may be a path in
    the container, or a host file the export must not read)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if src.is_symlink():
        dest.symlink_to(os.readlink(src))
    else:
        dest.write_bytes(src.read_bytes())


def export_harbor(tasks: list[Task], out_dir: Path) -> list[Path]:
    """Write each task as a Harbor task folder out_dir/<id>/: task.toml ([task].name "termrl/<id>",
    [metadata] difficulty/category/tags and the task's meta, timeouts, `[metadata.termrl]` weights
    and the other termrl fields), instruction.md, environment/ (the Dockerfile and its build
    context, without the hidden tests and the oracle), tests/ (the hidden tests and a test.sh that
    runs them with pytest from the WORKDIR, then writes the weighted score to reward.txt and
    {"reward": score, <test>: 0/1 ...} to reward.json), solution/solve.sh. Loading the folder back
    (load_harbor) gives the same task. Raises FileExistsError when out_dir/<id> exists. Returns the
    folders written.
    """
    written = []
    for task in tasks:
        root = Path(out_dir) / task.id
        if root.exists():
            raise FileExistsError(f"export-harbor: {root} exists; export into an empty folder")
        skip = {Path(task.tests_dir).resolve(), Path(task.path, "task.toml").resolve()}
        if task.solution is not None:
            skip.add(Path(task.solution).resolve())
        env = root / "environment"
        env.mkdir(parents=True)
        for p in sorted(Path(task.context_dir).rglob("*")):
            if (
                (p.is_file() or p.is_symlink())
                and not any(p.resolve() == s or s in p.resolve().parents for s in skip)
                and "__pycache__" not in p.parts
            ):
                _copy_entry(p, env / p.relative_to(task.context_dir))
        (env / "Dockerfile").write_bytes(Path(task.dockerfile).read_bytes())
        (root / "tests").mkdir()
        for p in sorted(Path(task.tests_dir).rglob("*")):
            if (p.is_file() or p.is_symlink()) and "__pycache__" not in p.parts:
                _copy_entry(p, root / "tests" / p.relative_to(task.tests_dir))
        (root / "tests" / "test.sh").write_text(_export_test_sh(task))
        if task.solution is not None:
            (root / "solution").mkdir()
            (root / "solution" / "solve.sh").write_bytes(Path(task.solution).read_bytes())
        (root / "instruction.md").write_text(task.instruction + "\n", encoding="utf-8")
        (root / "task.toml").write_text(_export_toml(task), encoding="utf-8")
        written.append(root)
    return written
