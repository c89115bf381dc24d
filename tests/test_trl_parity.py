"""grpo.policy_loss against TRL 1.16's GRPOTrainer._compute_loss: the same tensors in, equal loss and gradients out.

TRL's own code computes the reference: a GRPOTrainer built on the tiny random model (tiny_dir), whose per-token
log-prob function (`_get_per_token_logps_and_entropies`, the one model call in `_compute_loss`) returns the test's
log-probs instead of the model's. Everything after it, the ratio, the clip, the KL term, the vLLM importance weight
and the normalisation of each loss type, is TRL's. The batch: uneven lengths, masked tokens inside rows, ratios
well outside the clip range, in fp64 so that equal means equal to rounding.

Loss types both have (grpo.py's docstring, "TRL's GRPOTrainer"): grpo, bnpo, dr_grpo, dapo. The deliberate
differences are asserted as named cases: TRL's grpo averages empty rows too, its default KL term is multiplied by
the ratio (use_bias_correction_kl), bnpo normalises each micro-batch by its own token count, and delta below
1 + clip_high is not the dual clip.
"""

import pytest
import torch
from datasets import Dataset
from trl import GRPOConfig as TRLConfig
from trl import GRPOTrainer

import configs
import grpo

B, T = 6, 7
LENGTHS = [7, 3, 5, 1, 6, 4]  # generated tokens per row; the rest is right padding
MAX_COMPLETION = 16  # TRL's max_completion_length = Dr.GRPO's constant, above T on purpose
CLIP_LOW, CLIP_HIGH = 0.2, 0.28
AGGREGATION = {
    "grpo": "seq_mean_token_mean",
    "bnpo": "token_mean",
    "dr_grpo": "seq_mean_token_sum_norm",
    "dapo": "token_mean",
}
SEEDS = (0, 1)


def batch(seed: int, empty_rows: tuple[int, ...] = ()) -> dict[str, torch.Tensor]:
    """Random fp64 [B, T] log-probs (old, ref, engine) and [B] advantages; loss_mask with LENGTHS, a masked
    token inside rows 0 and 4 (an observation) and the given rows fully masked."""
    g = torch.Generator().manual_seed(seed)
    logprobs = -3.0 * torch.rand(B, T, generator=g, dtype=torch.float64)
    mask = (torch.arange(T).unsqueeze(0) < torch.tensor(LENGTHS).unsqueeze(1)).long()
    mask[0, 2] = 0
    mask[4, 1] = 0
    for row in empty_rows:
        mask[row] = 0
    return {
        "logprobs": logprobs,
        # ratios exp(+-0.6): well past both clip bounds on many tokens
        "old_logprobs": logprobs
        + 0.6 * (2 * torch.rand(B, T, generator=g, dtype=torch.float64) - 1),
        "ref_logprobs": logprobs + 0.5 * torch.randn(B, T, generator=g, dtype=torch.float64),
        "engine_logprobs": logprobs + 0.4 * torch.randn(B, T, generator=g, dtype=torch.float64),
        "advantages": torch.randn(B, generator=g, dtype=torch.float64),
        "loss_mask": mask,
    }


@pytest.fixture(scope="module")
def trl_trainer(tmp_path_factory, tiny_dir):
    """trl_trainer(loss_type, **GRPOConfig args): a GRPOTrainer, one per distinct configuration."""
    built = {}

    def get(loss_type: str, **args) -> GRPOTrainer:
        key = (loss_type, *sorted(args.items()))
        if key not in built:
            built[key] = build_trainer(tmp_path_factory.mktemp("trl"), tiny_dir, loss_type, **args)
        return built[key]

    return get


