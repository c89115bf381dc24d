"""tasks/family.py: the procedurally generated multi-turn instances, their oracle_turns.json, the
train/eval split, the CLI; and (real Docker) each shape's oracle acted out step by step in a sandbox."""

import asyncio
import base64
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sandbox
from agent.actions import ToolCall
from agent.tools import run_tool
from configs import PRESETS, ConfigError
from reward import verify
from sandboxing import images
from tasks import TaskError, load_tasks, shortcuts
from tasks.__main__ import family as family_cli
from tasks.__main__ import main as tasks_main
from tasks.checks import read_oracle_turns
from tasks.family import (
    ANSWER,
    DECOYS,
    LAYOUTS,
    MARKS,
    SHAPES,
    SPLIT_SEEDS,
    SPLITS,
    STALE,
    VALID,
    WORDINGS,
    check_disjoint,
    generate_family,
    instance_for_seed,
    make_instance,
    parse_hops,
    record_regex,
    render,
    write_instance,
)
from tasks.validate import validate_tasks

ROOT = Path(__file__).resolve().parent.parent
PRESET = PRESETS["cpu-learn-multiturn"]


def revealed_code(inst) -> str:
    """The code as the instance's files hold it (a run program keeps it in base64), else ''."""
    for text, _ in inst.files.values():
        if inst.code in text:
            return inst.code
        match = re.search(r"echo (\S+) \| base64 -d", text)
        if match and inst.code in base64.b64decode(match.group(1)).decode():
            return inst.code
    return ""


def folder_files(root: Path) -> dict:
    """Every file under root: relative path -> (bytes, permission bits)."""
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777)
        for p in root.rglob("*")
        if p.is_file()
    }


# ---------------------------------------------------------------- generation (no Docker)


def test_the_same_seed_gives_the_same_instance_byte_for_byte(tmp_path):
    first = make_instance("train", 9, "pointer", 4)
    assert (first.id, first.code, first.steps[0]["command"]) == (
        "mt-train-9-pointer-h4",
        "puffin-1670",
        "cat /app/satin/brook/kernel/lizard-dahlia.txt",
    )
    assert render(make_instance("train", 9, "pointer", 4)) == render(first)
    generate_family(tmp_path / "a", "train", range(0, 12))
    generate_family(tmp_path / "b", "train", range(0, 12))
    files_a = folder_files(tmp_path / "a")
    files_b = folder_files(tmp_path / "b")
    assert files_a == files_b
    # a rerun leaves the folders as they are
    assert write_instance(first, tmp_path / "a") is False


def test_seeds_cycle_through_every_shape_and_hop_count():
    ids = [instance_for_seed("train", s).id for s in range(12)]
    assert ids == [
        "mt-train-0-pointer-h1",
        "mt-train-1-run-h1",
        "mt-train-2-config-h1",
        "mt-train-3-pointer-h2",
        "mt-train-4-run-h2",
        "mt-train-5-config-h2",
        "mt-train-6-pointer-h3",
        "mt-train-7-run-h3",
        "mt-train-8-config-h3",
        "mt-train-9-pointer-h4",
        "mt-train-10-run-h4",
        "mt-train-11-config-h4",
    ]
    assert [instance_for_seed("eval", s, ("run",), range(2, 4)).id for s in range(3)] == [
        "mt-eval-0-run-h2",
        "mt-eval-1-run-h3",
        "mt-eval-2-run-h2",
    ]


def test_codes_names_and_start_points_differ_across_seeds():
    instances = [instance_for_seed(split, s) for split in ("train", "eval") for s in range(64)]
    assert len({inst.code for inst in instances}) == 128
    assert len({inst.instruction for inst in instances}) == 128
    assert len({inst.steps[0]["command"] for inst in instances}) == 128


def test_the_code_is_in_the_image_files_and_nowhere_the_agent_is_told():
    for s in range(24):
        inst = instance_for_seed("train", s)
        files = render(inst)
        assert revealed_code(inst) == inst.code, inst.id
        told = ("task.toml", "oracle_turns.json", "solution.sh", "Dockerfile")
        assert [name for name in told if inst.code.encode() in files[name][0]] == [], inst.id
        assert inst.code in files["tests/test_answer.py"][0].decode()


