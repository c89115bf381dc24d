"""The GRPO update of one training step: forward log-probs of packed micro-batches, the loss over
all micro-batches of all ranks (grpo.policy_loss), AdamW with warmup + cosine/constant lr.

The loss of each micro-batch is divided by one global denominator (summed over micro-batches and
ranks) and FSDP2 sums gradients over ranks (divide factor 1, distributed.set_gradient_sum), so
the update equals that of one batch holding every trajectory of the step.

A sample trained on after a later update (training/overlap.py, training/disaggregated.py) is stale:
`staleness` measures and bounds it on every path (0 on the synchronous one), and `loss_config`
turns truncated importance sampling on for stale samples (Yao et al. 2025).
"""

import dataclasses
import math
import sys
import time
import warnings
from collections.abc import Callable

import torch
import torch.distributed as dist
from torch import Tensor
from torch.distributed.tensor import DTensor
from tqdm import tqdm

import configs
import grpo
from bookkeeping.memory import release_free_memory
from learner.distributed import all_reduce
from learner.packing import MicroBatch, Sample, collate, make_micro_batches


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


def forward_logprobs(
    model: torch.nn.Module,
    mb: MicroBatch,
    temperature: float,
    truncation: tuple[float, int] = (1.0, 0),
) -> tuple[Tensor, Tensor, Tensor]:
    """Packed forward -> (logprobs, entropy, log_kept_mass) as [S, Lmax] fp32 views of the packed
    row. log_kept_mass (no gradient; 0 with truncation (1.0, 0)) is log of the probability mass
    that sampling with truncation = (rollout.top_p, rollout.top_k) keeps (model.log_kept_mass):
    logprobs - log_kept_mass is the log-prob the engine reports for the same token and weights."""
    logprobs, entropy, kept = model(
        mb.input_ids,
        position_ids=mb.position_ids,
        cu_seqlens=mb.cu_seqlens,
        targets=mb.targets,
        temperature=temperature,
        truncation=truncation,
    )
    return logprobs[0][mb.index], entropy[0][mb.index], kept[0][mb.index]


def truncation_of(cfg: configs.TrainConfig) -> tuple[float, int]:
    """(top_p, top_k) of the rollouts' sampling: the truncation the engine's log-probs are under."""
    return (cfg.rollout.top_p, cfg.rollout.top_k)


_SUMMED = ("pg_loss", "kl_loss", "num_tokens", "nonfinite_tokens")


def reduce_metrics(per_mb: list[dict[str, Tensor]]) -> dict[str, float | None]:
    """Merge policy_loss metrics over micro-batches and ranks (collective when distributed).

    pg_loss, kl_loss (already divided by the global denominator), num_tokens and nonfinite_tokens
    are summed; ratio_min/ratio_max take min/max (None without any loss token); every other metric
    is a token-weighted mean. Reduced on the metrics' device (nccl needs CUDA tensors), one host sync.
    Every rank must pass metrics with the same keys in the same number of calls."""
    keys = sorted(per_mb[0])
    # [micro-batches, keys]
    vals = torch.stack([torch.stack([m[k] for k in keys]) for m in per_mb]).double()
    n = vals[:, keys.index("num_tokens")]
    weight = torch.stack([torch.ones_like(n) if k in _SUMMED else n for k in keys], dim=1)
    sums = (vals * weight).sum(0)
    lo = vals[:, keys.index("ratio_min")].min().reshape(1)
    hi = vals[:, keys.index("ratio_max")].max().reshape(1)
    all_reduce(sums)
    all_reduce(lo, dist.ReduceOp.MIN)
    all_reduce(hi, dist.ReduceOp.MAX)
    sums = sums.tolist()
    lo = float(lo)
    hi = float(hi)
    total = sums[keys.index("num_tokens")]
    out = {k: sums[j] if k in _SUMMED else sums[j] / max(total, 1.0) for j, k in enumerate(keys)}
    # no loss token anywhere: there is no ratio to report (None, not an infinity, in metrics.jsonl)
    out["ratio_min"], out["ratio_max"] = (lo, hi) if total > 0 else (None, None)
    return out


