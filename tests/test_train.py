"""train.py and learner/: sampler, schedule, packing, global loss normalisation over micro-batches and ranks (real
FSDP2 on gloo, spawned processes on 127.0.0.1), exact resume from a DCP checkpoint, and logs."""

import dataclasses
import importlib.util
import json
import math
import os
import sys
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
from judge_server import JudgeServer
from train_helpers import (
    ROOT,
    containers_of,
    fixed_samples,
    fsdp_policy,
    init_gloo,
    run_ids_of,
    spawn,
    torchrun,
)

import configs
import grpo
import learner.distributed
import learner.gpu_memory
import learner.packing
import learner.update
import reward
import rollout
import train
from bookkeeping import checkpoints, logs
from hf import weights
from tasks.sampler import TaskSampler

# -----------------------------------------------------------------------------
# pure parts


def _ids(n: int) -> list[str]:
    return [f"task-{i}" for i in range(n)]


def test_sampler_draws_each_task_once_per_epoch_and_shards_over_ranks():
    ranks = [TaskSampler(_ids(6), 4, rank=r, world_size=2, seed=3) for r in range(2)]
    draws = [[s.next_batch() for _ in range(3)] for s in ranks]  # 12 draws = 2 epochs of 6
    for step in range(3):
        assert len(draws[0][step]) == 2 and len(draws[1][step]) == 2
    flat = [i for step in range(3) for r in range(2) for i in draws[r][step]]
    g = TaskSampler(_ids(6), 4, seed=3)
    glob = [i for _ in range(3) for i in g.next_global()]
    # rank r holds global[r::2] of each step
    assert [glob[k] for k in (0, 2)] == draws[0][0] and [glob[k] for k in (1, 3)] == draws[1][0]
    assert sorted(glob[:6]) == [0, 1, 2, 3, 4, 5] and sorted(glob[6:]) == [0, 1, 2, 3, 4, 5]
    assert sorted(flat) == sorted(glob)


def test_sampler_is_seeded_and_reshuffles_each_epoch():
    a = [TaskSampler(_ids(8), 8, seed=1).next_global() for _ in range(2)]
    assert a[0] == a[1]  # same seed, same first epoch
    s = TaskSampler(_ids(8), 8, seed=1)
    e0, e1 = s.next_global(), s.next_global()
    assert sorted(e0) == sorted(e1) == list(range(8)) and e0 != e1
    assert TaskSampler(_ids(8), 8, seed=2).next_global() != e0
    assert TaskSampler(_ids(4), 4, shuffle=False).next_global() == [0, 1, 2, 3]


def test_sampler_state_dict_resumes_the_same_sequence():
    s = TaskSampler(_ids(5), 3, seed=7, curriculum=True)
    s.next_global()
    s.record(2, [0.0, 0.0])
    state = s.state_dict()
    expected = [s.next_global() for _ in range(3)]
    t = TaskSampler(_ids(5), 3, seed=7, curriculum=True)
    t.load_state_dict(state)
    assert [t.next_global() for _ in range(3)] == expected


def test_resume_with_a_changed_task_set_is_refused_naming_what_changed():
    state = TaskSampler(["append-line", "copy-config", "rename-file"], 2, seed=7).state_dict()
    t = TaskSampler(
        ["append-line", "make-output-dir", "rename-file", "write-hello-file"], 2, seed=7
    )
    with pytest.raises(configs.ConfigError) as e:
        t.load_state_dict(state)
    assert str(e.value) == (
        "resume: the task set changed since the checkpoint (3 -> 4 tasks; added "
        "['make-output-dir', 'write-hello-file'], removed ['copy-config']); resume with the same "
        "tasks, task_ids and difficulties, or train into a new out_dir"
    )
    assert (t.epoch, t.pos, t.history) == (0, 0, {})  # nothing of the old state was taken


