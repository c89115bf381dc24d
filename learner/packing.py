"""Trajectories -> learner samples -> packed micro-batches (the data side of the GRPO update).

groups (rollout.Group: a task's trajectories and their rewards)
  -> samples_from_groups: group advantages (grpo.compute_advantages), one Sample per trajectory
  -> make_micro_batches: first-fit decreasing to a token budget, each bin collated into one
     packed row [1, N] (cu_seqlens marks the sequences) plus its padded [S, Lmax] view
"""

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

import configs
import grpo


@dataclass
class Sample:
    """One trajectory as the learner sees it; the three lists have one entry per token
    (length L >= 2).

    token_ids: prompt + generated + observation tokens, exactly as sampled.
    loss_mask: 1 on tokens the policy generated, 0 on prompt and observations.
    logprobs:  the engine's log-prob of each token (0.0 where loss_mask is 0).
    advantage: the trajectory's advantage (grpo.compute_advantages).
    policy_version: optimizer steps the policy that generated it had taken (learner.update.staleness).
    """

    token_ids: list[int]
    loss_mask: list[int]
    logprobs: list[float]
    advantage: float
    policy_version: int = 0


@dataclass
class MicroBatch:
    """Samples packed into one row for the model, and the padded [S, Lmax] view the loss needs.

    input_ids, targets, position_ids: [1, N] int64, N = sum of (L_s - 1); targets are the inputs
    shifted by one within each sequence; positions restart at 0 per sequence.
    cu_seqlens: [S + 1] int32 sequence boundaries in the packed row.
    index: [S, Lmax] int64 position in the packed row of each padded slot (0 on padding).
    loss_mask, engine_logprobs: [S, Lmax] fp32 aligned with targets (0 on padding).
    advantages: [S] fp32. old_logprobs: [S, Lmax] or None (None: on-policy, the detached
    current log-probs). old_log_kept_mass: [S, Lmax] or None, set with old_logprobs: the log of
    the mass truncated sampling keeps under that policy (learner.update.forward_logprobs).
    """

    input_ids: Tensor
    targets: Tensor
    position_ids: Tensor
    cu_seqlens: Tensor
    index: Tensor
    loss_mask: Tensor
    engine_logprobs: Tensor
    advantages: Tensor
    old_logprobs: Tensor | None = None
    old_log_kept_mass: Tensor | None = None

    def to(self, device: torch.device) -> "MicroBatch":
        return MicroBatch(*(None if v is None else v.to(device) for v in dataclasses.astuple(self)))


def pack_micro_batches(lengths: list[int], max_tokens: int) -> list[list[int]]:
    """Pack sequences into micro-batches of at most `max_tokens` tokens (first-fit decreasing).

    lengths: tokens per sequence (as fed to the model). Returns lists of indices into lengths,
    every index exactly once; a sequence longer than max_tokens gets a micro-batch of its own.
    Deterministic: ties in length keep index order. Raises ValueError if max_tokens < 1.
    """
    if max_tokens < 1:
        raise ValueError(f"micro_batch_tokens: expected >= 1, got {max_tokens}")
    bins: list[list[int]] = []
    free: list[int] = []
    for i in sorted(range(len(lengths)), key=lambda i: (-lengths[i], i)):
        for b in range(len(bins)):
            if lengths[i] <= free[b]:
                bins[b].append(i)
                free[b] -= lengths[i]
                break
        else:
            bins.append([i])
            free.append(max_tokens - lengths[i])
    return bins


