"""The warm start from demonstrations: a task's oracle as turns (tasks/oracle.py), the reactive oracle
(agent/oracle.py) through ScriptedEngine and the real agent loop, SFT on the action tokens
(learner/sft.py), the exported policy, the command (experiments/warm_start.py), the demonstrations'
hop limit and the best SFT-only policy early-stopped on a validation split.

Real Docker and real task folders (two shipped tasks with a solution.sh, one written here whose
oracle_turns.json needs what an earlier observation showed), the real SmolLM2 tokenizer, a tiny real
Qwen3 trained in-process.
"""

import asyncio
import dataclasses
import json
import os
import subprocess
import sys

import pytest
import torch
from rollout_helpers import CFG, ROOT, TASKS, assert_matches_template, observations

import configs
import engines as E
import rollout as R
from agent.actions import markdown_stop_check, parse_actions
from agent.chat import ChatFormat
from agent.oracle import OracleError, OracleReplies, reply_text
from agent.tools import observations as observation_messages
from engines import SamplingParams
from experiments import settings
from experiments.warm_start import (
    demonstration_tasks,
    early_stop,
    oracle_plans,
    refuse_eval_overlap,
    sft_best,
    warm_start,
)
from hf import weights
from learner.packing import Sample, collate
from learner.sft import demonstrations, masked_nll, masked_nll_sum, sft_epochs, train_sft
from tasks import TaskError, family, load_tasks
from tasks.oracle import oracle_steps, split_script

# ----------------------------------------------------------------------------- a reactive task

FIND_CODE_STEPS = {
    "steps": [
        {"command": "ls /app/box", "capture": {"name": r"(\w+)\.txt"}},
        {"command": "cat /app/box/{name}.txt", "capture": {"code": r"code: (\d+)"}},
        {"command": "echo {code} > /app/answer.txt"},
    ]
}


def find_code_task(root, name="quartz", code="7319"):
    """A task folder whose solution needs two observations: the file's name (from `ls`), then the
    code in it (from `cat`); no solution.sh, only oracle_turns.json."""
    d = root / f"find-code-{name}"
    (d / "tests").mkdir(parents=True)
    (d / "Dockerfile").write_text(
        "ARG BASE_IMAGE=termrl/base:bookworm\nFROM ${BASE_IMAGE}\nWORKDIR /app\n"
        f'RUN mkdir -p /app/box && echo "code: {code}" > /app/box/{name}.txt\n'
    )
    (d / "task.toml").write_text(
        f'id = "find-code-{name}"\n'
        'instruction = """A file in /app/box holds a code. Write just the code into /app/answer.txt"""\n'
        'difficulty = "easy"\ncategory = "file-operations"\ntags = ["multi-turn"]\n'
        "agent_timeout_s = 120\ntest_timeout_s = 30\n\n[weights]\ntest_answer = 1.0\n"
    )
    (d / "tests" / "test_outputs.py").write_text(
        "from pathlib import Path\n\n\ndef test_answer():\n"
        f'    assert Path("/app/answer.txt").read_text().strip() == "{code}"\n'
    )
    (d / "oracle_turns.json").write_text(json.dumps(FIND_CODE_STEPS))
    return d


def task_set(root):
    """A task folder: the reactive task and two shipped tasks with a solution.sh (symlinks)."""
    d = root / "tasks"
    d.mkdir()
    find_code_task(d)
    for i in ("write-hello-file", "count-lines"):
        (d / i).symlink_to(os.path.join(TASKS, i))
    return d


# ----------------------------------------------------------------------------- a task's oracle as turns


def test_a_solution_script_splits_into_its_top_level_commands_with_heredocs_and_blocks_whole():
    script = (
        "#!/bin/bash\nset -euo pipefail\n# write the program\n"
        "cat > /app/a.py <<'PY'\ndef f():\n    return 1\nPY\n"
        "if [ -f /app/a.py ]; then\n  echo yes\nfi\n"
        "echo one \\\n  two\n\nls /app\n"
    )
    assert split_script(script) == [
        "cat > /app/a.py <<'PY'\ndef f():\n    return 1\nPY",
        "if [ -f /app/a.py ]; then\n  echo yes\nfi",
        "echo one \\\n  two",
        "ls /app",
    ]


