"""The shape DESIGN.md promises, read from the source with `ast`: imports point one way (no
circle; nothing under sandboxing/ imports sandbox.py; configs.py imports no project module; no
module imports a command), and the reading path of one step ("Reading one step" in DESIGN.md)
names functions that exist where it says, with the lines they have in the code, and is what one
traced step runs less the plumbing (scripts/trace_step.py)."""

import ast
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# the project's packages (folders) and root modules; anything else imported is a library
PACKAGES = (
    "agent",
    "bookkeeping",
    "engines",
    "experiments",
    "hf",
    "judging",
    "learner",
    "sandboxing",
    "tasks",
    "training",
)
# the entry points: run as commands, imported by nothing of ours (tests aside); evaluate.py is one
# too, and experiments/ (make learn) builds on it
COMMANDS = ("train", "evaluate", "experiments.learn", "tasks.__main__")


def _module_files() -> dict[str, Path]:
    """Dotted module name -> file, for the root modules and every package's modules."""
    files = {p.stem: p for p in ROOT.glob("*.py")}
    for package in PACKAGES:
        for p in (ROOT / package).rglob("*.py"):
            parts = p.relative_to(ROOT).with_suffix("").parts
            files[".".join(parts)] = p
    return files


def _type_checking_only(node: ast.AST, parents: dict) -> bool:
    """Whether `node` sits under `if TYPE_CHECKING:` (an annotation's import, never run)."""
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def _resolve(name: str, modules: set[str]) -> str | None:
    """The project module that `import name` loads (the longest dotted prefix we own), or None
    for a library. A package's own name resolves to its __init__."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        candidate = ".".join(parts[:n])
        if candidate in modules:
            return candidate
        if f"{candidate}.__init__" in modules:
            return f"{candidate}.__init__"
    return None


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports, at the top or inside a function (a lazy import
    still makes a circle at run time); `from pkg import mod` counts as importing pkg.mod only."""
    files = _module_files()
    modules = set(files)
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        package = name.rsplit(".", 1)[0] if "." in name else ""
        targets: set[str] = set()
        for node in ast.walk(tree):
            if _type_checking_only(node, parents):
                continue
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    kept = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*kept, base]).strip(".")
                # `from pkg import mod` imports pkg.mod; `from pkg import name` imports pkg itself
                # (a package's __init__ importing its own submodules is no circle)
                names = [
                    f"{base}.{a.name}"
                    if _resolve(f"{base}.{a.name}", modules) == f"{base}.{a.name}"
                    else base
                    for a in node.names
                ]
            else:
                continue
            for n in names:
                target = _resolve(n, modules)
                if target is not None and target != name:
                    targets.add(target)
        graph[name] = targets
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as a path [a, b, ..., a], or None (depth-first search)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_find_cycle_names_a_circle_and_none_in_a_tree():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """The repository's import graph, read once (it parses every module) for the tests that only read it."""
    return import_graph()


def test_the_import_graph_reads_from_imports_of_modules_and_of_names(graph):
    # `from training.setup import setup, teardown`: the module
    assert "training.setup" in graph["train"]
    # `from engines import decode` is the submodule, not the package's __init__
    assert "engines.decode" in graph["engines.torch_engine"]
    assert "engines.__init__" not in graph["engines.torch_engine"]
    # `import engines` (training/setup.py) is the package's __init__
    assert "engines.__init__" in graph["training.setup"]


