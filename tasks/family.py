"""A procedurally generated multi-turn task family: every instance needs a value that an earlier turn's
observation revealed.

    python -m tasks family --out DIR --seeds 0:64 [--split train|eval] [--shapes pointer run config]
                           [--hops 1-4]

Shapes, each with 1-4 hops (a hop: one command whose output holds what the next command needs):
- pointer: note files under /app/<area>/<folder>/; each note on the chain names the next (`next: PATH`),
  the last holds the code (`code: CODE`). Decoy notes lead to other codes.
- run: folders that each hold one program; a program prints the next folder (`next: FOLDER`) or the
  code. The hops alternate listing a folder and running the program found there (an odd number of hops
  starts at a program, an even number at a folder). A program keeps its output in base64, so reading it
  does not show the code: it has to be run. Decoy folders hold programs that print other codes.
- config: *.conf files under /app/<area>/; exactly one file sets the named key (a line `KEY = VALUE`); a
  value `@NAME` refers to the key NAME, looked up the same way; the last key's value is the code. Other
  files mention the keys in comments and set keys of similar names.

The instruction names the start (a note, a folder or program, a key) and the answer file, never the code.
An instance is a native task folder (DESIGN.md "Task format"): task.toml (max_turns = hops + 2), a
Dockerfile FROM the base image with one COPY of files/, a hidden test that /app/answer.txt holds exactly
the code (one trailing newline allowed), solution.sh, and oracle_turns.json (hops + 1 steps: the hops'
reads, then the write; tasks/checks.read_oracle_turns).

Seeds: instance `seed` of split train draws from random.Random(seed), of split eval from
random.Random(EVAL_SEED_OFFSET + seed); seeds are below EVAL_SEED_OFFSET, so the splits never share a
generator seed (check_disjoint refuses task lists that do). Seed s gets the (hops, shape) pair
combos[s % len(combos)], so any len(combos) consecutive seeds cover each pair once.
"""

import base64
import json
import random
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from configs import ConfigError
from tasks.loaders import ORACLE_TURNS, render_task_toml
from tasks.task import Task

SHAPES = ("pointer", "run", "config")
MAX_HOPS = 4
SPLITS = ("train", "eval")
# The eval split's generator seeds start here; every seed given is below it.
EVAL_SEED_OFFSET = 1_000_000
# instances one call writes at most: every instance is generated in memory before the first folder is
# written (all folders are checked first), and a slip like --seeds 0:999999 would write a million
# folders; larger sets are written in several calls
MAX_INSTANCES = 10_000
FAMILY = "multiturn"
ANSWER = "/app/answer.txt"
CODE = r"[a-z]+-[0-9]{4}"
# Capture regexes of oracle_turns.json, each matching an output line and never the command line, so they
# find the same value in the raw output and in the observation the agent sees (`$ command` above it).
NEXT_RX = r"(?m)^next: (\S+)$"
CODE_RX = rf"(?m)^code: ({CODE})$"
PROGRAM_RX = r"(?m)^(\w+\.sh)$"
REF_RX = r"(?m)^\w+ = @(\w+)$"
VALUE_RX = rf"(?m)^\w+ = ({CODE})$"
TEST_NAME = "test_answer_is_the_code"
DOCKERFILE = """ARG BASE_IMAGE=termrl/base:bookworm
FROM ${BASE_IMAGE}
WORKDIR /app
COPY files/ /app/
"""

# Names of folders, files, programs, keys and codes; a name is used at most once per instance.
WORDS = (
    "acorn amber anchor apple arrow aspen badge bamboo banjo barley basil beacon berry birch bison "
    "blossom bolt bramble brick bronze brook cabin cactus candle canyon cargo carrot cedar cello chalk "
    "cherry cider clover cobalt comet copper coral cotton crane crater cricket crystal cypress dahlia "
    "daisy delta denim dingo dolphin dune eagle ebony echo elm ember falcon fern ferry fig flint "
    "fossil fox galaxy garnet gecko ginger glacier granite grape gravel harbor hazel heron hickory "
    "honey hornet husky iris ivory jackal jade jasper juniper kayak kelp kernel kettle kiwi koala "
    "lagoon lantern larch lava lemon lilac lime linen lizard lotus lynx magnet mango maple marble "
    "meadow melon meteor mint mocha moose moss nectar nickel nova nutmeg oak oasis ocean olive onyx "
    "opal orbit orchid osprey otter owl oyster panda papaya parrot peach pebble pepper perch pine "
    "pixel plum polar poppy prairie prism puffin quail quartz quill radish raven reef ridge river "
    "robin rocket saffron sage salmon sapphire satin scarlet sequoia shadow shell sierra silver "
    "sparrow spruce squid stone storm sumac summit swan tango thistle thunder tiger timber topaz "
    "tulip tundra turnip umber valley velvet violet walnut walrus willow wombat yarrow zebra zinc"
).split()


