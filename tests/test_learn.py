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
from tasks import family, shortcuts

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
# the flow per hop, the final write excluded

# the records of a 3-hop chain, each read's own mark (tasks/family.record_regex)
HOP1 = r"(?m)^next: (\S+) \(latest\)$"
HOP2 = r"(?m)^next: (\S+) \(active\)$"
HOP3 = rf"(?m)^code: ({family.CODE}) \(valid\)$"
CHAIN = [[HOP1], [HOP2], [HOP3]]


def three_hops(*last: tuple[str, str]) -> list[dict]:
    """A 3-hop episode up to the second note read, then `last`."""
    return conversation(
        (
            "cat /app/a/b/first.txt",
            "exit code: 0\nnext: /app/a/old.txt (old)\nnext: /app/a/c/2.txt (latest)\n",
        ),
        ("cat /app/a/c/2.txt", "exit code: 0\nnext: /app/a/d/3.txt (active)\n"),
        *last,
    )


def test_each_hop_counts_when_its_value_reaches_a_later_read_and_never_through_the_final_write():
    read_on = three_hops(
        ("cat /app/a/d/3.txt", "exit code: 0\ncode: lynx-4821 (valid)\n"),
        ("echo lynx-4821 > /app/answer.txt", "exit code: 0"),
    )
    # hops 1 and 2 led to reads; hop 3's code only to the write, so it is not listed
    assert learn.carried_hops(read_on, CHAIN) == [True, True]
    # the note hop 2 revealed goes only into the answer write: no hop, whatever the write holds
    written = three_hops(("cat /app/a/c/2.txt > /app/answer.txt", "exit code: 0"))
    assert learn.carried_hops(written, CHAIN) == [True, False]
    # the same value in a read joined to the write on one line is inside the write: left out too
    joined = three_hops(("cat /app/a/d/3.txt > /app/answer.txt", "exit code: 0"))
    assert learn.carried_hops(joined, CHAIN) == [True, False]
    # a decoy (stale mark) is no revealed value, so reading it carries nothing
    decoy = conversation(
        ("cat /app/a/b/first.txt", "exit code: 0\nnext: /app/a/old.txt (old)\n"),
        ("cat /app/a/old.txt", "exit code: 0"),
    )
    assert learn.carried_hops(decoy, CHAIN) == [False, False]
    # a 1-hop instance has no hop that leads on
    assert learn.carried_hops(read_on, [[HOP3]]) == []


def test_flow_per_hop_over_resolved_and_every_scored_episode_per_cell():
    full = three_hops(
        ("cat /app/a/d/3.txt", "exit code: 0\ncode: lynx-4821 (valid)\n"),
        ("echo lynx-4821 > /app/answer.txt", "exit code: 0"),
    )
    stopped = three_hops(("echo lynx-4821 > /app/answer.txt", "exit code: 0"))
    one_hop = conversation(("cat /app/a/b/first.txt", "exit code: 0\ncode: lynx-4821 (valid)\n"))
    trajectories = [
        {"task_id": "p3", "reward": 1.0, "resolved": True, "messages": full},
        {"task_id": "p3", "reward": 0.0, "resolved": False, "messages": stopped},
        {"task_id": "p3", "reward": None, "resolved": False, "messages": full},
        {"task_id": "c1", "reward": 1.0, "resolved": True, "messages": one_hop},
    ]
    patterns = {"p3": CHAIN, "c1": [[HOP3]]}
    cells = {"p3": "pointer-h3", "c1": "config-h1"}
    resolved = learn.flow_per_hop(trajectories, patterns, cells, resolved_only=True)
    assert resolved == {
        "episodes": 2,
        "by_hop": {
            1: {"episodes": 1, "carried": 1, "share": 1.0},
            2: {"episodes": 1, "carried": 1, "share": 1.0},
        },
        "by_cell": {
            "pointer-h3": {
                1: {"episodes": 1, "carried": 1, "share": 1.0},
                2: {"episodes": 1, "carried": 1, "share": 1.0},
            }
        },
    }
    every = learn.flow_per_hop(trajectories, patterns, cells, resolved_only=False)
    assert every["episodes"] == 3
    assert every["by_hop"] == {
        1: {"episodes": 2, "carried": 2, "share": 1.0},
        2: {"episodes": 2, "carried": 1, "share": 0.5},
    }
    with pytest.raises(KeyError, match="no capture regexes or cell for task p3"):
        learn.flow_per_hop(trajectories, patterns, {"c1": "config-h1"}, resolved_only=False)


