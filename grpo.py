"""GRPO-family advantages and the clipped policy-gradient loss, as pure tensor functions.

Tensors in, tensors out: nothing here touches the model, the optimizer, a process
group or the disk, so every formula can be checked by hand (tests/test_grpo.py).

Layout. A rollout batch holds N = num_groups * group_size trajectories; the
group_size attempts at one task are contiguous (trajectory i belongs to group
i // group_size). Token tensors are [B, T] rows of right-padded sequences, where
position t of row b holds the log-prob of token t of that trajectory (already
shifted: the log-prob of the token *at* t given the tokens before it).

Papers followed:
- GRPO: Shao et al. 2024, "DeepSeekMath" (group-normalised advantages, per-sequence mean).
- Dr.GRPO: Liu et al. 2025, "Understanding R1-Zero-Like Training" (no std division,
  token sum over a constant length: the maximum response length, here the episode's generation
  budget, `generation_budget`).
- DAPO: Yu et al. 2025 (clip-higher, token-mean over the batch, dropping groups whose
  rewards are all equal).
- RLOO: Ahmadian et al. 2024, "Back to Basics" (leave-one-out baseline).
- PPO clipped surrogate: Schulman et al. 2017; dual clip: Ye et al. 2020
  ("Mastering Complex Control in MOBA Games with Deep RL").
- KL estimators k1/k2/k3: Schulman 2020, "Approximating KL Divergence".
- Truncated importance sampling against the rollout engine: Yao et al. 2025,
  "Your Efficient RL Framework Secretly Brings You Off-Policy RL Training".

TRL's GRPOTrainer (1.16; tests/test_trl_parity.py feeds both the same tensors and asserts equal loss and
gradients). Its loss types map to `aggregation`: grpo -> seq_mean_token_mean, dr_grpo ->
seq_mean_token_sum_norm (max_tokens = its max_completion_length), dapo -> token_mean with the global
denominator, bnpo -> token_mean on one micro-batch; epsilon / epsilon_high -> clip_low / clip_high, delta ->
dual_clip (equal for delta > 1 + clip_high; below, they differ on ratios between the two), beta ->
kl_coef with kl_estimator k3, its vLLM correction in "token_truncate" mode with clip_max -> tis_cap. Deliberate
differences:
- grpo averages over the rows that have loss tokens; TRL's over all rows, so a fully masked row (an
  overlong-filtered episode, DAPO) would shrink every other row's weight.
- The k3 term is not multiplied by the ratio pi/pi_old: termrl's KL term is DeepSeekMath's; TRL's default
  use_bias_correction_kl=True follows DeepSeek-V3.2 (2025), whose weighted term is the unbiased reverse-KL
  gradient off-policy. Equal with use_bias_correction_kl=False.
- No per-micro-batch normaliser (TRL's bnpo): the learner divides every micro-batch by the global loss token
  count (DAPO), so the gradient does not depend on how the batch is split.
- The engine weight is per token and truncated only (Yao et al. 2025); TRL's default is "sequence_mask".
"""

from dataclasses import dataclass

import torch
from torch import Tensor

from configs import GRPOConfig

ESTIMATORS = ("grpo", "drgrpo", "rloo")
AGGREGATIONS = ("token_mean", "seq_mean_token_mean", "seq_mean_token_sum_norm")
KL_ESTIMATORS = ("k2", "k3")  # loss terms; k1 belongs in the reward (k1_reward_penalty)


# -----------------------------------------------------------------------------
# advantages and group filtering