def test_train_and_eval_instances_come_from_disjoint_generator_seeds(tmp_path):
    generate_family(tmp_path / "train", "train", range(0, 6))
    generate_family(tmp_path / "eval", "eval", range(0, 6))
    train = load_tasks(tmp_path / "train")
    held_out = load_tasks(tmp_path / "eval")
    assert sorted(int(t.meta["rng_seed"]) for t in held_out) == [
        1_000_000,
        1_000_001,
        1_000_002,
        1_000_003,
        1_000_004,
        1_000_005,
    ]
    assert {make_instance("eval", s, "run", 2).code for s in range(6)}.isdisjoint(
        make_instance("train", s, "run", 2).code for s in range(6)
    )
    check_disjoint(train, held_out)
    with pytest.raises(ValueError) as info:
        check_disjoint(train, train[:2])
    assert str(info.value) == (
        "held_out shares 2 generator seed(s) with train: mt-train-0-pointer-h1 = mt-train-0-pointer-h1, "
        "mt-train-1-run-h1 = mt-train-1-run-h1"
    )
    (shipped,) = load_tasks(ROOT / "data" / "tasks" / "append-line")
    with pytest.raises(ValueError) as info:
        check_disjoint(train, [shipped])
    assert str(info.value) == (
        "held_out: task append-line is no instance of the generated family (meta family = "
        "'multiturn' and rng_seed)"
    )


def test_train_validation_and_eval_draw_from_disjoint_generator_seeds():
    seeds = {
        split: {make_instance(split, s, "pointer", 1).rng_seed for s in (0, 1, SPLIT_SEEDS - 1)}
        for split in SPLITS
    }
    assert seeds == {
        "train": {0, 1, 999_999},
        "eval": {1_000_000, 1_000_001, 1_999_999},
        "validation": {2_000_000, 2_000_001, 2_999_999},
    }
    assert seeds["train"].isdisjoint(seeds["eval"] | seeds["validation"])
    assert seeds["eval"].isdisjoint(seeds["validation"])
    with pytest.raises(ConfigError, match=r"^seed = 1000000: must be in 0\.\.999999$"):
        make_instance("validation", SPLIT_SEEDS, "pointer", 1)


@pytest.mark.parametrize(
    "first, again, line",
    [
        ((range(0, 6), "1-8"), (range(0, 8), "1-8"), "seeds = [0, 6], asked [0, 8]"),
        ((range(0, 6), "1-2"), (range(0, 6), "1-4"), "hops = [1, 2], asked [1, 4]"),
    ],
)
def test_a_folder_written_for_another_experiment_is_refused(tmp_path, first, again, line):
    generate_family(tmp_path, "train", first[0], hops=parse_hops(first[1]))
    before = folder_files(tmp_path)
    with pytest.raises(FileExistsError) as info:
        generate_family(tmp_path, "train", again[0], hops=parse_hops(again[1]))
    assert str(info.value) == (
        f"{tmp_path} was written for another experiment ({line}); remove it or write into another "
        "folder"
    )
    assert folder_files(tmp_path) == before
    # the same settings again: a rerun, nothing changes
    generate_family(tmp_path, "train", first[0], hops=parse_hops(first[1]))
    assert folder_files(tmp_path) == before


def test_a_folder_of_files_without_a_manifest_is_refused(tmp_path):
    (tmp_path / "mt-train-0-pointer-h1").mkdir()
    with pytest.raises(FileExistsError) as info:
        generate_family(tmp_path, "train", range(0, 2))
    assert str(info.value) == (
        f"{tmp_path} holds files but no family.json: it was not written for this experiment; remove "
        "it or write into another folder"
    )


@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
def test_a_record_regex_finds_the_record_in_force_and_never_the_command_line(layout):
    rx = record_regex(layout, "next", "in use", r"(/app/\S+\.txt)")
    line = LAYOUTS[layout].format(label="next", value="/app/a/b.txt", mark="in use")
    stale = LAYOUTS[layout].format(label="next", value="/app/a/c.txt", mark="revoked")
    observation = f"$ grep '{line}' /app/a/x.txt\n{stale}\n{line}\n"
    assert [m.group(1) for m in re.finditer(rx, observation)] == ["/app/a/b.txt"]