def test_a_script_that_reads_its_arguments_or_exits_is_acted_out_as_one_turn(tmp_path):
    [task] = load_tasks(os.path.join(TASKS, "write-hello-file"))
    for body, turns in (
        ("echo a > /app/a\necho '{print $1}' > /app/b\n", 2),  # $1 in single quotes is data
        ('echo a > /app/a\necho "$1" > /app/b\n', 1),
        ("echo a > /app/a\nexit 0\n", 1),
    ):
        script = tmp_path / "solution.sh"
        script.write_text("#!/bin/bash\n" + body)
        task.solution = script
        steps = oracle_steps(task, max_turns=8)
        assert len(steps) == turns, body
        if turns == 1:
            assert steps[0]["command"].format() == body.strip()
    # more commands than the turns leave room for (one is DONE's): the whole script in one turn
    script.write_text("echo a\necho b\necho c\n")
    assert len(oracle_steps(task, max_turns=3)) == 1
    assert len(oracle_steps(task, max_turns=4)) == 3


def test_oracle_turns_that_read_a_var_no_earlier_step_captured_are_refused(tmp_path):
    # one validator (tasks/checks.read_oracle_turns): the loader refuses the file, the oracle never sees it
    d = find_code_task(tmp_path)
    bad = {"steps": [{"command": "cat /app/box/{name}.txt"}]}
    (d / "oracle_turns.json").write_text(json.dumps(bad))
    with pytest.raises(
        TaskError,
        match=r"field 'oracle_turns': step 1: command field \{name\} is not a variable an earlier step captures",
    ):
        load_tasks(str(d))
    bad = {"steps": [{"command": "ls", "capture": {"name": r"\w+"}}, {"command": "cat {name}"}]}
    (d / "oracle_turns.json").write_text(json.dumps(bad))
    with pytest.raises(TaskError, match=r"step 1: capture 'name': regex .* has 0 groups, needs 1"):
        load_tasks(str(d))
    (d / "oracle_turns.json").write_text(json.dumps(FIND_CODE_STEPS))
    [task] = load_tasks(str(d))
    assert [s["command"] for s in oracle_steps(task, 4)] == [
        "ls /app/box",
        "cat /app/box/{name}.txt",
        "echo {code} > /app/answer.txt",
    ]
    with pytest.raises(
        TaskError,
        match=r"3 steps and DONE need 4 turns; the episode allows 3 \(raise --rollout.max-turns;",
    ):
        oracle_steps(task, 3)


def test_a_demonstration_task_in_the_evaluation_set_is_refused(tmp_path):
    train = [load_tasks(str(find_code_task(tmp_path / "a", "quartz")))[0]]
    same_instruction = [load_tasks(str(find_code_task(tmp_path / "b", "onyx")))[0]]
    with pytest.raises(
        configs.ConfigError, match=r"in the evaluation set .*\['find-code-quartz'\]"
    ):
        refuse_eval_overlap(train, same_instruction)
    # the validation set the best SFT-only policy is chosen on is refused the same way, by its name
    with pytest.raises(configs.ConfigError, match=r"in the evaluation set sft_best\.tasks \(same"):
        refuse_eval_overlap(train, same_instruction, "sft_best.tasks")
    refuse_eval_overlap(train, load_tasks(os.path.join(TASKS, "count-lines")))


def test_a_generated_instance_renamed_and_reworded_is_still_refused_by_its_generator_seed(tmp_path):
    # the same train instance written twice; the second copy renamed and its instruction reworded
    family.generate_family(tmp_path / "train", "train", range(3, 4))
    family.generate_family(tmp_path / "copy", "train", range(3, 4))
    [original] = load_tasks(str(tmp_path / "train"))
    [copied] = load_tasks(str(tmp_path / "copy"))
    disguised = dataclasses.replace(
        copied, id="renamed", instruction=copied.instruction.replace("The", "the", 1) + " "
    )
    assert disguised.instruction != original.instruction and disguised.id != original.id
    with pytest.raises(
        configs.ConfigError,
        match=r"^tasks: the evaluation set eval_tasks: held_out shares 1 generator seed\(s\) with train: ",
    ):
        refuse_eval_overlap([original], [disguised])
    # an eval instance of the same seed number is another generator seed: accepted
    family.generate_family(tmp_path / "eval", "eval", range(3, 4))
    refuse_eval_overlap([original], load_tasks(str(tmp_path / "eval")))


