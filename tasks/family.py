"""A procedurally generated multi-turn task family: every instance needs a value that an earlier turn's
observation revealed, and no instance-agnostic command reaches it.

    python -m tasks family --out DIR --seeds 0:64 [--split train|validation|eval] [--shapes pointer run config]
                           [--hops 1-8]

Every read shows a few records, each marked as still in force (one of VALID) or not (one of STALE); only the
record in force counts, the others lead to decoys. An instance draws one of LAYOUTS for how its records
look (`next: VALUE (active)`, `[active] next -> VALUE`, `next = VALUE  # active`). Shapes, each with 1-8
hops (a hop: one command whose output holds what the next command needs):
- pointer: a tree of a few hundred note files under /app/<area>/<dir>/<dir>/; a note's `next` records
  name notes, the last note's `code` records hold codes.
- run: programs under /app/<area>/<dir>/, each answering one number (`bash PROGRAM NUMBER`; any other
  number gets `no entry`); its `next` records name the next program and its number. A program keeps its
  output in base64, so reading it does not show the records: it has to be run with the right number.
- config: *.conf files under /app/<area>/<dir>/; a key is set by a few records in several files (`grep
  -rhw KEY`); a value `@NAME` refers to the key NAME, looked up the same way; the last key's value is the
  code. A few hundred other keys fill the files.

What defeats the shortcuts (tests/test_family.py's shortcut suite measures them in real containers): a
dump of the area (`grep -r`, `cat`, `find -exec`) prints tens of kilobytes, which the sandbox's output cap
and the rollout's observation cut (head and tail of about 1,000 tokens at the cpu-learn-multiturn preset)
reduce to a few percent of the records; a program run without its number prints nothing useful; a loop
that follows `next` without reading the marks follows decoys, and one that reads them does not fit the
preset's 48 tokens per turn.

The instruction, one of WORDINGS[shape] (drawn per instance), names the start (a note, a program and its
number, a key) and the answer file, never the code. An instance is a native task folder (DESIGN.md "Task
format"): task.toml (max_turns = hops + 2), a Dockerfile FROM the base image with one COPY of files/, a
hidden test that /app/answer.txt holds exactly the code (one trailing newline allowed), solution.sh, and
oracle_turns.json (hops + 1 steps: the hops' reads, then the write; tasks/checks.read_oracle_turns).

Seeds: instance `seed` of a split draws from random.Random(SPLIT_OFFSETS[split] + seed); seeds are below
SPLIT_SEEDS, so the splits never share a generator seed (check_disjoint refuses task lists that do). The
eval split is the test split; the validation split is there for choices made before it (experiments/learn.py
does not yet generate or use it). Seed s gets
the (hops, shape) pair combos[s % len(combos)], so any len(combos) consecutive seeds cover each pair once.
"""

import base64
import json
import random
import re
import shlex
import string
from dataclasses import dataclass, field
from pathlib import Path

from configs import ConfigError
from tasks.loaders import ORACLE_TURNS, render_task_toml
from tasks.task import Task

SHAPES = ("pointer", "run", "config")
MAX_HOPS = 8
SPLITS = ("train", "validation", "eval")
# Generator seeds per split: seed s of a split draws from random.Random(SPLIT_OFFSETS[split] + s), with
# 0 <= s < SPLIT_SEEDS, so no two splits share a generator seed.
SPLIT_SEEDS = 1_000_000
SPLIT_OFFSETS = {"train": 0, "eval": SPLIT_SEEDS, "validation": 2 * SPLIT_SEEDS}
EVAL_SEED_OFFSET = SPLIT_OFFSETS["eval"]
# instances one call writes at most: every instance is generated in memory before the first folder is
# written (all folders are checked first), and a slip like --seeds 0:999999 would write a million
# folders; larger sets are written in several calls
MAX_INSTANCES = 10_000
FAMILY = "multiturn"
ANSWER = "/app/answer.txt"
CODE = r"[a-z]+-[0-9]{4}"
# Records: marked in force (VALID) or not (STALE); an instance draws one layout for all its records.
VALID = ("current", "active", "live", "valid", "in use", "latest")
STALE = ("revoked", "expired", "old", "retired", "void", "superseded")
LAYOUTS = (
    "{label}: {value} ({mark})",
    "[{mark}] {label} -> {value}",
    "{label} = {value}  # {mark}",
)
# Decoy records per read besides the one in force.
DECOYS = 2
# Files (notes, programs) or filler keys per instance: enough that a dump of the area is tens of kilobytes.
FILLERS = {"pointer": 300, "run": 120, "config": 300}
# The generator's settings that a folder's manifest records (generate_family compares them on reuse).
MANIFEST = "family.json"
# The generator's version in the manifest: raised when the same settings would write other instances.
GENERATOR = 2
TEST_NAME = "test_answer_is_the_code"
DOCKERFILE = """ARG BASE_IMAGE=termrl/base:bookworm
FROM ${BASE_IMAGE}
WORKDIR /app
COPY files/ /app/
"""

