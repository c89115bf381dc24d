"""GRPO training of terminal agents: the torchrun entry point.

    torchrun --standalone --nproc_per_node=2 train.py --preset cpu-smollm2     # CPU, gloo
    torchrun --nnodes=2 --nproc_per_node=8 --rdzv_endpoint=$MASTER_ADDR:29500 train.py --preset qwen3-32b-16xh100
    python train.py --help                                                     # every knob (configs.py)

One step on each rank (DESIGN.md):
  1. take this rank's slice of the step's tasks (TaskSampler), each run group_size times;
  2. push the policy's weights into this rank's engine if they changed (sync_weights);
  3. run the agents in their containers (rollout.run_episodes), tests verify, judge scores;
  4. engine to sleep; group advantages (grpo.compute_advantages); drop zero-variance groups;
  5. GRPO update: micro-batches packed to a token budget, loss divided by the number of loss
     tokens (or sequences) summed over all micro-batches of all ranks, gradients summed over
     ranks (FSDP2 divide factor 1), AdamW, warmup + cosine/constant lr, grad-norm clipping;
  6. log one line, metrics.jsonl, trajectories; checkpoint every save_every steps.

The learner is FSDP2-sharded over all ranks (one mesh dimension); each rank also owns one
generation engine with a full copy of the weights.
"""

import asyncio
import dataclasses
import json
import math
import os
import random
import signal
import socket
import sys
import time
import warnings
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch import Tensor
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import FSDPModule
from torch.distributed.tensor import DTensor

import configs
import engines
import evaluate
import grpo
import model as modeling
import reward
import rollout
import sandbox
import weights
from tasks import load_tasks

# -----------------------------------------------------------------------------
# task sampler: seeded epochs, rank sharding, optional curriculum

class TaskSampler:
    """Draws the tasks of each step: seeded epochs over all tasks, sharded over ranks.

    Every rank holds the same state and draws the same global batch of `tasks_per_step`
    task indices; rank r keeps global[r::world_size]. Within an epoch each task is drawn once,
    in the order of a permutation of range(num_tasks) seeded by (seed, epoch) when `shuffle`
    (else in index order); a batch that runs past the end of an epoch continues in the next.

    Curriculum (optional): `record(task_index, rewards)` keeps the rewards of the last `window`
    groups of each task; a task whose last `window` groups were all 0 or all 1 (too hard or
    solved) is skipped. If every task would be skipped, the epoch is drawn without skipping,
    so a step always has tasks. `record` must be called with the same arguments on every rank
    (train.py all-gathers the groups first), or the ranks' draws diverge.
    """

    def __init__(self, num_tasks: int, tasks_per_step: int, rank: int = 0, world_size: int = 1, seed: int = 0,
                 shuffle: bool = True, curriculum: bool = False, window: int = 2):
        if num_tasks < 1:
            raise ValueError(f"num_tasks: need at least one task, got {num_tasks}")
        if tasks_per_step < 1:
            raise ValueError(f"tasks_per_step: expected >= 1, got {tasks_per_step}")
        if not 0 <= rank < world_size:
            raise ValueError(f"rank: expected 0 <= rank < world_size={world_size}, got {rank}")
        self.num_tasks, self.tasks_per_step = num_tasks, tasks_per_step
        self.rank, self.world_size, self.seed, self.shuffle = rank, world_size, seed, shuffle
        self.curriculum, self.window = curriculum, window
        self.epoch, self.pos = 0, 0
        self.history: dict[int, deque] = {}

    def _order(self, epoch: int) -> list[int]:
        if not self.shuffle:
            return list(range(self.num_tasks))
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + epoch)
        return torch.randperm(self.num_tasks, generator=g).tolist()

    def skipped(self, task_index: int) -> bool:
        """True if the curriculum currently skips this task (last `window` groups all 0 or all 1)."""
        h = self.history.get(task_index)
        if not self.curriculum or h is None or len(h) < self.window:
            return False
        rewards = [r for group in h for r in group]
        return all(r <= 0.0 for r in rewards) or all(r >= 1.0 for r in rewards)

    def next_global(self) -> list[int]:
        """The next step's task indices for all ranks (tasks_per_step of them); advances the state."""
        skip = self.curriculum and not all(self.skipped(i) for i in range(self.num_tasks))
        out: list[int] = []
        order = self._order(self.epoch)
        while len(out) < self.tasks_per_step:
            if self.pos >= self.num_tasks:
                self.epoch, self.pos = self.epoch + 1, 0
                order = self._order(self.epoch)
            i = order[self.pos]
            self.pos += 1
            if not (skip and self.skipped(i)):
                out.append(i)
        return out

    def next_batch(self) -> list[int]:
        """This rank's task indices for the next step: next_global()[rank::world_size]."""
        return self.next_global()[self.rank::self.world_size]

    def record(self, task_index: int, rewards: list[float]) -> None:
        """Remember one group's rewards for the curriculum (a no-op history when curriculum is off)."""
        self.history.setdefault(task_index, deque(maxlen=self.window)).append([float(r) for r in rewards])

    def state_dict(self) -> dict:
        return {"epoch": self.epoch, "pos": self.pos, "history": {i: list(h) for i, h in self.history.items()}}

    def load_state_dict(self, state: dict) -> None:
        self.epoch, self.pos = int(state["epoch"]), int(state["pos"])
        self.history = {int(i): deque(h, maxlen=self.window) for i, h in state["history"].items()}


# -----------------------------------------------------------------------------
# learning-rate schedule