def test_every_read_shows_one_record_in_force_among_stale_decoys():
    for seed in range(0, 24, 3):  # the pointer instances of hops 1-8
        inst = instance_for_seed("eval", seed)
        target = inst.steps[0]["command"].removeprefix("cat ")
        for step in inst.steps[:-1]:
            ((rx,),) = [tuple(step["capture"].values())]
            assert sum(re.escape(mark) in rx for mark in VALID) == 1, rx
            text = inst.files[target][0]
            assert len(re.findall(rx, text)) == 1
            assert sum(mark in text for mark in STALE) == DECOYS
            target = re.search(rx, text).group(1)
        assert target == inst.code


def test_each_shape_is_worded_several_ways_and_every_wording_names_the_start():
    instances = [instance_for_seed("eval", s) for s in range(48)]
    for shape in SHAPES:
        of_shape = [inst for inst in instances if inst.shape == shape]
        used = {
            WORDINGS[shape].index(w)
            for inst in of_shape
            for w in WORDINGS[shape]
            if w.format(**_fields(inst), marks=MARKS, answer=ANSWER) == inst.instruction
        }
        assert used == {0, 1, 2}, shape
        for inst in of_shape:
            assert _fields(inst)["start"] in inst.instruction and ANSWER in inst.instruction


def _fields(inst) -> dict:
    first = inst.steps[0]["command"]
    start = first.split(" ")[2] if inst.shape == "config" else first.split(" ", 1)[1]
    return {"start": start, "area": "/app/" + first.split("/app/")[1].split("/")[0].split(" ")[0]}


def test_the_loader_reads_an_instance_with_its_oracle_turns(tmp_path):
    inst = make_instance("train", 10, "run", 4)
    write_instance(inst, tmp_path)
    (task,) = load_tasks(tmp_path)
    assert (task.id, task.max_turns, task.weights, task.meta["shape"], task.meta["hops"]) == (
        "mt-train-10-run-h4",
        6,
        {"test_answer_is_the_code": 1.0},
        "run",
        "4",
    )
    assert task.oracle_turns == tmp_path / inst.id / "oracle_turns.json"
    steps = read_oracle_turns(task.id, task.oracle_turns)
    # layout 2 (`LABEL = VALUE  # MARK`), each read's record in force marked by its own word
    next_rx = r"(?m)^next\ =\ (/app/\S+\.sh [0-9]{4})\ \ \#\ "
    code_rx = r"(?m)^code\ =\ ([a-z]+-[0-9]{4})\ \ \#\ "
    assert steps == [
        {
            "command": "bash /app/banjo/apple/hazel_storm.sh 3625",
            "capture": {"program2": next_rx + "valid$"},
        },
        {"command": "bash {program2}", "capture": {"program3": next_rx + "valid$"}},
        {"command": "bash {program3}", "capture": {"program4": next_rx + "current$"}},
        {"command": "bash {program4}", "capture": {"code": code_rx + "current$"}},
        {"command": f"echo {{code}} > {ANSWER}", "capture": {}},
    ]
    # a folder without the file loads as before
    (tmp_path / inst.id / "oracle_turns.json").unlink()
    assert load_tasks(tmp_path)[0].oracle_turns is None


@pytest.mark.parametrize(
    "steps, message",
    [
        ([], '"steps" must be a non-empty list'),
        (
            [{"command": "cat x", "capture": {"v": "(a)(b)"}}],
            "step 1: capture 'v': regex '(a)(b)' has 2 groups, needs 1",
        ),
        (
            [{"command": "echo {v}"}],
            "step 1: command field {v} is not a variable an earlier step captures",
        ),
        (
            [{"command": "cat x", "capture": {"v": "(a)"}}, {"command": "echo hi"}],
            "step 1: captures 'v', which no later step uses",
        ),
        (
            [
                {"command": "cat x", "capture": {"v": "(a)"}},
                {"command": "cat {v}", "capture": {"w": "(b)"}},
            ],
            "step 2: the last step captures ['w'], which no step uses",
        ),
        (
            [{"command": "cat x", "run": "y"}],
            'step 1: must be an object with "command" and optional "capture"',
        ),
    ],
)
def test_a_malformed_oracle_turns_file_is_refused_naming_the_step(tmp_path, steps, message):
    inst = make_instance("train", 0, "pointer", 1)
    write_instance(inst, tmp_path)
    path = tmp_path / inst.id / "oracle_turns.json"
    path.write_text(json.dumps({"steps": steps}))
    with pytest.raises(TaskError) as info:
        load_tasks(tmp_path, strict=True)
    assert str(info.value) == f"task '{inst.id}', field 'oracle_turns': {message} [{path}]"