def collate(samples: list[Sample]) -> MicroBatch:
    """Pack samples into one MicroBatch (CPU tensors). An empty list gives a one-token batch with
    no loss token, so a rank with nothing to learn still runs the same FSDP collectives.
    Raises ValueError naming the sample and field when list lengths differ or L < 2."""
    if not samples:
        z = torch.zeros(1, 1, dtype=torch.long)
        return MicroBatch(
            z,
            z.clone(),
            z.clone(),
            torch.tensor([0, 1], dtype=torch.int32),
            z.clone(),
            torch.zeros(1, 1),
            torch.zeros(1, 1),
            torch.zeros(1),
        )
    for k, s in enumerate(samples):
        if len(s.token_ids) < 2:
            raise ValueError(
                f"samples[{k}].token_ids: need >= 2 tokens to train on, got {len(s.token_ids)}"
            )
        if not len(s.loss_mask) == len(s.logprobs) == len(s.token_ids):
            raise ValueError(
                f"samples[{k}]: loss_mask ({len(s.loss_mask)}) and logprobs ({len(s.logprobs)}) "
                f"must have the length of token_ids ({len(s.token_ids)})"
            )
    lens = [len(s.token_ids) - 1 for s in samples]
    S, Lmax = len(samples), max(lens)
    ids = []
    tgt = []
    pos = []
    index = torch.zeros(S, Lmax, dtype=torch.long)
    mask = torch.zeros(S, Lmax)
    eng = torch.zeros(S, Lmax)
    start = 0
    for k, (s, n) in enumerate(zip(samples, lens)):
        ids += s.token_ids[:-1]
        tgt += s.token_ids[1:]
        pos += range(n)
        index[k, :n] = torch.arange(start, start + n)
        mask[k, :n] = torch.tensor(s.loss_mask[1:], dtype=torch.float32)
        eng[k, :n] = torch.tensor(s.logprobs[1:], dtype=torch.float32)
        start += n
    cu = torch.tensor([0] + list(np.cumsum(lens)), dtype=torch.int32)
    return MicroBatch(
        torch.tensor([ids]),
        torch.tensor([tgt]),
        torch.tensor([pos]),
        cu,
        index,
        mask,
        eng,
        torch.tensor([s.advantage for s in samples], dtype=torch.float32),
    )


def make_micro_batches(samples: list[Sample], max_tokens: int) -> list[MicroBatch]:
    """pack_micro_batches over the samples' model lengths (L - 1), then collate each bin."""
    bins = pack_micro_batches([len(s.token_ids) - 1 for s in samples], max_tokens)
    return [collate([samples[i] for i in b]) for b in bins]


def has_signal(group) -> bool:
    """True when a group (rollout.Group) can teach something: >= 2 scored members (reward not
    None) whose rewards are not all equal (grpo.nonzero_variance_mask), the groups DAPO's dynamic
    sampling keeps."""
    scored = [float(r) for r in group.rewards if r is not None]
    if len(scored) < 2:
        return False
    return bool(grpo.nonzero_variance_mask(torch.tensor(scored), len(scored))[0])


def samples_from_groups(groups: list, cfg: configs.GRPOConfig) -> tuple[list[Sample], dict]:
    """Turn this rank's groups (rollout.Group: .trajectories and their .rewards, one rule for the
    whole group: reward.group_rewards) into learner samples.

    Per group: failed episodes (reward None: docker, engine or build error) are left out, never
    scored 0; a group with < 2 scored members is dropped; with cfg.drop_zero_variance_groups a
    group whose scored rewards are all equal is dropped (DAPO); advantages come from
    grpo.compute_advantages(cfg.advantage) over the scored members; with cfg.mask_truncated a
    truncated episode keeps its place in the group statistics but gets an all-zero loss mask.
    Returns (samples, counts) with counts: groups, groups_dropped_zero_variance,
    groups_dropped_failed, trajectories_failed, trajectories_masked, judge_dropped_groups
    (groups put on the tests alone because a judge call failed, Group.judge_dropped).
    """
    counts = dict(
        groups=len(groups),
        groups_dropped_zero_variance=0,
        groups_dropped_failed=0,
        trajectories_failed=0,
        trajectories_masked=0,
        judge_dropped_groups=sum(int(g.judge_dropped) for g in groups),
    )
    samples = []
    for group in groups:
        scored = [(t, r) for t, r in zip(group.trajectories, group.rewards) if r is not None]
        counts["trajectories_failed"] += len(group.trajectories) - len(scored)
        if len(scored) < 2:
            counts["groups_dropped_failed"] += 1
            continue
        rewards = torch.tensor([float(r) for _, r in scored])
        if cfg.drop_zero_variance_groups and not has_signal(group):
            counts["groups_dropped_zero_variance"] += 1
            continue
        advantages = grpo.compute_advantages(rewards, len(scored), cfg.advantage).tolist()
        for (t, _), a in zip(scored, advantages):
            mask = list(t.loss_mask)
            if cfg.mask_truncated and t.truncated:
                mask = grpo.mask_truncated(torch.tensor([mask]), torch.tensor([True]))[0].tolist()
                counts["trajectories_masked"] += 1
            samples.append(Sample(list(t.token_ids), mask, list(t.logprobs), a, t.policy_version))
    return samples, counts