def _grouped(rewards: Tensor, group_size: int) -> Tensor:
    """rewards [N] -> [N // group_size, group_size] fp64, validated."""
    if not isinstance(rewards, Tensor) or rewards.dim() != 1:
        raise ValueError(
            f"rewards: expected a 1-D tensor [N], got {getattr(rewards, 'shape', type(rewards))}"
        )
    if not isinstance(group_size, int) or group_size < 1:
        raise ValueError(f"group_size: expected a positive int, got {group_size!r}")
    n = rewards.numel()
    if n % group_size != 0:
        raise ValueError(f"rewards: length {n} is not a multiple of group_size={group_size}")
    bad = (~torch.isfinite(rewards)).nonzero().flatten()
    if bad.numel() > 0:
        i = int(bad[0])
        raise ValueError(f"rewards[{i}] is {rewards[i].item()} (rewards must be finite)")
    return rewards.double().view(n // group_size, group_size)


def compute_advantages(
    rewards: Tensor, group_size: int, estimator: str = "grpo", eps: float = 1e-6
) -> Tensor:
    """Per-trajectory advantages from group-relative rewards.

    rewards: [N] float (any float dtype), N a multiple of group_size, groups contiguous.
    Returns [N] fp32. With r_i the rewards of one group of size G, mean = (1/G) sum_j r_j:

        grpo   (DeepSeekMath 2024): A_i = (r_i - mean) / (std + eps),
               std = sqrt( sum_j (r_j - mean)^2 / (G - 1) )   (unbiased, as torch.std)
        drgrpo (Liu et al. 2025):   A_i = r_i - mean
        rloo   (Ahmadian et al. 2024): A_i = r_i - (1/(G-1)) sum_{j != i} r_j
                                       = G/(G-1) * (r_i - mean)

    A group whose rewards are all equal (max == min) gets A = 0 exactly, for every estimator
    and group size. Computed in fp64: in fp32 the mean of eight 0.93s is off by an ulp, and
    (r - mean) / (std + eps) then gave the whole group A = +0.056. Distinct rewards, even 1e-4
    apart, keep their sign.
    Raises ValueError: rewards not 1-D or not finite, N not a multiple of group_size,
    unknown estimator, or group_size < 2 for grpo/rloo (no baseline without a second attempt).
    """
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator: expected one of {ESTIMATORS}, got {estimator!r}")
    r = _grouped(rewards, group_size)
    if estimator in ("grpo", "rloo") and group_size < 2:
        raise ValueError(
            f"group_size: estimator {estimator!r} needs group_size >= 2, got {group_size}"
        )
    centred = r - r.mean(dim=1, keepdim=True)
    if estimator == "grpo":
        adv = centred / (r.std(dim=1, keepdim=True) + eps)
    elif estimator == "drgrpo":
        adv = centred
    else:
        adv = centred * (group_size / (group_size - 1))
    equal = r.amax(dim=1, keepdim=True) == r.amin(dim=1, keepdim=True)
    return torch.where(equal, 0.0, adv).reshape(-1).float()


def nonzero_variance_mask(rewards: Tensor, group_size: int) -> Tensor:
    """Which trajectories belong to a group with at least two distinct rewards (DAPO dynamic sampling).

    rewards: [N] float, groups contiguous. Returns [N] bool: True where the trajectory's
    group has max(r) != min(r) (exact comparison: equal rewards are computed by the same
    formula, so they are bit-identical). Such groups carry all of the policy gradient;
    the others have A = 0 and would only dilute the token normaliser.
    Raises ValueError as compute_advantages.
    """
    r = _grouped(rewards, group_size)
    keep = r.amax(dim=1) != r.amin(dim=1)
    return keep.repeat_interleave(group_size)


def mask_truncated(loss_mask: Tensor, truncated: Tensor) -> Tensor:
    """Zero the loss mask of truncated episodes (cut off by turn, token or time limit).

    loss_mask: [B, T] (bool/int/float); truncated: [B] bool. Returns a new [B, T] tensor of
    loss_mask's dtype with rows b where truncated[b] set to 0. Used by DAPO-style
    "overlong filtering": a cut-off episode's reward says little about its last actions.
    Raises ValueError on shape mismatch.
    """
    if loss_mask.dim() != 2 or truncated.shape != (loss_mask.shape[0],):
        raise ValueError(
            f"truncated: expected shape [{loss_mask.shape[0]}] for loss_mask {tuple(loss_mask.shape)}, "
            f"got {tuple(truncated.shape)}"
        )
    return loss_mask * (~truncated.bool()).to(loss_mask.dtype).unsqueeze(1)


# -----------------------------------------------------------------------------
# aggregation of token losses


def generation_budget(max_turns: int, max_tokens_per_turn: int, max_context_tokens: int) -> int:
    """Dr.GRPO's constant (Liu et al. 2025 divide each sequence's token sum by the maximum response
    length): the most tokens the policy can generate in one episode, max_turns x max_tokens_per_turn,
    but no more than the context holds (max_context_tokens, prompt and observations included).
    Not max_context_tokens alone: with long tool outputs the two differ by orders of magnitude, and
    the loss would shrink with the context window instead of the policy's output. A task's own
    max_turns does not change it (one constant for the run). Returns a positive int (tokens)."""
    return min(max_turns * max_tokens_per_turn, max_context_tokens)


def loss_denominator(loss_mask: Tensor, aggregation: str, max_tokens: int | None = None) -> Tensor:
    """The local count that `aggregate` divides by, to be summed over micro-batches and ranks.

    loss_mask: [B, T] (bool/int/float), one row per sequence. Returns a 0-dim fp32 tensor on
    loss_mask's device:
        token_mean:               number of loss tokens, sum_{b,t} m_bt
        seq_mean_token_mean:      number of sequences with at least one loss token
        seq_mean_token_sum_norm:  B * max_tokens: every row counts, empty or not, times the
                                  constant generation budget (Dr.GRPO), so masking one episode
                                  (e.g. a truncated one) leaves the other sequences' gradients as they are
    learner/update.accumulate_gradients sums this over all micro-batches of all ranks (all_reduce
    SUM) and passes the total as `denominator`, so the summed gradients equal those of one big batch.
    Raises ValueError for an unknown aggregation, or max_tokens missing / not a positive int
    for seq_mean_token_sum_norm.
    """
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation: expected one of {AGGREGATIONS}, got {aggregation!r}")
    m = loss_mask.float()
    if aggregation == "token_mean":
        return m.sum()
    if aggregation == "seq_mean_token_mean":
        return (m.sum(dim=1) > 0).float().sum()
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0:
        raise ValueError(
            f"max_tokens: seq_mean_token_sum_norm needs the generation budget as a positive int, "
            f"got {max_tokens!r}"
        )
    return torch.tensor(float(loss_mask.shape[0] * max_tokens), device=loss_mask.device)


def aggregate(
    values: Tensor,
    loss_mask: Tensor,
    aggregation: str = "token_mean",
    denominator: Tensor | float | None = None,
    max_tokens: int | None = None,
) -> Tensor:
    """Reduce per-token values [B, T] to a scalar; masked positions contribute nothing.

    With m the loss mask, n_b = sum_t m_bt, D the denominator (default: local
    `loss_denominator(loss_mask, aggregation, max_tokens)`, i.e. this batch alone):
        token_mean (DAPO):                 sum_{b,t} v_bt m_bt / D              D = #loss tokens
        seq_mean_token_mean (GRPO):        sum_b [ sum_t v_bt m_bt / n_b ] / D  D = #sequences with n_b > 0
        seq_mean_token_sum_norm (Dr.GRPO): sum_{b,t} v_bt m_bt / D              D = #sequences * max_tokens
    Dr.GRPO's D is a constant per batch: the mean over sequences of (token sum / max_tokens).
    If D = 0 (no loss token anywhere) the result is 0.0 and still connected to `values` for autograd.
    values: [B, T] float; loss_mask: [B, T] bool/int/float; denominator: 0-dim tensor or float;
    max_tokens: the generation budget (tokens) of Dr.GRPO, used only when denominator is None.
    Returns a 0-dim tensor of values' dtype.
    Raises ValueError on shape mismatch, unknown aggregation, or (denominator None)
    missing/invalid max_tokens for seq_mean_token_sum_norm.
    """
    if values.dim() != 2 or loss_mask.shape != values.shape:
        raise ValueError(
            f"loss_mask: expected shape {tuple(values.shape)} (2-D, as values), "
            f"got {tuple(loss_mask.shape)}"
        )
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation: expected one of {AGGREGATIONS}, got {aggregation!r}")
    if denominator is None:
        denominator = loss_denominator(loss_mask, aggregation, max_tokens)
    denominator = torch.as_tensor(denominator, dtype=values.dtype, device=values.device)
    m = loss_mask.to(values.dtype)
    masked = values * m
    if aggregation == "seq_mean_token_mean":
        total = (masked.sum(dim=1) / m.sum(dim=1).clamp(min=1.0)).sum()
    else:
        total = masked.sum()
    # total is exactly 0 when the denominator is 0; clamping keeps 0/0 out of the graph.
    return total / denominator.clamp(min=1.0)


# -----------------------------------------------------------------------------
# KL and the policy loss


def _masked_mean(x: Tensor, m: Tensor, n: Tensor) -> Tensor:
    return (x * m).sum() / n.clamp(min=1.0)


def kl_penalty(logprobs: Tensor, ref_logprobs: Tensor, estimator: str = "k3") -> Tensor:
    """Per-token KL loss term to the reference policy, for tokens sampled from pi (Schulman 2020).

    logprobs (with grad), ref_logprobs: [B, T] float. With d = log pi_ref - log pi:
        k2 = d^2 / 2               E_{x~pi}[grad k2] = grad KL(pi || pi_ref)   (reverse KL)
        k3 = exp(d) - d - 1        E_{x~pi}[grad k3] = grad KL(pi_ref || pi)   (forward KL)
    The expectation is over the sampled token with the sampling distribution held fixed, which
    is what autograd of a loss on sampled tokens computes. So as a loss term k2 descends the
    reverse KL and k3 the forward KL, although k3's *value* is the unbiased estimate of
    KL(pi || pi_ref). k1 = -d is not offered here: its expected gradient is
    sum_x pi(x) grad log pi(x) = grad sum_x pi(x) = 0 (noise only); use it in the reward,
    `k1_reward_penalty`. Returns [B, T] of logprobs' dtype.
    Raises ValueError for an unknown estimator.
    """
    if estimator not in KL_ESTIMATORS:
        raise ValueError(f"kl_estimator: expected one of {KL_ESTIMATORS}, got {estimator!r}")
    d = ref_logprobs - logprobs
    if estimator == "k2":
        return 0.5 * d * d
    return torch.exp(d) - d - 1.0


def k1_reward_penalty(logprobs: Tensor, ref_logprobs: Tensor, loss_mask: Tensor) -> Tensor:
    """Sequence log-ratio log pi(y)/pi_ref(y) = sum_t m_bt (log pi - log pi_ref): a reward-shaping term.

    Used as r_b - beta * k1_b (detached) before the advantages, the score-function gradient
    E_{y~pi}[k1(y) grad log pi(y)] is grad KL(pi || pi_ref) over sequences, so the policy
    gradient descends beta * KL(pi || pi_ref) (the InstructGPT-style KL penalty).
    logprobs, ref_logprobs: [B, T] float; loss_mask: [B, T] bool/int/float.
    Returns [B] fp32, detached. Raises ValueError on shape mismatch.
    """
    if (
        logprobs.dim() != 2
        or ref_logprobs.shape != logprobs.shape
        or loss_mask.shape != logprobs.shape
    ):
        raise ValueError(
            f"ref_logprobs, loss_mask: expected shape {tuple(logprobs.shape)} (2-D, as logprobs), "
            f"got {tuple(ref_logprobs.shape)}, {tuple(loss_mask.shape)}"
        )
    d = (logprobs.detach() - ref_logprobs.detach()).float()
    return (d * loss_mask.float()).sum(dim=1)


def engine_kl(train_logprobs: Tensor, engine_logprobs: Tensor, loss_mask: Tensor) -> Tensor:
    """KL(pi_engine || pi_train) estimated on tokens sampled from the engine (the sampler mismatch).

    train_logprobs, engine_logprobs: [B, T] float, the log-probs of the same sampled tokens
    under the trainer and the rollout engine; loss_mask: [B, T] bool/int/float.
    With r = pi_train / pi_engine = exp(train_logprobs - engine_logprobs), k3 (Schulman 2020):
        engine_kl = mean over loss tokens of (r - 1 - log r)
    Each term is >= 0, and E_{x~pi_engine}[r - 1 - log r] = 1 - 1 + KL(pi_engine || pi_train).
    (k1 would be mean(engine_logprobs - train_logprobs): same expectation, higher variance.)
    Returns a 0-dim fp32 tensor, detached; 0 with no loss token.
    """
    # fp64: for log r ~ 1e-3 each term is ~5e-7, below fp32's resolution of r - 1.
    log_r = (train_logprobs.detach() - engine_logprobs.detach()).double()
    m = loss_mask.double()
    return _masked_mean(torch.exp(log_r) - 1.0 - log_r, m, m.sum()).float()


@dataclass
class LossInputs:
    """What a policy loss is computed from: one micro-batch of B sequences, T token slots each.

    logprobs:        [B, T] float, the learner's log-probs of the sampled tokens (with grad)
    old_logprobs:    [B, T] float, the learner's log-probs under the policy that sampled (no grad;
                     the detached logprobs when on-policy)
    advantages:      [B] float, one per sequence (compute_advantages)
    loss_mask:       [B, T] bool/int/float, 1 on tokens the policy generated
    engine_logprobs: [B, T] float or None, the rollout engine's log-probs of the same tokens
    ref_logprobs:    [B, T] float or None, the reference policy's (needed when kl_coef != 0)
    entropy:         [B, T] float or None, the learner's entropy per slot (reported only)
    denominator:     0-dim tensor or float or None, the global normaliser (sum of
                     loss_denominator over micro-batches and ranks); None: this batch alone
    max_tokens:      int or None, Dr.GRPO's constant generation budget (tokens), used when
                     denominator is None and aggregation is seq_mean_token_sum_norm
    old_log_kept_mass: [B, T] float or None, log of the probability mass that the rollout's
                     top-k/top-p truncation keeps under the old policy (model.log_kept_mass; no
                     grad); None or 0: sampling did not truncate. The engine reports log-probs of
                     the truncated, renormalised distribution, so the TIS weight and engine_kl
                     compare it with old_logprobs - old_log_kept_mass, the same distribution.
    """

    logprobs: Tensor
    old_logprobs: Tensor
    advantages: Tensor
    loss_mask: Tensor
    engine_logprobs: Tensor | None = None
    ref_logprobs: Tensor | None = None
    entropy: Tensor | None = None
    denominator: Tensor | float | None = None
    max_tokens: int | None = None
    old_log_kept_mass: Tensor | None = None


def policy_loss(inputs: LossInputs, cfg: GRPOConfig) -> tuple[Tensor, dict[str, Tensor]]:
    """Token-level clipped policy-gradient loss (PPO/GRPO/DAPO family) and its metrics.

    inputs: LossInputs (shapes in its docstring). cfg: configs.GRPOConfig; this loss reads
    clip_low, clip_high, dual_clip, aggregation, kl_coef, kl_estimator and tis_cap. An ablation of
    the loss is another function of this signature (and its test).

    Per loss token t of sequence b, with A = advantages[b]:
        rho   = exp(logprobs - old_logprobs)                                importance ratio
        pg    = max(-A * rho, -A * clip(rho, 1 - clip_low, 1 + clip_high))  (PPO; DAPO clip-higher)
        pg    = min(pg, -A * dual_clip)               if A < 0 and dual_clip > 0 (dual clip, c > 1)
        w     = min(exp(old_q - engine_logprobs), tis_cap), no grad  (truncated IS; if
                engine_logprobs given and tis_cap > 0: corrects the sampler/trainer mismatch),
                old_q = old_logprobs - old_log_kept_mass: the old policy's log-prob under the
                rollout's top-k/top-p truncation, the distribution the engine sampled from and
                reported (so w = 1 on-policy whatever the truncation)
        l     = w * pg + kl_coef * KL_est(logprobs, ref_logprobs)           (KL term if kl_coef != 0;
                k2 descends KL(pi || pi_ref), k3 KL(pi_ref || pi): see `kl_penalty`)
    loss = aggregate(l, loss_mask, aggregation, denominator, max_tokens); see `aggregate`.
    Non-finite guard: a loss token whose logprobs, old_logprobs, engine_logprobs or ref_logprobs is
    not finite (a -inf log-prob), or whose rho or TIS ratio overflows fp32, is dropped from the loss
    mask (it adds 0 to the loss and its gradient) and counted in the metric nonfinite_tokens; a
    given denominator is left as it is (it still counts the token). A step never turns NaN on one
    such token.
    Pass the global `inputs.denominator` (sum of `loss_denominator(loss_mask, aggregation,
    max_tokens)` over micro-batches and ranks) so that summing gradients over micro-batches and
    ranks gives the full-batch gradient; max_tokens then only matters when denominator is None.

    Returns (loss: 0-dim, metrics: dict of detached 0-dim fp32 tensors): means over this call's loss
    tokens (0 with none), `num_tokens` their merge weight: num_tokens, pg_loss, kl_loss, clip_frac_low
    (A < 0, rho < 1 - clip_low), clip_frac_high (A > 0, rho > 1 + clip_high), clip_frac_dual (A < 0,
    rho > dual_clip), approx_kl (rho - 1 - log rho), ratio_mean/min/max (+-inf with no loss token); when
    given: kl_ref (k3 mean ~ KL(pi || pi_ref)), entropy, tis_weight_mean, tis_clip_frac, engine_kl
    (KL(pi_engine || pi_old), both under the rollout's truncation); nonfinite_tokens (a count).
    dual_clip = 0 and tis_cap = 0 switch those terms off. Knob values are
    trusted (configs.validate: clip_low in (0, 1), clip_high > 0, dual_clip 0 or > 1, tis_cap 0 or >= 1).
    Raises ValueError on shape mismatch, kl_coef != 0 without ref_logprobs, or an unknown
    aggregation/kl_estimator.
    """
    x = inputs
    token_tensors = (
        "old_logprobs",
        "loss_mask",
        "ref_logprobs",
        "engine_logprobs",
        "entropy",
        "old_log_kept_mass",
    )
    _check_shapes(x.logprobs, x.advantages, **{k: getattr(x, k) for k in token_tensors})
    if cfg.kl_estimator not in KL_ESTIMATORS:
        raise ValueError(f"kl_estimator: expected one of {KL_ESTIMATORS}, got {cfg.kl_estimator!r}")
    if cfg.kl_coef != 0.0 and x.ref_logprobs is None:
        raise ValueError(f"ref_logprobs: required when kl_coef != 0 (kl_coef={cfg.kl_coef})")
    old_logprobs = x.old_logprobs.detach()
    # the old policy's log-probs under the rollout's truncation: what the engine reported
    old_q = old_logprobs
    if x.old_log_kept_mass is not None:
        old_q = old_logprobs - x.old_log_kept_mass.detach()
    engine_logprobs = None if x.engine_logprobs is None else x.engine_logprobs.detach()
    finite = _finite_tokens(
        x.logprobs.detach(), old_logprobs, old_q, engine_logprobs, x.ref_logprobs
    )
    loss_mask = x.loss_mask * finite.to(x.loss_mask.dtype)
    nonfinite = (x.loss_mask.to(torch.float32) * (~finite).to(torch.float32)).sum()
    agg = (cfg.aggregation, x.denominator, x.max_tokens)
    m = loss_mask.to(x.logprobs.dtype)
    n = m.sum().detach()
    A = x.advantages.detach().to(x.logprobs.dtype).unsqueeze(1)  # [B, 1]

    # dropped tokens get log-probs 0 (ratio 1, w = 1) in place of their non-finite values, so that
    # 0 * their loss stays 0 and no NaN reaches the gradient (mask 0: they add nothing)
    zero = torch.zeros_like(x.logprobs)
    logprobs = torch.where(finite, x.logprobs, zero)
    old_logprobs = torch.where(finite, old_logprobs, zero)
    log_ratio = logprobs - old_logprobs
    pg = _clipped_surrogate(torch.exp(log_ratio), A, cfg.clip_low, cfg.clip_high, cfg.dual_clip)
    metrics: dict[str, Tensor] = {}
    if engine_logprobs is not None:
        old_q = torch.where(finite, old_q, zero)
        engine_logprobs = torch.where(finite, engine_logprobs, zero)
        w, metrics = _tis_weights(old_q, engine_logprobs, loss_mask, cfg.tis_cap)
        pg = pg * w

    pg_loss = aggregate(pg, loss_mask, *agg)
    loss = pg_loss
    kl_loss = torch.zeros((), dtype=x.logprobs.dtype, device=x.logprobs.device)
    if x.ref_logprobs is not None:
        ref_logprobs = torch.where(finite, x.ref_logprobs.detach(), zero)
        kl = kl_penalty(logprobs, ref_logprobs, cfg.kl_estimator)
        metrics["kl_ref"] = _masked_mean(kl_penalty(logprobs.detach(), ref_logprobs, "k3"), m, n)
        if cfg.kl_coef != 0.0:
            kl_loss = aggregate(kl, loss_mask, *agg)
            loss = loss + cfg.kl_coef * kl_loss

    metrics.update(
        num_tokens=n,
        pg_loss=pg_loss.detach(),
        kl_loss=kl_loss.detach(),
        nonfinite_tokens=nonfinite,
    )
    clips = (cfg.clip_low, cfg.clip_high, cfg.dual_clip)
    metrics.update(_ratio_metrics(log_ratio.detach(), A, m, n, *clips))
    if x.entropy is not None:
        metrics["entropy"] = _masked_mean(x.entropy.detach(), m, n)
    return loss, {k: v.detach().float() for k, v in metrics.items()}


def _clipped_surrogate(
    ratio: Tensor, A: Tensor, clip_low: float, clip_high: float, dual_clip: float
) -> Tensor:
    """Per-token PPO loss [B, T] from ratio [B, T] and advantages A [B, 1] (see policy_loss):
    max(-A rho, -A clip(rho, 1 - clip_low, 1 + clip_high)), then min(., -A dual_clip) where A < 0
    when dual_clip > 0."""
    pg1 = -A * ratio
    pg2 = -A * torch.clamp(ratio, 1.0 - clip_low, 1.0 + clip_high)
    pg = torch.maximum(pg1, pg2)
    if dual_clip > 0.0:
        # Only for A < 0: an unbounded ratio would give an unbounded loss there.
        pg = torch.where(A < 0, torch.minimum(pg, -A * dual_clip), pg)
    return pg


def _finite_tokens(
    logprobs: Tensor,
    old_logprobs: Tensor,
    old_q: Tensor,
    engine_logprobs: Tensor | None,
    ref_logprobs: Tensor | None,
) -> Tensor:
    """bool [B, T]: the token slots whose log-probs are finite and whose ratios exp(logprobs -
    old_logprobs) and exp(old_q - engine_logprobs) are finite in fp32 (see policy_loss)."""
    with torch.no_grad():
        finite = torch.isfinite(logprobs) & torch.isfinite(old_logprobs) & torch.isfinite(old_q)
        finite &= torch.isfinite(torch.exp(logprobs - old_logprobs))
        if engine_logprobs is not None:
            finite &= torch.isfinite(engine_logprobs)
            finite &= torch.isfinite(torch.exp(old_q - engine_logprobs))
        if ref_logprobs is not None:
            finite &= torch.isfinite(ref_logprobs.detach())
    return finite


def _tis_weights(
    old_logprobs: Tensor, engine_logprobs: Tensor, loss_mask: Tensor, tis_cap: float
) -> tuple[Tensor | float, dict[str, Tensor]]:
    """Truncated importance weights min(pi_old / pi_engine, tis_cap) [B, T] (1.0 when tis_cap = 0) and
    their metrics (tis_weight_mean, tis_clip_frac, engine_kl)."""
    m = loss_mask.to(old_logprobs.dtype)
    n = m.sum()
    metrics = {"engine_kl": engine_kl(old_logprobs, engine_logprobs, loss_mask)}
    if tis_cap <= 0.0:
        return 1.0, metrics
    w_raw = torch.exp(old_logprobs - engine_logprobs)
    w = torch.clamp(w_raw, max=tis_cap)
    metrics.update(
        tis_weight_mean=_masked_mean(w, m, n),
        tis_clip_frac=_masked_mean((w_raw > tis_cap).to(m.dtype), m, n),
    )
    return w, metrics


def _check_shapes(logprobs: Tensor, advantages: Tensor, **token_tensors: Tensor | None) -> None:
    """Raise ValueError unless logprobs is [B, T], advantages [B] and every given token tensor [B, T]."""
    if logprobs.dim() != 2:
        raise ValueError(f"logprobs: expected [B, T], got {tuple(logprobs.shape)}")
    B, T = logprobs.shape
    for name, x in token_tensors.items():
        if x is not None and tuple(x.shape) != (B, T):
            raise ValueError(f"{name}: expected shape {(B, T)} as logprobs, got {tuple(x.shape)}")
    if tuple(advantages.shape) != (B,):
        raise ValueError(f"advantages: expected shape ({B},), got {tuple(advantages.shape)}")


@torch.no_grad()
def _ratio_metrics(
    log_ratio: Tensor,
    A: Tensor,
    m: Tensor,
    n: Tensor,
    clip_low: float,
    clip_high: float,
    dual_clip: float,
) -> dict[str, Tensor]:
    """Clip fractions, approx_kl and ratio statistics over the loss tokens (see policy_loss)."""
    r = torch.exp(log_ratio)
    out = {
        "clip_frac_low": _masked_mean(((A < 0) & (r < 1.0 - clip_low)).to(m.dtype), m, n),
        "clip_frac_high": _masked_mean(((A > 0) & (r > 1.0 + clip_high)).to(m.dtype), m, n),
        "approx_kl": _masked_mean(r - 1.0 - log_ratio, m, n),
        "ratio_mean": _masked_mean(r, m, n),
    }
    if dual_clip > 0.0:
        out["clip_frac_dual"] = _masked_mean(((A < 0) & (r > dual_clip)).to(m.dtype), m, n)
    inf = torch.tensor(float("inf"), dtype=r.dtype, device=r.device)
    out["ratio_min"] = torch.where(m.bool(), r, inf).flatten().min() if r.numel() else inf
    out["ratio_max"] = torch.where(m.bool(), r, -inf).flatten().max() if r.numel() else -inf
    return out


def mean_over_minibatches(per_step: list[dict[str, float | None]]) -> dict[str, float | None]:
    """One record for the optimizer steps of one training step (each step's record is
    learner/update.reduce_metrics of policy_loss's metrics): num_tokens and nonfinite_tokens
    summed, ratio_min / ratio_max the min / max of those present (None if none), token means
    weighted by each step's num_tokens, the rest (pg_loss, kl_loss: each step's loss; grad_norm,
    lr, skipped_update) plain means."""
    n = [m["num_tokens"] for m in per_step]
    out = {}
    for k in per_step[0]:
        vals = [m[k] for m in per_step]
        present = [v for v in vals if v is not None]
        if k in ("ratio_min", "ratio_max"):
            pick = min if k == "ratio_min" else max
            out[k] = pick(present) if present else None
        elif k in ("num_tokens", "nonfinite_tokens"):
            out[k] = sum(vals)
        elif k in ("pg_loss", "kl_loss", "grad_norm", "lr", "skipped_update"):
            out[k] = sum(vals) / len(vals)
        else:
            out[k] = sum(v * w for v, w in zip(vals, n)) / max(sum(n), 1.0)
    return out
