"""The mechanics long episodes need: an observation cut to fit the context, a turn cut at
its token cap counted as a malformed turn, no observation after the last turn, a task's max_turns
never above the config's, DAPO's dynamic sampling (refill rounds) and the step's episode figures.

The docker tests run the real agent loop in real containers with the ScriptedEngine (a real Engine
replaying fixed text through the real SmolLM2 tokenizer) on the starter tasks.
"""

import asyncio
import dataclasses
import json
from dataclasses import replace
from types import SimpleNamespace

import pytest
from rollout_helpers import CFG, RecordingEngine, assert_matches_template, observations, run
from train_helpers import containers_of, run_ids_of, torchrun

import configs
import rollout as R
from agent.chat import ChatFormat
from agent.tools import fit_observations, share_tokens
from bookkeeping.logs import format_step_line, step_record
from learner.distributed import collective_timeout_s
from learner.packing import has_signal
from tasks.sampler import TaskSampler
from training.refill import Refill, refill_tasks, refilled_rollout

# ----------------------------------------------------------------------------- pure parts


def test_a_tasks_max_turns_lowers_the_configs_and_never_raises_it():
    assert R.turn_limit(None, 16) == 16
    assert R.turn_limit(4, 16) == 4
    assert R.turn_limit(64, 16) == 16


def test_messages_share_the_tokens_short_ones_whole_long_ones_evenly():
    assert share_tokens([10, 100, 100], 110) == [10, 50, 50]
    assert share_tokens([7, 100, 100], 100) == [7, 46, 47]
    assert share_tokens([5, 5], 100) == [5, 5]
    assert share_tokens([30, 30], 0) == [0, 0]


SEQ = "$ seq 1 3000\nexit code: 0\n" + "".join(f"{i}\n" for i in range(1, 3001))


def test_an_observation_over_its_budget_keeps_head_and_tail_around_a_marker(tok):
    chat = ChatFormat(tok, "markdown")
    obs = [{"role": "user", "content": SEQ}]
    assert len(chat.observation_ids(obs, closed=False)) == 13920
    cut, ids = fit_observations(chat, obs, 100, closed=False)
    # the tokens are the template's rendering of the cut message
    assert len(ids) == 100 and ids == chat.observation_ids(cut, closed=False)
    assert cut[0]["content"] == (
        "$ seq 1 3000\nexit code: 0\n1\n2\n3\n4\n5\n6\n7\n"
        "\n[... 13849 tokens (13849 bytes) of this output cut to fit the context ...]\n"
        "2995\n2996\n2997\n2998\n2999\n3000\n"
    )
    assert (cut[0]["cut_tokens"], cut[0]["cut_bytes"]) == (13849, 13849)
    # what was given is not changed
    assert obs == [{"role": "user", "content": SEQ}]


def test_an_observation_that_fits_is_left_whole_and_one_whose_marker_does_not_fit_is_none(tok):
    chat = ChatFormat(tok, "markdown")
    obs = [{"role": "user", "content": "$ ls\nexit code: 0\na.txt\n"}]
    assert fit_observations(chat, obs, 100) == (obs, chat.observation_ids(obs))
    long = [{"role": "user", "content": SEQ}]
    assert len(fit_observations(chat, long, 40)[1]) == 40
    assert fit_observations(chat, long, 30) is None


def test_hermes_tool_messages_are_cut_by_their_share_the_short_one_kept_whole(tok):
    chat = ChatFormat(tok, "hermes")
    short = {"role": "tool", "content": "Wrote 6 bytes to /app/a.txt.", "tool_name": "write_file"}
    long = {"role": "tool", "content": SEQ, "tool_name": "bash", "exit_code": 0}
    cut, ids = fit_observations(chat, [short, long], 200)
    assert len(ids) <= 200 and ids == chat.observation_ids(cut)
    assert cut[0] == short
    assert cut[1]["tool_name"] == "bash" and cut[1]["content"].startswith("$ seq 1 3000\n")
    assert "of this output cut to fit the context ...]\n" in cut[1]["content"]
    assert cut[1]["content"].endswith("3000\n")