def lr_factor(step: int, warmup_steps: int, total_steps: int, schedule: str) -> float:
    """Multiplier of the peak lr at optimizer step `step` (0-based), for torch LambdaLR.

        warmup (step < warmup_steps):  (step + 1) / warmup_steps
        constant:                       1
        cosine:                         0.5 * (1 + cos(pi * p)),
                                        p = (step - warmup_steps) / (total_steps - warmup_steps)
    Raises ValueError for an unknown schedule.
    """
    if schedule not in ("cosine", "constant"):
        raise ValueError(f"lr_schedule: expected 'cosine' or 'constant', got {schedule!r}")
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    if schedule == "constant":
        return 1.0
    p = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    return 0.5 * (1.0 + math.cos(math.pi * min(p, 1.0)))


# -----------------------------------------------------------------------------
# trajectories -> packed micro-batches

@dataclass
class Sample:
    """One trajectory as the learner sees it; the three lists have one entry per token (length L >= 2).

    token_ids: prompt + generated + observation tokens, exactly as sampled.
    loss_mask: 1 on tokens the policy generated, 0 on prompt and observations.
    logprobs:  the engine's log-prob of each token (0.0 where loss_mask is 0).
    advantage: the trajectory's advantage (grpo.compute_advantages).
    """

    token_ids: list[int]
    loss_mask: list[int]
    logprobs: list[float]
    advantage: float


@dataclass
class MicroBatch:
    """Samples packed into one row for the model, and the padded [S, Lmax] view the loss needs.

    input_ids, targets, position_ids: [1, N] int64, N = sum of (L_s - 1); targets are the inputs
    shifted by one within each sequence; positions restart at 0 per sequence.
    cu_seqlens: [S + 1] int32 sequence boundaries in the packed row.
    index: [S, Lmax] int64 position in the packed row of each padded slot (0 on padding).
    loss_mask, engine_logprobs: [S, Lmax] fp32 aligned with targets (0 on padding).
    advantages: [S] fp32. old_logprobs: [S, Lmax] or None (None: on-policy, the detached current log-probs).
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
        return MicroBatch(z, z.clone(), z.clone(), torch.tensor([0, 1], dtype=torch.int32), z.clone(),
                          torch.zeros(1, 1), torch.zeros(1, 1), torch.zeros(1))
    for k, s in enumerate(samples):
        if len(s.token_ids) < 2:
            raise ValueError(f"samples[{k}].token_ids: need >= 2 tokens to train on, got {len(s.token_ids)}")
        if not len(s.loss_mask) == len(s.logprobs) == len(s.token_ids):
            raise ValueError(f"samples[{k}]: loss_mask ({len(s.loss_mask)}) and logprobs ({len(s.logprobs)}) "
                             f"must have the length of token_ids ({len(s.token_ids)})")
    lens = [len(s.token_ids) - 1 for s in samples]
    S, Lmax = len(samples), max(lens)
    ids, tgt, pos = [], [], []
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
    return MicroBatch(torch.tensor([ids]), torch.tensor([tgt]), torch.tensor([pos]), cu, index, mask, eng,
                      torch.tensor([s.advantage for s in samples], dtype=torch.float32))


def make_micro_batches(samples: list[Sample], max_tokens: int) -> list[MicroBatch]:
    """pack_micro_batches over the samples' model lengths (L - 1), then collate each bin."""
    bins = pack_micro_batches([len(s.token_ids) - 1 for s in samples], max_tokens)
    return [collate([samples[i] for i in b]) for b in bins]


# -----------------------------------------------------------------------------
# the GRPO update

def _forward_logprobs(model: torch.nn.Module, mb: MicroBatch, temperature: float) -> tuple[Tensor, Tensor]:
    """Packed forward -> (logprobs, entropy) as [S, Lmax] fp32 views of the packed row."""
    logprobs, entropy = model(mb.input_ids, position_ids=mb.position_ids, cu_seqlens=mb.cu_seqlens,
                              targets=mb.targets, temperature=temperature)
    return logprobs[0][mb.index], entropy[0][mb.index]


def _all_reduce(x: Tensor, op=dist.ReduceOp.SUM) -> Tensor:
    if dist.is_initialized() and dist.get_world_size() > 1:
        dist.all_reduce(x, op=op)
    return x


_SUMMED = ("pg_loss", "kl_loss", "num_tokens")


def reduce_metrics(per_mb: list[dict[str, Tensor]]) -> dict[str, float | None]:
    """Merge policy_loss metrics over micro-batches and ranks (collective when distributed).

    pg_loss, kl_loss (already divided by the global denominator) and num_tokens are summed;
    ratio_min/ratio_max take min/max (None without any loss token); every other metric is a
    token-weighted mean. Reduced on the metrics' device (nccl needs CUDA tensors), one host sync.
    Every rank must pass metrics with the same keys in the same number of calls."""
    keys = sorted(per_mb[0])
    vals = torch.stack([torch.stack([m[k] for k in keys]) for m in per_mb]).double()  # [micro-batches, keys]
    n = vals[:, keys.index("num_tokens")]
    weight = torch.stack([torch.ones_like(n) if k in _SUMMED else n for k in keys], dim=1)
    sums = (vals * weight).sum(0)
    lo = vals[:, keys.index("ratio_min")].min().reshape(1)
    hi = vals[:, keys.index("ratio_max")].max().reshape(1)
    _all_reduce(sums)
    _all_reduce(lo, dist.ReduceOp.MIN)
    _all_reduce(hi, dist.ReduceOp.MAX)
    sums, lo, hi = sums.tolist(), float(lo), float(hi)
    total = sums[keys.index("num_tokens")]
    out = {k: sums[j] if k in _SUMMED else sums[j] / max(total, 1.0) for j, k in enumerate(keys)}
    # no loss token anywhere: there is no ratio to report (None, not an infinity, in metrics.jsonl)
    out["ratio_min"], out["ratio_max"] = (lo, hi) if total > 0 else (None, None)
    return out