# -----------------------------------------------------------------------------
# the control: the shortcut suite


def suite_summary(**changes) -> dict:
    """A shortcut_control summary of 12 validation instances: every shortcut within a 48-token turn at
    0%, the 1-turn shape oracle (66 tokens, over a turn) at 3 of 12, the oracle turn by turn at 12 of 12."""
    out = {
        "split": "validation",
        "instances": 12,
        "rates": {"grep-r": 0.0, "glob-run": 0.0, "shape-oracle-1turn": 0.25},
        "tokens": {"grep-r": 11, "glob-run": 24, "shape-oracle-1turn": 66},
        "turn_tokens": 48,
        "oracle_rate": 1.0,
    }
    return {**out, **changes}


def test_the_control_holds_when_no_shortcut_within_a_turn_resolves_and_the_oracle_does():
    ok, text = learn.control_judgement(suite_summary())
    assert ok is True
    assert text == (
        "control: shortcut suite on 12 validation instances, within a 48-token turn worst grep-r 0% "
        "(<= 5% needed), oracle turn by turn 100% (100% needed): ok; over a turn, not judged: "
        "shape-oracle-1turn"
    )


def test_the_control_fails_on_a_shortcut_within_a_turn_or_an_oracle_below_100_percent():
    # 1 of 12 by a dump is 8%: above 5%
    rates = {"grep-r": 1 / 12, "glob-run": 0.0, "shape-oracle-1turn": 0.25}
    ok, text = learn.control_judgement(suite_summary(rates=rates))
    assert ok is False and "worst grep-r 8% (<= 5% needed)" in text and ": FAILS" in text
    # the same 1-turn shape oracle at 66 tokens fits a 96-token turn: judged, and it fails
    ok, text = learn.control_judgement(suite_summary(turn_tokens=96))
    assert ok is False and "worst shape-oracle-1turn 25%" in text and "not judged" not in text
    # an oracle that misses an instance means the instances or the suite are broken
    ok, text = learn.control_judgement(suite_summary(oracle_rate=11 / 12))
    assert ok is False and "oracle turn by turn 92% (100% needed): FAILS" in text
    assert learn.control_judgement(suite_summary(instances=0)) == (
        None,
        "control: no instance in the shortcut suite",
    )
    # a shortcut within a turn cut at its time limit measured nothing: no judgement either way
    timed_out = {"grep-r": 0, "glob-run": 2, "shape-oracle-1turn": 5}
    assert learn.control_judgement(suite_summary(timed_out=timed_out)) == (
        None,
        "control: shortcut suite on 12 validation instances not judged: glob-run cut at 3 s",
    )
    # one over the turn cap cut short changes nothing: it is not judged
    ok, _ = learn.control_judgement(suite_summary(timed_out={"shape-oracle-1turn": 5}))
    assert ok is True


# -----------------------------------------------------------------------------
# the verdict: the instance-level paired bootstrap


def stats(resolved: int, n: int) -> dict:
    """policy_stats of n episodes, `resolved` of them resolved (reward 1) and the rest reward 0."""
    trajectories = [
        {"task_id": "t", "reward": float(i < resolved), "resolved": i < resolved} for i in range(n)
    ]
    return policy_stats(trajectories, resamples=200)


FLOW = {"resolved": 60, "flowed": 57, "share": 0.95}


def paired(diff: float, lo: float, hi: float, n: int = 64, unpaired: int = 0) -> dict:
    """paired_bootstrap's result with the warm start at 0.297 and GRPO 0.297 + diff."""
    a = 0.297
    return {"instances": n, "a": a, "b": a + diff, "diff": diff, "ci95": [lo, hi]} | {
        "unpaired": [f"t{i}" for i in range(unpaired)]
    }


def test_the_verdict_is_learning_when_the_paired_interval_lies_above_0():
    shown, criteria, line = learn.verdict(
        paired(0.352, 0.199, 0.5), FLOW, suite_summary(), "validation", 4
    )
    assert shown is True
    assert criteria == {"interval_above": True, "flow_real": True, "control_ok": True}
    assert line == (
        "learning: GRPO - warm start, resolved share per instance on 64 validation instances (k = 4 "
        "episodes each; paired bootstrap over instances): +0.352 [+0.199,+0.500], 95% interval above 0 "
        "(warm start 0.297, GRPO 0.649); flow 57/60 = 95% of resolved episodes (real: >= 90% needed); "
        + learn.control_judgement(suite_summary())[1]
    )