@dataclass
class Instance:
    """One generated task before it is written (write_instance).

    seed: the seed as given (per split); rng_seed: the random.Random seed drawn from (EVAL_SEED_OFFSET +
    seed for eval). code: the secret the hidden test checks. files: path under /app -> (text, mode).
    steps: oracle_turns.json's steps ({"command", "capture"}; the last writes ANSWER).
    """

    id: str
    shape: str
    hops: int
    split: str
    seed: int
    rng_seed: int
    instruction: str
    code: str
    files: dict[str, tuple[str, int]] = field(default_factory=dict)
    steps: list[dict] = field(default_factory=list)


class _Names:
    """Fresh names drawn from WORDS by one instance's generator, none drawn twice."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: set[str] = set()

    def word(self) -> str:
        word = self.rng.choice(WORDS)
        while word in self.used:
            word = self.rng.choice(WORDS)
        self.used.add(word)
        return word

    def code(self) -> str:
        return f"{self.word()}-{self.rng.randrange(1000, 10000)}"


def _var(name: str) -> str:
    """A command template's field for variable `name` (str.format)."""
    return "{" + name + "}"


def _pointer(names: _Names, hops: int) -> tuple[str, str, dict, list[dict]]:
    """(instruction, code, files, steps) of a chain of `hops` notes."""
    rng = names.rng
    area = f"/app/{names.word()}"
    folders = [f"{area}/{names.word()}" for _ in range(3)]

    def note() -> str:
        return f"{rng.choice(folders)}/{names.word()}.txt"

    code = names.code()
    chain = [note() for _ in range(hops)]
    files = {path: (f"next: {after}\n", 0o644) for path, after in zip(chain, chain[1:])}
    files[chain[-1]] = (f"code: {code}\n", 0o644)
    # Decoys: two notes with other codes, and notes that lead to them, so no note but the chain's gives the code.
    decoys = [note() for _ in range(2)]
    for path in decoys:
        files[path] = (f"code: {names.code()}\n", 0o644)
    for _ in range(hops):
        path = note()
        files[path] = (f"next: {rng.choice(decoys)}\n", 0o644)
    instruction = (
        f"Start by reading the note {chain[0]}. A note either names the next note to read (a line "
        f"`next: PATH`) or holds the code (a line `code: CODE`). Follow the notes to the code and write "
        f"only the code to {ANSWER}."
    )
    steps = []
    target = chain[0]
    for i in range(hops):
        last = i == hops - 1
        var = "code" if last else f"note{i + 2}"
        steps.append({"command": f"cat {target}", "capture": {var: CODE_RX if last else NEXT_RX}})
        target = _var(var)
    return instruction, code, files, steps


def _program(names: _Names, line: str) -> str:
    """A bash program that prints `line`, kept in base64 so that reading the program does not show it."""
    label, _, value = line.partition(": ")
    encoded = base64.b64encode(value.encode()).decode()
    return (
        f"#!/bin/bash\n# {names.word()} {names.word()}\n"
        f'echo "{label}: $(echo {encoded} | base64 -d)"\n'
    )


def _run(names: _Names, hops: int) -> tuple[str, str, dict, list[dict]]:
    """(instruction, code, files, steps) of folders and programs: ls and run alternating, `hops` in all."""
    rng = names.rng
    area = f"/app/{names.word()}"
    kinds = ["ls", "run", "ls", "run"][MAX_HOPS - hops :]
    code = names.code()
    folders = [f"{area}/{names.word()}" for _ in range(kinds.count("run"))]
    programs = [f"{names.word()}.sh" for _ in folders]
    files = {}
    for i, (folder, program) in enumerate(zip(folders, programs)):
        line = f"next: {folders[i + 1]}" if i + 1 < len(folders) else f"code: {code}"
        files[f"{folder}/{program}"] = (_program(names, line), 0o755)
    # Decoys: sibling folders whose programs print other codes or lead to such a folder.
    decoys = [f"{area}/{names.word()}" for _ in range(3)]
    for i, folder in enumerate(decoys):
        line = f"next: {decoys[0]}" if i > 0 and rng.random() < 0.5 else f"code: {names.code()}"
        files[f"{folder}/{names.word()}.sh"] = (_program(names, line), 0o755)
    if kinds[0] == "run":
        start = f"running the program {folders[0]}/{programs[0]}"
    else:
        start = f"listing the folder {folders[0]}"
    instruction = (
        f"Start by {start}. Each folder holds one program: run it with bash. A program prints either "
        f"the next folder to look in (a line `next: FOLDER`) or the code (a line `code: CODE`). Write "
        f"only the code to {ANSWER}."
    )
    steps = []
    folder = folders[0]
    program = programs[0]
    step_folder = 0
    for i, kind in enumerate(kinds):
        if kind == "ls":
            var = f"program{step_folder + 1}"
            steps.append({"command": f"ls {folder}", "capture": {var: PROGRAM_RX}})
            program = _var(var)
            continue
        last = i == hops - 1
        var = "code" if last else f"folder{step_folder + 2}"
        steps.append(
            {
                "command": f"bash {folder}/{program}",
                "capture": {var: CODE_RX if last else NEXT_RX},
            }
        )
        folder = _var(var)
        step_folder += 1
    return instruction, code, files, steps