def test_a_group_has_signal_when_two_scored_rewards_differ():
    def group(*rewards):
        return R.Group(None, [], list(rewards))

    assert [
        has_signal(group(0.0, 0.0)),
        has_signal(group(0.0, 1.0)),
        has_signal(group(1.0, None)),
        has_signal(group(0.5, 0.5, 0.25)),
    ] == [False, True, False, True]


def test_refill_draws_tasks_not_rolled_yet_first_then_repeats_on_a_small_set():
    sampler = TaskSampler(["a", "b", "c", "d"], 2)
    picked = refill_tasks(4, 2, [0, 1], 0, sampler)
    assert sorted(picked) == [2, 3]
    # the same seed draws the same tasks (a resumed step redraws them)
    assert refill_tasks(4, 2, [0, 1], 0, sampler) == picked
    # every task rolled already: the draw repeats them in its seeded order
    again = refill_tasks(2, 3, [0, 1], 0, TaskSampler(["a", "b"], 1))
    assert again[0] == again[2] and sorted(again[:2]) == [0, 1]


def _episode(stop: str, turns: int, malformed: int, cut: int, reward: float) -> dict:
    timings = {"start_s": 1.0, "agent_s": 2.0, "verify_s": 1.0}
    return dict(
        task_index=0,
        reward=reward,
        resolved=reward == 1.0,
        truncated=stop != "finish",
        tampered=False,
        tokens=100,
        generated=20,
        timings=timings,
        stop_reason=stop,
        turns=turns,
        format_errors=malformed,
        observations_cut=cut,
    )


def test_the_step_record_and_line_show_turns_stop_reasons_malformed_turns_and_refill():
    episodes = [
        _episode("finish", 3, 1, 1, 1.0),
        _episode("max_turns", 4, 0, 0, 0.0),
        _episode("format_errors", 3, 3, 0, 0.0),
        _episode("max_turns", 4, 0, 2, 0.0),
    ]
    counts = dict(
        groups=4, groups_dropped_zero_variance=3, groups_dropped_failed=0, refill_rounds=1
    )
    counts["refill_episodes"] = 8
    times = dict(rollout_s=10.0, generate_s=8.0, train_s=2.0, sync_s=0.5, refill_s=4.0)
    update = dict(pg_loss=0.1, approx_kl=0.0, entropy=1.0, clip_frac_low=0.0, skipped_update=0.0)
    rec = step_record(1, episodes, counts, update, times, 0.0)
    assert rec["turns_mean"] == 3.5
    assert rec["malformed_turn_rate"] == 4 / 14
    assert rec["observations_cut"] == 3
    assert rec["stop_reasons"] == {"finish": 1, "format_errors": 1, "max_turns": 2}
    assert rec["zero_variance_share"] == 0.75
    assert (rec["refill_rounds"], rec["refill_episodes"], rec["refill_s"]) == (1, 8, 4.0)
    line = format_step_line(1, 10, rec)
    assert (
        "| turns 3.5 malformed 0.29 stops finish 1 format_errors 1 max_turns 2 | zero-variance "
        "groups 0.75 refill +8 episodes in 1 round(s) 4.0s | loss +0.1000"
    ) in line


# ----------------------------------------------------------------------------- the agent loop in real containers


@pytest.mark.docker
def test_a_huge_observation_is_cut_to_fit_and_the_episode_goes_on_to_resolve(tok, tasks):
    task = tasks["write-hello-file"]
    eng = RecordingEngine(
        tok, ["```bash\nseq 1 100000\n```", "```bash\necho hello > hello.txt\n```", "DONE"]
    )
    cfg = replace(CFG, max_context_tokens=1024, max_tokens_per_turn=64)
    [traj] = run([task], eng, tok, cfg)
    assert traj.error is None
    assert (traj.stop_reason, traj.reward, traj.num_turns, traj.observations_cut) == (
        "finish",
        1.0,
        3,
        1,
    )
    first = traj.messages[3]
    assert first["content"].startswith("$ seq 1 100000\nexit code: 0\n1\n2\n3\n")
    assert "of this output cut to fit the context ...]\n" in first["content"]
    assert first["cut_tokens"] > 7000 and "in_tokens" not in first
    # the next turn kept its whole max_tokens_per_turn, the trajectory the context
    assert len(traj.token_ids) <= 1024
    assert_matches_template(traj, ChatFormat(tok, "markdown"))