def loss_kwargs(cfg: configs.TrainConfig) -> dict:
    """grpo.policy_loss keyword arguments from the config (Dr.GRPO's constant = max_context_tokens)."""
    g = cfg.grpo
    return dict(clip_low=g.clip_low, clip_high=g.clip_high, dual_clip=g.dual_clip, aggregation=g.aggregation,
                max_tokens=cfg.rollout.max_context_tokens, kl_coef=g.kl_coef, kl_estimator=g.kl_estimator,
                tis_cap=g.tis_cap)


def accumulate_gradients(model: torch.nn.Module, micro_batches: list[MicroBatch], cfg: configs.TrainConfig,
                         device: torch.device, ref_model: torch.nn.Module | None = None) -> dict[str, float]:
    """Forward and backward every micro-batch of this rank; gradients add up in `.grad`.

    The loss of each micro-batch is divided by the global denominator D = sum over all ranks and
    micro-batches of grpo.loss_denominator(loss_mask) (an all_reduce), so with gradients summed
    over micro-batches (accumulation) and ranks (FSDP2 reduce with divide factor 1, see
    `set_gradient_sum`) the result equals the gradient of one batch holding every trajectory.
    Ranks with fewer micro-batches run empty ones: FSDP2 needs the same collectives everywhere.
    Returns reduce_metrics over all ranks (see grpo.policy_loss for the names).
    """
    kw = loss_kwargs(cfg)
    denom = sum((grpo.loss_denominator(mb.loss_mask, cfg.grpo.aggregation, cfg.rollout.max_context_tokens) for mb in micro_batches),
                torch.zeros((), dtype=torch.float32)).to(device)
    _all_reduce(denom)
    count = _all_reduce(torch.tensor([len(micro_batches)], device=device), dist.ReduceOp.MAX)
    micro_batches = micro_batches + [collate([])] * (max(1, int(count)) - len(micro_batches))
    temperature = cfg.rollout.temperature
    metrics = []
    for mb in micro_batches:
        mb = mb.to(device)
        logprobs, entropy = _forward_logprobs(model, mb, temperature)
        ref = None
        if ref_model is not None:
            with torch.no_grad():
                ref, _ = _forward_logprobs(ref_model, mb, temperature)
        old = logprobs.detach() if mb.old_logprobs is None else mb.old_logprobs
        loss, m = grpo.policy_loss(logprobs, old, mb.advantages, mb.loss_mask, denominator=denom,
                                   engine_logprobs=mb.engine_logprobs, ref_logprobs=ref, entropy=entropy, **kw)
        loss.backward()
        metrics.append(m)
    return reduce_metrics(metrics)


@torch.no_grad()
def fill_old_logprobs(model: torch.nn.Module, micro_batches: list[MicroBatch], temperature: float,
                      device: torch.device) -> None:
    """Set mb.old_logprobs to the current policy's log-probs (needed when one rollout batch feeds
    several optimizer steps, grpo.num_minibatches > 1: later steps are off-policy)."""
    count = int(_all_reduce(torch.tensor([len(micro_batches)], device=device), dist.ReduceOp.MAX))
    for k in range(count):
        mb = micro_batches[k] if k < len(micro_batches) else collate([])
        lp, _ = _forward_logprobs(model, mb.to(device), temperature)
        mb.old_logprobs = lp.float().cpu()


def set_gradient_sum(model: torch.nn.Module) -> None:
    """Make FSDP2 sum (not average) gradients over ranks: the loss already divides by the global count."""
    for m in model.modules():
        if isinstance(m, FSDPModule):
            m.set_gradient_divide_factor(1.0)
            m.set_force_sum_reduction_for_comms(True)  # plain SUM: gloo has no PREMUL_SUM


def optimizer_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, scheduler, grad_clip: float) -> float:
    """Clip the global gradient norm (grad_clip = 0: no clipping), step optimizer and schedule, zero
    the grads; returns the norm before clipping."""
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip if grad_clip > 0 else float("inf"))
    if isinstance(norm, DTensor):
        norm = norm.full_tensor()
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    return float(norm)


def update(model, optimizer, scheduler, samples: list[Sample], cfg: configs.TrainConfig, device: torch.device,
           ref_model=None) -> dict[str, float]:
    """The GRPO update of one training step on this rank's samples: grpo.num_minibatches optimizer
    steps, each over an equal share of the samples. Collective: every rank calls it each step.
    Returns the metrics of the last optimizer step plus `grad_norm`, `lr` (before the step) and
    `skipped_update` (1.0 when no rank had a loss token: no optimizer step, the lr schedule advances)."""
    k = cfg.grpo.num_minibatches
    chunks = [samples[i * len(samples) // k:(i + 1) * len(samples) // k] for i in range(k)]
    batches = [make_micro_batches(c, cfg.micro_batch_tokens) for c in chunks]
    if k > 1:
        for mbs in batches:
            fill_old_logprobs(model, mbs, cfg.rollout.temperature, device)
    metrics: dict[str, float] = {}
    for mbs in batches:
        lr = optimizer.param_groups[0]["lr"]
        metrics = accumulate_gradients(model, mbs, cfg, device, ref_model)
        metrics["lr"] = lr
        if metrics["num_tokens"] == 0:
            # No loss token on any rank (e.g. every group had equal rewards): Adam's momentum
            # would still move the weights on a zero gradient, so the optimizer step is skipped.
            optimizer.zero_grad(set_to_none=True)
            with warnings.catch_warnings():  # "scheduler.step() before optimizer.step()" is intended here
                warnings.simplefilter("ignore", UserWarning)
                scheduler.step()
            metrics["grad_norm"], metrics["skipped_update"] = 0.0, 1.0
            continue
        metrics["grad_norm"] = optimizer_step(model, optimizer, scheduler, cfg.grad_clip)
        metrics["skipped_update"] = 0.0
    return metrics


def build_optimizer(model: torch.nn.Module, cfg: configs.TrainConfig):
    """AdamW (fused on CUDA) and a LambdaLR of lr_factor over steps * num_minibatches optimizer steps."""
    fused = any(p.is_cuda for p in model.parameters())
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, betas=(0.9, 0.999),
                                  eps=1e-8, fused=fused)
    total = cfg.steps * cfg.grpo.num_minibatches
    warmup = cfg.warmup_steps * cfg.grpo.num_minibatches
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: lr_factor(s, warmup, total, cfg.lr_schedule))
    return optimizer, scheduler