def _config(names: _Names, hops: int) -> tuple[str, str, dict, list[dict]]:
    """(instruction, code, files, steps) of config files where key i's value is `@key i+1`, `hops` keys."""
    rng = names.rng
    area = f"/app/{names.word()}"
    paths = [f"{area}/{names.word()}.conf" for _ in range(hops + 2)]
    paths += [f"{area}/{names.word()}/{names.word()}.conf"]
    lines: dict[str, list[str]] = {path: [] for path in paths}
    code = names.code()
    keys = [f"{names.word()}_{names.word()}" for _ in range(hops)]
    for i, key in enumerate(keys):
        value = f"@{keys[i + 1]}" if i + 1 < hops else code
        home = rng.choice(paths)
        lines[home].append(f"{key} = {value}")
        # The key also appears elsewhere, commented out or as a similar name, with another value.
        other = rng.choice([p for p in paths if p != home])
        lines[other].append(f"# {key} = {names.code()}")
        lines[rng.choice(paths)].append(f"{key}_{names.word()} = {names.code()}")
    for path in paths:
        lines[path].append(f"{names.word()}_{names.word()} = {names.code()}")
        rng.shuffle(lines[path])
    files = {
        path: (f"# {names.word()} settings\n" + "\n".join(body) + "\n", 0o644)
        for path, body in lines.items()
    }
    instruction = (
        f"Find the one file under {area} that sets the key `{keys[0]}` (a line `{keys[0]} = VALUE`). "
        f"A value `@NAME` refers to the key NAME: look that key up the same way. Write only the final "
        f"value, the code, to {ANSWER}."
    )
    steps = []
    key = keys[0]
    for i in range(hops):
        last = i == hops - 1
        var = "code" if last else f"key{i + 2}"
        steps.append(
            {
                # Double quotes: solution.sh puts a shell variable where the key is.
                "command": f'grep -rh "^{key} =" {area}',
                "capture": {var: VALUE_RX if last else REF_RX},
            }
        )
        key = _var(var)
    return instruction, code, files, steps


_BUILDERS = {"pointer": _pointer, "run": _run, "config": _config}


def make_instance(split: str, seed: int, shape: str, hops: int) -> Instance:
    """Instance `seed` of `split` with this shape and number of hops, drawn from its own random.Random
    (nothing from global state: the same arguments give the same instance on every machine).
    Raises ConfigError naming the argument when it is out of range."""
    if split not in SPLITS:
        raise ConfigError(f"split = {split!r}: must be one of {', '.join(SPLITS)}")
    if shape not in SHAPES:
        raise ConfigError(f"shape = {shape!r}: must be one of {', '.join(SHAPES)}")
    if not 1 <= hops <= MAX_HOPS:
        raise ConfigError(f"hops = {hops!r}: must be in 1..{MAX_HOPS}")
    if not 0 <= seed < EVAL_SEED_OFFSET:
        raise ConfigError(f"seed = {seed!r}: must be in 0..{EVAL_SEED_OFFSET - 1}")
    rng_seed = seed + (EVAL_SEED_OFFSET if split == "eval" else 0)
    names = _Names(random.Random(rng_seed))
    instruction, code, files, steps = _BUILDERS[shape](names, hops)
    steps.append({"command": f"echo {_var('code')} > {ANSWER}"})
    return Instance(
        id=f"mt-{split}-{seed}-{shape}-h{hops}",
        shape=shape,
        hops=hops,
        split=split,
        seed=seed,
        rng_seed=rng_seed,
        instruction=instruction,
        code=code,
        files=files,
        steps=steps,
    )


