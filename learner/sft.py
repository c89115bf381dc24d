"""The warm start's training: supervised fine-tuning on demonstrations, the masked cross-entropy of the
action tokens (experiments/warm_start.py collects the demonstrations and exports the policy).

A demonstration is a resolved trajectory of the reactive oracle (agent/oracle.py) run through the real
agent loop, so its tokens are exactly what a policy would see and generate, with loss_mask 1 on the
generated (action) tokens and 0 on prompt and observations. Over a batch B of demonstrations:

    L(theta) = - sum_{s in B} sum_t m_{s,t} log pi_theta(x_{s,t} | x_{s,<t})  /  sum_{s in B} sum_t m_{s,t}

(token-mean over the batch's action tokens, as DAPO aggregates). Log-probs come from the learner's own
packed forward and chunked log-probs (learner.update.forward_logprobs, model.py), the batches are
packed to a token budget (learner/packing.py), and AdamW steps once per batch with the GRPO update's
warmup and lr schedule (learner.update.lr_factor).
"""

import random
import sys
import time
from collections.abc import Iterator

import torch
from torch import Tensor
from tqdm import tqdm

import configs
from learner.packing import MicroBatch, Sample, make_micro_batches
from learner.update import forward_logprobs, lr_factor


def demonstrations(trajectories: list) -> list[Sample]:
    """The learner samples of the demonstrations to train on: the trajectories (rollout.Trajectory)
    that resolved their task, did not fail (error None) and are token-exact, each as a Sample with
    its loss_mask (1 on action tokens) and advantage 1.0 (unused by SFT). Unresolved or failed
    episodes are left out: a demonstration that did not solve its task teaches nothing right."""
    return [
        Sample(list(t.token_ids), list(t.loss_mask), list(t.logprobs), 1.0)
        for t in trajectories
        if t.resolved and t.error is None and t.exact and sum(t.loss_mask) > 0
    ]


def masked_nll_sum(model: torch.nn.Module, mb: MicroBatch) -> tuple[Tensor, Tensor]:
    """(sum of -log pi(token) over the micro-batch's loss-mask tokens, fp32 scalar with gradient;
    their count, fp32 scalar). Tokens with loss_mask 0 (prompt, observations, padding) add nothing to
    either, whatever they are: they are only context."""
    logprobs, _, _ = forward_logprobs(model, mb, temperature=1.0)
    return -(logprobs * mb.loss_mask).sum(), mb.loss_mask.sum()


@torch.no_grad()
def masked_nll(
    model: torch.nn.Module, samples: list[Sample], micro_batch_tokens: int, device: torch.device
) -> float:
    """Mean negative log-likelihood per action token (nats) of `samples` under `model`: the SFT
    loss over all of them at once. Raises ValueError when they hold no action token."""
    total = 0.0
    tokens = 0.0
    for mb in make_micro_batches(samples, micro_batch_tokens):
        nll, n = masked_nll_sum(model, mb.to(device))
        total += float(nll)
        tokens += float(n)
    if tokens == 0:
        raise ValueError("samples: no token with loss_mask 1 (no action to learn)")
    return total / tokens


def sft_epoch(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler,
    samples: list[Sample],
    cfg: configs.SFTConfig,
    device: torch.device,
    bar=None,
) -> dict[str, float]:
    """One pass over `samples` in their order: batches of cfg.batch_size demonstrations, each packed
    into micro-batches of cfg.micro_batch_tokens, the loss L above summed over its micro-batches
    (gradients accumulated), its global norm clipped to cfg.grad_clip (0: off), one AdamW step.
    Returns {"nll": mean NLL per action token over the epoch's batches as trained (before each
    step), "tokens": action tokens, "steps": optimizer steps}."""
    nll_sum = 0.0
    tokens = 0.0
    steps = 0
    for b in range(0, len(samples), cfg.batch_size):
        batch = samples[b : b + cfg.batch_size]
        micro_batches = make_micro_batches(batch, cfg.micro_batch_tokens)
        denominator = sum(float(mb.loss_mask.sum()) for mb in micro_batches)
        for mb in micro_batches:
            nll, n = masked_nll_sum(model, mb.to(device))
            (nll / max(denominator, 1.0)).backward()
            nll_sum += float(nll.detach())
            tokens += float(n)
        clip = cfg.grad_clip if cfg.grad_clip > 0 else float("inf")
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        steps += 1
        if bar is not None:
            bar.set_postfix_str(f"nll {nll_sum / max(tokens, 1.0):.3f}")
            bar.update(1)
    return {"nll": nll_sum / max(tokens, 1.0), "tokens": tokens, "steps": steps}


def sft_epochs(
    model: torch.nn.Module,
    samples: list[Sample],
    cfg: configs.SFTConfig,
    device: torch.device,
    epochs: int,
    progress: bool = False,
) -> Iterator[dict[str, float]]:
    """Up to `epochs` passes of sft_epoch over `samples` (shuffled each epoch by cfg.seed), with AdamW
    (lr cfg.lr, weight decay cfg.weight_decay, betas (0.9, 0.999)) and lr_factor's warmup and
    schedule over all `epochs` passes' optimizer steps. Yields each epoch's record after it trained
    (epoch, 1-based; nll, nats per action token, before each step; tokens; steps; seconds), so a
    caller may judge the policy between epochs and stop early by leaving the loop. model: a
    model.Transformer with fp32 parameters on `device`, trained in place. Raises ValueError when
    samples hold no action token."""
    if not any(sum(s.loss_mask) for s in samples):
        raise ValueError("samples: no demonstration with an action token to train on")
    model.train()
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, betas=(0.9, 0.999), eps=1e-8
    )
    per_epoch = -(-len(samples) // cfg.batch_size)
    total = epochs * per_epoch
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: lr_factor(s, cfg.warmup_steps, total, cfg.lr_schedule)
    )
    rng = random.Random(cfg.seed)
    order = list(samples)
    bar = tqdm(total=total, desc="sft", file=sys.stderr, disable=not progress, dynamic_ncols=True)
    try:
        for epoch in range(1, epochs + 1):
            rng.shuffle(order)
            t0 = time.monotonic()
            record = sft_epoch(model, optimizer, scheduler, order, cfg, device, bar)
            yield {"epoch": epoch, **record, "seconds": time.monotonic() - t0}
    finally:
        bar.close()


def train_sft(
    model: torch.nn.Module,
    samples: list[Sample],
    cfg: configs.SFTConfig,
    device: torch.device,
    progress: bool = False,
) -> list[dict[str, float]]:
    """cfg.epochs passes over `samples` (sft_epochs), then model.eval(). Returns one record per
    epoch: epoch (1-based), nll (nats per action token, before each step), tokens, steps, seconds.
    Raises ValueError when samples hold no action token."""
    records = list(sft_epochs(model, samples, cfg, device, cfg.epochs, progress))
    model.eval()
    return records