def samples_from_trajectories(trajectories: list, group_size: int,
                              cfg: configs.GRPOConfig) -> tuple[list[Sample], dict]:
    """Turn this rank's trajectories (groups of group_size contiguous) into learner samples.

    Per group: trajectories whose episode failed (reward None: docker, engine or build error) are
    left out, never scored 0; a group with fewer than 2 scored members is dropped (no baseline);
    with cfg.drop_zero_variance_groups a group whose scored rewards are all equal is dropped (DAPO);
    advantages come from grpo.compute_advantages(cfg.advantage) over the scored members; with
    cfg.mask_truncated a truncated episode keeps its place in the group statistics but gets an
    all-zero loss mask. Returns (samples, counts) with counts: groups, groups_dropped_zero_variance,
    groups_dropped_failed, trajectories_failed, trajectories_masked.
    Raises ValueError if len(trajectories) is not a multiple of group_size.
    """
    if len(trajectories) % group_size:
        raise ValueError(f"trajectories: {len(trajectories)} is not a multiple of group_size={group_size}")
    counts = dict(groups=len(trajectories) // group_size, groups_dropped_zero_variance=0, groups_dropped_failed=0,
                  trajectories_failed=0, trajectories_masked=0)
    samples = []
    for g in range(0, len(trajectories), group_size):
        scored = [t for t in trajectories[g:g + group_size] if t.reward is not None]
        counts["trajectories_failed"] += group_size - len(scored)
        if len(scored) < 2:
            counts["groups_dropped_failed"] += 1
            continue
        rewards = torch.tensor([float(t.reward) for t in scored])
        if cfg.drop_zero_variance_groups and not bool(grpo.nonzero_variance_mask(rewards, len(scored))[0]):
            counts["groups_dropped_zero_variance"] += 1
            continue
        for t, a in zip(scored, grpo.compute_advantages(rewards, len(scored), cfg.advantage).tolist()):
            mask = list(t.loss_mask)
            if cfg.mask_truncated and t.truncated:
                mask = [0] * len(mask)
                counts["trajectories_masked"] += 1
            samples.append(Sample(list(t.token_ids), mask, list(t.logprobs), a))
    return samples, counts


# -----------------------------------------------------------------------------
# weight sync: learner shards -> this rank's engine

def iter_full_weights(model: torch.nn.Module, dtype: torch.dtype | None = None):
    """Yield (HF name, full tensor) one parameter at a time, gathered from the FSDP2 shards.

    named_parameters() lists a tied lm_head once (as model.embed_tokens.weight), as engines expect.
    Collective: every rank must exhaust the iterator in the same order."""
    for name, p in model.named_parameters():
        p = p.detach().to(dtype) if dtype is not None else p.detach()  # cast the shard: gather engine-dtype bytes
        yield name, (p.full_tensor() if isinstance(p, DTensor) else p)


def sync_weights(model: torch.nn.Module, engine, dtype: torch.dtype | None = None) -> float:
    """Push the policy into the engine (engine.load_weights) as `dtype` tensors (the engine's dtype; the fp32
    master weights are cast on the way); returns seconds spent. Collective."""
    t0 = time.perf_counter()
    weights = iter_full_weights(model, dtype)
    engine.load_weights(weights)
    for _ in weights:  # an engine that stops early must not leave the other ranks waiting in full_tensor()
        pass
    return time.perf_counter() - t0


# -----------------------------------------------------------------------------
# checkpoints (torch.distributed.checkpoint) and RNG

def rng_state() -> dict:
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def checkpoint_dir(out_dir: Path, step: int) -> Path:
    return Path(out_dir) / "checkpoints" / f"step_{step:06d}"


def latest_checkpoint(out_dir: Path) -> Path | None:
    """The complete checkpoint with the highest step under out_dir/checkpoints, or None."""
    root = Path(out_dir) / "checkpoints"
    done = sorted(p for p in root.glob("step_*") if (p / "COMPLETE").exists()) if root.is_dir() else []
    return done[-1] if done else None


def save_checkpoint(path: Path, model, optimizer, scheduler, sampler: TaskSampler, step: int) -> None:
    """Save a resumable checkpoint (collective).

    Layout of `path`: the DCP checkpoint of {"model", "optim"} (sharded, every rank writes its
    shards); rank{r}.pt per rank with step (completed steps), scheduler, sampler and RNG state;
    COMPLETE written by rank 0 last, so a checkpoint cut off by a crash is never resumed from."""
    path = Path(path)
    rank = dist.get_rank() if dist.is_initialized() else 0
    if rank == 0:
        path.mkdir(parents=True, exist_ok=True)
        (path / "COMPLETE").unlink(missing_ok=True)  # an older run's marker must not vouch for this write
    if dist.is_initialized():
        dist.barrier()
    model_sd, optim_sd = get_state_dict(model, optimizer)
    dcp.save({"model": model_sd, "optim": optim_sd}, checkpoint_id=str(path))
    torch.save({"step": step, "scheduler": scheduler.state_dict(), "sampler": sampler.state_dict(), "rng": rng_state()},
               path / f"rank{rank}.pt")
    if dist.is_initialized():
        dist.barrier()
    if rank == 0:
        (path / "COMPLETE").write_text(f"{step}\n")