# Names of folders, files, programs, keys and codes.
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

    seed: the seed as given (per split); rng_seed: the random.Random seed drawn from (SPLIT_OFFSETS[split]
    + seed). layout: index into LAYOUTS. code: the secret the hidden test checks. files: path under /app ->
    (text, mode). steps: oracle_turns.json's steps ({"command", "capture"}; the last writes ANSWER).
    """

    id: str
    shape: str
    hops: int
    split: str
    seed: int
    rng_seed: int
    instruction: str
    code: str
    layout: int = 0
    files: dict[str, tuple[str, int]] = field(default_factory=dict)
    steps: list[dict] = field(default_factory=list)


class _Names:
    """Fresh names drawn by one instance's generator: words (areas, folders), pairs (files, keys) and
    codes, none drawn twice."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: set[str] = set()

    def _fresh(self, make) -> str:
        name = make()
        while name in self.used:
            name = make()
        self.used.add(name)
        return name

    def word(self) -> str:
        return self._fresh(lambda: self.rng.choice(WORDS))

    def pair(self, sep: str) -> str:
        return self._fresh(lambda: f"{self.rng.choice(WORDS)}{sep}{self.rng.choice(WORDS)}")

    def code(self) -> str:
        return self._fresh(lambda: f"{self.rng.choice(WORDS)}-{self.rng.randrange(1000, 10000)}")


def _var(name: str) -> str:
    """A command template's field for variable `name` (str.format)."""
    return "{" + name + "}"


def record_regex(layout: int, label: str, mark: str, value_rx: str) -> str:
    """The capture regex of the record `label`, marked `mark`, in LAYOUTS[layout]: value_rx (one group)
    where the value goes, the rest escaped; anchored to a whole line, so it never matches the command
    line (`$ command`) of an observation."""
    out = []
    for literal, name, _, _ in string.Formatter().parse(LAYOUTS[layout]):
        out.append(re.escape(literal))
        if name is not None:
            out.append(
                {"label": re.escape(label), "mark": re.escape(mark), "value": value_rx}[name]
            )
    return "(?m)^" + "".join(out) + "$"


class _Records:
    """One instance's records: the layout, and reads of one record in force among decoys."""

    def __init__(self, names: _Names, layout: int):
        self.names = names
        self.layout = layout

    def line(self, label: str, value: str, mark: str) -> str:
        return LAYOUTS[self.layout].format(label=label, value=value, mark=mark)

    def read(self, label: str, value: str, decoys: list[str]) -> tuple[list[str], str]:
        """(lines, mark): the record in force with `value` and one stale record per decoy value, shuffled."""
        rng = self.names.rng
        mark = rng.choice(VALID)
        stale = rng.sample(STALE, len(decoys))
        lines = [self.line(label, value, mark)]
        lines += [self.line(label, d, m) for d, m in zip(decoys, stale)]
        rng.shuffle(lines)
        return lines, mark

    def filler(self, label: str, values: list[str]) -> list[str]:
        """A decoy read: values[0] in force, the others stale (it looks like any other read)."""
        return self.read(label, values[0], values[1:])[0]