@pytest.mark.parametrize(
    "flag, value, why",
    [
        ("--sft.lr", "inf", "sft.lr = inf: must be a finite number > 0"),
        ("--device", "quantum", "device = 'quantum': must be 'cpu' or 'cuda[:N]'"),
    ],
)
def test_the_warm_start_refuses_an_infinite_lr_and_an_unknown_device_in_one_line(flag, value, why):
    with pytest.raises(configs.ConfigError) as e:
        settings.parse_warm_start_cli(["--tasks", TASKS, flag, value], check_paths=False)
    assert str(e.value) == why


def test_demonstrations_keep_only_generated_instances_of_at_most_the_hop_limit(tmp_path):
    family.generate_family(tmp_path / "train", "train", range(3), ("pointer",), range(1, 4))
    tasks = load_tasks(str(tmp_path / "train"))
    kept, left_out = demonstration_tasks(tasks, 2)
    assert sorted(t.id for t in kept) == ["mt-train-0-pointer-h1", "mt-train-1-pointer-h2"]
    assert left_out == ["mt-train-2-pointer-h3"]
    # a task without hops (not generated) is kept whatever the limit
    shipped = load_tasks(os.path.join(TASKS, "count-lines"))
    assert demonstration_tasks(shipped, 1) == (shipped, [])
    with pytest.raises(
        configs.ConfigError,
        match=r"^demo_max_hops = 2: every one of the 1 task\(s\) has more hops; none is left",
    ):
        demonstration_tasks([t for t in tasks if t.id.endswith("h3")], 2)


# ----------------------------------------------------------------------------- the best SFT-only policy


def _early_stops(rates, steps, patience, min_steps):
    """early_stop after each evaluation of a run, as sft_best calls it: [(chosen, stop), ...]."""
    return [
        early_stop(rates[: i + 1], steps[: i + 1], patience, min_steps) for i in range(len(rates))
    ]


def test_early_stopping_keeps_the_first_best_and_stops_after_patience_evaluations_without_gain():
    rates = [0.25, 0.5, 0.5, 0.375, 0.625, 0.5, 0.5]
    steps = [6, 12, 18, 24, 30, 36, 42]
    # the tie at 18 steps keeps 12's; 0.625 at 30 steps restarts the count; two stale ones stop it
    assert _early_stops(rates, steps, 2, 0) == [
        (0, False),
        (1, False),
        (1, False),
        (1, True),
        (4, False),
        (4, False),
        (4, True),
    ]
    # patience 3: the third stale evaluation after 12 steps would be at 30, which improves
    assert _early_stops(rates, steps, 3, 0)[:5] == [
        (0, False),
        (1, False),
        (1, False),
        (1, False),
        (4, False),
    ]


def test_early_stopping_never_stops_before_min_steps_and_still_chooses_an_earlier_evaluation():
    rates = [0.5, 0.25, 0.25, 0.25, 0.25]
    steps = [6, 12, 18, 24, 30]
    # patience is spent at 12 steps; min_steps 24 holds the stop back until the evaluation at 24
    assert _early_stops(rates, steps, 1, 24) == [
        (0, False),
        (0, False),
        (0, False),
        (0, True),
        (0, True),
    ]
    assert early_stop([0.0], [1], 1, 0) == (0, False)
    with pytest.raises(ValueError, match=r"^early_stop: need one step per validation rate, got 2"):
        early_stop([0.1, 0.2], [6], 1, 0)


@pytest.mark.skipif(torch.cuda.is_available(), reason="the refusal is for a machine without CUDA")
def test_the_warm_start_on_cuda_without_a_cuda_device_is_refused_before_any_episode(tmp_path):
    cfg = settings.parse_warm_start_cli(
        ["--tasks", TASKS, "--device", "cuda", "--out-dir", str(tmp_path)], check_paths=False
    )
    with pytest.raises(
        configs.ConfigError, match=r"^device = 'cuda': this machine has no CUDA device$"
    ):
        warm_start(cfg)
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------- the reactive oracle, in-process


