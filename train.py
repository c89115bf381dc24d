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
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
from torch import Tensor
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import FSDPModule
from torch.distributed.tensor import DTensor

import configs
import engines
import grpo
from judging import judge as judge_lib
import model as modeling
import reward
import rollout
import sandbox
from sandboxing import hosts
from hf import weights
from bookkeeping.checkpoints import checkpoint_dir, latest_checkpoint, load_checkpoint, save_checkpoint
from bookkeeping.logs import append_jsonl, format_step_line, open_logger, plot_reward_curve, step_record, truncate_metrics
from bookkeeping.stop import StopFlag
from tasks import select_tasks
from tasks.sampler import TaskSampler


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
    Returns grpo.mean_over_minibatches of its optimizer steps' metrics with `grad_norm`, `lr` (before each step),
    `skipped_update` (1.0 when no rank had a loss token: no optimizer step, the lr schedule advances)."""
    k = cfg.grpo.num_minibatches
    chunks = [samples[i * len(samples) // k:(i + 1) * len(samples) // k] for i in range(k)]
    batches = [make_micro_batches(c, cfg.micro_batch_tokens) for c in chunks]
    if k > 1:
        for mbs in batches:
            fill_old_logprobs(model, mbs, cfg.rollout.temperature, device)
    per_step = []
    for mbs in batches:
        lr = optimizer.param_groups[0]["lr"]
        metrics = accumulate_gradients(model, mbs, cfg, device, ref_model)
        metrics["lr"] = lr
        per_step.append(metrics)
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
    return grpo.mean_over_minibatches(per_step)


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


def samples_from_trajectories(trajectories: list, group_size: int, cfg: configs.GRPOConfig,
                              reward_cfg: configs.RewardConfig | None = None) -> tuple[list[Sample], dict]:
    """Turn this rank's trajectories (groups of group_size contiguous) into learner samples.

    Rewards: with reward_cfg, one scale per group (reward.group_consistent_rewards of .verification.score and
    .judge_score; tampered counts as judged 0), else each .reward. Per group: failed episodes (reward None:
    docker, engine or build error) are left out, never scored 0; a group with < 2 scored members is dropped;
    with cfg.drop_zero_variance_groups a group whose scored rewards are all equal is dropped (DAPO);
    advantages come from grpo.compute_advantages(cfg.advantage) over the scored members; with
    cfg.mask_truncated a truncated episode keeps its place in the group statistics but gets an
    all-zero loss mask. Returns (samples, counts) with counts: groups, groups_dropped_zero_variance,
    groups_dropped_failed, trajectories_failed, trajectories_masked, judge_dropped_groups.
    Raises ValueError if len(trajectories) is not a multiple of group_size.
    """
    if len(trajectories) % group_size:
        raise ValueError(f"trajectories: {len(trajectories)} is not a multiple of group_size={group_size}")
    counts = dict(groups=len(trajectories) // group_size, groups_dropped_zero_variance=0, groups_dropped_failed=0,
                  trajectories_failed=0, trajectories_masked=0, judge_dropped_groups=0)
    all_rewards = [t.reward for t in trajectories]
    if reward_cfg is not None:
        tampered_judge = 0.0 if reward_cfg.judge_backends else None  # the rubric scores gaming 0
        all_rewards, counts["judge_dropped_groups"] = reward.group_consistent_rewards(
            [None if t.reward is None else t.verification.score for t in trajectories],
            [tampered_judge if t.stop_reason == "tampered" else t.judge_score for t in trajectories],
            group_size, reward_cfg.w_tests, reward_cfg.w_judge)
    samples = []
    for g in range(0, len(trajectories), group_size):
        scored = [k for k in range(g, g + group_size) if all_rewards[k] is not None]
        counts["trajectories_failed"] += group_size - len(scored)
        if len(scored) < 2:
            counts["groups_dropped_failed"] += 1
            continue
        rewards = torch.tensor([float(all_rewards[k]) for k in scored])
        if cfg.drop_zero_variance_groups and not bool(grpo.nonzero_variance_mask(rewards, len(scored))[0]):
            counts["groups_dropped_zero_variance"] += 1
            continue
        for k, a in zip(scored, grpo.compute_advantages(rewards, len(scored), cfg.advantage).tolist()):
            t = trajectories[k]
            mask = list(t.loss_mask)
            if cfg.mask_truncated and t.truncated:
                mask = grpo.mask_truncated(torch.tensor([mask]), torch.tensor([True]))[0].tolist()
                counts["trajectories_masked"] += 1
            samples.append(Sample(list(t.token_ids), mask, list(t.logprobs), a))
    return samples, counts


# -----------------------------------------------------------------------------
# weight sync: learner shards -> this rank's engine

def iter_full_weights(model: torch.nn.Module, dtype: torch.dtype | None = None):
    """Yield (HF name, full tensor) one parameter at a time, gathered from the FSDP2 shards, cast to `dtype`.

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
# SIGINT / SIGTERM (stop.StopFlag, shared with evaluate.py)

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