def test_curriculum_skips_tasks_whose_recent_groups_were_all_zero_or_all_one():
    s = TaskSampler(_ids(3), 3, shuffle=False, curriculum=True, window=2)
    s.record(0, [0.0, 0.0])
    assert not s.skipped(0)  # one group is not enough history
    s.record(0, [0.0, 0.0])
    s.record(1, [1.0, 1.0])
    s.record(1, [1.0, 1.0])
    s.record(2, [1.0, 1.0])
    s.record(2, [0.0, 1.0])
    assert s.skipped(0) and s.skipped(1) and not s.skipped(2)
    assert s.next_global() == [2, 2, 2]
    s.record(2, [1.0, 1.0])
    s.record(2, [1.0, 1.0])  # now every task is skipped: the draw falls back to all tasks
    assert s.skipped(2)
    assert s.next_global() == [0, 1, 2]


def test_curriculum_off_never_skips():
    s = TaskSampler(_ids(2), 2, shuffle=False)
    for _ in range(3):
        s.record(0, [0.0, 0.0])
    assert s.next_global() == [0, 1]


def _record_worker(rank, world, store, out_dir):
    # rank r rolled out task 10 + r with one group of two episodes rewarded (r, None)
    from bookkeeping.record import StepLog, record
    from training.step import Rollout

    init_gloo(rank, world, store)
    trajectories = [
        rollout.Trajectory("t", j, [1, 2, 3], [0, 1, 1], [0.0, -1.0, -1.0], stop_reason="finish")
        for j in range(2)
    ]
    group = rollout.Group(None, trajectories, [float(rank), None])
    ro = Rollout([10 + rank], [group], 10.0, 0.5, 0, 8.0)
    counts = dict(groups=1, groups_dropped_zero_variance=0, groups_dropped_failed=1)
    metrics = dict(pg_loss=0.25, approx_kl=0.0, entropy=1.0, clip_frac_low=0.0)
    log = StepLog(Path(out_dir), rank, 4, 0.0, world)
    outcomes = record(log, 3, ro, counts, metrics, 2.0, 12.5, {})
    Path(out_dir, f"outcomes{rank}.json").write_text(json.dumps(outcomes))
    dist.destroy_process_group()


@pytest.mark.model_run
def test_record_writes_one_line_for_every_rank_and_returns_every_group_for_the_curriculum(
    tmp_path,
):
    spawn(_record_worker, 2, str(tmp_path))
    # the same list on every rank, in rank order: what TaskSampler.record_groups takes
    expected = [[10, [0.0, None]], [11, [1.0, None]]]
    for rank in range(2):
        assert json.loads((tmp_path / f"outcomes{rank}.json").read_text()) == expected
    [line] = (tmp_path / "metrics.jsonl").read_text().splitlines()
    rec = json.loads(line)
    assert (rec["step"], rec["groups"], rec["groups_dropped_failed"]) == (3, 2, 2)
    assert (rec["step_s"], rec["train_s"], rec["rollout_s"], rec["loss"]) == (12.5, 2.0, 10.0, 0.25)


def test_lr_factor_warmup_then_cosine_or_constant():
    assert [learner.update.lr_factor(s, 2, 6, "cosine") for s in range(2)] == [0.5, 1.0]
    got = [learner.update.lr_factor(s, 2, 6, "cosine") for s in range(2, 6)]
    want = [0.5 * (1 + math.cos(math.pi * k / 4)) for k in range(4)]
    assert got == pytest.approx(want, abs=1e-12)
    assert [learner.update.lr_factor(s, 1, 4, "constant") for s in range(4)] == [1.0, 1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="lr_schedule"):
        learner.update.lr_factor(0, 0, 4, "linear")


def test_pack_micro_batches_first_fit_decreasing_within_budget():
    assert learner.packing.pack_micro_batches([5, 3, 8, 2, 7, 1], 10) == [[2, 3], [4, 1], [0, 5]]
    # an over-long sequence gets its own micro-batch; every index appears exactly once
    assert learner.packing.pack_micro_batches([30, 4, 4], 10) == [[0], [1, 2]]
    assert learner.packing.pack_micro_batches([], 10) == []