def instance_for_seed(
    split: str, seed: int, shapes=SHAPES, hops=range(1, MAX_HOPS + 1)
) -> Instance:
    """The instance seed `seed` stands for: (hops, shape) pair seed % len(pairs) of hops x shapes."""
    combos = [(h, s) for h in hops for s in shapes]
    h, shape = combos[seed % len(combos)]
    return make_instance(split, seed, shape, h)


def solution_script(steps: list[dict]) -> str:
    """solution.sh acting out the steps in one script: each step's command with its fields as shell
    variables, and its captures read from the command's output by the same regexes (Python `re`)."""
    lines = [
        "#!/bin/bash",
        "# The steps of oracle_turns.json in one script: the values a command's output reveals go to the",
        "# later commands through shell variables, captured by the file's own regexes.",
        "set -euo pipefail",
        "capture() {",
        "    python3 -c 'import re, sys",
        "m = re.search(sys.argv[1], sys.stdin.read())",
        'sys.exit(f"no match for {sys.argv[1]}") if m is None else print(m.group(1))\' "$1"',
        "}",
    ]
    shell_vars = {}
    for step in steps:
        command = step["command"].format(**shell_vars)
        if not step.get("capture"):
            lines.append(command)
            continue
        ((var, regex),) = step["capture"].items()
        lines.append(f"{var}=$({command} | capture {shlex.quote(regex)})")
        shell_vars[var] = "${" + var + "}"
    return "\n".join(lines) + "\n"


def hidden_test(code: str) -> str:
    return (
        '"""Hidden test of a generated multi-turn instance (tasks/family.py): the answer file holds the '
        'code."""\n\nfrom pathlib import Path\n\n'
        f"CODE = {code!r}\n\n\n"
        f"def {TEST_NAME}():\n"
        f'    text = Path("{ANSWER}").read_text()\n'
        '    assert text in (CODE, CODE + "\\n")\n'
    )


def render(inst: Instance) -> dict[str, tuple[bytes, int]]:
    """The task folder's files: path relative to the folder -> (bytes, mode)."""
    toml = render_task_toml(
        inst.id,
        inst.instruction,
        "easy" if inst.hops <= 2 else "medium",
        "file-operations",
        ["multi-turn", inst.shape, f"hops-{inst.hops}"],
        {TEST_NAME: 1.0},
        agent_timeout_s=120.0,
        test_timeout_s=30.0,
        max_turns=inst.hops + 2,
        meta={
            "family": FAMILY,
            "shape": inst.shape,
            "hops": str(inst.hops),
            "split": inst.split,
            "seed": str(inst.seed),
            "rng_seed": str(inst.rng_seed),
        },
    )
    out = {
        "task.toml": (toml.encode(), 0o644),
        "Dockerfile": (DOCKERFILE.encode(), 0o644),
        "solution.sh": (solution_script(inst.steps).encode(), 0o755),
        ORACLE_TURNS: ((json.dumps({"steps": inst.steps}, indent=2) + "\n").encode(), 0o644),
        "tests/test_answer.py": (hidden_test(inst.code).encode(), 0o644),
    }
    for path, (text, mode) in sorted(inst.files.items()):
        out["files/" + path.removeprefix("/app/")] = (text.encode(), mode)
    return out


def write_instance(inst: Instance, out_dir: Path) -> bool:
    """Write inst as the task folder out_dir/<id>/. True when written; False when the folder already
    holds exactly these files (a rerun). Raises FileExistsError naming the folder when it holds anything
    else (never overwritten); OSError when out_dir cannot be written."""
    if not needs_writing(inst, out_dir):
        return False
    task_dir = Path(out_dir) / inst.id
    for name, (data, mode) in render(inst).items():
        path = task_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(mode)
    return True