def test_the_verdict_is_not_shown_when_the_paired_interval_contains_or_lies_below_0():
    flow = {"resolved": 30, "flowed": 24, "share": 0.8}
    shown, criteria, line = learn.verdict(
        paired(0.062, -0.016, 0.141, unpaired=2), flow, suite_summary(oracle_rate=0.5), "test", 4
    )
    assert shown is False
    assert criteria == {"interval_above": False, "flow_real": False, "control_ok": False}
    assert line.startswith(
        "not shown: GRPO - warm start, resolved share per instance on 64 test instances (k = 4 "
        "episodes each, 2 scored for one policy only left out; paired bootstrap over instances): "
        "+0.062 [-0.016,+0.141], 95% interval contains 0 "
    )
    assert "flow 24/30 = 80% of resolved episodes (not real: >= 90% needed)" in line
    # a lower bound exactly at 0 is not above it
    assert learn.verdict(paired(0.1, 0.0, 0.2), FLOW, suite_summary(), "validation", 4)[0] is False
    shown, _, line = learn.verdict(paired(-0.2, -0.3, -0.1), FLOW, suite_summary(), "validation", 4)
    assert shown is False and "-0.200 [-0.300,-0.100], 95% interval below 0: GRPO is worse" in line


def test_with_sft_best_learning_also_needs_grpo_above_the_best_sft_only_policy():
    above_warm = paired(0.352, 0.199, 0.5)
    shown, criteria, line = learn.verdict(
        above_warm, FLOW, suite_summary(), "test", 4, paired(0.05, -0.02, 0.12, n=60)
    )
    assert (shown, criteria["interval_above"], criteria["above_sft_best"]) == (False, True, False)
    assert line.startswith("not shown: GRPO - warm start")
    assert (
        "(warm start 0.297, GRPO 0.649); GRPO - SFT-best on 60 instances: +0.050 [-0.020,+0.120], contains 0;"
        in line
    )
    shown, criteria, line = learn.verdict(
        above_warm, FLOW, suite_summary(), "test", 4, paired(0.1, 0.03, 0.17, n=60)
    )
    assert (shown, criteria["above_sft_best"]) == (True, True) and line.startswith("learning:")
    none = {"instances": 0, "diff": None, "ci95": None, "unpaired": []}
    shown, criteria, line = learn.verdict(above_warm, FLOW, suite_summary(), "test", 4, none)
    assert (shown, criteria["above_sft_best"]) == (False, None)
    assert "GRPO - SFT-best: no instance scored for both;" in line


def test_the_verdict_comes_from_instance_means_not_episodes():
    # 8 instances, 4 episodes each: GRPO resolves one more episode than the warm start on every instance,
    # so every paired difference is 0.25 and the interval is [0.25, 0.25]
    warm = [e for i in range(8) for e in episodes(f"t{i}", i % 2 == 0, False, False, False)]
    grpo = [e for i in range(8) for e in episodes(f"t{i}", i % 2 == 0, True, False, False)]
    cells = {f"t{i}": "pointer-h2" for i in range(8)}
    both = learn.paired_by_cell(warm, grpo, cells, resamples=200)["all"]
    assert (both["instances"], both["diff"], both["ci95"]) == (8, 0.25, [0.25, 0.25])
    shown, _, line = learn.verdict(both, FLOW, suite_summary(), "validation", 4)
    assert shown is True and "on 8 validation instances (k = 4 episodes each;" in line


def test_the_verdict_without_a_paired_instance_is_not_shown():
    none = {"instances": 0, "diff": None, "ci95": None, "unpaired": ["t1", "t2"]}
    flow = {"resolved": 0, "flowed": 0, "share": None}
    shown, criteria, line = learn.verdict(none, flow, suite_summary(), "validation", 4)
    assert (shown, criteria["interval_above"]) == (False, None)
    assert line == (
        "not shown: no validation instance has a scored episode of both the warm start and GRPO "
        "(scored for one only: 2)"
    )


# -----------------------------------------------------------------------------
# training seeds