def _act_out(tok, fmt, steps, outputs):
    """The oracle's replies turn by turn, each observation the tool output given, tokens built as
    the agent loop builds them (stop rule, parser, observation tokens). Returns the parsed calls."""
    chat = ChatFormat(tok, fmt)
    engine = E.ScriptedEngine(tok, OracleReplies(chat, {"Find the code.": steps}))
    _, ids = chat.prompt_ids("Find the code.")
    stop = markdown_stop_check(tok) if fmt == "markdown" else None
    calls = []
    for output in outputs + [None]:
        c = R.cut_at_stop(asyncio.run(engine.generate(ids, SamplingParams(max_tokens=256))), stop)
        [call] = parse_actions(chat.decode(c.token_ids), fmt, 65536)
        calls.append(call)
        if output is None:
            return calls
        obs = observation_messages(chat, [(call, output, {})])
        ids = ids + c.token_ids + chat.observation_ids(obs, closed=c.token_ids[-1] == chat.eot_id)


@pytest.mark.parametrize("fmt", ["markdown", "hermes"])
def test_the_oracle_writes_each_command_with_what_the_observations_before_it_showed(tok, fmt):
    outputs = ["exit code: 0\nnotes.md\nquartz.txt\n", "exit code: 0\ncode: 7319\n", "exit code: 0"]
    calls = _act_out(tok, fmt, FIND_CODE_STEPS["steps"], outputs)
    assert [(c.name, c.arguments.get("command")) for c in calls] == [
        ("bash", "ls /app/box"),
        ("bash", "cat /app/box/quartz.txt"),
        ("bash", "echo 7319 > /app/answer.txt"),
        ("finish", None),
    ]


def test_a_capture_that_finds_nothing_fails_the_episode_naming_the_var(tok):
    with pytest.raises(OracleError, match=r"step 0 capture 'name' .* found nothing .*'empty\\n'"):
        _act_out(tok, "markdown", FIND_CODE_STEPS["steps"], ["exit code: 0\nempty\n"])


def test_a_markdown_reply_holding_a_fence_gets_a_longer_fence():
    command = "cat > /app/README.md <<'EOF'\n```\nx\n```\nEOF"
    reply = reply_text(command, "markdown")
    assert reply == f"````bash\n{command}\n````\n"
    assert parse_actions(reply, "markdown", 65536)[0].arguments == {"command": command}


# ----------------------------------------------------------------------------- SFT, in-process


def test_the_sft_loss_counts_only_action_tokens(tiny_dir):
    # An observation token is context for the action tokens after it, so changing it may change
    # their log-probs; what the loss must never do is score it: tokens after the last action
    # (context for nothing) change nothing, an action token does, and so does unmasking one.
    model = weights.load_hf(tiny_dir)
    ids = list(range(100, 140))
    mask = [0] * 10 + [1] * 10 + [0] * 10 + [1] * 5 + [0] * 5

    @torch.no_grad()
    def loss(ids, mask):
        nll, n = masked_nll_sum(model, collate([Sample(ids, mask, [0.0] * len(ids), 1.0)]))
        return float(nll), float(n)

    base, n = loss(ids, mask)
    assert n == 15.0
    assert loss(ids[:35] + [7, 8, 9, 10, 11], mask) == (base, 15.0)
    assert loss(ids[:34] + [7] + ids[35:], mask)[0] != base
    assert loss(ids, mask[:35] + [1] + mask[36:]) != (base, 15.0)


def test_the_exported_warm_start_loads_as_the_policy_train_and_evaluate_start_from(
    tiny_dir, tmp_path, tok
):
    model = weights.load_hf(tiny_dir)
    chat = ChatFormat(tok, "markdown")
    _, prompt = chat.prompt_ids("Find the code.")
    reply = tok.encode(reply_text("ls /app/box", "markdown"), add_special_tokens=False)
    ids = prompt + reply
    sample = Sample(ids, [0] * len(prompt) + [1] * len(reply), [0.0] * len(ids), 1.0)
    cfg = configs.SFTConfig(epochs=2, lr=1e-3, batch_size=1)
    train_sft(model, [sample], cfg, torch.device("cpu"))
    out = weights.save_hf(model, tmp_path / "hf", tokenizer_dir=tiny_dir)
    # the knobs that name a policy accept the folder, and it loads as what they load
    train_cfg = configs.parse_cli(["--policy.path", str(out), "--tasks", TASKS])
    eval_cfg = configs.parse_eval_cli(["--model", str(out), "--tasks", TASKS])
    assert train_cfg.policy.path == eval_cfg.policy.path == str(out)
    loaded = weights.load_hf(weights.resolve_model_dir(str(out)))
    for (name, a), (_, b) in zip(model.state_dict().items(), loaded.state_dict().items()):
        assert torch.equal(a, b), name
    engine = E.build_engine(
        eval_cfg.policy, out, weights.load_tokenizer(out), torch.device("cpu"), seed=0
    )
    c = asyncio.run(engine.generate(prompt, SamplingParams(temperature=0.0, max_tokens=4)))
    assert len(c.token_ids) == 4