def test_the_import_graph_sees_an_import_inside_a_function(tmp_path, monkeypatch):
    # a lazy import still makes a circle at run time: a package of two modules, b importing a
    # inside a function
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "a.py").write_text("from tasks import b\n")
    (tmp_path / "tasks" / "b.py").write_text("def f():\n    from tasks.a import x\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    graph = import_graph()
    assert graph["tasks.a"] == {"tasks.b"}
    assert graph["tasks.b"] == {"tasks.a"}
    assert find_cycle(graph) == ["tasks.a", "tasks.b", "tasks.a"]


def test_imports_point_one_way_with_no_circle(graph):
    assert find_cycle(graph) is None


def test_configs_imports_no_project_module(graph):
    assert graph["configs"] == set()


def test_nothing_under_sandboxing_imports_sandbox_py(graph):
    upward = {
        m: sorted(t) for m, t in graph.items() if m.startswith("sandboxing.") and "sandbox" in t
    }
    assert upward == {}


def test_no_module_imports_a_command_or_the_agent_loop_from_below(graph):
    for module, targets in graph.items():
        allowed = {"evaluate"} if module.startswith("experiments.") else set()
        commands = targets & set(COMMANDS) - allowed
        assert commands == set(), (module, sorted(commands))
    # the folders serve the card files: none of them imports rollout.py (the agent loop), but
    # those that drive it: training/ (train.py's set-up and drivers) and experiments/
    drivers = ("experiments", "training")
    below = {m for m in graph if m.split(".")[0] in PACKAGES and m.split(".")[0] not in drivers}
    assert {m for m in below if "rollout" in graph[m]} == set()


# ----------------------------------------------------------------------------- the reading path


def reading_path() -> list[tuple[str, str]]:
    """(file, qualified function) rows of DESIGN.md's "Reading one step" table, in order."""
    text = (ROOT / "DESIGN.md").read_text()
    section = text.split("## Reading one step", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| *\d+ *\| *`([^`]+\.py)` *\| *`([\w.]+)` *\|", section, re.M)
    return rows


def _definition(path: Path, qualname: str) -> ast.AST | None:
    """The def (or class) `qualname` ("f" or "Class.method") at module level of `path`."""
    scope: list[ast.stmt] = ast.parse(path.read_text()).body
    node = None
    for part in qualname.split("."):
        node = next(
            (
                n
                for n in scope
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and n.name == part
            ),
            None,
        )
        if node is None:
            return None
        scope = node.body
    return node


def test_the_reading_path_names_functions_that_exist_where_it_says():
    rows = reading_path()
    assert len(rows) >= 10, rows
    missing = [(f, q) for f, q in rows if _definition(ROOT / f, q) is None]
    assert missing == []


def _trace_step_module():
    """scripts/trace_step.py, imported (scripts/ is no package)."""
    spec = importlib.util.spec_from_file_location("trace_step", ROOT / "scripts" / "trace_step.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reading_path_states_the_lines_its_functions_have_in_the_code():
    rows = reading_path()
    stated = re.findall(
        r"^\| *\d+ *\| *`([^`]+\.py)` *\| *`([\w.]+)` *\| *(\d+) *\|",
        (ROOT / "DESIGN.md").read_text(),
        re.M,
    )
    assert [(f, q) for f, q, _ in stated] == rows
    # each row's count is its function's, def line to last line, read with ast
    wrong = {}
    for f, q, n in stated:
        node = _definition(ROOT / f, q)
        if node.end_lineno - node.lineno + 1 != int(n):
            wrong[f"{f}::{q}"] = (int(n), node.end_lineno - node.lineno + 1)
    assert wrong == {}, "stated lines, the code's"
    # the section's total and file count are the rows'
    total = sum(int(n) for _, _, n in stated)
    files = len({f for f, _, _ in stated})
    section = (ROOT / "DESIGN.md").read_text().split("## Reading one step", 1)[1]
    said = re.search(
        r"They\s+are\s+([\d,]+)\s+lines\s+of\s+functions\s+in\s+(\d+)\s+files", section
    )
    assert said, "DESIGN.md's reading path states its lines and files"
    assert (int(said.group(1).replace(",", "")), int(said.group(2))) == (total, files)


def test_the_tracer_follows_calls_into_tasks_and_threads_and_skips_what_plumbing_covers(
    tmp_path,
):
    # a small project: `setup` is plumbing, and so is what ran only beneath it: in a thread and
    # in asyncio tasks it started, one of them run later by `step`'s event loop; `step` reaches
    # its functions through a thread pool, an asyncio task, a comprehension and a nested function
    (tmp_path / "m.py").write_text(
        """import asyncio, threading
from concurrent.futures import ThreadPoolExecutor

def shared():
    return 1

def quiet():
    return 2

LOOP = asyncio.new_event_loop()

def setup():
    global PENDING
    shared()
    t = threading.Thread(target=quiet)
    t.start()
    t.join()
    asyncio.run(spawn())
    PENDING = LOOP.create_task(background())

async def background():
    late()

def late():
    return 4

async def spawn():
    await asyncio.create_task(spawned())

async def spawned():
    quiet()

def step():
    def inner():
        return [shared() for _ in range(2)]
    inner()
    with ThreadPoolExecutor(1) as pool:
        pool.submit(worker).result()
    asyncio.run(main())
    LOOP.run_until_complete(PENDING)

def worker():
    return 3

async def child():
    shared()

async def main():
    await asyncio.create_task(child())
"""
    )
    trace_step = _trace_step_module()
    spec = importlib.util.spec_from_file_location("m", tmp_path / "m.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    tracer = trace_step.Tracer(tmp_path, {"setup": "set-up"})
    tracer.start()
    try:
        m.setup()
        m.step()
    finally:
        tracer.stop()
        m.LOOP.close()
    ran = list(tracer.functions.values())
    assert [(fn.qualname, fn.open, sorted(fn.covered_by)) for fn in ran] == [
        ("setup", False, ["setup"]),
        ("shared", True, []),
        ("quiet", False, ["setup"]),
        ("spawn", False, ["setup"]),
        ("spawned", False, ["setup"]),
        ("step", True, []),
        ("worker", True, []),
        ("main", True, []),
        ("child", True, []),
        ("background", False, ["setup"]),
        ("late", False, ["setup"]),
    ]
    # the reading path: in the order each function first ran outside the plumbing
    assert [fn.qualname for fn in trace_step.reading_path(ran)] == [
        "step",
        "shared",
        "worker",
        "main",
        "child",
    ]
    # the nearest project caller, across the pool and the task
    assert {fn.qualname: fn.caller for fn in ran}["worker"] == "step"
    assert {fn.qualname: fn.caller for fn in ran}["child"] == "main"
    assert trace_step.function_lines(tmp_path, "m.py", "step") == 8


@pytest.mark.docker
@pytest.mark.model_run
def test_the_reading_path_is_what_one_step_runs_less_the_plumbing(tmp_path):
    # one synchronous colocated step of train.py under the tracer (a real container, the
    # embedded default policy): every function that ran outside the plumbing is a row of the
    # table, and every row ran
    out = tmp_path / "trace.json"
    result = subprocess.run(
        [sys.executable, "scripts/trace_step.py", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=840,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    trace = json.loads(out.read_text())
    ran = [(fn["file"], fn["qualname"]) for fn in trace["functions"] if fn["open"]]
    rows = reading_path()
    assert [r for r in ran if r not in rows] == [], "ran, neither a row nor plumbing"
    assert [r for r in rows if r not in ran] == [], "a row that did not run"
    # the lines the trace read from the code are the rows'
    traced_lines = {(fn["file"], fn["qualname"]): fn["lines"] for fn in trace["functions"]}
    for f, q in rows:
        node = _definition(ROOT / f, q)
        assert traced_lines[(f, q)] == node.end_lineno - node.lineno + 1, (f, q)
    # every plumbing entry names a function that ran (a stale entry hides nothing, but misleads)
    named = {e for fn in trace["functions"] for e in fn["covered_by"]}
    assert sorted(set(trace["plumbing"]) - named) == []
