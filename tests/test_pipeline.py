"""training/overlap.py: rollouts overlapped with training (max_off_policy_steps): staleness, TIS for stale
samples, an overlapped 2-rank run and its stop."""

import json
import math
import os
import re
import signal
import subprocess
import time

import pytest
import torch
import torch.distributed as dist
from train_helpers import (
    containers_of,
    fixed_samples,
    fsdp_policy,
    init_gloo,
    run_ids_of,
    spawn,
    torchrun,
)

import configs
import learner.distributed
import learner.packing
import learner.update

# -----------------------------------------------------------------------------
# rollouts overlapped with training (max_off_policy_steps, training/overlap.py)


def test_staleness_is_the_version_gap_and_an_older_sample_is_refused():
    s = [learner.packing.Sample([1, 2], [0, 1], [0.0, -1.0], 1.0, policy_version=v) for v in (3, 4)]
    assert learner.update.staleness(s, 4, 1) == {"staleness_mean": 0.5, "staleness_max": 1.0}
    assert learner.update.staleness([], 4, 0) == {"staleness_mean": 0.0, "staleness_max": 0.0}
    with pytest.raises(RuntimeError, match="staleness 2 .* max_off_policy_steps = 1"):
        learner.update.staleness(s, 5, 1)


def test_tis_is_switched_on_for_stale_samples_only_when_the_config_has_it_off():
    off = configs.TrainConfig(grpo=configs.GRPOConfig(tis_cap=0.0))
    assert learner.update.loss_config(off, stale=False) is off
    assert learner.update.loss_config(off, stale=True).grpo.tis_cap == 2.0
    assert off.grpo.tis_cap == 0.0  # the run's config is left as it was
    on = configs.TrainConfig(grpo=configs.GRPOConfig(tis_cap=3.0))
    assert learner.update.loss_config(on, stale=True).grpo.tis_cap == 3.0


def test_the_update_progress_bar_counts_micro_batches_and_tokens_per_second(capsys):
    bar = learner.update.UpdateProgress(3, enabled=True)
    for tokens in (40, 40, 20):
        bar.micro_batch_done(tokens)
    bar.close()
    assert bar.tokens == 100 and bar.bar.n == 3
    shown = capsys.readouterr().err.replace("\r", "\n").splitlines()
    assert re.fullmatch(r"update: 100%\|.*\| 3/3 \[.*, \d+\.\d tok/s\]", shown[-1]), shown
    quiet = learner.update.UpdateProgress(3, enabled=False)
    quiet.micro_batch_done(40)
    quiet.close()
    assert capsys.readouterr().err == ""


def _progress_worker(rank, world_size, store, model_dir, out_path):
    mesh = init_gloo(rank, world_size, store)
    policy = fsdp_policy(model_dir, mesh)
    cfg = configs.TrainConfig(lr=1e-4, micro_batch_tokens=24)
    samples = fixed_samples(policy.config.vocab_size)
    optimizer, scheduler = learner.update.build_optimizer(policy, cfg)
    count = len(learner.packing.make_micro_batches(samples, cfg.micro_batch_tokens))
    learner.update.update(
        policy, optimizer, scheduler, samples, cfg, torch.device("cpu"), progress=True
    )
    torch.save(count, out_path)
    dist.destroy_process_group()


@pytest.mark.model_run
def test_the_update_shows_its_micro_batches_done_of_the_total(tiny_dir, tmp_path, capfd):
    spawn(_progress_worker, 1, tiny_dir, tmp_path / "count.pt")
    count = torch.load(tmp_path / "count.pt")
    shown = capfd.readouterr().err.replace("\r", "\n").splitlines()
    done = [line for line in shown if line.startswith("update: 100%")]
    assert count > 1 and done and f"| {count}/{count} [" in done[-1], shown[-5:]
    assert done[-1].endswith(" tok/s]")


def _stale_tis_worker(rank, world_size, store, model_dir, out_path):
    mesh = init_gloo(rank, world_size, store)
    policy = fsdp_policy(model_dir, mesh)
    cfg = configs.TrainConfig(grpo=configs.GRPOConfig(tis_cap=0.0), lr=1e-4)
    samples = fixed_samples(policy.config.vocab_size)[:2]
    # the engine's log-probs: the learner's own minus log 1.5, so pi_old / pi_engine = 1.5 exactly
    for s in samples:
        mb = learner.packing.collate([s])
        with torch.no_grad():
            lp, _, _ = learner.update.forward_logprobs(policy, mb, cfg.rollout.temperature)
        row = lp[0].tolist()
        s.logprobs = [0.0] + [(x - math.log(1.5)) * m for x, m in zip(row, s.loss_mask[1:])]
    out = {}
    for stale in (False, True):
        optimizer, scheduler = learner.update.build_optimizer(policy, cfg)
        step_cfg = learner.update.loss_config(cfg, stale)
        out[stale] = learner.update.update(
            policy, optimizer, scheduler, samples, step_cfg, torch.device("cpu")
        )
        if not stale:  # restore the weights the engine log-probs were taken from
            policy = fsdp_policy(model_dir, mesh)
    torch.save(out, out_path)
    dist.destroy_process_group()