class UpdateProgress:
    """The update's progress bar on stderr, like the rollout's (rank 0): this rank's micro-batches
    done of its total, and the tokens/s of their forward and backward passes. enabled False:
    nothing is shown."""

    def __init__(self, total: int, enabled: bool):
        self.bar = tqdm(
            total=total, desc="update", file=sys.stderr, disable=not enabled, dynamic_ncols=True
        )
        self.tokens = 0
        self.t_start = time.monotonic()

    def micro_batch_done(self, tokens: int) -> None:
        """One micro-batch of `tokens` packed tokens went forward and backward."""
        self.tokens += tokens
        tokens_per_s = self.tokens / max(1e-9, time.monotonic() - self.t_start)
        self.bar.set_postfix_str(f"{tokens_per_s:.1f} tok/s")
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


def accumulate_gradients(
    model: torch.nn.Module,
    micro_batches: list[MicroBatch],
    cfg: configs.TrainConfig,
    device: torch.device,
    ref_model: torch.nn.Module | None = None,
    stop: Callable[[], bool] | None = None,
    progress: UpdateProgress | None = None,
) -> dict[str, float] | None:
    """Forward and backward every micro-batch of this rank; gradients add up in `.grad`.

    The loss of each micro-batch is divided by the global denominator D = sum over all ranks and
    micro-batches of grpo.loss_denominator(loss_mask) (an all_reduce), so with gradients summed
    over micro-batches (accumulation) and ranks (FSDP2 reduce with divide factor 1, see
    `set_gradient_sum`) the result equals the gradient of one batch holding every trajectory.
    Ranks with fewer micro-batches run empty ones: FSDP2 needs the same collectives everywhere.
    Returns reduce_metrics over all ranks (see grpo.policy_loss for the names), or None when
    `stop` (collective, asked before each micro-batch) said so: the gradients are then dropped.
    `progress` is told of each micro-batch of this rank done (the empty ones excepted).
    """
    # Dr.GRPO's constant: the generation budget of an episode
    ro = cfg.rollout
    max_tokens = grpo.generation_budget(ro.max_turns, ro.max_tokens_per_turn, ro.max_context_tokens)
    denom = sum(
        (
            grpo.loss_denominator(mb.loss_mask, cfg.grpo.aggregation, max_tokens)
            for mb in micro_batches
        ),
        torch.zeros((), dtype=torch.float32),
    ).to(device)
    all_reduce(denom)
    count = all_reduce(torch.tensor([len(micro_batches)], device=device), dist.ReduceOp.MAX)
    micro_batches = micro_batches + [collate([])] * (max(1, int(count)) - len(micro_batches))
    temperature = cfg.rollout.temperature
    truncation = truncation_of(cfg)
    metrics = []
    for mb in micro_batches:
        if stop is not None and stop():
            model.zero_grad(set_to_none=True)
            return None
        mb = mb.to(device)
        logprobs, entropy, log_kept = forward_logprobs(model, mb, temperature, truncation)
        ref = None
        if ref_model is not None:
            with torch.no_grad():
                ref, _, _ = forward_logprobs(ref_model, mb, temperature)
        old = logprobs.detach() if mb.old_logprobs is None else mb.old_logprobs
        old_log_kept = log_kept if mb.old_log_kept_mass is None else mb.old_log_kept_mass
        inputs = grpo.LossInputs(
            logprobs,
            old,
            mb.advantages,
            mb.loss_mask,
            engine_logprobs=mb.engine_logprobs,
            old_log_kept_mass=old_log_kept,
            ref_logprobs=ref,
            entropy=entropy,
            denominator=denom,
            max_tokens=max_tokens,
        )
        loss, m = grpo.policy_loss(inputs, cfg.grpo)
        loss.backward()
        metrics.append(m)
        tokens = mb.input_ids.numel()
        if progress is not None and tokens:
            progress.micro_batch_done(tokens)
    return reduce_metrics(metrics)


@torch.no_grad()
def fill_old_logprobs(
    model: torch.nn.Module,
    micro_batches: list[MicroBatch],
    temperature: float,
    device: torch.device,
    truncation: tuple[float, int] = (1.0, 0),
) -> None:
    """Set mb.old_logprobs and mb.old_log_kept_mass to the current policy's (needed when one rollout
    batch feeds several optimizer steps, grpo.num_minibatches > 1: later steps are off-policy).
    truncation: the rollouts' (top_p, top_k), see forward_logprobs."""
    count = int(all_reduce(torch.tensor([len(micro_batches)], device=device), dist.ReduceOp.MAX))
    for k in range(count):
        mb = micro_batches[k] if k < len(micro_batches) else collate([])
        lp, _, kept = forward_logprobs(model, mb.to(device), temperature, truncation)
        mb.old_logprobs = lp.float().cpu()
        mb.old_log_kept_mass = kept.float().cpu()