@pytest.mark.docker
def test_an_observation_whose_marker_cannot_fit_ends_the_episode_as_max_context(tok, tasks):
    task = tasks["write-hello-file"]
    chat = ChatFormat(tok, "markdown")
    prompt_len = len(chat.prompt_ids(task.instruction)[1])
    eng = RecordingEngine(tok, ["```bash\nseq 1 100000\n```"] * 2)
    cfg = replace(CFG, max_context_tokens=prompt_len + 60, max_tokens_per_turn=30)
    [traj] = run([task], eng, tok, cfg)
    assert (traj.stop_reason, traj.num_turns, traj.truncated) == ("max_context", 1, True)
    assert traj.messages[-1]["in_tokens"] is False and traj.observations_cut == 0


LONG_REPLY = (
    "Let me think about this carefully before I act, since the file must hold exactly the right "
    "text and nothing else.\n```bash\necho hello > hello.txt\n```"
)
TURN_CAP_OBS = (
    "Your reply was cut at the limit of 24 tokens per turn before its action was complete; nothing "
    "ran. Keep each reply short.\nFormat error: no bash block and no DONE found.\n\nRun a command "
    "like this:\n```bash\nls -la\n```\nWhen the task is done, write DONE on a line by itself."
)


@pytest.mark.docker
def test_a_reply_cut_at_the_turn_cap_is_a_malformed_turn_and_the_next_turn_acts(tok, tasks):
    eng = RecordingEngine(tok, [LONG_REPLY, "```bash\necho hello > hello.txt\n```", "DONE"])
    [traj] = run([tasks["write-hello-file"]], eng, tok, replace(CFG, max_tokens_per_turn=24))
    assert eng.completions[0].finish_reason == "length"
    assert len(eng.completions[0].token_ids) == 24
    assert (traj.stop_reason, traj.reward, traj.num_turns, traj.format_errors) == (
        "finish",
        1.0,
        3,
        1,
    )
    assert observations(traj)[0] == TURN_CAP_OBS
    assert_matches_template(traj, ChatFormat(tok, "markdown"))


@pytest.mark.docker
def test_with_end_on_turn_cap_a_reply_cut_at_the_cap_ends_the_episode(tok, tasks):
    eng = RecordingEngine(tok, [LONG_REPLY, "never reached"])
    cfg = replace(CFG, max_tokens_per_turn=24, end_on_turn_cap=True)
    [traj] = run([tasks["write-hello-file"]], eng, tok, cfg)
    assert (traj.stop_reason, traj.num_turns, traj.format_errors, traj.reward) == (
        "max_tokens_per_turn",
        1,
        0,
        0.0,
    )


@pytest.mark.docker
def test_no_observation_follows_the_last_turn_and_a_tasks_higher_max_turns_is_capped(tok, tasks):
    # the task asks for 10 turns, the config allows 2
    task = dataclasses.replace(tasks["write-hello-file"], max_turns=10)
    eng = RecordingEngine(tok, ["```bash\nls\n```", "```bash\necho hello > hello.txt\n```"] * 5)
    [traj] = run([task], eng, tok, replace(CFG, max_turns=2))
    assert (traj.stop_reason, traj.num_turns, traj.reward) == ("max_turns", 2, 1.0)
    last = eng.completions[1].token_ids
    # the trajectory ends with the last action's tokens, trained on; its observation is kept out
    assert traj.token_ids[-len(last) :] == last
    assert traj.loss_mask[-len(last) :] == [1] * len(last)
    assert traj.messages[-1] == {
        "role": "user",
        "content": "$ echo hello > hello.txt\nexit code: 0",
        "in_tokens": False,
    }
    assert traj.messages[-2]["role"] == "assistant"


# ----------------------------------------------------------------------------- dynamic sampling


