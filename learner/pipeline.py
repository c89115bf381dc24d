"""Rollouts overlapped with training (TrainConfig.max_off_policy_steps).

With max_off_policy_steps = 0 a step is synchronous: roll out with the current policy, then train
on it. With k = 1 the update on rollout N's samples runs in a worker thread (the `learner` of
training/overlap.py, the driver) from the moment rollout N+1's generation ends (every episode
stopped acting, the engine asleep: rollout.run_episodes' on_generation_end) while the event loop
finishes rollout N+1's verifications and judge calls; the engine gets the new weights before
rollout N+2. Engine and learner never compute at once: on a CPU rank they share the cores, and
running both side by side was slower than one after the other (BENCHMARKS.md); what overlaps is
the container and judge work with the update. The pipeline is one rollout deep, so a sample is
at most 1 optimizer step old and k is 0 or 1 (configs refuses more: k = 2 would run as 1)
(prime-rl's and verl's one-step off-policy schedule; AReaL-style decoupled loss):

    iteration:   0        1                2                ...  steps
    rollout:     R0 (v0)  R1 (v0)          R2 (v1)               -
    update:      -        U(R0) -> v1      U(R1) -> v2           U(R_{steps-1})
                          (from R1's generation end, beside R1's verification tail)

Each sample carries the policy version it was generated with (`Sample.policy_version`,
`Trajectory.policy_version`: optimizer steps done when its rollout started); staleness = the
learner's version at the update - the sample's. A stale sample's ratio is taken against the
current policy's detached log-probs (rho = 1 at the first optimizer step), and truncated importance
sampling against the engine's log-probs, min(pi_old / pi_engine, tis_cap), corrects both the
sampler mismatch and the staleness (Yao et al. 2025); it is on whenever a sample is stale, with the
configured grpo.tis_cap, or STALE_TIS_CAP when that is 0.

Collectives: the worker thread issues the update's gloo/nccl collectives while the main thread
runs only the event loop, which issues none (tensor-parallel vLLM, whose followers' collectives
would interleave with the learner's, is refused by configs.validate). Sync, gather, log and
checkpoint run in the main thread after the update is joined, in the same order on every rank.
While the learner trains, the event loop also starts the next rollout's sandboxes
(training.ahead.start_ahead), its tasks drawn then; a stop before its episodes took them has them closed
(training.ahead.close_ahead, from the driver's rollout or its end; the teardown's
sandbox.reap_run also waits for the Docker calls still in flight). Left as they are: the sampler's
curriculum sees a rollout's groups one step later, and a checkpoint holds no rollout in flight
(the tasks of the one or two rollouts drawn after it are not redrawn on resume).
"""

import dataclasses

import torch
import torch.distributed as dist

import configs
from learner.distributed import all_reduce
from learner.packing import Sample

# TIS cap for off-policy samples when grpo.tis_cap = 0 (off); Yao et al. use 2
STALE_TIS_CAP = 2.0


def staleness(
    samples: list[Sample], version: int, max_off_policy_steps: int, device=None
) -> dict[str, float]:
    """staleness_mean and staleness_max over every rank's `samples` trained at policy `version`
    (optimizer steps done): version - sample.policy_version; 0.0 each with no sample anywhere.
    Collective (two all_reduce on `device`), so rank 0 logs every rank's even with no sample.
    Raises RuntimeError when a sample is older than max_off_policy_steps (a pipeline bug, never
    silently trained on)."""
    ages = [version - s.policy_version for s in samples]
    if any(a < 0 or a > max_off_policy_steps for a in ages):
        raise RuntimeError(
            f"sample staleness {max(ages)} (policy version {version}): outside "
            f"[0, max_off_policy_steps = {max_off_policy_steps}]"
        )
    sums = torch.tensor([float(sum(ages)), float(len(ages))], dtype=torch.float64, device=device)
    worst = torch.tensor([float(max(ages, default=0))], device=device)
    all_reduce(sums)
    all_reduce(worst, dist.ReduceOp.MAX)
    return {
        "staleness_mean": float(sums[0] / sums[1]) if sums[1] > 0 else 0.0,
        "staleness_max": float(worst[0]),
    }


def loss_config(cfg: configs.TrainConfig, stale: bool) -> configs.TrainConfig:
    """cfg for the update: unchanged when no sample is stale or grpo.tis_cap is on; else a copy
    with grpo.tis_cap = STALE_TIS_CAP, so TIS is on whenever a sample's policy version differs.
    `stale` must agree over ranks (it does: every rank's samples share their rollout's version)."""
    if not stale or cfg.grpo.tis_cap > 0:
        return cfg
    return dataclasses.replace(cfg, grpo=dataclasses.replace(cfg.grpo, tis_cap=STALE_TIS_CAP))