def build_trainer(out_dir, tiny_dir, loss_type: str, **args) -> GRPOTrainer:
    """A real GRPOTrainer on the tiny model, set up as TRL's training loop leaves it before compute_loss."""
    config = TRLConfig(
        output_dir=str(out_dir),
        loss_type=loss_type,
        epsilon=CLIP_LOW,
        epsilon_high=CLIP_HIGH,
        max_completion_length=MAX_COMPLETION,
        per_device_train_batch_size=B,
        num_generations=B,
        report_to="none",
        use_cpu=True,
        save_strategy="no",
        **args,
    )
    prompts = Dataset.from_dict({"prompt": ["hi"] * B})
    trainer = GRPOTrainer(
        model=str(tiny_dir),
        reward_funcs=lambda completions, **_: [0.0] * len(completions),
        args=config,
        train_dataset=prompts,
    )
    trainer.model.train()
    trainer.current_gradient_accumulation_steps = config.gradient_accumulation_steps
    return trainer


def trl_loss(
    trainer: GRPOTrainer,
    b: dict,
    logprobs: torch.Tensor,
    rows=slice(None),
    num_items=None,
    importance_sampling_ratio=None,
) -> torch.Tensor:
    """TRL's _compute_loss on rows `rows` of batch b, its per-token log-probs being `logprobs[rows]`."""
    lp = logprobs[rows]
    completion_ids = torch.zeros_like(b["loss_mask"][rows])

    def per_token_logps(model, input_ids, attention_mask, logits_to_keep, **_):
        assert logits_to_keep == T and input_ids.shape == (lp.shape[0], 1 + T)
        return lp, torch.zeros_like(lp), None

    trainer._get_per_token_logps_and_entropies = per_token_logps
    inputs = {
        "prompt_ids": torch.zeros(lp.shape[0], 1, dtype=torch.long),
        "prompt_mask": torch.ones(lp.shape[0], 1, dtype=torch.long),
        "completion_ids": completion_ids,
        "completion_mask": b["loss_mask"][rows],
        "advantages": b["advantages"][rows],
        "old_per_token_logps": b["old_logprobs"][rows],
        "ref_per_token_logps": b["ref_logprobs"][rows],
        "num_items_in_batch": torch.tensor(
            float(b["loss_mask"].sum()) if num_items is None else num_items
        ),
    }
    if importance_sampling_ratio is not None:
        inputs["importance_sampling_ratio"] = importance_sampling_ratio[rows]
    return trainer._compute_loss(trainer.model, inputs)


def termrl_loss(
    b: dict, logprobs: torch.Tensor, rows=slice(None), denominator=None, engine=False, **cfg
) -> torch.Tensor:
    inputs = grpo.LossInputs(
        logprobs[rows],
        b["old_logprobs"][rows],
        b["advantages"][rows],
        b["loss_mask"][rows],
        engine_logprobs=b["engine_logprobs"][rows] if engine else None,
        ref_logprobs=b["ref_logprobs"][rows],
        denominator=denominator,
        max_tokens=MAX_COMPLETION,
    )
    cfg = {"clip_low": CLIP_LOW, "clip_high": CLIP_HIGH, "tis_cap": 0.0, **cfg}
    return grpo.policy_loss(inputs, configs.GRPOConfig(**cfg))[0]


