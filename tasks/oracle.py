"""A task's oracle as turns: the steps a reactive oracle acts out one per turn through the agent loop
(agent/oracle.py), read from the task's own files.

Two sources, in this order:

- `oracle_turns.json` in the task folder (the procedurally generated tasks write it), found and checked
  by the loader (Task.oracle_turns; tasks/checks.read_oracle_turns is the one validator):
  `{"steps": [{"command": "<template>", "capture": {"<var>": "<regex with one group>"}}, ...]}`.
  Step i's command is `command.format(**vars)` with the vars captured from earlier steps' outputs;
  each capture regex is searched (`re.search`) in the output of its own step's command and its
  group 1 becomes the var. Literal braces in a command are written `{{` and `}}` (str.format).
- The task's solution script (solution.sh, Harbor solution/solve.sh), split into its top-level
  commands, one turn each (`split_script`): bash itself (`bash -n`) decides where a command is
  complete, so heredocs, if/for/while blocks, functions, quotes and line continuations stay whole.
  The whole script becomes one turn instead when acting it out line by line in one persistent shell
  could differ from running it as a script: it reads or ends itself as a script (`$0`, `$1`.., `$@`,
  `$#`, `BASH_SOURCE`, `exit`, `return`), its solution folder has side files (the agent's sandbox has
  no /solution), or it has more commands than the turns allow. Lines that only set shell options
  (`set -euo pipefail`, `set -x`) are not acted out: an agent at a terminal does not type them, and in
  the episode's one persistent shell they would outlive the script (`SCRIPT_OPTIONS`).

Steps are plain dicts {"command": str, "capture": {var: regex}} so that agent/oracle.py needs nothing
of tasks/.
"""

import re
import subprocess
from pathlib import Path

from tasks.checks import read_oracle_turns
from tasks.task import Task, TaskError

# a line that only sets shell options: `set -e`, `set -euo pipefail`, `set +x`
SCRIPT_OPTIONS = re.compile(r"set(\s+[-+][a-zA-Z]*(o\s+\w+)?)+\s*(#.*)?")
# what makes a script differ from its lines typed into one shell: it reads its own arguments or
# name, or ends itself (searched outside heredoc bodies and single quotes, `shell_text`)
AS_SCRIPT = re.compile(r"\$\{?(0|[1-9]|@|#|\*)|BASH_SOURCE|(^|[;&|(\s])exit(\s|;|$)")
# a heredoc operator and its delimiter word: <<EOF, <<-EOF, <<'EOF', <<"EOF"
HEREDOC = re.compile(r"<<(-?)\s*['\"]?([A-Za-z_][\w.-]*)['\"]?")


def shell_text(command: str) -> str:
    """`command` without its heredoc bodies and single-quoted strings: the text bash itself reads
    as code (a python heredoc's `return`, awk's '{print $1}' are data)."""
    lines = []
    pending: list[tuple[str, bool]] = []
    for line in command.splitlines():
        if pending:
            word, tabs = pending[0]
            if (line.lstrip("\t") if tabs else line) == word:
                pending.pop(0)
            continue
        lines.append(line)
        pending = [(m.group(2), m.group(1) == "-") for m in HEREDOC.finditer(line)]
    return re.sub(r"'[^']*'", "''", "\n".join(lines))


def _complete(source: str) -> bool:
    """Whether bash parses `source` as complete commands: `bash -n` neither reaches the end of the
    input inside a construct nor ends a here-document at end of file."""
    r = subprocess.run(["bash", "-n"], input=source, capture_output=True, text=True, timeout=30)
    return r.returncode == 0 and "here-document" not in r.stderr