MARKS = (
    f"each marked as in force ({', '.join(VALID)}) or not ({', '.join(STALE)}); only the record in "
    f"force counts"
)
# Wordings of each shape's instruction (fields: start, area, marks, answer); an instance draws one.
WORDINGS = {
    "pointer": (
        "Start by reading the note {start}. A note holds a few records, {marks}. A `next` record names "
        "the next note to read; a `code` record holds the code. Follow the notes to the code and write "
        "only the code to {answer}.",
        "Your job is to find a code by following notes, beginning with {start}. Every note lists a few "
        "records, {marks}. Records labelled `next` point at another note; a record labelled `code` "
        "holds the code. Save just the code in {answer}.",
        "A chain of notes under {area} starts at {start}. Each note has several records, {marks}. Go "
        "from note to note along the `next` records until you reach a `code` record, then put only "
        "that code into {answer}.",
    ),
    "run": (
        "Start by running `bash {start}`. A program, run with its number, prints a few records, "
        "{marks}. A `next` record names the next program and its number (run it as `bash PROGRAM "
        "NUMBER`); a `code` record holds the code. Write only the code to {answer}.",
        "Run `bash {start}` to begin. Given its number, each program prints records, {marks}. A `next` "
        "record gives the next program and the number to pass it (`bash PROGRAM NUMBER`); a `code` "
        "record gives the code. Save just the code in {answer}.",
        "The programs under {area} form a chain that begins with `bash {start}`. Their output lists "
        "records, {marks}. Keep running the program a `next` record names, with its number, until a "
        "`code` record appears; write only that code to {answer}.",
    ),
    "config": (
        "Find the key `{start}` in the config files under {area} (e.g. `grep -rhw KEY {area}`): a few "
        "records set it, {marks}. A value `@NAME` refers to the key NAME: look that key up the same "
        "way. Write only the final value, the code, to {answer}.",
        "Under {area} are config files. Look up the key `{start}` (for example `grep -rhw KEY "
        "{area}`); several records set it, {marks}. A value of the form `@NAME` means: look up the key "
        "NAME next. The last value is a code: write only it to {answer}.",
        "Resolve the key `{start}` from the config files in {area}; its records are {marks}. Follow "
        "`@NAME` references key by key (`grep -rhw NAME {area}` finds one) until a plain code remains, "
        "and write only that code to {answer}.",
    ),
}
# The wording is drawn from its own generator (seeded by the instance's), so that adding a wording
# leaves every instance's files as they are.
WORDING_SALT = 7_919


def _pointer(names: _Names, records: _Records, hops: int, fillers: int):
    """(fields, code, files, steps) of a chain of `hops` notes among `fillers` other notes; fields: the
    instruction's start and area (WORDINGS)."""
    rng = names.rng
    area = f"/app/{names.word()}"
    folders = [f"{area}/{names.word()}/{names.word()}" for _ in range(6)]

    def note() -> str:
        return f"{rng.choice(folders)}/{names.pair('-')}.txt"

    code = names.code()
    chain = [note() for _ in range(hops)]
    others = [note() for _ in range(max(fillers, DECOYS + 1))]
    files = {}
    for path in others:
        if rng.random() < 0.5:
            lines = records.filler("next", rng.sample(others, DECOYS + 1))
        else:
            lines = records.filler("code", [names.code() for _ in range(DECOYS + 1)])
        files[path] = ("\n".join(lines) + "\n", 0o644)
    steps = []
    target = chain[0]
    for i, path in enumerate(chain):
        last = i == hops - 1
        if last:
            lines, mark = records.read("code", code, [names.code() for _ in range(DECOYS)])
            var, rx = "code", record_regex(records.layout, "code", mark, f"({CODE})")
        else:
            lines, mark = records.read("next", chain[i + 1], rng.sample(others, DECOYS))
            var = f"note{i + 2}"
            rx = record_regex(records.layout, "next", mark, r"(/app/\S+\.txt)")
        files[path] = ("\n".join(lines) + "\n", 0o644)
        steps.append({"command": f"cat {target}", "capture": {var: rx}})
        target = _var(var)
    return {"start": chain[0], "area": area}, code, files, steps


def _program(names: _Names, number: str, lines: list[str]) -> str:
    """A bash program that prints `lines` when run with `number`, kept in base64 so that reading the
    program does not show them; any other argument gets one line `no entry for ARG`."""
    encoded = base64.b64encode(("\n".join(lines) + "\n").encode()).decode()
    return (
        f"#!/bin/bash\n# {names.pair(' ')}\n"
        f'case "$1" in\n'
        f"    {number}) echo {encoded} | base64 -d ;;\n"
        f'    *) echo "no entry for ${{1:-nothing}}" ;;\n'
        f"esac\n"
    )