def resolve_model_dir(path: str, rank: int) -> Path:
    """weights.resolve_model_dir, rank 0 first (collective): the embedded default is imported and the tiny
    random model written once, then the other ranks read them."""
    if rank == 0:
        d = weights.resolve_model_dir(path)
    dist.barrier()
    if rank != 0:
        d = weights.resolve_model_dir(path)
    return Path(d)


def load_policy(model_dir: Path, cfg: configs.TrainConfig, mesh, device: torch.device, trainable: bool = True):
    """weights.load_hf_sharded, FSDP2-sharded over `mesh`, gradients summed over ranks.

    Built on the meta device and sharded first: each rank reads only its shard from the safetensors files.
    A trainable policy keeps fp32 master weights (AdamW state fp32 too) and computes in policy.dtype."""
    dtype = weights.DTYPES[cfg.policy.dtype]  # compute dtype
    policy = weights.load_hf_sharded(model_dir, lambda m: modeling.apply_fsdp2(
        m, mesh, param_dtype=dtype, activation_checkpointing=cfg.policy.activation_checkpointing and trainable,
        master_dtype=torch.float32 if trainable else dtype), device=device)
    if trainable:
        set_gradient_sum(policy)
    else:
        policy.requires_grad_(False).eval()
    return policy


@dataclass
class Run:
    """Everything one rank holds during training (built by `setup`, closed by `teardown`)."""

    cfg: configs.TrainConfig
    rank: int
    world: int
    device: torch.device
    out_dir: Path
    stop: StopFlag
    loop: asyncio.AbstractEventLoop
    tasks: list = dataclasses.field(default_factory=list)
    tp: int = 1  # ranks per generation engine (vLLM tensor parallel); rank % tp == 0 leads its group
    tp_group: object = None
    model_dir: Path | None = None
    tokenizer: object = None
    policy: torch.nn.Module | None = None
    ref_model: torch.nn.Module | None = None
    optimizer: torch.optim.Optimizer | None = None
    scheduler: object = None
    sampler: TaskSampler | None = None
    engine: object = None
    judge: object = None
    extra_log: object = None
    step: int = 0  # optimizer steps done (the resumed one included)
    saved_step: int = 0  # step of the newest checkpoint of this run
    stale: bool = False  # the engine's weights differ from the policy's

    @property
    def engine_dtype(self) -> torch.dtype:
        return weights.DTYPES[self.cfg.policy.dtype]

    def say(self, msg: str) -> None:
        if self.rank == 0:
            print(msg, flush=True)


def setup(cfg: configs.TrainConfig) -> Run:
    """Process group, seeds, signal handling, then out_dir, tasks, sampler, policy, optimizer, checkpoint,
    engine and judge (torn down again if any of them fails). Collective."""
    rank, world, local_rank, device = init_distributed()
    torch.manual_seed(cfg.seed + rank)
    random.seed(cfg.seed + rank)
    np.random.seed(cfg.seed + rank)
    run = Run(cfg, rank, world, device, Path(cfg.out_dir),
              StopFlag("[train]", "stopping at the end of this step").install(), asyncio.new_event_loop())
    try:
        _build(run, local_rank)
    except BaseException:
        teardown(run)
        raise
    return run


