"""experiments/learn.py (`make learn`, multi-turn): the flow share on written conversations, the verdict on given
numbers, the config's checks, the generated sets' disjointness, training's seconds per step, and one tiny run end
to end (the whole flow with the tiny random Qwen3, 1 rank, 1 step, real Docker)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import configs
from experiments import learn
from experiments.learn_single import policy_stats
from tasks import family

ROOT = Path(__file__).resolve().parent.parent
# capture regexes of the shape oracle_turns.json uses (tasks/family.record_regex), in their simplest layout
NEXT = r"(?m)^next: (\S+)$"
CODE = rf"(?m)^code: ({family.CODE})$"


def conversation(*turns: tuple[str, str]) -> list[dict]:
    """A conversation: system, the instruction, then (command, observation) pairs."""
    messages = [
        {"role": "system", "content": "You are a Linux terminal agent."},
        {"role": "user", "content": "Start by reading the note /app/a/b/first.txt."},
    ]
    for command, observation in turns:
        messages.append(
            {
                "role": "assistant",
                "content": f"```bash\n{command}\n```",
                "tool_calls": [{"name": "bash", "arguments": {"command": command}}],
            }
        )
        messages.append({"role": "user", "content": observation})
    return messages


# -----------------------------------------------------------------------------
# the flow share


def test_a_value_an_observation_revealed_and_a_later_command_used_is_flow():
    messages = conversation(
        (
            "cat /app/a/b/first.txt",
            "$ cat /app/a/b/first.txt\nexit code: 0\nnext: /app/a/c/second.txt\n",
        ),
        ("cat /app/a/c/second.txt", "$ cat /app/a/c/second.txt\nexit code: 0\ncode: lynx-4821\n"),
        ("echo lynx-4821 > /app/answer.txt", "exit code: 0"),
    )
    assert learn.carries_flow(messages, [NEXT, CODE]) is True
    assert learn.carried_values(messages, [NEXT, CODE]) == {"/app/a/c/second.txt"}
    # only the first hop carried forward: still flow
    assert learn.carries_flow(messages[:5], [NEXT, CODE]) is True


def test_writing_the_code_read_last_is_no_flow():
    # a 1-hop episode: the code read, then written; the final write carries no hop
    messages = conversation(
        ("cat /app/a/b/first.txt", "$ cat /app/a/b/first.txt\nexit code: 0\ncode: lynx-4821\n"),
        ("echo lynx-4821 > /app/answer.txt", "exit code: 0"),
    )
    assert learn.carried_values(messages, [NEXT, CODE]) == set()
    assert learn.carries_flow(messages, [NEXT, CODE]) is False


def test_a_guessed_value_or_one_the_instruction_gave_is_no_flow():
    # the answer was written without reading it: lynx-4821 appears in the command before any observation shows it
    guessed = conversation(
        ("echo lynx-4821 > /app/answer.txt", "exit code: 0"),
        ("cat /app/a/b/first.txt", "$ cat /app/a/b/first.txt\nexit code: 0\ncode: lynx-4821\n"),
    )
    assert learn.carries_flow(guessed, [CODE]) is False
    # the observation names the note the instruction already gave: reading it again is no flow
    echoed = conversation(
        ("cat /app/a/b/first.txt", "exit code: 0\nnext: /app/a/b/first.txt\n"),
        ("cat /app/a/b/first.txt", "exit code: 0"),
    )
    assert learn.carries_flow(echoed, [NEXT]) is False
    # a command that failed to parse ran nothing: a later message without tool calls carries nothing
    silent = conversation(("cat /app/a/b/first.txt", "exit code: 0\ncode: lynx-4821\n"))
    silent.append({"role": "assistant", "content": "the code is lynx-4821", "tool_calls": []})
    assert learn.carries_flow(silent, [CODE]) is False


def test_flow_share_counts_resolved_scored_episodes_only():
    flowed = conversation(
        ("cat /app/a/b/first.txt", "exit code: 0\nnext: /app/a/c/second.txt\n"),
        ("cat /app/a/c/second.txt", "exit code: 0\ncode: lynx-4821\n"),
        ("echo lynx-4821 > /app/answer.txt", "exit code: 0"),
    )
    guessed = conversation(("echo lynx-4821 > /app/answer.txt", "exit code: 0"))
    trajectories = [
        {"task_id": "t", "reward": 1.0, "resolved": True, "messages": flowed},
        {"task_id": "t", "reward": 1.0, "resolved": True, "messages": flowed},
        {"task_id": "t", "reward": 1.0, "resolved": True, "messages": guessed},
        {"task_id": "t", "reward": 0.0, "resolved": False, "messages": flowed},
        {"task_id": "t", "reward": None, "resolved": False, "messages": flowed},
    ]
    patterns = {"t": [NEXT, CODE]}
    assert learn.flow_share(trajectories, patterns, {"t": 2}) == {
        "resolved": 3,
        "flowed": 2,
        "share": 2 / 3,
        "by_hops": {2: {"resolved": 3, "flowed": 2, "hop_share": 2 / 3}},
    }
    assert learn.flow_share(trajectories[3:], patterns, {"t": 2}) == {
        "resolved": 0,
        "flowed": 0,
        "share": None,
        "by_hops": {},
    }
    # 1-hop instances have no value to carry but the code: left out
    assert learn.flow_share(trajectories, patterns, {"t": 1})["resolved"] == 0
    with pytest.raises(KeyError, match="no capture regexes or hops for task t"):
        learn.flow_share(trajectories, {}, {"t": 2})
    with pytest.raises(KeyError, match="no capture regexes or hops for task t"):
        learn.flow_share(trajectories, patterns, {})


# -----------------------------------------------------------------------------
# the instance-level paired bootstrap


def episodes(task: str, *resolved: bool) -> list[dict]:
    return [{"task_id": task, "reward": float(r), "resolved": r} for r in resolved]


def test_instance_means_average_each_instances_scored_episodes():
    trajs = episodes("a", True, False, True, True) + episodes("b", False, False)
    trajs.append({"task_id": "b", "reward": None, "resolved": False})  # errored: left out
    assert learn.instance_means(trajs) == {"a": 0.75, "b": 0.0}


def test_a_constant_paired_difference_has_a_zero_width_interval():
    a = {"x": 0.25, "y": 0.5, "z": 0.0}
    b = {"x": 0.75, "y": 1.0, "z": 0.5}
    out = learn.paired_bootstrap(a, b, resamples=500)
    assert out == {"instances": 3, "a": 0.25, "b": 0.75, "diff": 0.5, "ci95": [0.5, 0.5]}


def test_two_instances_differing_by_0_and_1_give_the_interval_0_to_1():
    # resampled means are 0, 1/2, 1 with chances 1/4, 1/2, 1/4: the 2.5th and 97.5th percentiles are 0 and 1
    out = learn.paired_bootstrap({"x": 0.0, "y": 0.0}, {"x": 0.0, "y": 1.0}, resamples=4000)
    assert (out["diff"], out["ci95"]) == (0.5, [0.0, 1.0])


def test_the_pairing_cancels_what_instances_share():
    # instance difficulty varies widely, the gain is 0.25 on every instance: paired, the interval is exact
    a = {f"t{i}": i / 10 for i in range(8)}
    b = {t: v + 0.25 for t, v in a.items()}
    assert learn.paired_bootstrap(a, b, resamples=1000)["ci95"] == [0.25, 0.25]


def test_instances_scored_for_one_policy_only_are_refused():
    with pytest.raises(ValueError, match=r"instances scored for one policy only: \['y'\]"):
        learn.paired_bootstrap({"x": 0.0, "y": 1.0}, {"x": 1.0}, resamples=10)
    with pytest.raises(ValueError, match="no instance scored"):
        learn.paired_bootstrap({}, {}, resamples=10)


def test_results_per_cell_and_paired_per_cell():
    cells = {"p1": "pointer-h1", "p2": "pointer-h1", "r3": "run-h3"}
    warm = episodes("p1", False, False) + episodes("p2", True, False) + episodes("r3", False, False)
    grpo = episodes("p1", True, True) + episodes("p2", True, True) + episodes("r3", False, True)
    assert learn.by_cell(grpo, cells) == {
        "pointer-h1": {"instances": 2, "resolved_rate": 1.0},
        "run-h3": {"instances": 1, "resolved_rate": 0.5},
    }
    paired = learn.paired_by_cell(warm, grpo, cells, resamples=200)
    assert paired["run-h3"] == {"instances": 1, "a": 0.0, "b": 0.5, "diff": 0.5, "ci95": [0.5, 0.5]}
    assert paired["pointer-h1"]["diff"] == 0.75
    assert (paired["all"]["instances"], paired["all"]["unpaired"]) == (3, [])
    # every episode of one policy errored: no pair, said rather than raised after the evaluation
    errored = [{**t, "reward": None} for t in warm]
    assert learn.paired_by_cell(errored, grpo, cells, resamples=200) == {
        "all": {"instances": 0, "diff": None, "ci95": None, "unpaired": ["p1", "p2", "r3"]}
    }
    with pytest.raises(KeyError, match="no \\(shape, hops\\) cell for task r3"):
        learn.by_cell(grpo, {"p1": "pointer-h1", "p2": "pointer-h1"})


# -----------------------------------------------------------------------------
# the verdict


def stats(resolved: int, n: int) -> dict:
    """policy_stats of n episodes, `resolved` of them resolved (reward 1) and the rest reward 0."""
    trajectories = [
        {"task_id": "t", "reward": float(i < resolved), "resolved": i < resolved} for i in range(n)
    ]
    return policy_stats(trajectories, resamples=200)


def test_verdict_is_shown_when_the_grpo_interval_lies_above_the_warm_starts():
    # 60/128 = 0.469 [0.384, 0.555] vs 20/128 = 0.156 [0.103, 0.229]: apart
    results = {"warm_start": stats(20, 128), "grpo": stats(60, 128)}
    flow = {"resolved": 60, "flowed": 57, "share": 0.95}
    control = {"warm_start": stats(0, 64), "grpo": stats(1, 64)}
    shown, criteria, line = learn.verdict(results, flow, control)
    assert shown is True
    assert criteria == {"interval_above": True, "flow_real": True, "control_ok": True}
    assert line == (
        "learning: warm start + GRPO vs warm start, resolved rate on held-out instances: "
        "0.469 [0.384,0.555] vs 0.156 [0.103,0.229] (non-overlapping 95% CIs; 128 vs 128 episodes); "
        "flow 57/60 = 95% of resolved episodes (real: >= 90% needed); "
        "control at 1 turn: warm 0.0%, GRPO 1.6% (ok: <= 2%)"
    )


def test_verdict_is_not_shown_when_the_intervals_overlap_and_says_what_failed():
    # 30/128 = 0.234 [0.170, 0.314] vs 20/128: overlap
    results = {"warm_start": stats(20, 128), "grpo": stats(30, 128)}
    flow = {"resolved": 30, "flowed": 24, "share": 0.8}
    control = {"warm_start": stats(0, 64), "grpo": stats(3, 64)}
    shown, criteria, line = learn.verdict(results, flow, control)
    assert shown is False
    assert criteria == {"interval_above": False, "flow_real": False, "control_ok": False}
    assert line.startswith("not shown: ") and "(95% CIs overlap; 128 vs 128 episodes)" in line
    assert "flow 24/30 = 80% of resolved episodes (not real: >= 90% needed)" in line
    assert line.endswith("control at 1 turn: warm 0.0%, GRPO 4.7% (too high: <= 2%)")
    # GRPO below the warm start: not shown, and the line says it is worse
    shown, _, line = learn.verdict(
        {"warm_start": stats(60, 128), "grpo": stats(20, 128)}, flow, control
    )
    assert shown is False and "non-overlapping 95% CIs; 128 vs 128 episodes; GRPO is worse" in line


def test_verdict_without_scored_episodes_is_not_shown():
    empty = policy_stats([{"task_id": "t", "reward": None, "resolved": False}])
    shown, criteria, line = learn.verdict(
        {"warm_start": stats(2, 8), "grpo": empty},
        {"resolved": 0, "flowed": 0, "share": None},
        {"warm_start": stats(0, 8), "grpo": stats(0, 8)},
    )
    assert (shown, criteria["interval_above"]) == (False, None)
    assert line == "not shown: no scored held-out episode of the GRPO policy"


# -----------------------------------------------------------------------------
# the config, the instances, the step timings


def test_bad_knobs_are_refused_naming_the_field():
    with pytest.raises(
        configs.ConfigError, match=r"demonstrations = 60: must be <= train_instances \(48\)"
    ):
        learn.parse_args(["--demonstrations", "60"])
    with pytest.raises(configs.ConfigError, match=r"k = 0: must be >= 1"):
        learn.parse_args(["--k", "0"])
    with pytest.raises(configs.ConfigError, match=r"hops = '0-2'"):
        learn.parse_args(["--hops", "0-2"])
    with pytest.raises(configs.ConfigError, match=r"shapes = 'pointer maze'"):
        learn.parse_args(["--shapes", "pointer", "maze"])
    cfg, rest = learn.parse_args(["--train-instances", "30", "--", "--steps", "2"])
    assert (cfg.train_instances, cfg.preset, rest) == (30, "cpu-learn-multiturn", ["--steps", "2"])


def test_generated_train_and_held_out_instances_are_disjoint_and_reruns_keep_them(tmp_path):
    cfg, _ = learn.parse_args(
        ["--train-instances", "6", "--eval-instances", "4", "--demonstrations", "2"]
    )
    train, held_out = learn.generate(cfg, tmp_path)
    assert [t.id for t in train] == [
        "mt-train-0-pointer-h1",
        "mt-train-1-run-h1",
        "mt-train-2-config-h1",
        "mt-train-3-pointer-h2",
        "mt-train-4-run-h2",
        "mt-train-5-config-h2",
    ]
    assert [t.meta["rng_seed"] for t in held_out] == ["1000000", "1000001", "1000002", "1000003"]
    # a second run finds the same folders and keeps them
    again, _ = learn.generate(cfg, tmp_path)
    assert [t.id for t in again] == [t.id for t in train]
    # the check the run makes: a held-out set holding a train instance is refused
    with pytest.raises(ValueError, match="held_out shares 1 generator seed"):
        family.check_disjoint(train, [*held_out, train[0]])
    patterns = learn.revealed_patterns(train[:1])
    ((code_rx,),) = [
        tuple(s["capture"].values())
        for s in family.make_instance("train", 0, "pointer", 1).steps[:1]
    ]
    assert patterns == {"mt-train-0-pointer-h1": [code_rx]}
    # a rerun asking for other counts is refused: the folder was written for another experiment
    bigger, _ = learn.parse_args(
        ["--train-instances", "8", "--eval-instances", "4", "--demonstrations", "2"]
    )
    with pytest.raises(FileExistsError, match="seeds = \\[0, 6\\], asked \\[0, 8\\]"):
        learn.generate(bigger, tmp_path)


def test_step_timings_average_the_metrics_records(tmp_path):
    rows = [
        {
            "step": s,
            "reward_mean": r,
            "resolved_rate": r,
            "step_s": 100.0 + s,
            "rollout_s": 60.0,
            "generate_s": 40.0,
            "train_s": 30.0,
            "sync_s": 2.0,
            "tools_s": 0.5,
            "verify_s": 8.0,
            "agent_s": 20.0,
            "episodes": 16,
            "turns_mean": 3.0,
            "malformed_turn_rate": 0.1 * s,
            "zero_variance_share": 0.5,
            "refill_rounds": s,
            "refill_episodes": 8 * s,
            "stop_reasons": {"finish": 10, "max_turns": 6},
        }
        for s, r in ((1, 0.25), (2, 0.5))
    ]
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    t = learn.step_timings(path)
    assert (t["steps"], t["step_s"], t["generation_s"], t["rollout_tail_s"], t["update_s"]) == (
        2,
        101.5,
        40.0,
        20.0,
        32.0,
    )
    assert (t["tools_s_per_episode"], t["verify_s_per_episode"]) == (0.5, 8.0)
    assert t["malformed_turn_rate"] == pytest.approx(0.15)
    assert (t["refill_rounds"], t["refill_episodes"]) == (3, 24)
    assert t["stop_reasons"] == {"finish": 20, "max_turns": 12}
    assert (t["reward_first_last"], t["resolved_first_last"]) == ([0.25, 0.5], [0.25, 0.5])
    path.write_text("")
    with pytest.raises(ValueError, match="no step recorded"):
        learn.step_timings(path)


# -----------------------------------------------------------------------------
# end to end, tiny


@pytest.mark.model_run
@pytest.mark.docker
def test_tiny_multiturn_learn_run_writes_learning_json_and_a_verdict_from_its_numbers(tmp_path):
    out = tmp_path / "learn"
    cmd = [
        sys.executable,
        "-m",
        "experiments.learn",
        "--out-dir",
        str(out),
        "--nproc",
        "1",
        "--train-instances",
        "3",
        "--eval-instances",
        "2",
        "--demonstrations",
        "3",
        "--sft-epochs",
        "1",
        "--k",
        "1",
        "--control-k",
        "1",
        "--base-k",
        "1",
        "--bootstrap-resamples",
        "200",
        "--",
        "--policy.path",
        "tiny-random-qwen3",
        "--steps",
        "1",
        "--tasks-per-step",
        "2",
        "--grpo.group-size",
        "2",
        "--grpo.refill-rounds",
        "0",
        "--grpo.no-drop-zero-variance-groups",
    ]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    learning = json.loads((out / "learning.json").read_text())
    assert learning["policies"] == {
        "base": "tiny-random-qwen3",
        "warm_start": str(out / "warm_start" / "hf"),
        "grpo": str(out / "train" / "hf"),
    }
    assert learning["config"]["eval_ids"] == ["mt-eval-0-pointer-h1", "mt-eval-1-run-h1"]
    assert learning["config"]["demonstration_ids"] == learning["config"]["train_ids"]
    # the oracle resolves every demonstration instance
    assert (learning["warm_start"]["episodes"], learning["warm_start"]["resolved"]) == (3, 3)
    for name in ("base", "warm_start", "grpo"):
        s = learning["results"][name]
        assert s["episodes"] == 2 and s["scored"] + s["errors"] == 2
        assert learning["episodes"][name]["turns_mean"] >= 1.0
    for name in ("warm_start", "grpo"):
        assert learning["control"][name]["episodes"] == 2
    assert learning["training"]["steps"] == 1
    # the verdict line is the one verdict() computes from the numbers written
    shown, criteria, line = learn.verdict(
        learning["results"], learning["flow"]["grpo"], learning["control"]
    )
    assert learning["verdict"] == {"shown": shown, **criteria, "line": line}
    assert p.stdout.rstrip().endswith(line)
    assert (out / "learning.png").stat().st_size > 0


def test_the_figure_draws_a_policy_that_resolved_nothing(tmp_path):
    # Wilson's interval at 0 of 48 starts a rounding error above 0 (6.9e-18): the figure must still draw it
    zero = stats(0, 48)
    assert zero["resolved_rate_ci95"][0] > 0.0
    learning = {
        "results": {"base": zero, "warm_start": stats(40, 48), "grpo": stats(44, 48)},
        "verdict": {"line": "not shown: ..."},
    }
    png = learn.plot(learning, tmp_path / "learning.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("flags, shown", [([], True), (["--no-progress"], False)])
def test_the_warm_start_shows_its_progress_unless_asked_not_to(tmp_path, flags, shown):
    cfg, _ = learn.parse_args(["--out-dir", str(tmp_path), *flags])
    train_cfg = configs.parse_cli(["--preset", cfg.preset], check_paths=False)
    for split in ("train", "eval"):
        (tmp_path / "tasks" / split).mkdir(parents=True)
    warm = learn.warm_start_config(cfg, train_cfg, ["mt-train-0-pointer-h1"], tmp_path)
    assert warm.progress is shown


def test_leave_one_shape_out_trains_without_the_shape_and_evaluates_it(tmp_path):
    cfg, _ = learn.parse_args(
        ["--train-instances", "4", "--eval-instances", "3", "--demonstrations", "2"]
        + ["--held-out-shape", "run"]
    )
    train, held_out = learn.generate(cfg, tmp_path)
    assert [t.id for t in train] == [
        "mt-train-0-pointer-h1",
        "mt-train-1-config-h1",
        "mt-train-2-pointer-h2",
        "mt-train-3-config-h2",
    ]
    assert [t.meta["shape"] for t in held_out] == ["pointer", "run", "config"]
    cells = {t.id: learn.cell_of(t) for t in held_out}
    trajectories = {
        "warm_start": [e for t in held_out for e in episodes(t.id, False, False)],
        "grpo": [e for t in held_out for e in episodes(t.id, t.meta["shape"] == "run", False)],
    }
    result = learn.held_out_shape_result(cfg, trajectories, cells)
    assert result == {
        "shape": "run",
        "paired": {"instances": 1, "a": 0.0, "b": 0.5, "diff": 0.5, "ci95": [0.5, 0.5]},
    }
    with pytest.raises(
        configs.ConfigError, match=r"^held_out_shape = 'maze': must be one of shapes"
    ):
        learn.parse_args(["--held-out-shape", "maze"])