# ----------------------------------------------------------------------------- through the agent loop, real containers


@pytest.fixture(scope="module")
def oracle_run(tok, tmp_path_factory):
    """The oracle's trajectories on the three tasks (markdown, the SmolLM2 tokenizer)."""
    tasks = load_tasks(str(task_set(tmp_path_factory.mktemp("ws"))))
    chat = ChatFormat(tok, "markdown")
    engine = E.ScriptedEngine(tok, OracleReplies(chat, oracle_plans(tasks, CFG.max_turns)))
    groups = asyncio.run(
        R.run_episodes(
            tasks, engine, tok, 1, CFG, opts=R.EpisodeOptions("markdown"), progress=False
        )
    )
    return tasks, [t for g in groups for t in g.trajectories]


@pytest.mark.docker
def test_the_oracle_resolves_its_tasks_through_the_agent_loop_token_for_token(oracle_run, tok):
    tasks, trajectories = oracle_run
    chat = ChatFormat(tok, "markdown")
    by_id = {t.task_id: t for t in trajectories}
    assert {i: (t.error, t.stop_reason, t.resolved, t.num_turns) for i, t in by_id.items()} == {
        "count-lines": (None, "finish", True, 2),
        "find-code-quartz": (None, "finish", True, 4),
        "write-hello-file": (None, "finish", True, 2),
    }
    traj = by_id["find-code-quartz"]
    # the name and the code came from the observations, not from the plan
    commands = [
        "ls /app/box",
        "cat /app/box/quartz.txt",
        "echo 7319 > /app/answer.txt",
    ]
    assert [c["arguments"] for m in traj.messages for c in m.get("tool_calls", [])] == [
        {"command": c} for c in commands
    ] + [{"message": "DONE"}]
    assert observations(traj)[1] == "$ cat /app/box/quartz.txt\nexit code: 0\ncode: 7319\n"
    # loss_mask 1 exactly on the replies as the policy would have generated them: each bash block
    # cut after its closing fence by the markdown stop rule (the end-of-turn token then goes in
    # as an observation token), DONE closed by the end-of-turn token
    replies = [tok.encode(reply_text(c, "markdown"), add_special_tokens=False) for c in commands]
    replies.append(tok.encode("DONE", add_special_tokens=False) + [chat.eot_id])
    assert [t for t, m in zip(traj.token_ids, traj.loss_mask) if m == 1] == sum(replies, [])
    prompt_len = len(chat.prompt_ids(tasks[1].instruction)[1])
    assert traj.prompt_len == prompt_len and sum(traj.loss_mask[:prompt_len]) == 0
    assert_matches_template(traj, chat)
    assert len(demonstrations(trajectories)) == 3


@pytest.mark.docker
def test_sft_on_the_demonstrations_lowers_the_masked_nll_of_their_action_tokens(
    oracle_run, tiny_dir
):
    _, trajectories = oracle_run
    samples = demonstrations(trajectories)
    model = weights.load_hf(tiny_dir)
    cpu = torch.device("cpu")
    before = masked_nll(model, samples, 8192, cpu)
    cfg = configs.SFTConfig(epochs=5, lr=3e-3, lr_schedule="constant", batch_size=3)
    epochs = train_sft(model, samples, cfg, cpu)
    after = masked_nll(model, samples, 8192, cpu)
    # measured: 10.87 nats per action token before (the tiny random model: about ln 49152 = 10.80,
    # a uniform guess over the vocabulary), 9.04 after 5 steps
    assert before == pytest.approx(10.87, abs=0.05)
    assert after < before - 1.5
    assert [e["epoch"] for e in epochs] == [1, 2, 3, 4, 5] and epochs[-1]["nll"] < epochs[0]["nll"]