def needs_writing(inst: Instance, out_dir: Path) -> bool:
    """Whether write_instance(inst, out_dir) would write inst's folder: True when it is absent, False
    when it holds exactly inst's files. Raises FileExistsError naming the folder when it holds anything
    else, or naming out_dir when that is not a folder."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise FileExistsError(
            f"{out_dir} exists and is not a folder (--out names the folder to write into)"
        )
    task_dir = out_dir / inst.id
    files = render(inst)
    if task_dir.exists():
        on_disk = {
            p.relative_to(task_dir).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777)
            for p in task_dir.rglob("*")
            if p.is_file()
        }
        if on_disk == files:
            return False
        raise FileExistsError(
            f"{task_dir} exists and differs from instance {inst.id}; remove it to generate it again"
        )
    return True


def parse_seeds(text: str) -> range:
    """`START:END` (END excluded) or `N` -> range. Raises ConfigError naming --seeds unless
    0 <= START < END <= EVAL_SEED_OFFSET and END - START <= MAX_INSTANCES."""
    match = re.fullmatch(r"\s*(\d+)\s*(?::\s*(\d+)\s*)?", text)
    why = f"must be START:END (END excluded) or one seed N, with 0 <= START < END <= {EVAL_SEED_OFFSET}"
    if match is None:
        raise ConfigError(f"seeds = {text!r}: {why}, e.g. 0:64")
    start = int(match.group(1))
    end = int(match.group(2)) if match.group(2) is not None else start + 1
    if not start < end <= EVAL_SEED_OFFSET:
        raise ConfigError(f"seeds = {text!r}: {why}")
    if end - start > MAX_INSTANCES:
        raise ConfigError(
            f"seeds = {text!r}: {end - start} instances, more than {MAX_INSTANCES} in one call "
            f"(each is a task folder of a few files, and every one is generated before the first is "
            f"written); write larger sets in several calls, e.g. 0:{MAX_INSTANCES} then "
            f"{MAX_INSTANCES}:{2 * MAX_INSTANCES}"
        )
    return range(start, end)


def parse_hops(text: str) -> range:
    """`LO-HI` or `N` -> range(LO, HI + 1). Raises ConfigError naming --hops unless 1 <= LO <= HI <= 4."""
    match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", text)
    why = f"must be LO-HI or one number N, with 1 <= LO <= HI <= {MAX_HOPS}"
    if match is None:
        raise ConfigError(f"hops = {text!r}: {why}, e.g. 1-4")
    low = int(match.group(1))
    high = int(match.group(2)) if match.group(2) is not None else low
    if not 1 <= low <= high <= MAX_HOPS:
        raise ConfigError(f"hops = {text!r}: {why}")
    return range(low, high + 1)


def check_shapes(shapes: tuple[str, ...]) -> None:
    """Raises ConfigError naming --shapes when it is empty, repeats a shape or names an unknown one."""
    unknown = [s for s in shapes if s not in SHAPES]
    if not shapes or unknown or len(set(shapes)) != len(shapes):
        raise ConfigError(
            f"shapes = {' '.join(shapes)!r}: must be distinct names among {', '.join(SHAPES)}"
        )


def generate_family(
    out_dir: Path, split: str, seeds: range, shapes=SHAPES, hops=range(1, MAX_HOPS + 1)
) -> list[Instance]:
    """Write instance_for_seed(split, s, shapes, hops) for each seed s into out_dir; returns the
    instances (rerun: folders already holding them are left as they are). Every folder is checked
    before any is written. Raises ConfigError for a bad split or shape, FileExistsError as
    needs_writing (nothing written then), OSError when out_dir cannot be written."""
    if split not in SPLITS:
        raise ConfigError(f"split = {split!r}: must be one of {', '.join(SPLITS)}")
    check_shapes(tuple(shapes))
    instances = [instance_for_seed(split, s, shapes, hops) for s in seeds]
    # every folder checked before the first is written: a hand-edited later one leaves no half-done set
    todo = [inst for inst in instances if needs_writing(inst, out_dir)]
    for inst in todo:
        write_instance(inst, out_dir)
    return instances


def check_disjoint(train: list[Task], held_out: list[Task]) -> None:
    """Refuse a held-out set that shares a generated instance's generator seed (meta rng_seed) with the
    training set: a policy must never be judged on an instance it trained on.
    Raises ValueError naming the first task that is no generated instance, or the shared seeds and ids."""
    seeds = {}
    for name, tasks in (("train", train), ("held_out", held_out)):
        for task in tasks:
            if task.meta.get("family") != FAMILY or not task.meta.get("rng_seed", "").isdigit():
                raise ValueError(
                    f"{name}: task {task.id} is no instance of the generated family "
                    f"(meta family = {FAMILY!r} and rng_seed)"
                )
        seeds[name] = {int(t.meta["rng_seed"]): t.id for t in tasks}
    shared = sorted(set(seeds["train"]) & set(seeds["held_out"]))
    if shared:
        pairs = ", ".join(f"{seeds['train'][s]} = {seeds['held_out'][s]}" for s in shared[:5])
        raise ValueError(
            f"held_out shares {len(shared)} generator seed(s) with train: {pairs}"
            + (" ..." if len(shared) > 5 else "")
        )