def test_collate_packs_shifted_sequences_with_restarting_positions():
    mb = learner.packing.collate(
        [
            learner.packing.Sample([1, 2, 3, 4], [0, 0, 1, 1], [0.0, 0.0, -0.5, -0.7], 1.0),
            learner.packing.Sample([5, 6], [0, 1], [0.0, -0.1], -1.0),
        ]
    )
    assert mb.input_ids.tolist() == [[1, 2, 3, 5]]
    assert mb.targets.tolist() == [[2, 3, 4, 6]]
    assert mb.position_ids.tolist() == [[0, 1, 2, 0]]
    assert mb.cu_seqlens.tolist() == [0, 3, 4] and mb.cu_seqlens.dtype == torch.int32
    assert mb.index.tolist() == [[0, 1, 2], [3, 0, 0]]
    assert mb.loss_mask.tolist() == [[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]
    torch.testing.assert_close(
        mb.engine_logprobs, torch.tensor([[0.0, -0.5, -0.7], [-0.1, 0.0, 0.0]])
    )
    assert mb.advantages.tolist() == [1.0, -1.0]


def test_collate_rejects_misaligned_samples_naming_the_field():
    with pytest.raises(ValueError, match=r"samples\[0\].*logprobs \(2\)"):
        learner.packing.collate([learner.packing.Sample([1, 2, 3], [0, 1, 1], [0.0, -1.0], 1.0)])
    with pytest.raises(ValueError, match=r"samples\[0\].token_ids"):
        learner.packing.collate([learner.packing.Sample([1], [0], [0.0], 1.0)])


class _Traj:
    def __init__(self, reward, truncated=False):
        self.reward, self.truncated, self.policy_version = reward, truncated, 0
        self.token_ids, self.loss_mask, self.logprobs = [1, 2, 3], [0, 1, 1], [0.0, -0.5, -0.5]


def _groups(trajs, group_size):
    """Groups of group_size consecutive trajectories, each member's reward its own (.reward)."""
    return [
        rollout.Group(
            None, trajs[g : g + group_size], [t.reward for t in trajs[g : g + group_size]]
        )
        for g in range(0, len(trajs), group_size)
    ]


def test_samples_from_groups_drops_zero_variance_groups_and_masks_truncated():
    trajs = [_Traj(1.0), _Traj(0.0, truncated=True), _Traj(0.5), _Traj(0.5)]
    cfg = configs.GRPOConfig(
        advantage="drgrpo", drop_zero_variance_groups=True, mask_truncated=True
    )
    samples, counts = learner.packing.samples_from_groups(_groups(trajs, 2), cfg)
    assert [s.advantage for s in samples] == [0.5, -0.5]
    assert samples[0].loss_mask == [0, 1, 1] and samples[1].loss_mask == [0, 0, 0]
    assert counts == {
        "groups": 2,
        "groups_dropped_zero_variance": 1,
        "groups_dropped_failed": 0,
        "trajectories_failed": 0,
        "trajectories_masked": 1,
        "judge_dropped_groups": 0,
    }
    kept, counts = learner.packing.samples_from_groups(
        _groups(trajs, 2), configs.GRPOConfig(drop_zero_variance_groups=False)
    )
    assert (
        len(kept) == 4
        and counts["groups_dropped_zero_variance"] == 0
        and kept[1].loss_mask == [0, 1, 1]
    )


def test_failed_episodes_are_left_out_of_the_group_never_scored_zero():
    # group 0: one failure, advantages over the two scored members; group 1: one scored member, dropped
    trajs = [_Traj(1.0), _Traj(None), _Traj(0.0), _Traj(None), _Traj(None), _Traj(0.0)]
    samples, counts = learner.packing.samples_from_groups(
        _groups(trajs, 3), configs.GRPOConfig(advantage="drgrpo")
    )
    assert [s.advantage for s in samples] == [0.5, -0.5]
    assert counts == {
        "groups": 2,
        "groups_dropped_zero_variance": 0,
        "groups_dropped_failed": 1,
        "trajectories_failed": 3,
        "trajectories_masked": 0,
        "judge_dropped_groups": 0,
    }


def _judged(verification, judge, stop_reason="finish", error=None):
    v = (
        None
        if verification is None
        else reward.Verification(verification, verification == 1.0, [], [], [], [])
    )
    return rollout.Trajectory(
        "t",
        0,
        [1, 2, 3],
        [0, 1, 1],
        [0.0, -0.5, -0.5],
        stop_reason=stop_reason,
        verification=v,
        judge_score=judge,
        error=error,
    )


def test_a_judge_failure_puts_its_whole_group_on_the_tests_alone():
    # group 0: every test passed, judges 0.8, 0.8, 0.8 and one failure (own rewards 0.93, 0.93, 0.93, 1.0)
    # group 1: every judge answered; a tampered episode (never judged) counts as judged 0
    rcfg = configs.RewardConfig(judge_backends=("openai:judge@http://127.0.0.1:1",))
    groups = [
        rollout.score_group(
            None,
            [_judged(1.0, 0.8), _judged(1.0, 0.8), _judged(1.0, 0.8), _judged(1.0, None)],
            rcfg,
            judged=True,
        ),
        rollout.score_group(
            None,
            [
                _judged(1.0, 0.6),
                _judged(0.5, 0.4),
                _judged(0.0, None, "tampered"),
                _judged(0.5, 0.4),
            ],
            rcfg,
            judged=True,
        ),
    ]
    assert groups[0].rewards == [1.0, 1.0, 1.0, 1.0] and groups[0].judge_dropped
    assert [t.reward for t in groups[0].trajectories] == [
        1.0,
        1.0,
        1.0,
        1.0,
    ]  # the group's rule, on each
    cfg = configs.GRPOConfig(advantage="drgrpo", drop_zero_variance_groups=False)
    samples, counts = learner.packing.samples_from_groups(groups, cfg)
    assert [s.advantage for s in samples[:4]] == [
        0.0,
        0.0,
        0.0,
        0.0,
    ]  # not [-0.0175] * 3 + [0.0525]
    want = [0.65 + 0.35 * 0.6, 0.5 * (0.65 + 0.35 * 0.4), 0.0, 0.5 * (0.65 + 0.35 * 0.4)]
    assert [s.advantage for s in samples[4:]] == pytest.approx(
        [w - sum(want) / 4 for w in want], abs=1e-6
    )
    assert counts["judge_dropped_groups"] == 1 and not groups[1].judge_dropped


def test_a_tampered_episode_without_a_judge_is_scored_on_its_tests_and_a_failed_one_not_at_all():
    group = rollout.score_group(
        None,
        [
            _judged(0.0, None, "tampered"),
            _judged(0.5, None),
            _judged(None, None, "error", error="RuntimeError: docker"),
        ],
        configs.RewardConfig(),
        judged=False,
    )
    assert (group.rewards, group.judge_dropped) == ([0.0, 0.5, None], False)
    assert group.trajectories[2].reward is None


def test_reward_curve_png_and_metrics_truncation(tmp_path):
    path = tmp_path / "metrics.jsonl"
    for step in (1, 2, 3):
        logs.append_jsonl(
            path,
            {"step": step, "reward_mean": 0.1 * step, "reward_std": 0.05, "resolved_rate": 0.0},
        )
    png = logs.plot_reward_curve(path, tmp_path / "reward_curve.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    logs.truncate_metrics(path, 2)
    assert [json.loads(line)["step"] for line in path.read_text().splitlines()] == [1, 2]


# -----------------------------------------------------------------------------
# distributed: real FSDP2 over gloo on a tiny random Qwen3


@pytest.fixture(scope="module")
def tiny_model(tiny_dir):  # conftest's tiny random Qwen3
    return tiny_dir


def _grads_worker(rank, world_size, store, model_dir, budget, out_path):
    mesh = init_gloo(rank, world_size, store)
    policy = fsdp_policy(model_dir, mesh)
    samples = fixed_samples(policy.config.vocab_size)
    mine = samples[rank * len(samples) // world_size : (rank + 1) * len(samples) // world_size]
    result = {}
    for agg in grpo.AGGREGATIONS:
        # max_context_tokens is Dr.GRPO's constant divisor: small, so its gradients are not tiny
        cfg = configs.TrainConfig(
            grpo=configs.GRPOConfig(aggregation=agg, tis_cap=2.0),
            rollout=configs.RolloutConfig(max_context_tokens=32, max_tokens_per_turn=8),
        )
        mbs = learner.packing.make_micro_batches(mine, budget)
        metrics = learner.update.accumulate_gradients(policy, mbs, cfg, torch.device("cpu"))
        grads = {n: p.grad.full_tensor().clone() for n, p in policy.named_parameters()}
        policy.zero_grad(set_to_none=True)
        result[agg] = {
            "grads": grads,
            "num_micro_batches": len(mbs),
            "loss": metrics["pg_loss"],
            "num_tokens": metrics["num_tokens"],
        }
    if (
        world_size == 1 and budget > 1000
    ):  # also: two optimizer steps on one rollout batch (num_minibatches)
        cfg = configs.TrainConfig(grpo=configs.GRPOConfig(num_minibatches=2), lr=1e-3)
        optimizer, scheduler = learner.update.build_optimizer(policy, cfg)
        m = learner.update.update(policy, optimizer, scheduler, samples, cfg, torch.device("cpu"))
        # the same two optimizer steps by hand from the same weights, one metrics record each
        steps_taken = scheduler.last_epoch
        fresh = fsdp_policy(model_dir, mesh)
        optimizer, scheduler = learner.update.build_optimizer(fresh, cfg)
        halves = [
            learner.packing.make_micro_batches(c, cfg.micro_batch_tokens)
            for c in (samples[:4], samples[4:])
        ]
        for mbs in halves:
            learner.update.fill_old_logprobs(
                fresh, mbs, cfg.rollout.temperature, torch.device("cpu")
            )
        per_step = []
        for mbs in halves:
            per_step.append(
                learner.update.accumulate_gradients(fresh, mbs, cfg, torch.device("cpu"))
            )
            learner.update.optimizer_step(fresh, optimizer, scheduler, cfg.grad_clip)
        result["minibatches"] = {"optimizer_steps": steps_taken, "logged": m, "per_step": per_step}
    if rank == 0:
        torch.save(result, out_path)
    dist.barrier()  # no rank tears gloo down while another still talks to it
    dist.destroy_process_group()


@pytest.fixture(scope="module")
def grad_runs(tiny_model, tmp_path_factory):
    """Gradients of the same 8 samples: 1 rank x 4 micro-batches, 2 ranks x 2, 1 rank x 1."""
    d = tmp_path_factory.mktemp("grads")
    spawn(_grads_worker, 1, str(tiny_model), 14, d / "1x4.pt")
    spawn(_grads_worker, 2, str(tiny_model), 14, d / "2x2.pt")
    spawn(_grads_worker, 1, str(tiny_model), 10_000, d / "1x1.pt")
    return {k: torch.load(d / f"{k}.pt") for k in ("1x4", "2x2", "1x1")}


@pytest.mark.model_run
def test_loss_normalisation_is_the_same_for_1x4_2x2_and_1x1_micro_batches(grad_runs):
    runs = grad_runs
    expected_tokens = sum(sum(s.loss_mask[1:]) for s in fixed_samples(49152))
    for agg in grpo.AGGREGATIONS:
        assert [runs[k][agg]["num_micro_batches"] for k in ("1x4", "2x2", "1x1")] == [4, 2, 1]
        ref = runs["1x1"][agg]
        assert ref["num_tokens"] == expected_tokens
        assert (
            max(g.abs().max() for g in ref["grads"].values()) > 0.05
        )  # so 1e-6 is a real tolerance
        for k in ("1x4", "2x2"):
            assert runs[k][agg]["loss"] == pytest.approx(ref["loss"], abs=1e-6)
            assert runs[k][agg]["num_tokens"] == expected_tokens
            for name, g in ref["grads"].items():
                torch.testing.assert_close(
                    runs[k][agg]["grads"][name], g, rtol=0, atol=1e-6, msg=f"{k} {agg} {name}"
                )


@pytest.mark.model_run
def test_num_minibatches_takes_off_policy_steps_against_recomputed_old_logprobs(grad_runs):
    mb = grad_runs["1x1"]["minibatches"]
    assert mb["optimizer_steps"] == 2
    first, second = mb["per_step"]
    assert (
        first["ratio_min"] == first["ratio_max"] == 1.0
    )  # on-policy: the recorded log-probs are the current ones
    # the second step's policy moved away from the one whose log-probs were recorded: ratio != 1
    assert second["ratio_min"] < 1.0 < second["ratio_max"]


@pytest.mark.model_run
def test_num_minibatches_logs_the_mean_over_all_optimizer_steps(grad_runs):
    mb = grad_runs["1x1"]["minibatches"]
    logged, (first, second) = mb["logged"], mb["per_step"]
    tokens = [
        sum(sum(s.loss_mask[1:]) for s in half)
        for half in (fixed_samples(49152)[:4], fixed_samples(49152)[4:])
    ]
    assert (first["num_tokens"], second["num_tokens"]) == tuple(tokens)
    assert (
        logged["num_tokens"] == tokens[0] + tokens[1]
    )  # every loss token of the step, not the last half's
    assert abs(first["pg_loss"] - second["pg_loss"]) > 1e-3  # so the mean differs from either one
    assert logged["pg_loss"] == pytest.approx((first["pg_loss"] + second["pg_loss"]) / 2, abs=1e-6)
    # token means are weighted by each step's loss tokens
    want = (first["ratio_mean"] * tokens[0] + second["ratio_mean"] * tokens[1]) / (
        tokens[0] + tokens[1]
    )
    assert logged["ratio_mean"] == pytest.approx(want, abs=1e-6)
    assert (logged["ratio_min"], logged["ratio_max"]) == (second["ratio_min"], second["ratio_max"])
    assert logged["skipped_update"] == 0.0


class _SyntheticTraj:
    """Synthetic trajectory for the update path (no Docker); rewards and tokens come from the global
    torch RNG, so resuming is exact only if the RNG state is restored too."""

    def __init__(self, task_index, ids, reward):
        self.reward, self.truncated, self.policy_version = reward, False, 0
        n = len(ids)
        self.token_ids, self.loss_mask = ids, [0, 0] + [1] * (n - 2)
        self.logprobs = [0.0, 0.0] + [-10.8 - 0.1 * task_index] * (n - 2)


def _synthetic_step(sampler, group_size, vocab):
    out = []
    for i in sampler.next_batch():
        rewards = (
            torch.rand(group_size).round().tolist()
        )  # the global torch RNG, restored on resume
        for j, r in enumerate(rewards):
            out.append(_SyntheticTraj(i, torch.randint(0, vocab, (6 + i + j,)).tolist(), r))
    return out


def _resume_worker(
    rank, world_size, store, model_dir, out_dir, start_steps, stop_after, result_path
):
    mesh = init_gloo(rank, world_size, store)
    torch.manual_seed(1234 + rank)
    cfg = configs.TrainConfig(
        grpo=configs.GRPOConfig(group_size=2, drop_zero_variance_groups=False),
        steps=4,
        tasks_per_step=4,
        lr=1e-3,
        warmup_steps=1,
        micro_batch_tokens=16,
    )
    policy = fsdp_policy(model_dir, mesh)
    optimizer, scheduler = learner.update.build_optimizer(policy, cfg)
    sampler = TaskSampler(
        _ids(5), cfg.tasks_per_step, rank=rank, world_size=world_size, seed=cfg.seed
    )
    step = 0
    if start_steps:
        step = checkpoints.load_checkpoint(
            checkpoints.latest_checkpoint(Path(out_dir)), policy, optimizer, scheduler, sampler
        )
        assert step == start_steps
    while step < stop_after:
        trajs = _synthetic_step(sampler, cfg.grpo.group_size, policy.config.vocab_size)
        samples, _ = learner.packing.samples_from_groups(
            _groups(trajs, cfg.grpo.group_size), cfg.grpo
        )
        learner.update.update(policy, optimizer, scheduler, samples, cfg, torch.device("cpu"))
        step += 1
    if stop_after < cfg.steps:
        checkpoints.save_checkpoint(
            checkpoints.checkpoint_dir(Path(out_dir), step),
            policy,
            optimizer,
            scheduler,
            sampler,
            step,
            "resume-test",
            dataclasses.asdict(cfg),
        )
    params = {n: p.full_tensor().detach().clone() for n, p in policy.named_parameters()}
    if rank == 0:
        torch.save({"params": params, "lr": optimizer.param_groups[0]["lr"]}, result_path)
    dist.barrier()  # no rank tears gloo down while another still talks to it (an abort at exit otherwise)
    dist.destroy_process_group()


@pytest.mark.model_run
def test_resume_from_checkpoint_gives_identical_parameters(tiny_model, tmp_path):
    spawn(
        _resume_worker,
        2,
        str(tiny_model),
        str(tmp_path / "straight"),
        0,
        4,
        tmp_path / "straight.pt",
    )
    spawn(
        _resume_worker,
        2,
        str(tiny_model),
        str(tmp_path / "split"),
        0,
        2,
        tmp_path / "first_half.pt",
    )
    assert (
        checkpoints.latest_checkpoint(tmp_path / "split")
        == tmp_path / "split" / "checkpoints" / "step_000002"
    )
    spawn(
        _resume_worker, 2, str(tiny_model), str(tmp_path / "split"), 2, 4, tmp_path / "resumed.pt"
    )
    straight, half, resumed = (
        torch.load(tmp_path / f) for f in ("straight.pt", "first_half.pt", "resumed.pt")
    )
    init = weights.load_hf(tiny_model).state_dict()
    assert resumed["lr"] == straight["lr"]
    for name, p in straight["params"].items():
        assert torch.equal(resumed["params"][name], p), name
    moved = [n for n, p in straight["params"].items() if not torch.equal(p, half["params"][n])]
    assert "model.embed_tokens.weight" in moved and len(moved) == len(straight["params"])
    assert not torch.equal(init["model.norm.weight"], straight["params"]["model.norm.weight"])


# -----------------------------------------------------------------------------
# end to end: torchrun, 2 gloo ranks, tiny random Qwen3, easy tasks in real Docker containers


@pytest.mark.model_run
@pytest.mark.docker
def test_torchrun_two_gloo_ranks_train_two_steps_on_real_tasks(tiny_model, tmp_path):
    out = tmp_path / "run"
    with JudgeServer(default_score=0.8, input_tokens=1000, output_tokens=50) as judge:
        proc, log_path = torchrun(
            out,
            tiny_model,
            "--steps",
            "2",
            "--save-every",
            "1",
            "--reward.judge-backends",
            f"openai:judge-m@{judge.url}",
        )
        assert proc.wait(timeout=300) == 0, log_path.read_text()[-4000:]
    log = log_path.read_text()
    assert "step 1/2 | reward" in log and "step 2/2 | reward" in log
    records = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2]
    for r in records:
        assert r["episodes"] == 4 and r["episodes_failed"] == 0 and r["groups"] == 2
        assert (
            r["num_tokens"] == r["generated_tokens"] > 0
        )  # every generated token went into the loss
        assert r["skipped_update"] == 0.0 and r["rollout_s"] > 0 and r["train_s"] > 0
        assert 0.0 <= r["reward_mean"] <= 1.0
    # judge accounting, summed over both ranks and cumulative: one call per episode, none failed; a call
    # costs at most 1000 input + 50 output tokens at the default (3, 15) USD per million (cache hits cost 0)
    assert [(r["judge_calls"], r["judge_failed"]) for r in records] == [(4, 0), (8, 0)]
    assert 0.0 < records[0]["judge_cost_usd"] <= 4 * 0.00375 + 1e-12
    assert (
        records[1]["sync_s"] > 0 and records[0]["sync_s"] == 0.0
    )  # step 1's engine already holds the weights
    # max_off_policy_steps 0 (the default): synchronous, every sample generated by the policy trained
    assert [(r["staleness_mean"], r["staleness_max"]) for r in records] == [(0.0, 0.0)] * 2
    for step in (1, 2):
        assert (out / "checkpoints" / f"step_{step:06d}" / "COMPLETE").read_text() == f"{step}\n"
        for rank in (0, 1):
            lines = (
                (out / "trajectories" / f"step_{step:06d}_rank{rank}.jsonl")
                .read_text()
                .splitlines()
            )
            assert len(lines) == 2 and all(json.loads(x)["reward"] is not None for x in lines)
            assert [json.loads(x)["policy_version"] for x in lines] == [step - 1] * 2
    exported = weights.load_hf(out / "hf")
    assert exported.config.num_hidden_layers == 2 and (out / "hf" / "tokenizer.json").exists()
    assert (out / "reward_curve.png").read_bytes()[:4] == b"\x89PNG"
    assert containers_of(run_ids_of(log)) == []


# -----------------------------------------------------------------------------
# what a new user hits


def test_an_explicit_tasks_folder_trains_on_all_its_tasks_not_the_presets_selection(tmp_path):
    import shutil

    for name in ("create-empty-file", "first-line"):  # neither is among the preset's six task ids
        shutil.copytree(ROOT / "data" / "tasks" / name, tmp_path / name)
    cfg = configs.parse_cli(["--tasks", str(tmp_path)])
    assert (cfg.task_ids, cfg.difficulties) == ((), ())
    assert [t.id for t in train.load_task_set(cfg)] == ["create-empty-file", "first-line"]
    kept = configs.parse_cli(["--tasks", str(tmp_path), "--task-ids", "first-line"])
    assert [t.id for t in train.load_task_set(kept)] == ["first-line"]
    preset = configs.parse_cli(
        ["--tasks", str(ROOT / "data" / "tasks")]
    )  # the preset's folder: its selection
    assert len(preset.task_ids) == 6 and preset.difficulties == ("easy",)


@pytest.mark.model_run
def test_a_folder_where_no_task_loads_is_one_line_and_the_previous_run_is_untouched(tmp_path):
    import subprocess

    bad = tmp_path / "bad"
    (bad / "t1").mkdir(parents=True)
    (bad / "t1" / "task.toml").write_text("x\n")
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.json").write_text('{"previous": true}')
    r = subprocess.run(
        [sys.executable, "train.py", "--tasks", str(bad), "--out-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert errors[0].startswith(
        f"error: tasks = '{bad}': no task could be loaded: 1 refused; first: task 't1'"
    )
    assert (out / "config.json").read_text() == '{"previous": true}' and sorted(
        os.listdir(out)
    ) == ["config.json"]


@pytest.mark.model_run
def test_make_train_with_a_bad_knob_prints_its_line_once_and_starts_no_torchrun():
    import subprocess

    r = subprocess.run(
        ["make", "--no-print-directory", "train", "ARGS=--grpo.clip-low 1.5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "Traceback" not in out and "bookkeeping.launch" not in out
    assert [line for line in out.splitlines() if "clip_low" in line] == [
        "error: grpo.clip_low = 1.5: must be in (0, 1)"
    ]


@pytest.mark.model_run
@pytest.mark.skipif(
    importlib.util.find_spec("tensorboard") is not None, reason="tensorboard is installed here"
)
def test_make_train_with_a_logger_not_installed_says_how_to_install_it_and_starts_no_torchrun():
    import subprocess

    r = subprocess.run(
        ["make", "--no-print-directory", "-o", "setup", "train", "ARGS=--logger tensorboard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "Traceback" not in out and "bookkeeping.launch" not in out
    assert [line for line in out.splitlines() if "tensorboard" in line] == [
        "error: logger = 'tensorboard': needs tensorboard: pip install tensorboard"
    ]


def test_the_vllm_memory_report_reads_the_resolved_default_model_not_a_folder_named_default():
    cfg = configs.parse_cli(["--policy.path", "default"])
    report = learner.gpu_memory.engine_memory_report(
        cfg, Path(weights.resolve_model_dir(cfg.policy.path)), 2, 80 * 2**30
    )
    assert "fp32 master weights 4P/W" in report and "engine weights 2P/tp (tp=1)" in report
