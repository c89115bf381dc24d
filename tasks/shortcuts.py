"""The shortcut suite: instance-agnostic commands tried on generated instances (tasks/family.py) in a real
sandbox, beside the oracle acted out turn by turn. A family whose instances need their turns resolves at
most SHORTCUT_MAX of them with any one shortcut, and 100% with the oracle.

Two kinds of shortcut, each a template filled only from what the instruction names (the first command's
argument: the start note, the start program and its number, the start key; and the area /app/<name>):
- dumps (DUMPS): one command that prints the area's files or runs its programs wholesale, then an ideal
  reader writes the answer: resolved when every record the oracle read (the line its capture matched)
  is visible in the dump's observation as the policy would see it: the sandbox's output cap (head and
  tail of output_limit_bytes), then the rollout's observation cut (head and tail of OBSERVATION_TOKENS,
  an upper bound of the preset's cut, which keeps half the context left after the prompt and the turn).
- one-command solvers (SOLVERS): loops and pipelines that follow the chain and write the answer file
  themselves, in one turn: resolved when the answer file then holds exactly the code (the hidden test's
  rule, tasks/family.hidden_test). Among them `shape-oracle-1turn`: the oracle of a 1-hop instance
  written for the shape and not the instance (it drops stale records by their marks and keeps the code).

Each template's tokens (the policy's tokenizer) are reported beside its rate: the cpu-learn-multiturn
preset cuts a turn at max_tokens_per_turn, so a template above it cannot be issued as one turn there; the
suite runs it all the same, so that its rate bounds what a longer turn could do.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from agent.actions import ToolCall
from agent.tools import cut_middle, run_tool
from tasks.checks import read_oracle_turns
from tasks.family import ANSWER

# a shortcut may resolve at most this share of the instances
SHORTCUT_MAX = 0.05
# tokens an observation keeps at most: the preset's context (2048) less one turn (48), halved, the
# rollout's cut of a long observation (rollout.py: cut_to = budget // 2) before the prompt takes its share
OBSERVATION_TOKENS = (2048 - 48) // 2
# seconds a one-command solver may run (a loop that follows a cycle of decoys is cut here): one cut
# short is listed in SuiteResult.timed_out, so its "not resolved" is never read as a measurement
COMMAND_TIMEOUT_S = 3.0
# seconds a dump or an oracle read may run: one cut short raises (the suite's figure would be a guess)
READ_TIMEOUT_S = 60.0

# {arg}: the argument of the instance's first command (note path, `program number`, key); {area}
DUMPS = {
    "grep-r": "grep -r . {area}",
    "cat-all": "cat $(find {area} -type f)",
    "find-exec-cat": "find {area} -type f -exec cat {{}} +",
    "glob-run": "for f in $(find {area} -name '*.sh'); do bash $f; done",
    "grep-marks": "grep -rhE 'current|active|live|valid|in use|latest' {area}",
}
SOLVERS = {
    "follow-next": (
        "f={arg}; while n=$(grep -oP '^next: \\K\\S+' $f | head -1); do f=$n; done; "
        "grep -oP '^code: \\K\\S+' $f | head -1 > /app/answer.txt"
    ),
    "follow-next-marked": (
        "f={arg}; while n=$(grep -vE 'ked|red|old|void|sed' $f | grep -oP '^next: \\K\\S+'); "
        "do f=$n; done; grep -vE 'ked|red|old|void|sed' $f | grep -oP '^code: \\K\\S+' > /app/answer.txt"
    ),
    "run-chain": (
        "c='{arg}'; while n=$(bash $c | grep -oP '^next: \\K\\S+ \\d+' | head -1); do c=$n; done; "
        "bash $c | grep -oP '^code: \\K\\S+' | head -1 > /app/answer.txt"
    ),
    "run-all": (
        "for f in $(find {area} -name '*.sh'); do bash $f; done | grep -oE '[a-z]+-[0-9]{{4}}' "
        "| head -1 > /app/answer.txt"
    ),
    "grep-loop": (
        'k={arg}; while v=$(grep -rhw $k {area} | grep -oP "^$k: @\\K\\w+" | head -1); do k=$v; done; '
        'grep -rhw $k {area} | grep -oP "^$k: \\K[a-z]+-\\d+" | head -1 > /app/answer.txt'
    ),
    "shape-oracle-1turn": (
        "{first} | grep -vE 'ked|red|old|void|sed' | grep -oE '[a-z]+-[0-9]{{4}}' > /app/answer.txt"
    ),
}


@dataclass
class SuiteResult:
    """One instance's outcomes: shortcut name -> resolved; the oracle's tests' score; tokens per
    shortcut as filled for this instance; seconds."""

    task_id: str
    resolved: dict[str, bool] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    oracle_score: float = 0.0
    seconds: float = 0.0
    timed_out: list[str] = field(default_factory=list)  # solvers cut at COMMAND_TIMEOUT_S


def fields(task) -> dict[str, str]:
    """The template fields of a task from its oracle's first command (what the instruction names):
    first (the command), arg (its argument: after `cat `/`bash `, or the key of `grep -rhw KEY AREA`)
    and area (/app/<name>). Raises ValueError naming the task when the command has no /app/ path."""
    steps = read_oracle_turns(task.id, task.oracle_turns)
    first = steps[0]["command"]
    area = re.search(r"/app/\w+", first)
    if area is None:
        raise ValueError(f"{task.id}: the first oracle command {first!r} names no /app/ area")
    verb, _, rest = first.partition(" ")
    arg = rest.split(" ")[1] if verb == "grep" else rest
    return {"first": first, "arg": arg, "area": area.group(0)}


def answer_resolves(text: str, code: str) -> bool:
    """The hidden test's rule (tasks/family.hidden_test): the answer file holds exactly the code, one
    trailing newline allowed."""
    return text in (code, code + "\n")


def _match(regex: str, text: str, what: str) -> re.Match:
    """re.search(regex, text), or ValueError naming `what` (the instance and step) when it finds nothing."""
    m = re.search(regex, text)
    if m is None:
        raise ValueError(
            f"{what}: the capture {regex!r} matches nothing in the output {text[-300:]!r}"
        )
    return m


def read_records(steps: list[dict], outputs: list[str], task_id: str = "") -> list[str]:
    """The lines the oracle's captures matched, one per read: what an ideal reader of a dump must see.
    Raises ValueError naming the task and step when a capture matches nothing."""
    lines = []
    for i, (step, text) in enumerate(zip(steps, outputs)):
        for regex in step["capture"].values():
            lines.append(_match(regex, text, f"{task_id} oracle step {i}").group(0))
    return lines


async def _exec(sb, command: str, limit_bytes: int, timeout_s: float) -> tuple[str, bool]:
    """(the bash tool's text, whether the command was cut at timeout_s)."""
    call = ToolCall("bash", {"command": command})
    deadline = time.monotonic() + timeout_s + 10
    text, meta = await run_tool(sb, call, deadline, timeout_s, limit_bytes)
    return text, bool(meta["timed_out"])


async def _read(sb, command: str, limit_bytes: int, what: str) -> str:
    """A dump or an oracle read: its text; RuntimeError naming `what` when it ran past READ_TIMEOUT_S."""
    text, timed_out = await _exec(sb, command, limit_bytes, READ_TIMEOUT_S)
    if timed_out:
        raise RuntimeError(
            f"{what}: `{command}` ran past {READ_TIMEOUT_S:.0f} s; no figure from it"
        )
    return text


async def run_suite(task, sb, tokenizer, code: str, limit_bytes: int) -> SuiteResult:
    """Every shortcut, then the oracle turn by turn, in the open sandbox `sb` of `task` (tasks/family.py
    instance with secret `code`); the answer file is removed before each one-command solver and before
    the oracle; the caller scores the oracle with the task's hidden tests (oracle_score). tokenizer: the
    policy's (HF); limit_bytes: the sandbox's output cap (configs.SandboxConfig.output_limit_bytes).
    Raises RuntimeError when a dump or an oracle read runs past READ_TIMEOUT_S, ValueError when an oracle
    capture matches nothing; a solver cut at COMMAND_TIMEOUT_S is listed in timed_out."""
    start = time.monotonic()
    out = SuiteResult(task.id)
    values = fields(task)
    steps = read_oracle_turns(task.id, task.oracle_turns)
    # the oracle first, read-only: its reads give the records a dump must show
    captured: dict[str, str] = {}
    outputs = []
    for i, step in enumerate(steps[:-1]):
        what = f"{task.id} oracle step {i}"
        text = await _read(sb, step["command"].format(**captured), limit_bytes, what)
        outputs.append(text)
        for var, regex in step["capture"].items():
            captured[var] = _match(regex, text, what).group(1)
    needed = read_records(steps, outputs, task.id)
    for name, template in DUMPS.items():
        command = template.format(**values)
        out.tokens[name] = len(tokenizer.encode(command, add_special_tokens=False))
        text = await _read(sb, command, limit_bytes, f"{task.id} dump {name}")
        seen, _, _ = cut_middle(tokenizer, f"$ {command}\n{text}", OBSERVATION_TOKENS)
        out.resolved[name] = all(line in seen for line in needed)
    for name, template in SOLVERS.items():
        command = template.format(**values)
        out.tokens[name] = len(tokenizer.encode(command, add_special_tokens=False))
        await sb.exec(f"rm -f {ANSWER}", timeout=30)
        _, timed_out = await _exec(sb, command, limit_bytes, COMMAND_TIMEOUT_S)
        if timed_out:
            out.timed_out.append(name)
        answer = await sb.exec(f"cat {ANSWER} 2>/dev/null", timeout=30)
        out.resolved[name] = answer_resolves(answer.output, code)
    await sb.exec(f"rm -f {ANSWER}", timeout=30)
    await _read(sb, steps[-1]["command"].format(**captured), limit_bytes, f"{task.id} oracle write")
    out.seconds = time.monotonic() - start
    return out


def rates(results: list[SuiteResult]) -> dict[str, float]:
    """Shortcut name -> share of the instances it resolved; 'any' -> share resolved by at least one."""
    n = len(results)
    names = list(results[0].resolved) if results else []
    out = {name: sum(r.resolved[name] for r in results) / n for name in names}
    out["any"] = sum(any(r.resolved.values()) for r in results) / n if n else 0.0
    return out