def split_script(source: str) -> list[str]:
    """The top-level commands of a bash script, in order: lines accumulated until bash parses them
    as complete (`bash -n`), without blank lines, comment lines, the shebang and option-only lines
    (SCRIPT_OPTIONS). A multi-line construct (heredoc, if/for/while, function, quoted newline,
    trailing backslash) stays one command. Raises ValueError when the script never parses complete
    (a syntax error), naming the line it starts at."""
    commands = []
    chunk: list[str] = []
    start = 0
    for n, line in enumerate(source.splitlines(), 1):
        stripped = line.strip()
        skip = not stripped or stripped.startswith("#") or SCRIPT_OPTIONS.fullmatch(stripped)
        if not chunk and skip:
            continue
        if not chunk:
            start = n
        chunk.append(line)
        text = "\n".join(chunk)
        # a line continued by a backslash: bash -n accepts it at the end of its input
        if not line.endswith("\\") and _complete(text + "\n"):
            commands.append(text)
            chunk = []
    if chunk:
        raise ValueError(f"script: the command starting at line {start} does not parse (bash -n)")
    return commands


def _escape(command: str) -> str:
    """A literal command as a str.format template (no captures read)."""
    return command.replace("{", "{{").replace("}", "}}")


def solution_turns(task: Task, max_turns: int) -> list[dict]:
    """The task's solution script as steps: one per top-level command (split_script), or the whole
    script in one step when acting it out line by line could differ from running it (see the module
    docstring) or it has more than max_turns - 1 commands (one turn is left for DONE).
    Raises TaskError when the task has no solution or its script does not parse."""
    if task.solution is None:
        raise TaskError(
            task.id, "solution", "no solution script and no oracle_turns.json", task.path
        )
    if task.solution_env:
        # solution.sh's turns run as the agent's commands, which never carry the oracle's variables
        raise TaskError(
            task.id,
            "solution.env",
            f"{sorted(task.solution_env)}: a solution with its own variables cannot be acted out as "
            "turns (the agent's commands carry none)",
            task.path,
        )
    source = Path(task.solution).read_text()
    body = "\n".join(line for line in source.splitlines() if not line.startswith("#!")).strip()
    try:
        commands = split_script(source)
    except ValueError as e:
        raise TaskError(task.id, "solution", str(e), task.solution) from None
    side_files = task.solution_dir is not None and any(
        p.is_file() and p != Path(task.solution) for p in Path(task.solution_dir).rglob("*")
    )
    as_script = any(AS_SCRIPT.search(shell_text(c)) for c in commands)
    whole = as_script or side_files or len(commands) + 1 > max_turns
    if whole or not commands:
        commands = [body]
    return [{"command": _escape(c), "capture": {}} for c in commands]


def oracle_steps(task: Task, max_turns: int) -> list[dict]:
    """The steps the reactive oracle acts out for `task`: its oracle_turns.json when the loader found
    one (Task.oracle_turns, read by tasks/checks.read_oracle_turns, the validator the loader ran), else
    its solution script (solution_turns). max_turns: the episode's turn limit (the task's max_turns or
    the rollout's). Raises TaskError naming the task and field when neither exists, the file is
    malformed, the steps and DONE do not fit in max_turns, or the task is multi-step (Task.steps)."""
    if task.steps:
        # the reactive oracle replays one instruction's turns; a later step's instruction arrives
        # mid-episode, which its turn-indexed replies do not follow
        raise TaskError(
            task.id,
            "steps",
            f"{len(task.steps)} steps: a multi-step task's oracle acts its steps' solutions "
            "(evaluate --oracle), not as demonstration turns",
            task.path,
        )
    if task.oracle_turns is None:
        return solution_turns(task, max_turns)
    steps = read_oracle_turns(task.id, Path(task.oracle_turns))
    if len(steps) + 1 > max_turns:
        raise TaskError(
            task.id,
            "steps",
            f"{len(steps)} steps and DONE need {len(steps) + 1} turns; the episode allows {max_turns} "
            "(raise --rollout.max-turns; a task's own max_turns, when lower, wins)",
            task.oracle_turns,
        )
    return steps