def load_checkpoint(path: Path, model, optimizer, scheduler, sampler: TaskSampler) -> int:
    """Restore everything save_checkpoint wrote, in place (collective); returns the completed step count.
    Raises FileNotFoundError if the checkpoint or this rank's state file is missing (e.g. a
    different number of ranks than when it was saved)."""
    path = Path(path)
    rank = dist.get_rank() if dist.is_initialized() else 0
    state_file = path / f"rank{rank}.pt"
    if not (path / "COMPLETE").exists() or not state_file.exists():
        raise FileNotFoundError(f"checkpoint {path}: missing COMPLETE or {state_file.name} (saved with other ranks?)")
    model_sd, optim_sd = get_state_dict(model, optimizer)
    state = {"model": model_sd, "optim": optim_sd}
    dcp.load(state, checkpoint_id=str(path))
    set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"])
    extra = torch.load(state_file, weights_only=False)
    scheduler.load_state_dict(extra["scheduler"])
    sampler.load_state_dict(extra["sampler"])
    set_rng_state(extra["rng"])
    return int(extra["step"])


# -----------------------------------------------------------------------------
# logs: one line per step, metrics.jsonl, reward curve

def format_step_line(step: int, steps: int, m: dict) -> str:
    """One human line per step from the metrics record (see step_record)."""
    learn = (f"loss {m['loss']:+.4f} kl {m['approx_kl']:.2e} ent {m['entropy']:.3f} clip {m['clip_frac']:.3f}"
             if not m.get("skipped_update") else
             f"no update: no loss token (groups dropped: {m.get('groups_dropped_zero_variance', 0)} equal rewards, "
             f"{m.get('groups_dropped_failed', 0)} failed)")
    failed = f" failed {m['episodes_failed']}" if m.get("episodes_failed") else ""
    return (f"step {step}/{steps} | reward {m['reward_mean']:.3f}±{m['reward_std']:.3f} "
            f"resolved {m['resolved_rate']:.2f}{failed} | {learn} | tokens {m['tokens']} "
            f"| rollout {m['rollout_s']:.1f}s verify {m['verify_s']:.1f}s judge {m['judge_s']:.1f}s "
            f"train {m['train_s']:.1f}s sync {m['sync_s']:.1f}s")


def append_jsonl(path: Path, record: dict) -> None:
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")


def truncate_metrics(path: Path, last_step: int) -> None:
    """Keep only metrics.jsonl records with step <= last_step (steps after a checkpoint are redone on resume)."""
    if not path.exists():
        return
    keep = [line for line in path.read_text().splitlines() if line.strip() and json.loads(line)["step"] <= last_step]
    path.write_text("".join(line + "\n" for line in keep))