def _build(run: Run, local_rank: int) -> None:
    """setup's part that teardown must undo on failure: tasks, policy, optimizer, sampler, engine, judge."""
    cfg, rank, world, device = run.cfg, run.rank, run.world, run.device
    if rank == 0:
        run.out_dir.mkdir(parents=True, exist_ok=True)
        (run.out_dir / "config.json").write_text(json.dumps(dataclasses.asdict(cfg), indent=2))
    dist.barrier()
    (run.out_dir / "trajectories").mkdir(exist_ok=True)
    engines.engine_kind(cfg.policy, device)  # a wrong engine stops here, before any model loads
    for line in hosts.configure(cfg.sandbox.docker_hosts, 2 * cfg.sandbox.memory_mb << 20):
        if rank == 0:  # one line per listed engine: what it reports, the episodes it takes (per rank)
            print(line, file=sys.stderr)
    if local_rank == 0:
        sandbox.reap()  # containers of dead runs only
    if cfg.sandbox.max_concurrent:
        sandbox.set_max_concurrent(cfg.sandbox.max_concurrent)
    run.tasks = select_tasks(cfg.tasks, cfg.task_ids, cfg.difficulties)
    if engines.engine_kind(cfg.policy, device) == "vllm":
        run.tp = cfg.policy.vllm_tensor_parallel_size
        report = configs.check_memory_budget(cfg, json.loads((Path(cfg.policy.path) / "config.json").read_text()),
                                             world, torch.cuda.get_device_properties(device).total_memory)
        run.say(report)
    run.tp_group = engines.tp_groups(world, run.tp)  # ranks of one vLLM engine share its leader's tasks
    run.sampler = TaskSampler([t.id for t in run.tasks], cfg.tasks_per_step, rank // run.tp, world // run.tp,
                              cfg.seed, cfg.epochs_shuffle, cfg.curriculum, cfg.curriculum_window)
    run.model_dir = resolve_model_dir(cfg.policy.path, rank)
    run.tokenizer = weights.load_tokenizer(run.model_dir)
    mesh = init_device_mesh(device.type, (world,))
    run.policy = load_policy(run.model_dir, cfg, mesh, device)
    run.ref_model = load_policy(run.model_dir, cfg, mesh, device, trainable=False) if cfg.grpo.kl_coef > 0 else None
    run.optimizer, run.scheduler = build_optimizer(run.policy, cfg)
    resume(run)
    run.engine = engines.build_engine(cfg.policy, run.model_dir, run.tokenizer, device, cfg.seed + rank // run.tp,
                                      run.tp_group)
    run.judge = judge_lib.build_judge(cfg.reward, run.out_dir)
    run.extra_log = open_logger(cfg, run.out_dir) if rank == 0 else None
    run_ids: list = [None] * world
    dist.all_gather_object(run_ids, sandbox.RUN_ID)
    run.say(f"[train] {len(run.tasks)} tasks, {world} rank(s) on {device.type}, model {run.model_dir}, "
            f"{cfg.tasks_per_step} tasks x {cfg.grpo.group_size} per step, steps {run.step}..{cfg.steps}, "
            f"sandbox run ids {','.join(run_ids)}")


def resume(run: Run) -> None:
    """With cfg.resume, restore the newest complete checkpoint (policy, optimizer, schedule, sampler, RNG);
    metrics.jsonl keeps only the steps up to it. Raises configs.ConfigError if the task set changed."""
    ckpt = latest_checkpoint(run.out_dir) if run.cfg.resume else None
    if run.cfg.resume and ckpt is None:
        run.say(f"[train] --resume: no complete checkpoint under {run.out_dir / 'checkpoints'}; starting at step 0")
    if ckpt is not None:
        run.step = load_checkpoint(ckpt, run.policy, run.optimizer, run.scheduler, run.sampler)
        run.say(f"[train] resumed from {ckpt} at step {run.step}")
    run.saved_step = run.step
    run.stale = run.step > 0  # the engine will hold the weights from disk; a resumed policy differs
    if run.rank == 0:
        truncate_metrics(run.out_dir / "metrics.jsonl", run.step)