@pytest.mark.parametrize(
    "args, line",
    [
        (
            {"seeds": "5:3"},
            "error: seeds = '5:3': must be START:END (END excluded) or one seed N, with 0 <= START < END "
            "<= 1000000",
        ),
        (
            {"seeds": "0:1000001"},
            "error: seeds = '0:1000001': must be START:END (END excluded) or one seed N, with 0 <= START "
            "< END <= 1000000",
        ),
        (
            {"seeds": "0:4", "hops": "0-5"},
            "error: hops = '0-5': must be LO-HI or one number N, with 1 <= LO <= HI <= 8",
        ),
        (
            {"seeds": "0:4", "shapes": ("pointer", "maze")},
            "error: shapes = 'pointer maze': must be distinct names among pointer, run, config",
        ),
        (
            {"seeds": "0:4", "split": "test"},
            "error: split = 'test': must be one of train, validation, eval",
        ),
        (
            {"seeds": "0:10001"},
            "error: seeds = '0:10001': 10001 instances, more than 10000 in one call (each is a task "
            "folder of a few files, and every one is generated before the first is written); write "
            "larger sets in several calls, e.g. 0:10000 then 10000:20000",
        ),
    ],
)
def test_bad_family_arguments_get_one_line_naming_the_flag(tmp_path, capsys, args, line):
    assert family_cli(out=str(tmp_path / "out"), **args) == 2
    assert capsys.readouterr().out == line + "\n"
    assert not (tmp_path / "out").exists()


def test_the_family_command_writes_instances_and_refuses_to_overwrite_another(
    tmp_path, capsys, monkeypatch
):
    argv = ["python -m tasks", "family", "--out", str(tmp_path), "--seeds", "0:6"]
    argv += ["--shapes", "run", "config", "--hops", "2-3"]
    monkeypatch.setattr(sys, "argv", argv)
    assert tasks_main() == 0
    assert capsys.readouterr().out == (
        f"6 train instance(s) (seeds 0:6) in {tmp_path}: 2 config h2, 1 config h3, 2 run h2, 1 run h3\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "family.json",
        "mt-train-0-run-h2",
        "mt-train-1-config-h2",
        "mt-train-2-run-h3",
        "mt-train-3-config-h3",
        "mt-train-4-run-h2",
        "mt-train-5-config-h2",
    ]
    # a folder holding anything but the instance is never overwritten
    (tmp_path / "mt-train-0-run-h2" / "task.toml").write_text("changed\n")
    assert tasks_main() == 2
    assert capsys.readouterr().out == (
        f"error: {tmp_path / 'mt-train-0-run-h2'} exists and differs from instance mt-train-0-run-h2; "
        "remove it to generate it again\n"
    )


# ---------------------------------------------------------------- the oracle in real containers