@pytest.mark.docker
@pytest.mark.model_run
def test_the_warm_start_command_demonstrates_trains_and_exports_a_policy(tmp_path):
    tasks = task_set(tmp_path)
    out = tmp_path / "ws"
    cmd = [sys.executable, "-m", "experiments.warm_start", "--tasks", str(tasks)]
    cmd += ["--policy.path", "tiny-random-qwen3", "--rollout.max-turns", "6", "--no-progress"]
    cmd += ["--out-dir", str(out), "--sft.lr", "3e-3", "--sft.epochs", "2"]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    record = json.loads((out / "warm_start.json").read_text())
    assert (record["episodes"], record["resolved"], record["stop_reasons"]) == (3, 3, {"finish": 3})
    assert record["nll_after"] < record["nll_before"]
    assert (out / "hf" / "config.json").is_file() and (out / "hf" / "tokenizer.json").is_file()
    assert len((out / "demonstrations.jsonl").read_text().splitlines()) == 3
    assert f"policy: {out / 'hf'}" in r.stdout
    # the same task set named as the evaluation set: refused, nothing run
    r = subprocess.run(
        cmd + ["--eval-tasks", str(tasks)], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 2
    assert "3 demonstration task(s) are in the evaluation set" in r.stderr


@pytest.mark.docker
def test_the_best_sft_policy_is_chosen_on_the_validation_split_and_recorded(
    oracle_run, tiny_dir, tmp_path
):
    _, trajectories = oracle_run
    # two demonstrations (count-lines, find-code-quartz); the third task, whose image the oracle run
    # built, is the validation set
    samples = demonstrations(trajectories)[:2]
    assert [t.task_id for t in trajectories] == [
        "count-lines",
        "find-code-quartz",
        "write-hello-file",
    ]
    cfg = settings.WarmStartConfig(
        policy=dataclasses.replace(settings.WarmStartConfig().policy, path=str(tiny_dir)),
        rollout=dataclasses.replace(CFG, max_context_tokens=2048, max_tokens_per_turn=16),
        sft=configs.SFTConfig(lr=1e-3, batch_size=2),
        sft_best=settings.SFTBestConfig(
            tasks=TASKS,
            task_ids=("write-hello-file",),
            k=1,
            patience=1,
            min_steps=2,
            max_epochs=4,
        ),
        out_dir=str(tmp_path / "ws"),
        progress=False,
    )
    settings.validate_warm_start(cfg)
    record = sft_best(cfg, samples, tiny_dir, tmp_path / "ws")
    # the tiny random policy resolves nothing: the tie keeps the first evaluation, and patience 1
    # stops at the second, at min_steps (one optimizer step per epoch: 2 demonstrations, batch 2)
    assert [(e["step"], e["epoch"], e["resolved_rate"]) for e in record["evaluations"]] == [
        (1, 1, 0.0),
        (2, 2, 0.0),
    ]
    assert [(e["instances"], e["episodes"], e["errors"]) for e in record["evaluations"]] == [
        (1, 1, 0),
        (1, 1, 0),
    ]
    assert [e["resolved_rate_ci95"] for e in record["evaluations"]] == [[0.0, 0.0], [0.0, 0.0]]
    nlls = [e["train_nll"] for e in record["evaluations"]]
    assert nlls[1] < nlls[0]
    assert (record["chosen"]["index"], record["chosen"]["step"]) == (0, 1)
    assert (record["steps"], record["stop_reason"]) == (2, "patience")
    assert record["sft"]["lr"] == 1e-3 and record["demonstrations"] == 2
    written = tmp_path / "ws" / "sft_best"
    assert json.loads((written / "sft_best.json").read_text()) == record
    # only the chosen checkpoint is left, as the exported policy
    assert sorted(p.name for p in written.iterdir()) == ["eval", "hf", "sft_best.json"]
    # the exported policy is the first epoch's weights (the chosen), not the last's
    model = weights.load_hf(tiny_dir)
    sft_cfg = dataclasses.replace(cfg.sft, lr=1e-3)
    next(sft_epochs(model, samples, sft_cfg, torch.device("cpu"), 4))
    exported = weights.load_hf(written / "hf")
    for (name, a), (_, b) in zip(model.state_dict().items(), exported.state_dict().items()):
        assert torch.equal(a, b), name