def _run(names: _Names, records: _Records, hops: int, fillers: int):
    """(fields, code, files, steps) of a chain of `hops` programs, each run with the number the
    previous one printed, among `fillers` other programs."""
    rng = names.rng
    area = f"/app/{names.word()}"
    folders = [f"{area}/{names.word()}" for _ in range(4)]

    def program() -> str:
        return f"{rng.choice(folders)}/{names.pair('_')}.sh {rng.randrange(1000, 10000)}"

    code = names.code()
    chain = [program() for _ in range(hops)]
    others = [program() for _ in range(max(fillers, DECOYS + 1))]
    files = {}

    def put(call: str, lines: list[str]) -> None:
        path, number = call.split(" ")
        files[path] = (_program(names, number, lines), 0o755)

    for call in others:
        if rng.random() < 0.5:
            put(call, records.filler("next", rng.sample(others, DECOYS + 1)))
        else:
            put(call, records.filler("code", [names.code() for _ in range(DECOYS + 1)]))
    steps = []
    target = chain[0]
    for i, call in enumerate(chain):
        last = i == hops - 1
        if last:
            lines, mark = records.read("code", code, [names.code() for _ in range(DECOYS)])
            var, rx = "code", record_regex(records.layout, "code", mark, f"({CODE})")
        else:
            lines, mark = records.read("next", chain[i + 1], rng.sample(others, DECOYS))
            var = f"program{i + 2}"
            rx = record_regex(records.layout, "next", mark, r"(/app/\S+\.sh [0-9]{4})")
        put(call, lines)
        steps.append({"command": f"bash {target}", "capture": {var: rx}})
        target = _var(var)
    return {"start": chain[0], "area": area}, code, files, steps


def _config(names: _Names, records: _Records, hops: int, fillers: int):
    """(fields, code, files, steps) of `hops` keys, key i's value in force `@key i+1`, among
    `fillers` other keys, spread over config files."""
    rng = names.rng
    area = f"/app/{names.word()}"
    folders = [f"{area}/{names.word()}" for _ in range(3)]
    paths = [f"{rng.choice(folders)}/{names.word()}.conf" for _ in range(12)]
    lines: dict[str, list[str]] = {path: [] for path in paths}
    code = names.code()
    keys = [names.pair("_") for _ in range(hops)]
    others = [names.pair("_") for _ in range(max(fillers, DECOYS + 1))]

    def spread(read: list[str]) -> None:
        for line in read:
            lines[rng.choice(paths)].append(line)

    for key in others:
        if rng.random() < 0.5:
            values = [f"@{k}" for k in rng.sample(others, DECOYS + 1)]
        else:
            values = [names.code() for _ in range(DECOYS + 1)]
        spread(records.filler(key, values))
    steps = []
    for i, key in enumerate(keys):
        last = i == hops - 1
        if last:
            read, mark = records.read(key, code, [names.code() for _ in range(DECOYS)])
            var, rx = "code", record_regex(records.layout, key, mark, f"({CODE})")
        else:
            decoys = [f"@{k}" for k in rng.sample(others, DECOYS)]
            read, mark = records.read(key, f"@{keys[i + 1]}", decoys)
            var = f"key{i + 2}"
            rx = record_regex(records.layout, key, mark, r"@(\w+)")
        spread(read)
        # the key as a field after the first step: the oracle's command names the key it read
        name = key if i == 0 else _var(f"key{i + 1}")
        steps.append({"command": f"grep -rhw {name} {area}", "capture": {var: rx}})
    files = {}
    for path, body in lines.items():
        rng.shuffle(body)
        files[path] = (f"# {names.word()} settings\n" + "\n".join(body) + "\n", 0o644)
    return {"start": keys[0], "area": area}, code, files, steps


_BUILDERS = {"pointer": _pointer, "run": _run, "config": _config}


