"""The reading path of one training step, traced from the code: DESIGN.md's "Reading one step".

    python3 scripts/trace_step.py                 # trace one step; print the table and the plumbing
    python3 scripts/trace_step.py --write-design  # ... and rewrite DESIGN.md's section in place
    python3 scripts/trace_step.py --json PATH     # ... and write the trace to PATH as JSON

About 50 s of CPU (SmolLM2-135M loaded, two episodes, one update); needs Docker and the model.

One synchronous colocated step of `train.py` (world size 1 through the path train.py takes without
torchrun, the torch engine, the embedded default policy, real task containers) runs in this
process under a trace hook (sys.settrace, and threading.settrace for the threads it
starts). Every function of the project that ran (a file under the repository root, tests/ and
scripts/ aside) is listed in the order it was first called, with its file and its length in
lines read from the source with `ast` (the `def` line to the last line of its body). A nested
function, lambda or comprehension counts as the function it sits in. The reading path lists them
in the order each first ran outside the plumbing, which is the order the step reaches them.

PLUMBING names the functions a reader of the step may skip, each with the reason. An entry covers
the function it names and every function that ran only beneath it: called from it, directly or
not, including the asyncio tasks and worker threads it started (followed through
loop.create_task, executor submissions and Thread.start). A function that also ran outside every
plumbing entry belongs to the reading path. The reading path is everything else that ran: what
DESIGN.md's table lists, and what tests/test_structure.py checks against a fresh trace.

Functions are found by what ran, never by their file: PLUMBING names them by qualified name
(`setup`, `Sandbox.exec`), so a function moved to another file keeps its entry.
"""

import argparse
import ast
import asyncio.base_events
import asyncio.events
import concurrent.futures.thread
import dataclasses
import json
import os
import re
import sys
import tempfile
import textwrap
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# not the project's code: the tests and the scripts (this one among them)
EXCLUDED = ("tests", "scripts")

# The step traced: the default preset (`make train`) cut to one task, two episodes of two turns,
# on one rank. Groups without reward variance are kept so that the update always runs.
TRAIN_ARGS = [
    "--preset",
    "cpu-smollm2",
    "--steps",
    "1",
    "--tasks-per-step",
    "1",
    "--grpo.group-size",
    "2",
    "--rollout.max-turns",
    "2",
    "--rollout.max-tokens-per-turn",
    "48",
    "--task-ids",
    "write-hello-file",
    "--grpo.no-drop-zero-variance-groups",
]