def roll_out(run: Run, indices: list[int]) -> tuple[list | None, float]:
    """Run group_size episodes of each task in `indices` on this rank (rollout.run_episodes), engine awake,
    trajectories streamed to trajectories/step_N_rankR.jsonl. A stop signal cancels the episodes (their
    sandboxes close; this run's leftovers are reaped): then None. Returns (trajectories, seconds)."""
    cfg, step = run.cfg, run.step
    t0 = time.perf_counter()
    run.engine.wake_up()
    path = run.out_dir / "trajectories" / f"step_{step + 1:06d}_rank{run.rank}.jsonl"
    with open(path, "w") as traj_file:
        # A tensor-parallel follower replays its leader's generate calls; only leaders run agents.
        episodes = run.loop.create_task(engines.follow_async(run.engine) if run.rank % run.tp else rollout.run_episodes(
            [run.tasks[i] for i in indices], run.engine, run.tokenizer, cfg.grpo.group_size, cfg.rollout, run.judge,
            action_format=cfg.policy.action_format, sandbox_cfg=cfg.sandbox, reward_cfg=cfg.reward,
            run_id=sandbox.RUN_ID, seed=(cfg.seed * 1_000_003 + step) * 1_009 + run.rank // run.tp,
            progress=run.rank == 0,
            on_trajectory=lambda t: traj_file.write(json.dumps(t.to_json(), default=str) + "\n")))
        run.stop.cancel_on_signal(run.loop, episodes)
        try:
            trajectories = run.loop.run_until_complete(episodes)
        except asyncio.CancelledError:
            trajectories = None
            sandbox.reap(run_id=sandbox.RUN_ID)  # sandboxes still closing in the background
        finally:
            run.stop.cancel_on_signal(run.loop, None)
    run.engine.sleep()  # a tensor-parallel leader's sleep ends its followers' follow()
    trajectories = engines.split_for_tp(trajectories, cfg.grpo.group_size, run.tp, run.tp_group)
    return trajectories, time.perf_counter() - t0


def gather_episodes(run: Run, indices: list[int], trajectories: list, counts: dict) -> tuple[list[dict], dict, dict]:
    """Every rank's episode summaries, group counts and judge accounting (all_gather_object, collective).
    Returns (episodes in rank order, counts summed, judge metrics summed: cumulative calls, failures, cost)."""
    G = run.cfg.grpo.group_size
    mine = [dict(task_index=i, reward=t.reward, resolved=bool(t.resolved), truncated=bool(t.truncated),
                 tampered=t.stop_reason == "tampered", tokens=len(t.token_ids), generated=int(sum(t.loss_mask)), timings=dict(t.timings))
            for k, i in enumerate(indices) for t in trajectories[k * G:(k + 1) * G]]
    judge = dict(run.judge.metrics) if run.judge is not None else {}
    gathered: list = [None] * run.world
    dist.all_gather_object(gathered, (mine, counts, judge))
    episodes = [e for eps, _, _ in gathered for e in eps]
    summed = lambda dicts: {k: sum(d.get(k, 0) for d in dicts) for k in dicts[0]}  # noqa: E731
    return episodes, summed([c for _, c, _ in gathered]), summed([j for _, _, j in gathered])


def log_step(run: Run, episodes: list[dict], counts: dict, judge_metrics: dict, metrics: dict, times: dict) -> None:
    """Rank 0: the step's record to metrics.jsonl (and wandb/tensorboard), its line to stdout."""
    if run.rank != 0:
        return
    record = step_record(run.step, episodes, counts, metrics, times, run.cfg.grpo.kl_coef)
    record.update(judge_metrics)
    append_jsonl(run.out_dir / "metrics.jsonl", record)
    run.say(format_step_line(run.step, run.cfg.steps, record))
    if run.extra_log is not None:
        run.extra_log(record, run.step)


def checkpoint(run: Run, due: bool = True) -> bool:
    """save_checkpoint of the current step when `due` and not saved yet (collective; every rank decides
    alike from shared state); one line with its path and seconds. Returns whether it wrote one."""
    if not due or run.step <= run.saved_step:
        return False
    t0 = time.perf_counter()
    path = checkpoint_dir(run.out_dir, run.step)
    save_checkpoint(path, run.policy, run.optimizer, run.scheduler, run.sampler, run.step)
    run.saved_step = run.step
    run.say(f"[train] checkpoint {path} written ({time.perf_counter() - t0:.1f}s)")
    return True


