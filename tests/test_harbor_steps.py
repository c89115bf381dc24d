"""Harbor multi-step tasks (task.toml `[[steps]]`, harbor 0.25): loading and the refusal of each bad
field, the steps' rewards rolled up as harbor rolls them up, and episodes through the agent loop: the
oracle acting every step's solution, and a scripted policy that sees step 2's instruction as a user
turn after step 1. The task folder is written here in harbor's shape (no published task copied)."""

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from rollout_helpers import CFG, RecordingEngine, assert_matches_template

import reward
import rollout as R
from agent.chat import ChatFormat
from configs import SandboxConfig
from sandboxing.verifier import TestReport
from tasks import TaskError, load_tasks
from tasks.oracle import oracle_steps
from tasks.validate import validate_task

HELPERS = (
    "pass() { echo 1 > /logs/verifier/reward.txt; exit 0; }\n"
    "fail() { echo 0 > /logs/verifier/reward.txt; exit 0; }\n"
)
TOML = """version = "1.4"

[task]
name = "termrl/hb-steps"

[agent]
timeout_sec = 100.0

[verifier.env]
SHARED = "from the task"

[[steps]]
name = "make"
min_reward = 1.0

[steps.verifier]
timeout_sec = 40.0

[[steps]]
name = "grow"

[steps.agent]
timeout_sec = 80.0

[steps.verifier.env]
WANT = "two"
"""
MAKE_TEST = (
    "#!/bin/bash\nsource /tests/helpers.sh\n"
    '[ "$(cat /app/a.txt)" = one ] && [ "$SHARED" = "from the task" ] && pass\nfail\n'
)
GROW_TEST = (
    "#!/bin/bash\nsource /tests/helpers.sh\n"
    '[ "$(cat /app/b.txt)" = "$WANT" ] && [ "$(cat /app/a.txt)" = one ] && pass\nfail\n'
)