# The functions a reader of the step may skip, by qualified name ("setup", "Sandbox.exec"; a class
# name covers its methods), each with the reason. An entry covers what ran only beneath it too.
PLUMBING: dict[str, str] = {
    # once per run, around the steps
    "parse_cli": "argument parsing and config validation, once per run",
    "load_task_set": "the task folders loaded and checked, once per run",
    "plan_start": "what a start continues (the resume rules), once per run",
    "run_complete": "whether a resumed run has steps left, once per run",
    "check_layout": "the config checked against the world size, once per run",
    "setup": "set-up, once per run: process group, policy, optimizer, engine, Docker hosts "
    "(training/setup.py)",
    "finish": "after the last step: the HF export and the reward curve",
    "teardown": "after the last step: engine closed, containers reaped",
    # beside the step
    "agreed_stop": "the stop signal, agreed over the ranks (a clean Ctrl-C)",
    "StopFlag": "the stop signal (a clean Ctrl-C)",
    "Run.say": "logging: a line from rank 0",
    "_Progress": "logging: the rollout's progress bar",
    "UpdateProgress": "logging: the update's progress bar",
    "install_log_sanitiser": "logging: container text escaped in every log record, once per run "
    "(bookkeeping/sanitise.py)",
    "reduce_metrics": "logging: the update's metrics summed over micro-batches and ranks",
    "_ratio_metrics": "logging: the clip fractions and ratio statistics of the step's record",
    "gather_peak_rss": "memory accounting, for the launcher's report",
    "release_free_memory": "memory: freed pages handed back to the OS",
    "resume_state": "checkpointing: the sampler's and RNGs' state a checkpoint saves",
    "checkpoint": "checkpointing, every save_every steps and after the last",
    "_build_failed": "error handling: a task whose image failed to build gives failed episodes",
    "labels": "the labels leftover containers are reaped by (sandboxing/reaping.py)",
    # what the step calls but does not follow: each has its own home, read apart
    "TorchEngine": "the generation engine (KV cache, continuous batching, prompt-lookup drafts, "
    "sampling) behind Engine.generate, as vLLM is on GPUs (engines/)",
    "stop_ids_of": "the tokenizer's end-of-turn token ids (hf/chat.py)",
    "markdown_stop_check": "where a markdown reply ends, checked by the engine as it decodes "
    "(agent/actions.py)",
    "parse_actions": "the action format's parser: a reply's bash blocks or tool calls into "
    "ToolCalls (agent/actions.py)",
    "Transformer.forward": "the decoder (model.py, read as nanoGPT's); the update needs its log-probs",
    "Block": "the decoder's blocks, run again in the backward pass (activation checkpointing)",
    "_LogprobsEntropy": "log-softmax and entropy in chunks, forward and backward, to save memory "
    "(model.py)",
    "build_images": "the task's image, built once and cached (sandboxing/images.py)",
    "acquire": "placement over several Docker engines (sandboxing/hosts.py); one here",
    "release": "placement over several Docker engines (sandboxing/hosts.py); one here",
    "client": "the docker-py client of an engine, one per process (sandboxing/hosts.py)",
    "Shell": "the persistent shell's wire protocol (sandboxing/shell.py)",
    "ShellSession": "the persistent shell's wire protocol (sandboxing/shell.py)",
    "DiskWatch": "the sandbox's disk cap, watched from a thread (sandboxing/disk.py)",
    "Sandbox._check_open": "the sandbox's disk cap, checked before each call (sandboxing/disk.py)",
    "blocking": "Docker calls in worker threads behind a limit per engine (sandboxing/calls.py)",
    "host_config": "the container's isolation settings: caps, limits, no network "
    "(sandboxing/limits.py, read with DESIGN.md's guarantees)",
    "run_tests_blocking": "the verifier's container: snapshot, toolchain, pytest, the JUnit report "
    "(sandboxing/verifier.py)",
    "Sandbox.close": "the container removed after its episode",
}

SECTION = "## Reading one step"


def entry_of(qualname: str, plumbing: dict[str, str]) -> str | None:
    """The entry of `plumbing` naming function `qualname`: itself, or a class it is a method of
    ("Sandbox" names "Sandbox.exec"); None when none does."""
    parts = qualname.split(".")
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        if name in plumbing:
            return name
    return None


@dataclasses.dataclass
class Function:
    """One project function that ran: where it is, how long, and how it was reached."""

    file: str
    qualname: str
    lines: int = 0
    # the nearest project function it was called from: at its first call outside the plumbing
    # (or at its first call, if it never ran outside it); "" for the first
    caller: str = ""
    # when it first ran outside the plumbing: its place in the reading path (0: never)
    opened: int = 0
    # the PLUMBING entries it ran beneath; empty when it also ran outside all of them
    covered_by: set = dataclasses.field(default_factory=set)
    # it ran at least once outside every PLUMBING entry
    open: bool = False

    @property
    def key(self) -> str:
        return f"{self.file}::{self.qualname}"