def plot_reward_curve(metrics_path: Path, png_path: Path) -> Path:
    """Reward mean ± std and resolved rate per step from metrics.jsonl, as a PNG (matplotlib Agg).
    Raises FileNotFoundError if metrics_path does not exist."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [json.loads(line) for line in Path(metrics_path).read_text().splitlines() if line.strip()]
    steps = [r["step"] for r in rows]
    mean = np.array([r["reward_mean"] for r in rows])
    std = np.array([r["reward_std"] for r in rows])
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    ax.plot(steps, mean, marker="o", label="reward mean")
    ax.fill_between(steps, mean - std, mean + std, alpha=0.2, label="± std")
    ax.plot(steps, [r["resolved_rate"] for r in rows], marker="s", label="resolved rate")
    ax.set_xlabel("step")
    ax.set_ylim(-0.05, 1.05)
    ax.legend(loc="best")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png_path)
    plt.close(fig)
    return Path(png_path)


# -----------------------------------------------------------------------------
# SIGINT / SIGTERM

class StopFlag:
    """Turns the first SIGINT/SIGTERM into a request to stop at the next step boundary.

    `on_signal` (if set) runs inside the handler, e.g. to cancel the running rollout so its
    containers are closed now. A repeat within `grace_s` seconds counts as the same request:
    Ctrl-C reaches the workers from the terminal and again from torchrun, which forwards it.
    A later repeat raises KeyboardInterrupt (hard stop; main's `finally` still reaps this run's
    containers)."""

    def __init__(self, grace_s: float = 2.0):
        self.requested = False
        self.signum: int | None = None
        self.on_signal = None
        self.grace_s = grace_s
        self._first = 0.0

    def install(self) -> "StopFlag":
        signal.signal(signal.SIGINT, self._handle)
        signal.signal(signal.SIGTERM, self._handle)
        return self

    def _handle(self, signum, frame):
        name = signal.Signals(signum).name
        if self.requested:
            if time.monotonic() - self._first < self.grace_s:
                return
            raise KeyboardInterrupt(f"second {name}")
        self.requested, self.signum, self._first = True, signum, time.monotonic()
        print(f"[train] {name}: stopping at the end of this step (again to stop at once)", file=sys.stderr, flush=True)
        if self.on_signal is not None:
            self.on_signal()


def agreed_stop(flag: StopFlag, device: torch.device) -> bool:
    """True on every rank if any rank was asked to stop (collective)."""
    x = _all_reduce(torch.tensor([int(flag.requested)], device=device), dist.ReduceOp.MAX)
    return bool(int(x))


# -----------------------------------------------------------------------------
# process group

def init_distributed() -> tuple[int, int, int, torch.device]:
    """Init the default process group: nccl on CUDA, gloo on CPU. Returns (rank, world_size, local_rank, device).

    Without torchrun (no RANK in the environment) it starts a 1-process group on 127.0.0.1,
    so `python train.py` runs the same code path."""
    if "RANK" not in os.environ:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
        dist.init_process_group("nccl", device_id=device)
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo")
    return dist.get_rank(), dist.get_world_size(), local_rank, device


# -----------------------------------------------------------------------------
# main

def check_config(cfg: configs.TrainConfig) -> None:
    """What configs.validate does not know about training. Raises configs.ConfigError naming the field."""
    if cfg.grpo.num_minibatches < 1:
        raise configs.ConfigError(f"grpo.num_minibatches = {cfg.grpo.num_minibatches!r}: must be >= 1")
    if cfg.curriculum_window < 1:
        raise configs.ConfigError(f"curriculum_window = {cfg.curriculum_window!r}: must be >= 1")
    if cfg.policy.engine == "openai":
        raise configs.ConfigError("policy.engine = 'openai': training needs an engine whose weights it can update "
                                  "(torch or vllm); openai is for evaluation (rollout.py)")


def resolve_model_dir(path: str, rank: int) -> Path:
    """The policy's HF folder (evaluate.resolve_model_dir): rank 0 resolves first, so the embedded
    default is imported and the tiny random model written once, then the other ranks read them."""

    if rank == 0:
        d = evaluate.resolve_model_dir(path)
    dist.barrier()
    if rank != 0:
        d = evaluate.resolve_model_dir(path)
    return Path(d)


def select_tasks(cfg: configs.TrainConfig) -> list:
    """load_tasks(cfg.tasks) filtered by task_ids and difficulties, sorted by id.
    Raises configs.ConfigError naming the field when an id is unknown or nothing is left."""

    tasks = load_tasks(cfg.tasks)
    if cfg.task_ids:
        missing = sorted(set(cfg.task_ids) - {t.id for t in tasks})
        if missing:
            raise configs.ConfigError(f"task_ids = {missing!r}: not found in {cfg.tasks}")
        tasks = [t for t in tasks if t.id in set(cfg.task_ids)]
    if cfg.difficulties:
        tasks = [t for t in tasks if t.difficulty in cfg.difficulties]
    if not tasks:
        raise configs.ConfigError(f"tasks = {cfg.tasks!r}: no task left after task_ids={cfg.task_ids!r} "
                                  f"and difficulties={cfg.difficulties!r}")
    return sorted(tasks, key=lambda t: t.id)


def load_policy(model_dir: Path, cfg: configs.TrainConfig, mesh, device: torch.device, trainable: bool = True):
    """weights.load_hf_sharded, FSDP2-sharded over `mesh`, gradients summed over ranks.

    Built on the meta device and sharded first: each rank reads only its shard from the safetensors files.
    A trainable policy keeps fp32 master weights (AdamW state fp32 too) and computes in policy.dtype."""

    dtype = torch.bfloat16 if cfg.policy.dtype == "bfloat16" else torch.float32  # compute dtype
    policy = weights.load_hf_sharded(model_dir, lambda m: modeling.apply_fsdp2(
        m, mesh, param_dtype=dtype, activation_checkpointing=cfg.policy.activation_checkpointing and trainable,
        master_dtype=torch.float32 if trainable else dtype), device=device)
    if trainable:
        set_gradient_sum(policy)
    else:
        policy.requires_grad_(False).eval()
    return policy


def modeling_dtype(cfg: configs.TrainConfig) -> torch.dtype:
    """The compute dtype (policy.dtype): what the engines run and the export stores."""
    return torch.bfloat16 if cfg.policy.dtype == "bfloat16" else torch.float32


def build_engine(cfg: configs.TrainConfig, model_dir: Path, tokenizer, device: torch.device, rank: int,
                 tp_group=None):
    """This rank's generation engine: vLLM on CUDA when installed (policy.engine auto/vllm), else TorchEngine
    on a full copy of the weights. Raises configs.ConfigError if vllm is asked for but unusable."""

    kind = cfg.policy.engine
    if kind == "auto":
        kind = "vllm" if device.type == "cuda" and engines.vllm is not None else "torch"
    if kind == "vllm":
        if device.type != "cuda" or engines.vllm is None:
            raise configs.ConfigError("policy.engine = 'vllm': needs CUDA and the vllm package (requirements-gpu.txt)")
        report = configs.check_memory_budget(cfg, json.loads((model_dir / "config.json").read_text()),
                                             dist.get_world_size(), torch.cuda.get_device_properties(device).total_memory)
        if rank == 0:
            print(report, flush=True)
        tp = cfg.policy.vllm_tensor_parallel_size
        return engines.VLLMEngine(str(model_dir), max_seq_len=cfg.policy.max_seq_len, dtype=cfg.policy.dtype,
                                  gpu_memory_utilization=cfg.policy.vllm_gpu_memory_utilization, seed=cfg.seed + rank // tp,
                                  tensor_parallel_size=tp, sleep_level=cfg.policy.vllm_sleep_level, device=device,
                                  tp_group=tp_group)
    dtype = torch.bfloat16 if cfg.policy.dtype == "bfloat16" else torch.float32
    engine_model = weights.load_hf(model_dir, dtype=dtype, device=device)
    return engines.TorchEngine(engine_model, tokenizer, max_batch=cfg.policy.engine_max_batch,
                               max_seq_len=cfg.policy.max_seq_len, seed=cfg.seed + rank)


def open_logger(cfg: configs.TrainConfig, out_dir: Path):
    """A callable(record, step) for wandb or tensorboard, or None. Raises configs.ConfigError if the
    chosen logger is not installed (asked-for logs are never silently dropped)."""
    if cfg.logger == "none":
        return None
    if cfg.logger == "wandb":
        try:
            import wandb
        except ImportError:
            raise configs.ConfigError("logger = 'wandb': package wandb is not installed") from None
        run = wandb.init(project="termrl", dir=str(out_dir), config=dataclasses.asdict(cfg))
        return lambda record, step: run.log(record, step=step)
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        raise configs.ConfigError("logger = 'tensorboard': package tensorboard is not installed") from None
    writer = SummaryWriter(str(out_dir / "tensorboard"))

    def log(record, step):
        for k, v in record.items():
            if isinstance(v, (int, float)):
                writer.add_scalar(k, v, step)
        writer.flush()
    return log


def step_record(step: int, episodes: list[dict], counts: dict, train_metrics: dict, times: dict,
                kl_coef: float) -> dict:
    """The metrics.jsonl record of one step from every rank's episode summaries (all_gather_object)."""
    scored = [e for e in episodes if e["reward"] is not None]
    rewards = np.array([e["reward"] for e in scored], dtype=np.float64)
    mean = lambda xs: float(np.mean(xs)) if len(xs) else 0.0  # noqa: E731
    rec = {"step": step, "reward_mean": mean(rewards), "reward_std": float(rewards.std()) if len(rewards) else 0.0,
           "resolved_rate": mean([float(e["resolved"]) for e in scored]), "episodes": len(episodes),
           "episodes_failed": len(episodes) - len(scored),
           "truncated_rate": mean([float(e["truncated"]) for e in episodes]),
           "tokens": int(sum(e["tokens"] for e in episodes)),
           "generated_tokens": int(sum(e["generated"] for e in episodes))}
    rec.update(counts)
    rec.update(train_metrics)
    rec["loss"] = train_metrics.get("pg_loss", 0.0) + kl_coef * train_metrics.get("kl_loss", 0.0)
    rec["clip_frac"] = train_metrics.get("clip_frac_low", 0.0) + train_metrics.get("clip_frac_high", 0.0)
    for key in ("start_s", "agent_s", "verify_s", "judge_s"):  # mean seconds per episode (they overlap in time)
        rec[key] = mean([e["timings"].get(key, 0.0) for e in episodes])
    rec.update(times)
    return rec