def make_instance(
    split: str, seed: int, shape: str, hops: int, fillers: int | None = None
) -> Instance:
    """Instance `seed` of `split` with this shape and number of hops, drawn from its own random.Random
    (nothing from global state: the same arguments give the same instance on every machine).
    fillers: other notes, programs or keys (None: FILLERS[shape]; fewer make a small tree, which the
    shortcut suite's tests use as a case that a dump solves). Raises ConfigError naming the argument when
    it is out of range."""
    if split not in SPLITS:
        raise ConfigError(f"split = {split!r}: must be one of {', '.join(SPLITS)}")
    if shape not in SHAPES:
        raise ConfigError(f"shape = {shape!r}: must be one of {', '.join(SHAPES)}")
    if not 1 <= hops <= MAX_HOPS:
        raise ConfigError(f"hops = {hops!r}: must be in 1..{MAX_HOPS}")
    if not 0 <= seed < SPLIT_SEEDS:
        raise ConfigError(f"seed = {seed!r}: must be in 0..{SPLIT_SEEDS - 1}")
    rng_seed = SPLIT_OFFSETS[split] + seed
    names = _Names(random.Random(rng_seed))
    records = _Records(names, names.rng.randrange(len(LAYOUTS)))
    count = FILLERS[shape] if fillers is None else fillers
    start, code, files, steps = _BUILDERS[shape](names, records, hops, count)
    wording = random.Random(rng_seed * WORDING_SALT).choice(WORDINGS[shape])
    instruction = wording.format(**start, marks=MARKS, answer=ANSWER)
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
        layout=records.layout,
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
    0 <= START < END <= SPLIT_SEEDS and END - START <= MAX_INSTANCES."""
    match = re.fullmatch(r"\s*(\d+)\s*(?::\s*(\d+)\s*)?", text)
    why = f"must be START:END (END excluded) or one seed N, with 0 <= START < END <= {SPLIT_SEEDS}"
    if match is None:
        raise ConfigError(f"seeds = {text!r}: {why}, e.g. 0:64")
    start = int(match.group(1))
    end = int(match.group(2)) if match.group(2) is not None else start + 1
    if not start < end <= SPLIT_SEEDS:
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
    """`LO-HI` or `N` -> range(LO, HI + 1). Raises ConfigError naming --hops unless 1 <= LO <= HI <= MAX_HOPS."""
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


def manifest(split: str, seeds: range, shapes, hops) -> dict:
    """The generator's settings a folder of instances was written with (MANIFEST, JSON)."""
    return {
        "family": FAMILY,
        "generator": GENERATOR,
        "split": split,
        "seeds": [seeds.start, seeds.stop],
        "shapes": list(shapes),
        "hops": [min(hops), max(hops)],
    }


def check_manifest(out_dir: Path, wanted: dict) -> None:
    """Refuse out_dir when it was written for another experiment: its MANIFEST differs from `wanted`, or
    it holds task folders without one. Raises FileExistsError in one line naming the folder and the
    first setting that differs; an absent or empty folder passes."""
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        return
    path = out_dir / MANIFEST
    if not path.is_file():
        if any(out_dir.iterdir()):
            raise FileExistsError(
                f"{out_dir} holds files but no {MANIFEST}: it was not written for this experiment; "
                "remove it or write into another folder"
            )
        return
    try:
        held = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise FileExistsError(f"{path}: not valid JSON ({e}); remove the folder") from e
    diff = [key for key in wanted if held.get(key) != wanted[key]]
    if diff:
        key = diff[0]
        raise FileExistsError(
            f"{out_dir} was written for another experiment ({key} = {held.get(key)!r}, asked "
            f"{wanted[key]!r}); remove it or write into another folder"
        )


def generate_family(
    out_dir: Path, split: str, seeds: range, shapes=SHAPES, hops=range(1, MAX_HOPS + 1)
) -> list[Instance]:
    """Write instance_for_seed(split, s, shapes, hops) for each seed s into out_dir, with MANIFEST
    recording these settings; returns the instances (rerun with the same settings: folders already
    holding them are left as they are). A folder written with other settings is refused
    (check_manifest), so a change of counts, shapes or hops never silently changes an experiment.
    Every folder is checked before any is written. Raises ConfigError for a bad split or shape,
    FileExistsError as check_manifest and needs_writing (nothing written then), OSError when out_dir
    cannot be written."""
    if split not in SPLITS:
        raise ConfigError(f"split = {split!r}: must be one of {', '.join(SPLITS)}")
    check_shapes(tuple(shapes))
    wanted = manifest(split, seeds, shapes, hops)
    check_manifest(out_dir, wanted)
    instances = [instance_for_seed(split, s, shapes, hops) for s in seeds]
    # every folder checked before the first is written: a hand-edited later one leaves no half-done set
    todo = [inst for inst in instances if needs_writing(inst, out_dir)]
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    (Path(out_dir) / MANIFEST).write_text(json.dumps(wanted, indent=2) + "\n")
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