# One instance per shape (SHAPES), with the hop counts spread so that each kind of step appears. They
# are eval instances of the shortcut suite's sample (SUITE_SEEDS 12, 4 and 8, below): the suite then
# reuses their images and the verifier's toolchain copies of them instead of building its own.
CASES = [("pointer", 5, 12), ("run", 2, 4), ("config", 3, 8)]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The CASES' instances written, loaded and built once: [(instance, task, image tag)]; the images are
    removed after the module."""
    root = tmp_path_factory.mktemp("family")
    out = []
    for shape, hops, seed in CASES:
        inst = make_instance("eval", seed, shape, hops)
        write_instance(inst, root)
        (task,) = load_tasks(root / inst.id)
        start = time.monotonic()
        tag = images.build_image(task)
        print(f"{inst.id}: image built in {time.monotonic() - start:.1f} s")
        out.append((inst, task, tag))
    yield out
    for _, _, tag in out:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, timeout=120)


async def act_out(task, tag) -> tuple[dict, list[str], float]:
    """The oracle's steps run in a sandbox through the agent's bash tool, each command formatted from the
    values earlier observations revealed: (captured variables, the observations, the tests' score)."""
    steps = read_oracle_turns(task.id, task.oracle_turns)
    values = {}
    observations = []
    limits = sandbox.Limits().for_task(task)
    async with await sandbox.start_sandbox(task, tag, limits) as sb:
        for step in steps:
            command = step["command"].format(**values)
            call = ToolCall("bash", {"command": command})
            text, meta = await run_tool(sb, call, time.monotonic() + 60, 30.0, 16384)
            assert meta["exit_code"] == 0, text
            # the markdown observation (`$ command` above the tool's text) and the tool's text alike
            shown = f"$ {command}\n{text}"
            observations.append(shown)
            for var, regex in step["capture"].items():
                assert re.search(regex, shown).group(1) == re.search(regex, text).group(1)
                values[var] = re.search(regex, text).group(1)
        report = await sb.run_tests(task.tests_dir, timeout=task.test_timeout_s)
    return values, observations, verify(report, task.weights).score


async def guess(task, tag) -> float:
    """One turn: a wrong code written without reading anything; the tests' score."""
    async with await sandbox.start_sandbox(task, tag, sandbox.Limits().for_task(task)) as sb:
        await sb.exec(f"echo amber-1234 > {ANSWER}", timeout=30)
        report = await sb.run_tests(task.tests_dir, timeout=task.test_timeout_s)
    return verify(report, task.weights).score


@pytest.mark.docker
def test_the_oracle_turns_solve_the_instance_and_a_one_turn_guess_does_not(built):
    # every case's oracle episode and guess at once: they wait on containers, not on the CPU
    async def every():
        return await asyncio.gather(
            *(asyncio.gather(act_out(task, tag), guess(task, tag)) for _, task, tag in built)
        )

    start = time.monotonic()
    outcomes = asyncio.run(every())
    print(f"{len(built)} oracle episodes and guesses in {time.monotonic() - start:.1f} s")
    assert [inst.shape for inst, _, _ in built] == [shape for shape, _, _ in CASES]
    for (inst, task, _), ((values, observations, score), guessed) in zip(built, outcomes):
        assert (inst.id, score, guessed) == (inst.id, 1.0, 0.0)
        assert values["code"] == inst.code
        assert len(observations) == inst.hops + 1 == task.max_turns - 1
        # every revealed value is in an earlier observation and in the next command
        for var, value in values.items():
            step = next(i for i, s in enumerate(inst.steps) if var in s.get("capture", {}))
            assert value in observations[step]
            assert value in observations[step + 1].splitlines()[0]


@pytest.mark.docker
def test_generated_instances_validate_with_their_solution_sh(built):
    results = asyncio.run(validate_tasks([task for _, task, _ in built], jobs=3))
    assert [(r.task_id, r.verdict) for r in results] == [
        ("mt-eval-12-pointer-h5", "valid"),
        ("mt-eval-4-run-h2", "valid"),
        ("mt-eval-8-config-h3", "valid"),
    ]


def test_a_hand_edited_later_folder_is_refused_before_any_folder_is_written(tmp_path, capsys):
    assert family_cli(out=str(tmp_path), seeds="0:6") == 0
    later = tmp_path / "mt-train-3-pointer-h2"
    (later / "task.toml").write_text("changed\n")
    for seed, name in enumerate(("pointer", "run", "config")):
        shutil.rmtree(tmp_path / f"mt-train-{seed}-{name}-h1")
    capsys.readouterr()
    assert family_cli(out=str(tmp_path), seeds="0:6") == 2
    assert capsys.readouterr().out == (
        f"error: {later} exists and differs from instance {later.name}; remove it to generate it again\n"
    )
    # seeds 0, 1 and 2 come before it: none of them was written again
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "family.json",
        "mt-train-3-pointer-h2",
        "mt-train-4-run-h2",
        "mt-train-5-config-h2",
    ]