@pytest.mark.model_run
def test_a_stale_rollout_is_trained_with_tis_weights_at_the_default_cap(tiny_dir, tmp_path):
    spawn(_stale_tis_worker, 1, str(tiny_dir), tmp_path / "tis.pt")
    out = torch.load(tmp_path / "tis.pt")
    assert "tis_weight_mean" not in out[False]  # on-policy with tis_cap 0: no TIS
    assert out[True]["tis_weight_mean"] == pytest.approx(1.5, rel=1e-4)
    assert out[True]["tis_clip_frac"] == 0.0
    assert out[True]["engine_kl"] == pytest.approx(0.5 - math.log(1.5), rel=1e-3)
    # the weights scale the policy gradient: 1.5x the on-policy loss of the same samples
    assert out[True]["pg_loss"] == pytest.approx(1.5 * out[False]["pg_loss"], rel=1e-4)


@pytest.fixture(scope="module")
def stopped_overlapped_run(tiny_dir, tmp_path_factory):
    """One overlapped 2-rank run (max_off_policy_steps 1, tis_cap 0 in the config) of 5 steps, its
    workers sent SIGTERM once step 3 is logged: (the exit code, the out dir, the log). The steps
    before the signal show the overlap, the stop shows what a signal does to it."""
    out = tmp_path_factory.mktemp("overlapped") / "run"
    proc, log_path = torchrun(
        out,
        tiny_dir,
        "--steps",
        "5",
        "--save-every",
        "10",
        "--max-off-policy-steps",
        "1",
        "--grpo.tis-cap",
        "0",
    )
    try:
        deadline = time.monotonic() + 400
        while "step 3/5 | reward" not in log_path.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text()[-4000:]
            time.sleep(0.5)
        # to the workers themselves: torchrun's own forwarding kills them 30 s later, and an update
        # in flight plus closing sandboxes may take longer on a loaded machine
        workers = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True)
        for pid in workers.stdout.split():
            os.kill(int(pid), signal.SIGTERM)
        rc = proc.wait(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return rc, out, log_path.read_text()


@pytest.mark.model_run
@pytest.mark.docker
def test_overlapped_training_logs_staleness_of_at_most_one_step_and_trains_every_rollout(
    stopped_overlapped_run,
):
    rc, out, log = stopped_overlapped_run
    assert rc == 0, log[-4000:]
    records = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records][:3] == [1, 2, 3]
    # step 1 trains on the first rollout (version 0) before any update; later ones lag by one
    assert [(r["staleness_mean"], r["staleness_max"]) for r in records] == [(0.0, 0.0)] + [
        (1.0, 1.0)
    ] * (len(records) - 1)
    # TIS (tis_cap 0 in the config) comes on at the default cap 2 exactly when versions differ
    assert "tis_weight_mean" not in records[0]
    for r in records[1:]:
        assert 0.0 < r["tis_weight_mean"] <= 2.0 and r["engine_kl"] >= 0.0
    for r in records:
        assert r["episodes"] == 4 and r["episodes_failed"] == 0 and r["skipped_update"] == 0.0
        assert r["num_tokens"] == r["generated_tokens"] > 0
    # step s trains on a rollout of the policy after step s - 2: versions 0, 0, 1 (, 2)
    for step in range(1, len(records) + 1):
        for rank in (0, 1):
            path = out / "trajectories" / f"step_{step:06d}_rank{rank}.jsonl"
            assert [json.loads(x)["policy_version"] for x in path.read_text().splitlines()] == [
                max(step - 2, 0)
            ] * 2
    assert containers_of(run_ids_of(log)) == []


@pytest.mark.model_run
@pytest.mark.docker
def test_sigterm_to_an_overlapped_run_finishes_the_update_in_flight_and_checkpoints_it(
    stopped_overlapped_run,
):
    rc, out, log = stopped_overlapped_run
    # a clean stop (bookkeeping/stop.py)
    assert rc == 0, log[-4000:]
    # one notice per run (rank 0 says it)
    assert log.count("SIGTERM: cutting this step short") == 1
    done = log.count("/5 | reward")  # 4 when the signal landed beside step 4's update
    assert done in (3, 4) and "step 5/5" not in log
    # the only checkpoint (save_every 10): the signal's
    assert sorted(p.name for p in (out / "checkpoints").glob("step_*")) == [f"step_{done:06d}"]
    assert (out / "checkpoints" / f"step_{done:06d}" / "COMPLETE").read_text() == f"{done}\n"
    records = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == list(range(1, done + 1))
    assert (out / "hf" / "config.json").exists()
    assert containers_of(run_ids_of(log)) == []


# -----------------------------------------------------------------------------
# TIS under truncated sampling: on-policy, the weight is 1 whatever top-k / top-p