def main(argv: list[str] | None = None) -> int:
    """Parse the config, train, export. Returns the exit code: 0 when all steps ran, 128 + signal
    number when stopped by SIGINT/SIGTERM (after the optional checkpoint)."""
    cfg = configs.parse_cli(argv, description=__doc__)
    check_config(cfg)

    rank, world, local_rank, device = init_distributed()
    torch.manual_seed(cfg.seed + rank)
    random.seed(cfg.seed + rank)
    np.random.seed(cfg.seed + rank)
    out_dir = Path(cfg.out_dir)
    if rank == 0:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "config.json").write_text(json.dumps(dataclasses.asdict(cfg), indent=2))
    dist.barrier()
    (out_dir / "trajectories").mkdir(exist_ok=True)
    say = (lambda msg: print(msg, flush=True)) if rank == 0 else (lambda msg: None)
    stop = StopFlag().install()
    loop = asyncio.new_event_loop()
    engine = judge = None
    exit_code = 0
    try:
        if local_rank == 0:
            sandbox.reap()  # containers of dead runs only
        if cfg.sandbox.max_concurrent:
            sandbox.set_max_concurrent(cfg.sandbox.max_concurrent)
        tasks = select_tasks(cfg)
        model_dir = resolve_model_dir(cfg.policy.path, rank)
        tokenizer = weights.load_tokenizer(model_dir)
        mesh = init_device_mesh(device.type, (world,))
        policy = load_policy(model_dir, cfg, mesh, device)
        ref_model = load_policy(model_dir, cfg, mesh, device, trainable=False) if cfg.grpo.kl_coef > 0 else None
        optimizer, scheduler = build_optimizer(policy, cfg)
        uses_vllm = cfg.policy.engine == "vllm" or (cfg.policy.engine == "auto" and device.type == "cuda" and engines.vllm)
        tp = cfg.policy.vllm_tensor_parallel_size if uses_vllm else 1
        tp_group = engines.tp_groups(world, tp)  # ranks of one vLLM engine share its leader's tasks (rank // tp)
        sampler = TaskSampler(len(tasks), cfg.tasks_per_step, rank // tp, world // tp, cfg.seed, cfg.epochs_shuffle,
                              cfg.curriculum, cfg.curriculum_window)
        step = 0
        ckpt = latest_checkpoint(out_dir) if cfg.resume else None
        if cfg.resume and ckpt is None:
            say(f"[train] --resume: no complete checkpoint under {out_dir / 'checkpoints'}; starting at step 0")
        if ckpt is not None:
            step = load_checkpoint(ckpt, policy, optimizer, scheduler, sampler)
            say(f"[train] resumed from {ckpt} at step {step}")
        saved_step = step
        if rank == 0:
            truncate_metrics(out_dir / "metrics.jsonl", step)
        engine = build_engine(cfg, model_dir, tokenizer, device, rank, tp_group)
        judge = reward.build_judge(cfg.reward, out_dir)
        extra_log = open_logger(cfg, out_dir) if rank == 0 else None
        stale = step > 0  # the engine holds the weights from disk; a resumed policy differs
        run_ids: list = [None] * world
        dist.all_gather_object(run_ids, sandbox.RUN_ID)
        say(f"[train] {len(tasks)} tasks, {world} rank(s) on {device.type}, model {model_dir}, "
            f"{cfg.tasks_per_step} tasks x {cfg.grpo.group_size} per step, steps {step}..{cfg.steps}, "
            f"sandbox run ids {','.join(run_ids)}")

        while step < cfg.steps and not agreed_stop(stop, device):
            t_step = time.perf_counter()
            indices = sampler.next_batch()
            sync_s = sync_weights(policy, engine, modeling_dtype(cfg)) if stale else 0.0
            engine.wake_up()
            t0 = time.perf_counter()
            traj_file = open(out_dir / "trajectories" / f"step_{step + 1:06d}_rank{rank}.jsonl", "w")
            episodes = loop.create_task(engines.follow_async(engine) if rank % tp else rollout.run_episodes(
                [tasks[i] for i in indices], engine, tokenizer, cfg.grpo.group_size, cfg.rollout, judge,
                action_format=cfg.policy.action_format, sandbox_cfg=cfg.sandbox, reward_cfg=cfg.reward,
                run_id=sandbox.RUN_ID, seed=(cfg.seed * 1_000_003 + step) * 1_009 + rank // tp, progress=rank == 0,
                on_trajectory=lambda t: traj_file.write(json.dumps(t.to_json(), default=str) + "\n")))
            stop.on_signal = lambda: loop.call_soon_threadsafe(episodes.cancel)
            try:
                trajectories = loop.run_until_complete(episodes)
            except asyncio.CancelledError:
                trajectories = None
                sandbox.reap(run_id=sandbox.RUN_ID)  # sandboxes still closing in the background
            finally:
                stop.on_signal = None
                traj_file.close()
            rollout_s = time.perf_counter() - t0
            engine.sleep()  # a tensor-parallel leader's sleep ends its followers' follow()
            trajectories = engines.split_for_tp(trajectories, cfg.grpo.group_size, tp, tp_group)
            indices = indices[rank % tp::tp]
            if agreed_stop(stop, device):
                say(f"[train] stopped during the rollout of step {step + 1}; it is not trained on")
                break

            samples, counts = samples_from_trajectories(trajectories, cfg.grpo.group_size, cfg.grpo)
            t0 = time.perf_counter()
            metrics = update(policy, optimizer, scheduler, samples, cfg, device, ref_model)
            train_s = time.perf_counter() - t0
            stale = True
            step += 1

            G = cfg.grpo.group_size
            mine = [dict(task_index=i, reward=t.reward, resolved=bool(t.resolved), truncated=bool(t.truncated),
                         tokens=len(t.token_ids), generated=int(sum(t.loss_mask)), timings=dict(t.timings))
                    for k, i in enumerate(indices) for t in trajectories[k * G:(k + 1) * G]]
            gathered: list = [None] * world
            dist.all_gather_object(gathered, (mine, counts))
            episodes_all = [e for eps, _ in gathered for e in eps]
            counts_all = {k: sum(c[k] for _, c in gathered) for k in counts}
            for g in range(0, len(episodes_all), cfg.grpo.group_size):  # same order on every rank
                group = episodes_all[g:g + cfg.grpo.group_size]
                scored = [e["reward"] for e in group if e["reward"] is not None]
                if scored:
                    sampler.record(group[0]["task_index"], scored)
            times = {"rollout_s": max(0.0, rollout_s), "train_s": train_s, "sync_s": sync_s}
            if step % cfg.save_every == 0 or step == cfg.steps:
                t0 = time.perf_counter()
                save_checkpoint(checkpoint_dir(out_dir, step), policy, optimizer, scheduler, sampler, step)
                saved_step = step
                times["checkpoint_s"] = time.perf_counter() - t0
            times["step_s"] = time.perf_counter() - t_step
            if rank == 0:
                record = step_record(step, episodes_all, counts_all, metrics, times, cfg.grpo.kl_coef)
                append_jsonl(out_dir / "metrics.jsonl", record)
                say(format_step_line(step, cfg.steps, record))
                if extra_log is not None:
                    extra_log(record, step)

        if step < cfg.steps:  # stopped by a signal
            exit_code = 128 + (stop.signum or signal.SIGTERM)
            if cfg.checkpoint_on_signal and step > saved_step:  # decided from state every rank shares
                save_checkpoint(checkpoint_dir(out_dir, step), policy, optimizer, scheduler, sampler, step)
                say(f"[train] checkpoint of step {step} written")
        # Exported on a clean stop too, so `python evaluate.py --model <out_dir>/hf` evaluates what was trained.
        weights.save_hf(policy, out_dir / "hf", tokenizer_dir=model_dir, dtype=modeling_dtype(cfg))
        say(f"[train] policy after step {step} exported to {out_dir / 'hf'}")
        if rank == 0 and (out_dir / "metrics.jsonl").exists():
            say(f"[train] reward curve: {plot_reward_curve(out_dir / 'metrics.jsonl', out_dir / 'reward_curve.png')}")
    finally:
        for closer in (engine, judge):
            if closer is not None:
                loop.run_until_complete(closer.aclose())
        loop.close()
        sandbox.reap(run_id=sandbox.RUN_ID)  # nothing of this run may outlive it
        if dist.is_initialized():
            dist.destroy_process_group()
    return exit_code


if __name__ == "__main__":
    try:
        sys.exit(main())
    except configs.ConfigError as e:  # a bad flag or value: one line naming the field, no traceback
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