def test_an_out_that_is_a_file_or_unwritable_gets_one_line_naming_out(tmp_path, capsys):
    (tmp_path / "file").write_text("x\n")
    assert family_cli(out=str(tmp_path / "file"), seeds="0:2") == 2
    assert capsys.readouterr().out == (
        f"error: {tmp_path / 'file'} exists and is not a folder (--out names the folder to write into)\n"
    )
    # below a file: the folder cannot be made
    assert family_cli(out=str(tmp_path / "file" / "sub"), seeds="0:2") == 2
    out = capsys.readouterr().out
    assert out.startswith(f"error: --out {tmp_path / 'file' / 'sub'}: cannot write ")
    assert out.endswith(": Not a directory\n") and out.count("\n") == 1


# ---------------------------------------------------------------- the shortcut suite in real containers

# Eval instances spread over the cells: each shape at two hop counts (pointer 1 and 5, run 2 and 6,
# config 3 and 7; CASES above are three of them); one resolve among six is 17%, over the 5% bar. The
# whole eval split's figures come from bench/bench_family.py (BENCHMARKS.md), which a test here would
# take minutes to repeat.
SUITE_SEEDS = range(0, 24, 4)


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from hf.weights import resolve_model_dir

    return AutoTokenizer.from_pretrained(resolve_model_dir(PRESET.policy.path))


def _suite_script():
    """scripts/shortcut_suite.py, imported (scripts/ is no package): its `suite` and `admissible_rates`."""
    spec = importlib.util.spec_from_file_location(
        "shortcut_suite", Path(__file__).resolve().parent.parent / "scripts" / "shortcut_suite.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SUITE = _suite_script()
suite, admissible_rates = SUITE.suite, SUITE.admissible_rates


@pytest.mark.docker
def test_no_shortcut_within_the_presets_caps_resolves_more_than_5_percent_and_the_oracle_all(
    tmp_path, tokenizer
):
    start = time.monotonic()
    instances = [instance_for_seed("eval", s) for s in SUITE_SEEDS]
    results = suite(instances, tmp_path, tokenizer)
    rates = shortcuts.rates(results)
    admissible = admissible_rates(results)
    print(f"shortcut suite on {len(results)} eval instances in {time.monotonic() - start:.0f} s")
    for name in results[0].resolved:
        tokens = max(r.tokens[name] for r in results)
        print(f"  {name}: {rates[name]:.1%} resolved, up to {tokens} tokens")
    assert [r.oracle_score for r in results] == [1.0] * len(instances)
    # every dump fits a turn; none resolves an instance
    assert set(shortcuts.DUMPS) <= set(admissible)
    assert {name: rate for name, rate in admissible.items() if rate > shortcuts.SHORTCUT_MAX} == {}
    # the one-command solvers need more than a turn's 48 tokens, so the preset's policy cannot issue them;
    # run all the same, they resolve what a longer turn could (printed above: the mark-aware loop and the
    # 1-turn shape oracle reach 1-hop instances of their layout)
    assert set(shortcuts.SOLVERS).isdisjoint(admissible)


@pytest.mark.docker
def test_the_suite_catches_a_tree_small_enough_to_dump(tmp_path, tokenizer):
    # the check made to fail: two 2-hop instances with 3 other files each instead of hundreds (config's
    # keys print in a dump as pointer's notes do; one of the two is enough to show the catch)
    instances = [
        make_instance("eval", s, shape, 2, fillers=3) for s, shape in enumerate(SHAPES[:2])
    ]
    assert [i.shape for i in instances] == ["pointer", "run"]
    results = suite(instances, tmp_path, tokenizer)
    assert [r.oracle_score for r in results] == [1.0, 1.0]
    # pointer prints its records in a dump; run's programs keep theirs in base64
    assert [r.resolved["grep-r"] for r in results] == [True, False]
    assert admissible_rates(results)["grep-r"] == pytest.approx(1 / 2)
    assert admissible_rates(results)["grep-r"] > shortcuts.SHORTCUT_MAX