def test_each_training_seed_is_a_grpo_run_of_its_own_folder_and_seed(tmp_path):
    argv = ["--preset", "p", "--out-dir", str(tmp_path / "train"), "--overwrite", "--steps", "4"]
    assert learn.seed_runs(argv, (), tmp_path) == {"grpo": argv}
    runs = learn.seed_runs(argv, (0, 1, 2), tmp_path)
    assert list(runs) == ["grpo", "grpo_seed1", "grpo_seed2"]
    assert runs["grpo"] == [*argv, "--seed", "0"]
    assert runs["grpo_seed2"] == [
        *["--preset", "p", "--out-dir", str(tmp_path / "train-seed2")],
        *["--overwrite", "--steps", "4", "--seed", "2"],
    ]
    with pytest.raises(configs.ConfigError, match=r"train_seeds = \(1, 1\): must be distinct"):
        learn.parse_args(["--train-seeds", "1", "1"])
    with pytest.raises(configs.ConfigError, match="^train_seeds: a --seed after `--`"):
        learn.parse_args(["--train-seeds", "0", "1", "--", "--seed", "3"])


def test_the_lora_run_is_the_full_runs_argv_into_its_own_folder_with_rank_and_lr_last(tmp_path):
    argv = ["--preset", "p", "--out-dir", str(tmp_path / "train"), "--lr", "1e-5", "--steps", "4"]
    assert learn.lora_runs(argv, 0, 1e-4, tmp_path) == {}
    assert learn.lora_runs(argv, 8, 1e-4, tmp_path) == {
        "grpo_lora": [
            *["--preset", "p", "--out-dir", str(tmp_path / "train-lora"), "--lr", "1e-5"],
            *["--steps", "4", "--lora.rank", "8", "--lr", "0.0001"],
        ]
    }
    # the last --lr is the one train.py takes
    flags = learn.lora_runs(argv[2:], 8, 1e-4, tmp_path)["grpo_lora"]
    run = configs.parse_cli(flags, check_paths=False)
    assert (run.lr, run.lora.rank, run.out_dir) == (1e-4, 8, str(tmp_path / "train-lora"))
    with pytest.raises(configs.ConfigError, match=r"lora_rank = -1: must be >= 0"):
        learn.parse_args(["--lora-rank", "-1"])
    with pytest.raises(configs.ConfigError, match="^lora_rank: a --lora.\\* flag after `--`"):
        learn.parse_args(["--lora-rank", "8", "--", "--lora.alpha", "32"])


def test_the_headline_over_seeds_is_the_mean_and_spread_of_each_seeds_paired_difference():
    by_seed = {
        "grpo": paired(0.3, 0.1, 0.5),
        "grpo_seed1": paired(0.1, -0.1, 0.3),
        "grpo_seed2": paired(0.2, 0.05, 0.35),
    }
    seeds = learn.over_seeds(by_seed, (0, 1, 2))
    assert seeds["diffs"] == [0.3, 0.1, 0.2]
    assert seeds["mean"] == pytest.approx(0.2) and seeds["std"] == pytest.approx(0.1)
    assert (seeds["min"], seeds["max"], seeds["shown"]) == (0.1, 0.3, 2)
    assert learn.over_seeds({"grpo": by_seed["grpo"]}, ()) is None
    none = {"instances": 0, "diff": None, "ci95": None, "unpaired": ["t1"]}
    assert learn.over_seeds({**by_seed, "grpo_seed2": none}, (0, 1, 2)) is None


# -----------------------------------------------------------------------------
# the test split: once per trained run


def test_a_second_test_evaluation_of_one_trained_run_is_refused_unless_asked(tmp_path):
    assert learn.check_test_evaluation(tmp_path, "0123456789abcdef", again=False) == []
    learn.record_test_evaluation(tmp_path, "0123456789abcdef", [])
    with pytest.raises(ValueError) as e:
        learn.check_test_evaluation(tmp_path, "0123456789abcdef", again=False)
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith(
        f"{tmp_path / 'test_evaluated.json'}: the test split was already evaluated for this trained "
        "run (config 0123456789abcdef, "
    )
    assert message.endswith("or look again with --reevaluate-test")
    # the named override looks again, and the record keeps both looks
    held = learn.check_test_evaluation(tmp_path, "0123456789abcdef", again=True)
    assert len(learn.record_test_evaluation(tmp_path, "0123456789abcdef", held)) == 2
    # another trained run is not this one
    assert len(learn.check_test_evaluation(tmp_path, "fedcba9876543210", again=False)) == 2