class Tracer:
    """A trace hook that records the project functions called, in first-call order, and for each
    whether it ever ran outside the PLUMBING entries. A call's ancestry is its frame's f_back chain,
    continued from an asyncio task's, an executor work item's or a thread's creator. The hook
    returns None, so frames are not traced line by line (sys.settrace then costs one call per
    Python call; sys.setprofile would add one per C call)."""

    def __init__(self, root: Path, plumbing: dict[str, str]):
        self.root = str(root) + os.sep
        self.excluded = tuple(self.root + d + os.sep for d in EXCLUDED)
        self.plumbing = plumbing
        self.functions: dict[tuple[str, str], Function] = {}
        # the code object of each function's first call
        self.first_code: dict[tuple[str, str], object] = {}
        # code object -> (file, outer qualname), or None for code outside the project
        self._keys: dict = {}
        self._entries: dict[str, str | None] = {}
        self._opened = 0
        # the creator's (plumbing entry or None, nearest project function) by id of the asyncio
        # task's coroutine, the executor's work item or the thread
        self._origins: dict[int, tuple[str | None, str]] = {}
        self._work_item_init = concurrent.futures.thread._WorkItem.__init__.__code__
        self._work_item_run = concurrent.futures.thread._WorkItem.run.__code__
        self._thread_start = threading.Thread.start.__code__
        self._handle_run = asyncio.events.Handle._run.__code__
        self._create_task = asyncio.base_events.BaseEventLoop.create_task.__code__

    def _key(self, code) -> tuple[str, str] | None:
        try:
            return self._keys[code]
        except KeyError:
            pass
        path = code.co_filename
        key = None
        if path.startswith(self.root) and not path.startswith(self.excluded):
            name = code.co_qualname
            if name != "<module>":
                # a nested function, lambda or comprehension counts as the function it sits in
                key = (os.path.relpath(path, self.root), name.split(".<locals>.", 1)[0])
        self._keys[code] = key
        return key

    def _origin(self, frame) -> tuple[str | None, str]:
        """(the nearest PLUMBING entry above `frame`, or None; the nearest project function
        above it, or "")."""
        caller = ""
        f = frame.f_back
        while f is not None:
            code = f.f_code
            key = self._key(code)
            if key is not None:
                if not caller:
                    caller = key[1]
                entry = self.entry_of(key[1])
                if entry is not None:
                    return entry, caller
            elif code is self._handle_run:
                # an asyncio callback: a task's step continues its creator's ancestry
                step = f.f_locals["self"]._callback
                task = getattr(step, "__self__", None)
                coro = task.get_coro() if isinstance(task, asyncio.Task) else None
                if id(coro) in self._origins:
                    return self._continued(id(coro), caller)
            elif code is self._work_item_run:
                item = f.f_locals["self"]
                if id(item) in self._origins:
                    return self._continued(id(item), caller)
            f = f.f_back
        return self._continued(id(threading.current_thread()), caller)

    def _continued(self, creator: int, caller: str) -> tuple[str | None, str]:
        entry, creators_caller = self._origins.get(creator, (None, ""))
        return entry, caller or creators_caller

    def entry_of(self, qualname: str) -> str | None:
        """The PLUMBING entry naming `qualname` (itself, or its class), or None (cached)."""
        if qualname not in self._entries:
            self._entries[qualname] = entry_of(qualname, self.plumbing)
        return self._entries[qualname]

    def hook(self, frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        key = self._key(code)
        if key is None:
            # where asyncio tasks, work items and threads begin, their creator's entry is kept
            if code is self._create_task:
                self._origins[id(frame.f_locals["coro"])] = self._origin(frame)
            elif code is self._work_item_init or code is self._thread_start:
                self._origins[id(frame.f_locals["self"])] = self._origin(frame)
            return
        fn = self.functions.get(key)
        if fn is not None and fn.open:
            return
        entry, caller = self._origin(frame)
        if fn is None:
            fn = self.functions[key] = Function(key[0], key[1], caller=caller)
            self.first_code[key] = code
        named = self.entry_of(key[1])
        if named is not None:
            fn.covered_by.add(named)
        elif entry is None:
            fn.open = True
            fn.covered_by.clear()
            fn.caller = caller
            self._opened += 1
            fn.opened = self._opened
        else:
            fn.covered_by.add(entry)

    def start(self) -> None:
        threading.settrace(self.hook)
        sys.settrace(self.hook)

    def stop(self) -> None:
        sys.settrace(None)
        threading.settrace(None)


def definitions(path: Path) -> dict[str, ast.AST]:
    """Qualified name ("f", "Class.method", "Outer.Inner.m") -> its def or class node, for the
    functions and classes of `path` not nested in a function."""
    found: dict[str, ast.AST] = {}

    def visit(body: list, prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = prefix + node.name
                found[name] = node
                if isinstance(node, ast.ClassDef):
                    visit(node.body, name + ".")

    visit(ast.parse(path.read_text(), filename=str(path)).body, "")
    return found


def function_lines(root: Path, file: str, qualname: str) -> int | None:
    """Lines of function `qualname` in `file` (under root), its `def` line to its last: None when
    no such function is there (a class body, or a name the file does not define)."""
    node = definitions(root / file).get(qualname)
    if node is None or isinstance(node, ast.ClassDef):
        return None
    return node.end_lineno - node.lineno + 1


def trace_step(out_dir: Path) -> list[Function]:
    """Run one step of train.py in this process under the Tracer; the project functions that ran,
    in first-call order, their lines filled in (class statements left out: definitions)."""
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    import train

    tracer = Tracer(ROOT, PLUMBING)
    tracer.start()
    try:
        status = train.main([*TRAIN_ARGS, "--out-dir", str(out_dir)])
    finally:
        tracer.stop()
    if status != 0:
        raise RuntimeError(f"train.main returned {status} for the traced step")
    functions = []
    for fn in tracer.functions.values():
        node = definitions(ROOT / fn.file).get(fn.qualname)
        if isinstance(node, ast.ClassDef):
            # a class statement's body, run when the class is defined: a definition, not a call
            continue
        if node is None:
            # a module-level lambda or comprehension: no def, its lines from the code object
            code = tracer.first_code[(fn.file, fn.qualname)]
            lines = [n for _, _, n in code.co_lines() if n is not None]
            fn.lines = max(lines) - min(lines) + 1
        else:
            fn.lines = node.end_lineno - node.lineno + 1
        functions.append(fn)
    return functions


# ----------------------------------------------------------------------------- the reading path


def reading_path(functions: list[Function]) -> list[Function]:
    """The functions that ran outside every PLUMBING entry, in the order each first did."""
    return sorted((fn for fn in functions if fn.open), key=lambda fn: fn.opened)


def covered(functions: list[Function], plumbing: dict[str, str]) -> dict[str, list[Function]]:
    """PLUMBING entry -> the functions it covers (a function beneath two entries: the first's)."""
    out: dict[str, list[Function]] = {name: [] for name in plumbing}
    for fn in functions:
        if not fn.open:
            out[next(name for name in plumbing if name in fn.covered_by)].append(fn)
    return out


def summary(functions: list[Function]) -> tuple[int, int, int]:
    """(functions, lines, files) of `functions`."""
    return len(functions), sum(fn.lines for fn in functions), len({fn.file for fn in functions})


def design_rows(text: str) -> list[tuple[str, str, int, str]]:
    """(file, function, stated lines, what it does) of DESIGN.md's "Reading one step" table."""
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    row = r"^\| *\d+ *\| *`([^`]+)` *\| *`([^`]+)` *\| *(\d+) *\|(?:[^|\n]*\|)?? *([^|\n]*?) *\|$"
    return [(f, q, int(n), what) for f, q, n, what in re.findall(row, section, re.M)]


def first_sentence(fn: Function) -> str:
    """The first sentence of fn's docstring, one line (at most about 100 characters)."""
    node = definitions(ROOT / fn.file)[fn.qualname]
    doc = " ".join((ast.get_docstring(node) or "").split())
    # the first stop outside brackets that ends a sentence ("et al. 2025" does not)
    depth = 0
    sentence = doc
    for i, ch in enumerate(doc):
        depth += (ch in "([") - (ch in ")]")
        if ch in ".:;" and depth == 0 and doc[i + 1 : i + 2] in ("", " "):
            if not re.search(r"\b(al|e\.g|i\.e|cf|vs)$", doc[:i]):
                sentence = doc[:i]
                break
    if len(sentence) > 100:
        sentence = sentence[:100].rsplit(" ", 1)[0] + " ..."
    return sentence.replace("|", "\\|")


def section(functions: list[Function], plumbing: dict[str, str], described: dict[str, str]) -> str:
    """DESIGN.md's "Reading one step", from the trace. described: the last column kept from the
    section as it was, by "file::qualname" or qualified name (a new row takes its docstring's
    first sentence)."""
    path = reading_path(functions)
    n, lines, files = summary(path)
    n_all, lines_all, files_all = summary(functions)
    intro = (
        "To learn how termrl trains, read these functions in this order: what one synchronous "
        "colocated step with the torch engine (the default on CPU) ran, in the order each first "
        f"ran outside the plumbing listed below. They are {lines:,} lines of functions in {files} "
        f"files ({n} functions); the whole step, plumbing included, ran {n_all} functions of "
        f"{lines_all:,} lines in {files_all} files. The step is `make train`'s preset cut to one "
        "rank, one task and two episodes of two turns, in real containers. A run's first step "
        "pushes no weights (the engine was built from the policy's: `sync_engine` returns at "
        "once), so `learner/sync.py` is not read here."
    )
    generated = (
        "Generated: `python3 scripts/trace_step.py --write-design` traces the step and rewrites "
        "this section (the last column is kept for a function already listed; a new row takes "
        "its docstring's first sentence). `tests/test_structure.py` runs the same trace and "
        "fails when a function that ran is neither a row nor plumbing, or when a row's lines "
        "(its `def` line to its last, read with `ast`) differ from the code's."
    )
    out = [
        SECTION,
        "",
        textwrap.fill(intro, 110),
        "",
        textwrap.fill(generated, 110),
        "",
        "| # | file | function | lines | called from | what it does |",
        "|---|---|---|---|---|---|",
    ]
    for i, fn in enumerate(path, 1):
        what = described.get(fn.key) or described.get(fn.qualname) or first_sentence(fn)
        caller = f"`{fn.caller}`" if fn.caller else ""
        out.append(f"| {i} | `{fn.file}` | `{fn.qualname}` | {fn.lines} | {caller} | {what} |")
    plumbing_note = (
        "Plumbing: what the step ran that the table leaves out (`PLUMBING` in "
        "`scripts/trace_step.py`). An entry covers the function it names (a class: its methods) "
        "and whatever ran only beneath it, its asyncio tasks and threads included."
    )
    out += [
        "",
        textwrap.fill(plumbing_note, 110),
        "",
        "| plumbing | why | functions | lines |",
        "|---|---|---|---|",
    ]
    for name, fns in covered(functions, plumbing).items():
        out.append(f"| `{name}` | {plumbing[name]} | {len(fns)} | {sum(f.lines for f in fns):,} |")
    return "\n".join(out) + "\n"


def write_design(functions: list[Function], design: Path) -> None:
    """Rewrite the "Reading one step" section of `design` in place (the rest is kept as it is)."""
    text = design.read_text()
    before, rest = text.split(SECTION, 1)
    after = rest.split("\n## ", 1)[1]
    rows = design_rows(text)
    # by file and name; by name alone where one row has it (a function moved to another file)
    names = [q for _, q, _, _ in rows]
    described = {q: what for _, q, _, what in rows if names.count(q) == 1}
    described.update({f"{f}::{q}": what for f, q, _, what in rows})
    design.write_text(before + section(functions, PLUMBING, described) + "\n## " + after)


def markdown_table(functions: list[Function]) -> str:
    """Every traced function: #, file, function, lines, called from, and the plumbing covering it."""
    out = [
        "| # | file | function | lines | called from | plumbing |",
        "|---|---|---|---|---|---|",
    ]
    for i, fn in enumerate(functions, 1):
        entry = "" if fn.open else ", ".join(f"`{e}`" for e in sorted(fn.covered_by))
        out.append(f"| {i} | `{fn.file}` | `{fn.qualname}` | {fn.lines} | {fn.caller} | {entry} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="write the trace to this file as JSON")
    parser.add_argument(
        "--write-design", action="store_true", help='rewrite DESIGN.md\'s "Reading one step"'
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="termrl-trace-") as tmp:
        functions = trace_step(Path(tmp) / "run")
    path = reading_path(functions)
    print("\n## Every project function the step ran, in first-call order\n")
    print(markdown_table(functions))
    print("\n## Plumbing\n")
    for name, fns in covered(functions, PLUMBING).items():
        lines = sum(f.lines for f in fns)
        print(f"- {name} ({PLUMBING[name]}): {len(fns)} functions, {lines} lines")
        named = {fn.file for fn in functions if entry_of(fn.qualname, {name: ""})}
        if not named:
            print(f"  NOTE: no function that ran is named {name!r}")
        if len(named) > 1:
            print(f"  NOTE: {name!r} names functions of {len(named)} files: {sorted(named)}")
    n, lines, files = summary(functions)
    print(f"\nthe whole step: {n} functions, {lines:,} lines, {files} files")
    n, lines, files = summary(path)
    print(f"the reading path: {n} functions, {lines:,} lines, {files} files")
    by_file: dict[str, int] = {}
    for fn in path:
        by_file[fn.file] = by_file.get(fn.file, 0) + fn.lines
    for file, lines in sorted(by_file.items(), key=lambda kv: -kv[1]):
        print(f"  {lines:5d}  {file}")
    if args.json:
        rows = [{**dataclasses.asdict(fn), "covered_by": sorted(fn.covered_by)} for fn in functions]
        args.json.write_text(json.dumps({"functions": rows, "plumbing": PLUMBING}, indent=1))
    if args.write_design:
        write_design(functions, ROOT / "DESIGN.md")
        print('DESIGN.md: "Reading one step" rewritten')


if __name__ == "__main__":
    main()