def optimizer_step(
    model: torch.nn.Module, optimizer: torch.optim.Optimizer, scheduler, grad_clip: float
) -> float:
    """Clip the global gradient norm (grad_clip = 0: no clipping), step optimizer and schedule, zero
    the grads; returns the norm before clipping."""
    norm = torch.nn.utils.clip_grad_norm_(
        model.parameters(), grad_clip if grad_clip > 0 else float("inf")
    )
    if isinstance(norm, DTensor):
        norm = norm.full_tensor()
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    return float(norm)


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
    bad = [a for a in ages if a < 0 or a > max_off_policy_steps]
    if bad:
        raise RuntimeError(
            f"sample staleness {bad[0]} (policy version {version}): outside "
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


def update(
    model,
    optimizer,
    scheduler,
    samples: list[Sample],
    cfg: configs.TrainConfig,
    device: torch.device,
    ref_model=None,
    stop: Callable[[], bool] | None = None,
    progress: bool = False,
) -> dict[str, float] | None:
    """The GRPO update of one training step on this rank's samples: grpo.num_minibatches optimizer
    steps, each over an equal share of the samples. Collective: every rank calls it each step.
    Returns grpo.mean_over_minibatches of its optimizer steps' metrics with `grad_norm`, `lr`
    (before each step), `skipped_update` (1.0 when no rank had a loss token: no optimizer step,
    the lr schedule advances). `stop` (collective, e.g. learner.distributed.agreed_stop) is asked
    before each micro-batch until the first optimizer step: True there returns None, nothing
    changed (after a first step the update completes: a half-trained step is never kept).
    progress: show this rank's micro-batches done and tokens/s on stderr (UpdateProgress)."""
    k = cfg.grpo.num_minibatches
    chunks = [samples[i * len(samples) // k : (i + 1) * len(samples) // k] for i in range(k)]
    batches = [make_micro_batches(c, cfg.micro_batch_tokens) for c in chunks]
    if k > 1:
        for mbs in batches:
            fill_old_logprobs(model, mbs, cfg.rollout.temperature, device, truncation_of(cfg))
    bar = UpdateProgress(sum(len(mbs) for mbs in batches), progress)
    per_step = []
    for mbs in batches:
        lr = optimizer.param_groups[0]["lr"]
        metrics = accumulate_gradients(
            model, mbs, cfg, device, ref_model, None if per_step else stop, bar
        )
        if metrics is None:
            bar.close()
            return None
        metrics["lr"] = lr
        per_step.append(metrics)
        if metrics["num_tokens"] == 0:
            # No loss token on any rank (e.g. every group had equal rewards): Adam's momentum
            # would still move the weights on a zero gradient, so the optimizer step is skipped.
            optimizer.zero_grad(set_to_none=True)
            # "scheduler.step() before optimizer.step()" is intended here
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                scheduler.step()
            metrics["grad_norm"], metrics["skipped_update"] = 0.0, 1.0
            continue
        metrics["grad_norm"] = optimizer_step(model, optimizer, scheduler, cfg.grad_clip)
        metrics["skipped_update"] = 0.0
    bar.close()
    # the activations' pages, before the engine's rollout allocates
    release_free_memory()
    return grpo.mean_over_minibatches(per_step)


def build_optimizer(model: torch.nn.Module, cfg: configs.TrainConfig):
    """AdamW (fused on CUDA) over the parameters that train (the adapters alone with LoRA) and a
    LambdaLR of lr_factor over steps * num_minibatches optimizer steps."""
    fused = any(p.is_cuda for p in model.parameters())
    optimizer = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad],
        lr=cfg.lr,
        weight_decay=cfg.weight_decay,
        betas=(0.9, 0.999),
        eps=1e-8,
        fused=fused,
    )
    total = cfg.steps * cfg.grpo.num_minibatches
    warmup = cfg.warmup_steps * cfg.grpo.num_minibatches
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: lr_factor(s, warmup, total, cfg.lr_schedule)
    )
    return optimizer, scheduler