def test_the_training_hash_ignores_what_only_the_evaluation_changes():
    cfg, rest = learn.parse_args(["--", "--steps", "4"])
    argv = ["--preset", cfg.preset, "--overwrite", *rest]
    base = learn.training_hash(cfg, argv)
    assert len(base) == 16
    for flags in (
        ["--k", "8"],
        ["--evaluate-on", "test"],
        ["--seed", "5"],
        ["--eval-instances", "9"],
    ):
        other, _ = learn.parse_args(flags)
        assert learn.training_hash(other, argv) == base, flags
    assert learn.training_hash(cfg, ["--preset", cfg.preset, "--resume", *rest]) == base
    assert learn.training_hash(cfg, ["--preset", cfg.preset, "--steps", "5"]) != base
    stronger, _ = learn.parse_args(["--sft-lr", "1e-4"])
    assert learn.training_hash(stronger, argv) != base


def test_the_run_refuses_a_second_test_evaluation_before_it_evaluates(tmp_path):
    cfg, rest = learn.parse_args(
        ["--out-dir", str(tmp_path), "--train-instances", "3", "--eval-instances", "2"]
        + ["--demonstrations", "1", "--no-train", "--evaluate-on", "test", "--no-progress"]
    )
    (tmp_path / "trained_run.json").write_text(json.dumps({"config_hash": "0123456789abcdef"}))
    learn.record_test_evaluation(tmp_path, "0123456789abcdef", [])
    with pytest.raises(ValueError, match="already evaluated for this trained run"):
        learn.run_multiturn_experiment(cfg, rest)
    # nothing was evaluated: no eval folder, and the record still holds one look
    assert not (tmp_path / "eval").exists()
    assert len(json.loads((tmp_path / "test_evaluated.json").read_text())) == 1


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


CELLS = ("-pointer-h1", "-run-h1", "-config-h1", "-pointer-h2")


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
    # evaluated on validation by default; the test folder holds the family's eval split
    assert [t.id for t in held_out] == [f"mt-validation-{s}" + c for s, c in enumerate(CELLS)]
    assert [t.meta["rng_seed"] for t in held_out] == ["2000000", "2000001", "2000002", "2000003"]
    assert sorted(p.name for p in (tmp_path / "tasks").iterdir()) == ["test", "train", "validation"]
    on_test, _ = learn.parse_args(
        ["--train-instances", "6", "--eval-instances", "4", "--demonstrations", "2"]
        + ["--evaluate-on", "test"]
    )
    _, test = learn.generate(on_test, tmp_path)
    assert [t.meta["rng_seed"] for t in test] == ["1000000", "1000001", "1000002", "1000003"]
    # a second run finds the same folders and keeps them
    again, _ = learn.generate(cfg, tmp_path)
    assert [t.id for t in again] == [t.id for t in train]
    # the check the run makes: a held-out set holding a train instance is refused
    with pytest.raises(ValueError, match="held_out shares 1 generator seed"):
        family.check_disjoint(train, [*held_out, train[0]])
    patterns = learn.revealed_patterns(learn.hop_patterns(train[:1]))
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
    # the validation folder's manifest refuses another count of held-out instances, naming the folder
    more_held_out, _ = learn.parse_args(
        ["--train-instances", "6", "--eval-instances", "5", "--demonstrations", "2"]
    )
    with pytest.raises(
        FileExistsError, match="tasks/validation was written for another experiment"
    ):
        learn.generate(more_held_out, tmp_path)


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
    assert (t["tools_s_per_episode"], t["verify_s_per_episode"], t["sync_s"]) == (0.5, 8.0, 2.0)
    assert t["malformed_turn_rate"] == pytest.approx(0.15)
    assert (t["refill_rounds"], t["refill_episodes"]) == (3, 24)
    assert t["stop_reasons"] == {"finish": 20, "max_turns": 12}
    assert (t["reward_first_last"], t["resolved_first_last"]) == ([0.25, 0.5], [0.25, 0.5])
    path.write_text("")
    with pytest.raises(ValueError, match="no step recorded"):
        learn.step_timings(path)