def _refill_run(tok, tasks, ids: list[str], rounds: int):
    """What refilled_rollout reads of a training.setup.Run, built from real parts: the tasks, a
    ScriptedEngine, the tokenizer, the config and the task sampler. The engine solves
    write-hello-file in every other episode (a group of 2 varies) and never count-lines (its
    groups are all 0)."""
    calls = {"hello": 0}

    def reply(prompt_ids, turn):
        if "hello.txt" not in tok.decode(prompt_ids):
            return "DONE"
        calls["hello"] += 1
        if calls["hello"] % 2:
            return "```bash\necho hello > /app/hello.txt\n```"
        return "DONE"

    cfg = configs.TrainConfig(
        grpo=configs.GRPOConfig(group_size=2, refill_rounds=rounds),
        rollout=replace(CFG, max_turns=1),
    )
    cfg.policy.action_format = "markdown"
    return SimpleNamespace(
        cfg=cfg,
        tasks=[tasks[i] for i in ids],
        engine=RecordingEngine(tok, reply),
        tokenizer=tok,
        rollout_cfg=cfg.rollout,
        episode_opts=R.EpisodeOptions("markdown"),
        rank=1,
        sampler=TaskSampler(ids, 1),
    )


def _roll_out(run, indices: list[int]):
    ended = []
    refill = Refill()
    job = refilled_rollout(run, indices, 0, lambda t: None, 0, refill, lambda: ended.append(1))
    groups = asyncio.run(job)
    return groups, refill, ended


@pytest.mark.docker
def test_a_step_whose_group_has_no_variance_is_refilled_until_one_varies(tok, tasks):
    run = _refill_run(tok, tasks, ["count-lines", "write-hello-file"], rounds=3)
    groups, refill, ended = _roll_out(run, [0])
    assert [g.task.id for g in groups] == ["count-lines", "write-hello-file"]
    assert [sorted(g.rewards) for g in groups] == [[0.0, 0.0], [0.0, 1.0]]
    assert [has_signal(g) for g in groups] == [False, True]
    # one extra round of one task's group_size episodes; its cost is reported
    assert (refill.rounds, refill.episodes, ended) == (1, 2, [1])
    assert refill.seconds > 0.0


@pytest.mark.docker
def test_refill_stops_at_its_cap_of_rounds_when_no_group_varies(tok, tasks):
    run = _refill_run(tok, tasks, ["count-lines"], rounds=2)
    groups, refill, ended = _roll_out(run, [0])
    assert [g.task.id for g in groups] == ["count-lines"] * 3
    assert [g.rewards for g in groups] == [[0.0, 0.0]] * 3
    assert (refill.rounds, refill.episodes, ended) == (2, 4, [1])


@pytest.mark.model_run
@pytest.mark.docker
def test_a_training_step_with_no_varying_group_refills_and_logs_the_cost(tiny_dir, tmp_path):
    # the tiny random policy scores every episode 0: each rank's group lacks variance, so each
    # rank runs its one extra round, and the update still has nothing to learn from
    out = tmp_path / "run"
    flags = ["--steps", "1", "--grpo.refill-rounds", "1", "--grpo.drop-zero-variance-groups"]
    proc, log_path = torchrun(out, tiny_dir, *flags)
    assert proc.wait(timeout=600) == 0, log_path.read_text()[-4000:]
    log = log_path.read_text()
    [rec] = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    # 2 ranks x (1 task + 1 refilled task) x group_size 2
    assert (rec["episodes"], rec["groups"], rec["groups_dropped_zero_variance"]) == (8, 4, 4)
    assert (rec["refill_rounds"], rec["refill_episodes"]) == (2, 4)
    assert rec["refill_s"] > 0.0 and rec["zero_variance_share"] == 1.0
    assert rec["skipped_update"] == 1.0
    assert sum(rec["stop_reasons"].values()) == 8 and 1.0 <= rec["turns_mean"] <= 2.0
    assert 0.0 <= rec["malformed_turn_rate"] <= 1.0
    assert "zero-variance groups 1.00 refill +4 episodes in 2 round(s)" in log
    for rank in (0, 1):
        lines = (out / "trajectories" / f"step_000001_rank{rank}.jsonl").read_text().splitlines()
        assert len(lines) == 4
    assert containers_of(run_ids_of(log)) == []


def test_the_collective_timeout_covers_every_refill_round():
    cfg = configs.TrainConfig(
        tasks_per_step=2,
        grpo=configs.GRPOConfig(group_size=4, refill_rounds=2),
        sandbox=configs.SandboxConfig(verify_wall_s=300.0),
    )
    # one wave of 8 episodes, three times: (900 s agent + 300 s verify) x 3 + 600 s
    assert collective_timeout_s(cfg)[0] == 3 * (900 + 300) + 600