def finish(run: Run) -> int:
    """After the loop: a checkpoint when stopped by a signal (cfg.checkpoint_on_signal), the HF export,
    the reward curve. Returns the exit code: 0, or 128 + the signal's number."""
    cfg, exit_code = run.cfg, 0
    if run.step < cfg.steps:  # stopped by a signal
        exit_code = 128 + (run.stop.signum or signal.SIGTERM)
        checkpoint(run, due=cfg.checkpoint_on_signal)
    # Exported on a clean stop too, so `python evaluate.py --model <out_dir>/hf` evaluates what was trained.
    weights.save_hf(run.policy, run.out_dir / "hf", tokenizer_dir=run.model_dir, dtype=weights.DTYPES[cfg.policy.dtype])
    run.say(f"[train] policy after step {run.step} exported to {run.out_dir / 'hf'}")
    if run.rank == 0 and (run.out_dir / "metrics.jsonl").exists():
        curve = plot_reward_curve(run.out_dir / "metrics.jsonl", run.out_dir / "reward_curve.png")
        run.say(f"[train] reward curve: {curve}")
    return exit_code


def teardown(run: Run) -> None:
    """Close engine and judge, reap every container of this run, leave the process group."""
    for closer in (run.engine, run.judge):
        if closer is not None:
            run.loop.run_until_complete(closer.aclose())
    run.loop.close()
    sandbox.reap(run_id=sandbox.RUN_ID)  # nothing of this run may outlive it
    if dist.is_initialized():
        dist.destroy_process_group()


def main(argv: list[str] | None = None) -> int:
    """Validate the config, set up, train, export. Returns the exit code: 0 when all steps ran,
    128 + signal number when stopped by SIGINT/SIGTERM (after the optional checkpoint).
    Raises configs.ConfigError naming a bad field (before any model, container or API is touched)."""
    cfg = configs.parse_cli(argv, description=__doc__)
    run = setup(cfg)
    try:
        while run.step < cfg.steps and not agreed_stop(run.stop, run.device):
            t_step = time.perf_counter()
            indices = run.sampler.next_batch()                                  # 1. pick tasks
            sync_s = sync_weights(run.policy, run.engine, run.engine_dtype) if run.stale else 0.0  # 2. sync
            trajectories, rollout_s = roll_out(run, indices)                    # 3. roll out (tests, judge)
            indices = indices[run.rank % run.tp::run.tp]  # the groups split_for_tp gave this rank
            if agreed_stop(run.stop, run.device):
                run.say(f"[train] stopped during the rollout of step {run.step + 1}; it is not trained on")
                break
            samples, counts = samples_from_trajectories(trajectories, cfg.grpo.group_size, cfg.grpo, cfg.reward)  # 4.
            t0 = time.perf_counter()
            metrics = update(run.policy, run.optimizer, run.scheduler, samples, cfg, run.device,  # 5. update
                             run.ref_model)
            train_s = time.perf_counter() - t0
            run.step, run.stale = run.step + 1, True
            episodes, counts, judge_metrics = gather_episodes(run, indices, trajectories, counts)
            run.sampler.record_step(episodes, cfg.grpo.group_size)  # curriculum
            times = {"rollout_s": rollout_s, "train_s": train_s, "sync_s": sync_s,
                     "step_s": time.perf_counter() - t_step}
            log_step(run, episodes, counts, judge_metrics, metrics, times)     # 6. log
            checkpoint(run, due=run.step % cfg.save_every == 0 or run.step == cfg.steps)  # 7. checkpoint
        result = finish(run)
        if dist.is_initialized():
            dist.barrier()  # no rank tears gloo down while rank 0 still writes the export (an abort at exit otherwise)
        return result
    finally:
        teardown(run)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except configs.ConfigError as e:  # a bad flag or value: one line naming the field, no traceback
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