def write_task(root: Path, toml: str = TOML) -> Path:
    """A two-step Harbor task: step "make" writes /app/a.txt; step "grow" copies the seed its
    workdir/ puts in /app to b.txt. Shared tests/helpers.sh, each step its own test.sh."""
    files = {
        "task.toml": toml,
        "environment/Dockerfile": ("FROM python:3.12-slim@sha256:" + "0" * 64 + "\nWORKDIR /app\n"),
        "tests/helpers.sh": HELPERS,
        "steps/make/instruction.md": "Write `one` to /app/a.txt.",
        "steps/make/tests/test.sh": MAKE_TEST,
        "steps/make/solution/solve.sh": "#!/bin/bash\necho one > /app/a.txt\n",
        "steps/grow/instruction.md": "Copy /app/seed.txt to /app/b.txt.",
        "steps/grow/tests/test.sh": GROW_TEST,
        "steps/grow/solution/solve.sh": "#!/bin/bash\ncp /app/seed.txt /app/b.txt\n",
        "steps/grow/workdir/seed.txt": "two\n",
        "steps/grow/workdir/setup.sh": 'echo set-up > /app/setup-ran.txt\nrm -- "$0"\n',
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


# ---------------------------------------------------------------- loading


def test_a_multi_step_task_loads_each_steps_instruction_tests_env_timeouts_and_oracle(tmp_path):
    (task,) = load_tasks(write_task(tmp_path / "hb-steps"))
    make, grow = task.steps
    assert (task.id, task.step_reward, task.instruction) == (
        "hb-steps",
        "mean",
        "Write `one` to /app/a.txt.",
    )
    assert [s.name for s in task.steps] == ["make", "grow"]
    assert (make.test_timeout_s, make.agent_timeout_s, make.min_reward) == (
        40.0,
        100.0,
        {"reward": 1.0},
    )
    assert (grow.test_timeout_s, grow.agent_timeout_s, grow.min_reward) == (600.0, 80.0, None)
    # /tests of a step: the shared tests/ with the step's own over it, as harbor uploads both
    assert sorted(p.name for p in Path(grow.tests_dir).iterdir()) == ["helpers.sh", "test.sh"]
    assert (Path(grow.tests_dir) / "test.sh").read_text() == GROW_TEST
    # [verifier.env] then the step's [steps.verifier.env] over it, exported by the script
    assert grow.verifier_script.startswith(
        "#!/bin/bash\nexport SHARED='from the task'\nexport WANT=two\n"
    )
    assert make.verifier_script.startswith("#!/bin/bash\nexport SHARED='from the task'\nsource")
    assert make.solution == tmp_path / "hb-steps/steps/make/solution/solve.sh"
    assert grow.workdir_dir == tmp_path / "hb-steps/steps/grow/workdir"
    assert make.workdir_dir is None
    assert task.tests_dir == make.tests_dir and task.verifier_script == make.verifier_script


def _edit(old: str, new: str):
    return lambda root: (root / "task.toml").write_text(TOML.replace(old, new, 1))


def _remove(rel: str):
    def edit(root: Path):
        path = root / rel
        shutil.rmtree(path) if path.is_dir() else path.unlink()

    return edit


@pytest.mark.parametrize(
    "edit, field, message",
    [
        (_edit('name = "grow"', 'name = "a/b"'), "steps[1].name", "portable directory name"),
        (_edit('name = "grow"', 'name = "MAKE"'), "steps[1].name", "names a step twice"),
        (_edit("min_reward = 1.0", 'min_reward = "high"'), "steps[0].min_reward", "a number"),
        (
            _edit('version = "1.4"', 'version = "1.4"\nmulti_step_reward_strategy = "max"'),
            "multi_step_reward_strategy",
            "must be one of mean, final",
        ),
        (
            _edit(
                "[steps.agent]", '[steps.verifier.environment]\ndocker_image = "x"\n[steps.agent]'
            ),
            "steps[1].verifier.environment",
            "separate verifier environment is not supported",
        ),
        (
            _edit("timeout_sec = 40.0", "timeout_sec = -1"),
            "steps[0].verifier.timeout_sec",
            "positive",
        ),
        (_edit('WANT = "two"', "WANT = 2"), "steps[1].verifier.env.WANT", 'NAME = "string"'),
        (_remove("steps/grow"), "steps/grow", "is missing (the step's folder)"),
        (_remove("steps/grow/instruction.md"), "steps/grow/instruction.md", "is missing"),
        (_remove("steps/grow/tests/test.sh"), "steps/grow/tests/test.sh", "is missing"),
        (_remove("steps/grow/solution/solve.sh"), "steps/grow/solution/solve.sh", "is missing"),
    ],
)
def test_each_bad_step_field_is_refused_in_one_line_naming_task_and_field(
    tmp_path, edit, field, message
):
    root = write_task(tmp_path / "hb-steps")
    edit(root)
    with pytest.raises(TaskError) as e:
        load_tasks(root)
    assert (e.value.task_id, e.value.field) == ("hb-steps", field)
    assert message in e.value.message and "\n" not in str(e.value)


def test_a_reward_strategy_without_steps_is_still_refused(tmp_path):
    root = tmp_path / "one"
    shutil.copytree(Path(__file__).parent / "fixtures/harbor/hb-hello", root)
    text = (root / "task.toml").read_text()
    (root / "task.toml").write_text('multi_step_reward_strategy = "mean"\n' + text)
    with pytest.raises(
        TaskError, match="field 'multi_step_reward_strategy': applies to multi-step"
    ):
        load_tasks(root)


def test_step_fields_termrl_does_not_act_on_are_each_said_in_one_line(tmp_path, caplog):
    toml = TOML.replace(
        'name = "grow"',
        'name = "grow"\nartifacts = ["/app/b.txt"]\n[steps.healthcheck]\ncommand = "true"',
    )
    load_tasks(write_task(tmp_path / "hb-steps", toml))
    lines = [r.getMessage() for r in caplog.records if "steps[1]" in r.getMessage()]
    assert len(lines) == 2
    assert "steps[1].artifacts is not taken: termrl collects no artifacts" in lines[0]
    assert "steps[1].healthcheck is not taken" in lines[1]


def test_a_multi_step_task_is_refused_as_demonstration_turns(tmp_path):
    (task,) = load_tasks(write_task(tmp_path / "hb-steps"))
    with pytest.raises(TaskError, match="field 'steps': 2 steps: a multi-step task's oracle acts"):
        oracle_steps(task, 10)


# ---------------------------------------------------------------- the roll-up


def _report(parts, tampered=None):
    return TestReport(
        {k: v >= 1.0 for k, v in parts.items()},
        False,
        None,
        0.1,
        "",
        parts=parts,
        tampered=tampered,
    )


def test_steps_roll_up_as_harbor_mean_per_key_missing_keys_zero_or_the_final_step():
    steps = [_report({"reward": 1.0, "style": 0.5}), _report({"reward": 0.0})]
    mean = reward.roll_up_steps(steps, "mean")
    # reward: (1 + 0) / 2; style: (0.5 + 0) / 2 -- the "reward" key is the score
    assert (mean.score, mean.passed, sorted(mean.failed)) == (0.5, [], ["reward", "style"])
    final = reward.roll_up_steps(steps, "final")
    assert (final.score, final.resolved) == (0.0, False)
    assert reward.roll_up_steps([_report({"a": 1.0}), _report({"b": 0.5})]).score == 0.375
    forged = reward.roll_up_steps([_report({"reward": 1.0}), _report({}, tampered="why")])
    assert (forged.score, forged.tampered) == (0.0, "why")
    with pytest.raises(ValueError, match="strategy 'max'"):
        reward.roll_up_steps(steps, "max")


# ---------------------------------------------------------------- episodes


@pytest.mark.docker
def test_oracle_acts_every_step_and_scores_1_and_a_policy_skipping_step_2_scores_the_mean(
    tmp_path, tok, docker_client
):
    (task,) = load_tasks(write_task(tmp_path / "hb-steps"))
    # step 1 solved, step 2 answered DONE at once (harbor's mean of 1.0 and 0.0); and step 1 left
    # undone, under its min_reward
    script = [
        "```bash\necho one > /app/a.txt\n```",
        "DONE",
        "```bash\ncat setup-ran.txt\n```",
        "DONE",
    ]
    eng = RecordingEngine(tok, script)
    oracle_opts = R.EpisodeOptions(oracle=True)
    opts = R.EpisodeOptions("markdown", SandboxConfig())

    async def main():  # the three episodes at once: each waits on its containers
        runs = [
            R.run_episodes([task], None, tok, 1, CFG, opts=oracle_opts, progress=False),
            R.run_episodes([task], eng, tok, 1, CFG, opts=opts, progress=False),
            R.run_episodes(
                [task], RecordingEngine(tok, ["DONE"]), tok, 1, CFG, opts=opts, progress=False
            ),
        ]
        return [g.trajectories[0] for (g,) in await asyncio.gather(*runs)]

    oracle, traj, gated = asyncio.run(main())
    assert oracle.error is None, oracle.error
    assert [(s["name"], s["stop_reason"], s["parts"]) for s in oracle.steps] == [
        ("make", "oracle", {"reward": 1.0}),
        ("grow", "oracle", {"reward": 1.0}),
    ]
    assert oracle.reward == 1.0 and oracle.resolved

    assert traj.error is None, traj.error
    assert [(s["name"], s["stop_reason"], s["turns"], s["parts"]) for s in traj.steps] == [
        ("make", "finish", 2, {"reward": 1.0}),
        ("grow", "finish", 2, {"reward": 0.0}),
    ]
    assert (traj.reward, traj.num_turns, traj.stop_reason) == (0.5, 4, "finish")
    # step 2's instruction is the user turn after step 1's DONE, then its workdir's setup.sh had run
    roles = [(m["role"], m["content"]) for m in traj.messages if m["role"] != "system"]
    assert roles[0] == ("user", "Write `one` to /app/a.txt.")
    done = [i for i, (r, c) in enumerate(roles) if r == "assistant" and c == "DONE"]
    assert roles[done[0] + 1] == ("user", "Copy /app/seed.txt to /app/b.txt.")
    assert "set-up" in roles[done[0] + 3][1]
    # the instruction turn is not trained on; the tokens are the template's rendering of messages
    chat = ChatFormat(tok, "markdown")
    assert_matches_template(traj, chat)
    instruction = tok.encode("Copy /app/seed.txt to /app/b.txt.", add_special_tokens=False)
    at = next(
        i
        for i in range(len(traj.token_ids))
        if traj.token_ids[i : i + len(instruction)] == instruction
    )
    assert traj.loss_mask[at : at + len(instruction)] == [0] * len(instruction)
    generated = [t for t, m in zip(traj.token_ids, traj.loss_mask) if m == 1]
    assert generated == [t for c in eng.completions for t in c.token_ids]
    assert json.dumps(traj.to_json(), default=str)

    # step 1 left undone: under its min_reward 1.0, so step 2 never runs (harbor's gate) and the
    # mean is over step 1 alone
    assert gated.error is None, gated.error
    assert gated.steps == [
        {"name": "make", "stop_reason": "finish", "turns": 1, "parts": {"reward": 0.0}, "cut": True}
    ]
    assert gated.reward == 0.0
    assert "Copy /app/seed.txt to /app/b.txt." not in [m["content"] for m in gated.messages]


@pytest.mark.docker
def test_tasks_validate_runs_every_steps_oracle_and_fails_a_task_whose_later_step_fails(
    tmp_path, docker_client
):
    (good,) = load_tasks(write_task(tmp_path / "hb-steps"))
    broken_root = write_task(tmp_path / "broken" / "hb-steps")
    (broken_root / "steps/grow/solution/solve.sh").write_text("#!/bin/bash\ntrue\n")
    (broken,) = load_tasks(broken_root)

    async def main():
        return await asyncio.gather(validate_task(good), validate_task(broken))

    ok, bad = asyncio.run(main())
    assert (ok.verdict, ok.reasons, ok.after.parts) == ("valid", [], {"reward": 1.0})
    # step 1's oracle passes its tests; step 2's does nothing, and its tests say so
    assert (bad.verdict, bad.after.parts) == ("invalid", {"reward": 0.0})
    assert bad.reasons == ["tests fail after the solution: reward"]