def test_training_curves_read_each_steps_health_and_the_figure_draws_them(tmp_path):
    rows = [
        {"step": 1, "entropy": 1.5, "clip_frac_low": 0.01, "clip_frac_high": 0.02}
        | {"zero_variance_share": 0.5, "turns_mean": 3.25},
        # a step that logged no entropy (no loss token) keeps its place as None
        {"step": 2, "clip_frac_low": 0.0, "clip_frac_high": 0.04}
        | {"zero_variance_share": 0.25, "turns_mean": 4.0},
    ]
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    curves = learn.training_curves(path)
    assert curves == {
        "step": [1, 2],
        "entropy": [1.5, None],
        "clip_frac_low": [0.01, 0.0],
        "clip_frac_high": [0.02, 0.04],
        "zero_variance_share": [0.5, 0.25],
        "turns_mean": [3.25, 4.0],
    }
    learning = {
        "results": {"warm_start": stats(10, 48), "grpo": stats(20, 48)},
        "split": "validation",
        "curves": curves,
        "verdict": {"line": "not shown: ..."},
    }
    png = learn.plot(learning, tmp_path / "learning.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # two rows of panels (the curves below the rates): twice the height of the figure without them
    from PIL import Image

    tall = Image.open(png).size
    short = Image.open(learn.plot({**learning, "curves": None}, tmp_path / "short.png")).size
    assert (tall[0], tall[1]) == (short[0], 2 * short[1])


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
        "--shortcut-instances",
        "2",
        "--base-k",
        "1",
        "--bootstrap-resamples",
        "200",
        "--lora-rank",
        "2",
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
        "grpo_lora": str(out / "train-lora" / "hf"),
    }
    # the LoRA run: GRPO from the same warm start with rank-2 adapters at 10 x the preset's lr (1e-5)
    lora = learning["lora"]
    assert (lora["rank"], lora["lr"]) == (2, pytest.approx(1e-4))
    assert (out / "train-lora" / "hf" / "adapter" / "adapter_config.json").is_file()
    assert lora["training"]["steps"] == 1
    assert (
        lora["paired_lora_minus_full"]["instances"]
        + len(lora["paired_lora_minus_full"]["unpaired"])
        == 2
    )
    assert learn.lora_line(lora, learning["training"], "validation") in p.stdout
    assert learning["config"]["eval_ids"] == [
        "mt-validation-0-pointer-h1",
        "mt-validation-1-run-h1",
    ]
    assert learning["split"] == "validation" and learning["test_evaluations_before"] is None
    assert not (out / "test_evaluated.json").exists()
    assert learning["config"]["demonstration_ids"] == learning["config"]["train_ids"]
    # the oracle resolves every demonstration instance
    assert (learning["warm_start"]["episodes"], learning["warm_start"]["resolved"]) == (3, 3)
    for name in ("base", "warm_start", "grpo", "grpo_lora"):
        s = learning["results"][name]
        assert s["episodes"] == 2 and s["scored"] + s["errors"] == 2
        assert learning["episodes"][name]["turns_mean"] >= 1.0
        flow = learning["flow_per_hop"][name]
        assert flow["every"]["episodes"] == s["scored"] and flow["every"]["by_hop"] == {}
    # the control: every shortcut and the oracle turn by turn on both validation instances
    control = learning["control"]
    assert (control["split"], control["task_ids"]) == ("validation", learning["config"]["eval_ids"])
    assert set(control["rates"]) == set(shortcuts.DUMPS) | set(shortcuts.SOLVERS)
    assert control["oracle_rate"] == 1.0
    assert learning["training"]["steps"] == 1
    # the counterfactual control ran with its two scripted bounds: a reader follows every swap, a template none
    probes = learning["counterfactual"]["policies"]
    assert probes["oracle_reader"]["swap_follows_swap"]["rate"] == 1.0
    assert probes["template"]["swap_follows_swap"]["rate"] == 0.0
    curves = learning["curves"]
    assert len(curves["step"]) == 1 and set(curves) == {"step", *learn.CURVES}
    assert 0.0 < curves["entropy"][0] and 1.0 <= curves["turns_mean"][0]
    # the verdict line is the one verdict() computes from the numbers written
    shown, criteria, line = learn.verdict(
        learning["paired_grpo_minus_warm_start"]["all"],
        learning["flow"]["grpo"],
        learning["control"],
        "validation",
        1,
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
    for split in ("train", "validation"):
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