def value_and_grad(loss_fn, b: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """loss_fn(logprobs leaf) -> (loss value, d loss / d logprobs [B, T])."""
    logprobs = b["logprobs"].clone().requires_grad_(True)
    loss = loss_fn(logprobs)
    loss.backward()
    return loss.detach(), logprobs.grad


def assert_same(a: tuple[torch.Tensor, torch.Tensor], b: tuple[torch.Tensor, torch.Tensor]) -> None:
    torch.testing.assert_close(a[0], b[0], rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(a[1], b[1], rtol=1e-12, atol=1e-14)


# -----------------------------------------------------------------------------
# the shared loss types: equal


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kl_coef", [0.0, 0.04])
@pytest.mark.parametrize("loss_type", ["grpo", "bnpo", "dr_grpo", "dapo"])
def test_each_shared_loss_type_equals_trls(trl_trainer, loss_type, kl_coef, seed):
    b = batch(seed)
    trainer = trl_trainer(loss_type, beta=kl_coef, use_bias_correction_kl=False)
    ours = value_and_grad(
        lambda lp: termrl_loss(
            b, lp, aggregation=AGGREGATION[loss_type], kl_coef=kl_coef, kl_estimator="k3"
        ),
        b,
    )
    theirs = value_and_grad(lambda lp: trl_loss(trainer, b, lp), b)
    assert ours[1].abs().sum() > 0 and (ours[1][b["loss_mask"] == 0] == 0).all()
    assert_same(ours, theirs)


@pytest.mark.parametrize("seed", SEEDS)
def test_dapo_over_two_micro_batches_equals_termrls_global_token_denominator(trl_trainer, seed):
    # TRL divides each micro-batch's token sum by the accumulation window's token count; termrl's learner passes
    # the count over all micro-batches and ranks as the denominator: the summed gradients are the same.
    b = batch(seed)
    trainer = trl_trainer("dapo", gradient_accumulation_steps=2, steps_per_generation=2)
    halves = (slice(0, 2), slice(2, B))  # 9 and 15 loss tokens: uneven on purpose
    total = b["loss_mask"].sum()
    ours = value_and_grad(
        lambda lp: sum(termrl_loss(b, lp, h, denominator=total) for h in halves), b
    )
    theirs = value_and_grad(lambda lp: sum(trl_loss(trainer, b, lp, h) for h in halves), b)
    assert_same(ours, theirs)


@pytest.mark.parametrize("seed", SEEDS)
def test_trls_delta_is_termrls_dual_clip(trl_trainer, seed):
    # INTELLECT-2's two-sided clip (TRL delta) caps the ratio of every token at delta; with delta > 1 + clip_high
    # that changes only A < 0 tokens, as termrl's dual clip (Ye et al. 2020) does.
    b = batch(seed)
    b["old_logprobs"] = b["logprobs"] - 1.5 * torch.rand(
        B, T, generator=torch.Generator().manual_seed(seed), dtype=torch.float64
    )  # ratios up to e^1.5 = 4.5
    trainer = trl_trainer("dapo", delta=2.0)
    ours = value_and_grad(lambda lp: termrl_loss(b, lp, dual_clip=2.0), b)
    theirs = value_and_grad(lambda lp: trl_loss(trainer, b, lp), b)
    assert_same(ours, theirs)
    without = value_and_grad(lambda lp: termrl_loss(b, lp, dual_clip=0.0), b)
    assert not torch.allclose(without[1], theirs[1])  # the dual clip binds on this batch


@pytest.mark.parametrize("seed", SEEDS)
def test_truncated_importance_weight_equals_trls_token_truncate(trl_trainer, seed):
    # TRL computes the vLLM weight in _generate_and_score_completions (vllm_importance_sampling_mode
    # "token_truncate": exp(old - sampling) clamped to [clip_min, clip_max], clip_min None), which needs vLLM to
    # generate; the weight is written here as that mode does, and _compute_loss applies it as with vLLM on.
    b = batch(seed)
    trainer = trl_trainer(
        "dapo",
        beta=0.04,
        use_bias_correction_kl=False,
        vllm_importance_sampling_mode="token_truncate",
        vllm_importance_sampling_clip_max=1.5,
    )
    trainer.use_vllm = (
        True  # what GRPOConfig(use_vllm=True) sets; the vLLM engine itself is not needed here
    )
    weight = torch.clamp(torch.exp(b["old_logprobs"] - b["engine_logprobs"]), max=1.5)
    ours = value_and_grad(lambda lp: termrl_loss(b, lp, engine=True, tis_cap=1.5, kl_coef=0.04), b)
    theirs = value_and_grad(
        lambda lp: trl_loss(trainer, b, lp, importance_sampling_ratio=weight), b
    )
    assert_same(ours, theirs)


# -----------------------------------------------------------------------------
# deliberate differences, each named in grpo.py's docstring


@pytest.mark.parametrize("seed", SEEDS)
def test_trls_grpo_counts_rows_without_loss_tokens_in_its_mean(trl_trainer, seed):
    # termrl's seq_mean_token_mean averages over the rows that have loss tokens; TRL's grpo over all B rows, so
    # with rows 1 and 3 fully masked (e.g. overlong-filtered) TRL's loss is termrl's times 4/6.
    b = batch(seed, empty_rows=(1, 3))
    trainer = trl_trainer("grpo")
    ours = value_and_grad(lambda lp: termrl_loss(b, lp, aggregation="seq_mean_token_mean"), b)
    theirs = value_and_grad(lambda lp: trl_loss(trainer, b, lp), b)
    assert_same((ours[0] * 4 / 6, ours[1] * 4 / 6), theirs)


@pytest.mark.parametrize("seed", SEEDS)
def test_trls_delta_below_one_plus_clip_high_differs_on_ratios_between_them(trl_trainer, seed):
    # With delta = 1.1 < 1 + clip_high, TRL's delta caps the ratio of A > 0 tokens too (no gradient once
    # rho > 1.1) and its A < 0 cap is max(delta, 1 + clip_high); termrl's dual clip caps A < 0 tokens at 1.1.
    # The gradients differ on exactly the tokens with 1.1 < rho <= 1 + clip_high, one side zero there.
    b = batch(seed)
    trainer = trl_trainer("dapo", delta=1.1)
    ours = value_and_grad(lambda lp: termrl_loss(b, lp, dual_clip=1.1), b)
    theirs = value_and_grad(lambda lp: trl_loss(trainer, b, lp), b)
    ratio = torch.exp(b["logprobs"] - b["old_logprobs"])
    band = (ratio > 1.1) & (ratio <= 1 + CLIP_HIGH) & (b["loss_mask"] == 1)
    assert band.sum() >= 2
    assert ((ours[1][band] == 0) ^ (theirs[1][band] == 0)).all()
    torch.testing.assert_close(ours[1][~band], theirs[1][~band], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("seed", SEEDS)
def test_trls_default_kl_term_is_termrls_k3_times_the_ratio(trl_trainer, seed):
    # TRL's default use_bias_correction_kl=True (DeepSeek-V3.2) multiplies the k3 term by the ratio pi/pi_old,
    # with its gradient; termrl's k3 term is unweighted (DeepSeekMath's GRPO, Schulman 2020).
    b = batch(seed)
    trainer = trl_trainer("dapo", beta=0.04)

    def ours_plus_ratio_term(lp):
        ratio = torch.exp(lp - b["old_logprobs"])
        k3 = grpo.kl_penalty(lp, b["ref_logprobs"], "k3")
        extra = grpo.aggregate(k3 * (ratio - 1.0), b["loss_mask"], "token_mean")
        return termrl_loss(b, lp, kl_coef=0.04, kl_estimator="k3") + 0.04 * extra

    theirs = value_and_grad(lambda lp: trl_loss(trainer, b, lp), b)
    assert_same(value_and_grad(ours_plus_ratio_term, b), theirs)
    plain = value_and_grad(lambda lp: termrl_loss(b, lp, kl_coef=0.04, kl_estimator="k3"), b)
    assert not torch.allclose(plain[1], theirs[1])


@pytest.mark.parametrize("seed", SEEDS)
def test_trls_bnpo_normalises_each_micro_batch_by_its_own_tokens(trl_trainer, seed):
    # bnpo over micro-batches of 9 and 15 loss tokens: the mean of the two local token means, not termrl's
    # global token mean (DAPO); termrl's learner always passes the global denominator.
    b = batch(seed)
    trainer = trl_trainer("bnpo", gradient_accumulation_steps=2, steps_per_generation=2)
    halves = (slice(0, 2), slice(2, B))
    local = value_and_grad(lambda lp: sum(termrl_loss(b, lp, h) / 2 for h in halves), b)
    theirs = value_and_grad(lambda lp: sum(trl_loss(trainer, b, lp, h) for h in halves), b)
    assert_same(local, theirs)
    total = b["loss_mask"].sum()
    global_ = value_and_grad(
        lambda lp: sum(termrl_loss(b, lp, h, denominator=total) for h in halves), b
    )
    assert not torch.allclose(global_[1], theirs[1])