def _on_policy_step_metrics(model_dir, top_p: float, top_k: int) -> dict:
    """Sample 4 replies from a TorchEngine holding exactly the learner's weights, then take one
    update's metrics on them (on-policy: k = 0, no optimizer step)."""
    import asyncio

    import engines as E
    from hf import weights

    policy = weights.load_hf(model_dir)
    tok = weights.load_tokenizer(model_dir)
    prompt = tok.encode("Create /app/hello.txt containing hello")

    async def go():
        eng = E.TorchEngine(policy, tok, max_batch=4, max_seq_len=256, seed=0)
        outs = await asyncio.gather(
            *(
                eng.generate(prompt, E.SamplingParams(0.7, top_p, top_k, 24, seed=s))
                for s in range(4)
            )
        )
        await eng.aclose()
        return outs

    samples = []
    for k, c in enumerate(asyncio.run(go())):
        n = len(c.token_ids)
        samples.append(
            learner.packing.Sample(
                prompt + c.token_ids,
                [0] * len(prompt) + [1] * n,
                [0.0] * len(prompt) + list(c.logprobs),
                1.0 if k % 2 else -1.0,
            )
        )
    rollout = configs.RolloutConfig(temperature=0.7, top_p=top_p, top_k=top_k)
    cfg = configs.TrainConfig(rollout=rollout, grpo=configs.GRPOConfig(tis_cap=2.0))
    mbs = learner.packing.make_micro_batches(samples, cfg.micro_batch_tokens)
    return learner.update.accumulate_gradients(policy.train(), mbs, cfg, torch.device("cpu"))


@pytest.mark.parametrize("top_p, top_k", [(0.9, 20), (1.0, 20), (0.9, 0)])
def test_an_on_policy_step_has_tis_weight_1_under_truncated_sampling_on_a_real_engine(
    tiny_dir, top_p, top_k
):
    # The tiny random model is near uniform over 49,152 tokens, so top-k 20 keeps ~4e-4 of the mass:
    # scoring the full distribution against the engine's renormalised log-probs gave weights ~4e-4
    # (clipped nowhere, since they are < 1) and engine_kl ~ 7; under the same truncation they are 1.
    m = _on_policy_step_metrics(tiny_dir, top_p, top_k)
    assert m["num_tokens"] == 4 * 24
    assert m["tis_weight_mean"] == pytest.approx(1.0, abs=1e-3)
    assert m["tis_clip_frac"] == 0.0
    assert m["engine_kl"] < 1e-6
    assert m["nonfinite_tokens"] == 0.0


def test_the_update_divides_drgrpo_by_the_generation_budget_not_the_context(tiny_dir, monkeypatch):
    # not rollout.max_context_tokens (2048 here), 5.3x the 3 x 128 tokens an episode of the CPU
    # preset can generate
    from hf import weights

    seen = []
    real = learner.update.grpo.loss_denominator

    def spy(loss_mask, aggregation, max_tokens=None):
        seen.append(max_tokens)
        return real(loss_mask, aggregation, max_tokens)

    monkeypatch.setattr(learner.update.grpo, "loss_denominator", spy)
    rollout = configs.RolloutConfig(max_turns=3, max_tokens_per_turn=128, max_context_tokens=2048)
    grpo_cfg = configs.GRPOConfig(aggregation="seq_mean_token_sum_norm", advantage="drgrpo")
    cfg = configs.TrainConfig(rollout=rollout, grpo=grpo_cfg)
    policy = weights.load_hf(tiny_dir)
    samples = fixed_samples(policy.config.vocab_size)[:2]
    mbs = learner.packing.make_micro_batches(samples, cfg.micro_batch_tokens)
    learner.update.accumulate_gradients(policy, mbs, cfg, torch.device("cpu"))
    assert seen and set(seen) == {384}


def test_the_collective_timeout_covers_the_longest_rollout_the_config_allows():
    # not NCCL's default 10 minutes, while a trainer waits in G for a whole rollout
    cfg = configs.TrainConfig(
        tasks_per_step=8,
        grpo=configs.GRPOConfig(group_size=8),
        rollout=configs.RolloutConfig(episode_timeout_s=900.0, max_concurrent_episodes=24),
        sandbox=configs.SandboxConfig(verify_wall_s=300.0),
        reward=configs.RewardConfig(
            judge_backends=("anthropic:m",), judge_timeout_s=60.0, judge_max_retries=2
        ),
    )
    seconds, line = learner.distributed.collective_timeout_s(cfg)
    # 64 episodes in ceil(64 / 24) = 3 waves of (900 + 300 + 60 x 3) s, + 600 s
    assert seconds == 3 * (900 + 300 + 180) + 600
    assert line == (
        "collective timeout 79 min: 3 wave(s) of episodes x (agent 900 s + verify 300 s + "
        "judge 180 s) + 600 s"
    )
    # verify_wall_s 0 (auto): 3 x harbor's 600 s per-test timeout; no judge
    auto = configs.TrainConfig(tasks_per_step=2, grpo=configs.GRPOConfig(group_size=4))
    assert learner.distributed.collective_timeout_s(auto)[0] == 1 * (900 + 1800) + 600
