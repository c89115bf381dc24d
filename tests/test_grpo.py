"""grpo.py against hand-computed numbers, and its gradients against autograd of the written formula."""

import math

import pytest
import torch

import configs
import grpo


def _policy_loss(
    logprobs,
    old_logprobs,
    advantages,
    loss_mask,
    *,
    engine_logprobs=None,
    ref_logprobs=None,
    entropy=None,
    denominator=None,
    max_tokens=None,
    old_log_kept_mass=None,
    **cfg,
):
    """grpo.policy_loss(LossInputs, GRPOConfig) with the tensors as LossInputs and the knobs as the config."""
    inputs = grpo.LossInputs(
        logprobs,
        old_logprobs,
        advantages,
        loss_mask,
        engine_logprobs=engine_logprobs,
        ref_logprobs=ref_logprobs,
        entropy=entropy,
        denominator=denominator,
        max_tokens=max_tokens,
        old_log_kept_mass=old_log_kept_mass,
    )
    return grpo.policy_loss(inputs, configs.GRPOConfig(**cfg))


# -----------------------------------------------------------------------------
# advantages

# Two groups of 4. Group 0: mean 0.25, unbiased std 0.5. Group 1: mean 0.5, unbiased std sqrt(1/3).
REWARDS = torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0])


def test_grpo_advantage_is_centred_and_divided_by_unbiased_group_std():
    adv = grpo.compute_advantages(REWARDS, group_size=4, estimator="grpo", eps=0.0)
    s3 = math.sqrt(3.0) / 2.0  # 0.5 / sqrt(1/3)
    expected = torch.tensor([1.5, -0.5, -0.5, -0.5, s3, s3, -s3, -s3])
    torch.testing.assert_close(adv, expected, rtol=0, atol=1e-6)


def test_grpo_advantage_eps_is_added_to_std():
    adv = grpo.compute_advantages(REWARDS[:4], group_size=4, estimator="grpo", eps=0.5)
    torch.testing.assert_close(adv, torch.tensor([0.75, -0.25, -0.25, -0.25]), rtol=0, atol=1e-7)


def test_drgrpo_advantage_is_reward_minus_group_mean():
    adv = grpo.compute_advantages(REWARDS, group_size=4, estimator="drgrpo")
    expected = torch.tensor([0.75, -0.25, -0.25, -0.25, 0.5, 0.5, -0.5, -0.5])
    torch.testing.assert_close(adv, expected, rtol=0, atol=1e-7)


def test_rloo_advantage_is_reward_minus_mean_of_the_others():
    adv = grpo.compute_advantages(REWARDS, group_size=4, estimator="rloo")
    # 1 - mean(0,0,0) = 1; 0 - mean(1,0,0) = -1/3; 1 - mean(1,0,0) = 2/3; 0 - mean(1,1,0) = -2/3
    expected = torch.tensor([1.0, -1 / 3, -1 / 3, -1 / 3, 2 / 3, 2 / 3, -2 / 3, -2 / 3])
    torch.testing.assert_close(adv, expected, rtol=0, atol=1e-6)


@pytest.mark.parametrize("estimator", grpo.ESTIMATORS)
def test_equal_rewards_give_zero_advantage(estimator):
    adv = grpo.compute_advantages(torch.tensor([0.3, 0.3, 0.3]), group_size=3, estimator=estimator)
    assert adv.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("estimator", grpo.ESTIMATORS)
def test_equal_rewards_give_exactly_zero_advantage_for_any_value_and_group_size(estimator):
    # In fp32, eight rewards of 0.93 gave grpo A = +0.056 for the whole group: the mean is an ulp
    # off and the std of the resulting ulps (~6e-8) is not small next to eps = 1e-6.
    for G in range(2, 17):
        for value in (0.93, 0.7, 0.3, 0.1, 1 / 3, -2.5, 1e6 + 0.1):
            for dtype in (torch.float32, torch.float64, torch.bfloat16):
                for eps in (1e-6, 0.0):
                    adv = grpo.compute_advantages(
                        torch.full((G,), value, dtype=dtype), G, estimator, eps=eps
                    )
                    assert adv.tolist() == [0.0] * G, (G, value, dtype, eps)
    # next to a group with distinct rewards
    adv = grpo.compute_advantages(torch.tensor([0.93] * 8 + [1.0] + [0.0] * 7), 8, estimator)
    assert adv[:8].tolist() == [0.0] * 8 and adv[8] > 0


def test_rewards_1e4_apart_keep_their_sign():
    # Seven rewards 0.93 and one 0.9301: d = 1e-4, mean = 0.93 + d/8.
    r = torch.tensor([0.93] * 7 + [0.9301], dtype=torch.float64)
    # drgrpo: -d/8 = -1.25e-5 and 7d/8 = 8.75e-5
    drgrpo = grpo.compute_advantages(r, 8, "drgrpo")
    torch.testing.assert_close(drgrpo, torch.tensor([-1.25e-5] * 7 + [8.75e-5]), rtol=1e-6, atol=0)
    # rloo: 8/7 of drgrpo: -1/7 e-4 and 1e-4
    rloo = grpo.compute_advantages(r, 8, "rloo")
    torch.testing.assert_close(rloo, torch.tensor([-1e-4 / 7] * 7 + [1e-4]), rtol=1e-6, atol=0)
    # grpo: std = sqrt((7 (d/8)^2 + (7d/8)^2) / 7) = d / sqrt(8); A = -sqrt(8)/8 = -sqrt(2)/4 and 7 sqrt(2)/4
    adv = grpo.compute_advantages(r, 8, "grpo", eps=0.0)
    s = math.sqrt(2.0) / 4
    torch.testing.assert_close(adv, torch.tensor([-s] * 7 + [7 * s]), rtol=1e-6, atol=0)
    # with the default eps = 1e-6 (std = 3.5e-5) the values shrink by 3% but keep their sign
    adv = grpo.compute_advantages(r.float(), 8, "grpo")
    assert (adv[:7] < 0).all() and adv[7] > 0


def test_advantages_reject_bad_input_naming_the_field():
    with pytest.raises(ValueError, match="not a multiple of group_size=4"):
        grpo.compute_advantages(torch.zeros(6), group_size=4)
    with pytest.raises(ValueError, match=r"rewards\[2\] is nan"):
        grpo.compute_advantages(torch.tensor([0.0, 1.0, float("nan"), 0.0]), group_size=2)
    with pytest.raises(ValueError, match="estimator"):
        grpo.compute_advantages(torch.zeros(4), group_size=2, estimator="ppo")
    with pytest.raises(ValueError, match="group_size >= 2"):
        grpo.compute_advantages(torch.zeros(4), group_size=1, estimator="rloo")


def test_nonzero_variance_mask_keeps_only_groups_with_distinct_rewards():
    rewards = torch.tensor([1.0, 0.0, 0.5, 0.5, 0.0, 0.0])
    assert grpo.nonzero_variance_mask(rewards, group_size=2).tolist() == [
        True,
        True,
        False,
        False,
        False,
        False,
    ]


def test_mask_truncated_zeroes_the_rows_of_cut_off_episodes():
    mask = torch.tensor([[1, 1, 0], [0, 1, 1]])
    out = grpo.mask_truncated(mask, torch.tensor([False, True]))
    assert out.tolist() == [[1, 1, 0], [0, 0, 0]]
    assert out.dtype == mask.dtype


# -----------------------------------------------------------------------------
# policy loss on a hand-computed batch
#
# B = 2 sequences, T = 3. A = [1, -2]; clip range [0.8, 1.28] (clip_low 0.2, clip_high 0.28).
# ratios rho:  row 0 [1.5, 0.7, 10.0 (masked)]   row 1 [0.5, 1.1, 4.0]
# pg = max(-A rho, -A clip(rho)):
#   row 0 (A = 1):  -min(1.5, 1.28) = -1.28 (clipped high), -min(0.7, 0.8) = -0.7
#   row 1 (A = -2): max(1.0, 1.6) = 1.6 (clipped low), max(2.2, 2.2) = 2.2, max(8.0, 2.56) = 8.0
# dual clip c = 3 caps the last one at -A c = 6.0.

RATIOS = torch.tensor([[1.5, 0.7, 10.0], [0.5, 1.1, 4.0]])
OLD = torch.tensor([[-1.0, -1.5, -2.0], [-0.5, -3.0, -2.5]])
ADV = torch.tensor([1.0, -2.0])
MASK = torch.tensor([[1, 1, 0], [1, 1, 1]])


def _logprobs():
    return (OLD + RATIOS.log()).requires_grad_(True)


def _loss(**kw):
    lp = _logprobs()
    loss, metrics = _policy_loss(lp, OLD, ADV, MASK, clip_low=0.2, clip_high=0.28, **kw)
    loss.backward()
    return loss, metrics, lp.grad


def test_token_mean_loss_value_and_gradient():
    loss, _, grad = _loss(aggregation="token_mean")
    torch.testing.assert_close(
        loss, torch.tensor((-1.28 - 0.7 + 1.6 + 2.2 + 8.0) / 5), rtol=0, atol=1e-6
    )
    # d/d logprob of -A rho = -A rho where unclipped, 0 where clipped or masked; over 5 loss tokens.
    expected = torch.tensor([[0.0, -0.7 / 5, 0.0], [0.0, 2 * 1.1 / 5, 2 * 4.0 / 5]])
    torch.testing.assert_close(grad, expected, rtol=0, atol=1e-6)


def test_seq_mean_token_mean_loss_value_and_gradient():
    loss, _, grad = _loss(aggregation="seq_mean_token_mean")
    # ((-1.28 - 0.7) / 2 + (1.6 + 2.2 + 8.0) / 3) / 2
    torch.testing.assert_close(loss, torch.tensor(8.83 / 6), rtol=0, atol=1e-6)
    expected = torch.tensor([[0.0, -0.7 / 4, 0.0], [0.0, 2 * 1.1 / 6, 2 * 4.0 / 6]])
    torch.testing.assert_close(grad, expected, rtol=0, atol=1e-6)


def test_seq_mean_token_sum_norm_loss_value_and_gradient():
    loss, _, grad = _loss(aggregation="seq_mean_token_sum_norm", max_tokens=4)
    # ((-1.28 - 0.7) / 4 + (1.6 + 2.2 + 8.0) / 4) / 2
    torch.testing.assert_close(loss, torch.tensor(1.2275), rtol=0, atol=1e-6)
    expected = torch.tensor([[0.0, -0.7 / 8, 0.0], [0.0, 2 * 1.1 / 8, 2 * 4.0 / 8]])
    torch.testing.assert_close(grad, expected, rtol=0, atol=1e-6)


def test_seq_mean_token_sum_norm_needs_max_tokens():
    with pytest.raises(ValueError, match="max_tokens"):
        _loss(aggregation="seq_mean_token_sum_norm")
    with pytest.raises(ValueError, match="max_tokens"):
        grpo.loss_denominator(MASK, "seq_mean_token_sum_norm")
    with pytest.raises(ValueError, match="max_tokens"):
        grpo.loss_denominator(MASK, "seq_mean_token_sum_norm", max_tokens=0)


def test_drgrpo_masking_one_episode_leaves_the_others_gradient_unchanged():
    # The normaliser is #sequences * max_tokens = 2 * 4, masked or not: the gradient of row 1
    # stays -A rho / 8 (it was divided by the count of non-empty sequences, 1, before: 4x larger).
    lp = _logprobs()
    mask = MASK.clone()
    mask[0] = 0  # e.g. a truncated episode under mask_truncated
    loss, _ = _policy_loss(lp, OLD, ADV, mask, aggregation="seq_mean_token_sum_norm", max_tokens=4)
    loss.backward()
    torch.testing.assert_close(loss, torch.tensor((1.6 + 2.2 + 8.0) / 8), rtol=0, atol=1e-6)
    expected = torch.tensor([[0.0, 0.0, 0.0], [0.0, 2 * 1.1 / 8, 2 * 4.0 / 8]])
    torch.testing.assert_close(lp.grad, expected, rtol=0, atol=1e-6)


def test_dual_clip_caps_the_loss_of_negative_advantages():
    loss, metrics, grad = _loss(dual_clip=3.0)
    torch.testing.assert_close(
        loss, torch.tensor((-1.28 - 0.7 + 1.6 + 2.2 + 6.0) / 5), rtol=0, atol=1e-6
    )
    assert grad[1, 2].item() == 0.0
    torch.testing.assert_close(metrics["clip_frac_dual"], torch.tensor(0.2))


def test_metrics_clip_fractions_and_ratio_stats():
    _, m, _ = _loss()
    assert m["num_tokens"].item() == 5.0
    torch.testing.assert_close(m["clip_frac_low"], torch.tensor(0.2))  # row 1 token 0
    torch.testing.assert_close(m["clip_frac_high"], torch.tensor(0.2))  # row 0 token 0
    torch.testing.assert_close(m["ratio_mean"], torch.tensor(7.8 / 5))
    torch.testing.assert_close(m["ratio_min"], torch.tensor(0.5))
    torch.testing.assert_close(m["ratio_max"], torch.tensor(4.0))  # the masked 10.0 is not counted
    approx_kl = sum(r - 1 - math.log(r) for r in (1.5, 0.7, 0.5, 1.1, 4.0)) / 5
    torch.testing.assert_close(m["approx_kl"], torch.tensor(approx_kl))
    assert "clip_frac_dual" not in m and "entropy" not in m


def test_entropy_metric_is_the_masked_mean():
    ent = torch.tensor([[1.0, 2.0, 100.0], [3.0, 4.0, 5.0]])
    _, m, _ = _loss(entropy=ent)
    torch.testing.assert_close(m["entropy"], torch.tensor(3.0))


def test_truncated_importance_sampling_weights_tokens_by_capped_ratio_to_engine():
    # w_raw = pi_old / pi_engine = [[1, 3, 1], [0.5, 2, 1]]; capped at 2 -> [[1, 2, 1], [0.5, 2, 1]]
    w_raw = torch.tensor([[1.0, 3.0, 1.0], [0.5, 2.0, 1.0]])
    loss, m, grad = _loss(engine_logprobs=OLD - w_raw.log(), tis_cap=2.0)
    torch.testing.assert_close(
        loss, torch.tensor((-1.28 - 0.7 * 2 + 1.6 * 0.5 + 2.2 * 2 + 8.0) / 5), rtol=0, atol=1e-6
    )
    expected = torch.tensor([[0.0, -0.7 * 2 / 5, 0.0], [0.0, 2 * 1.1 * 2 / 5, 2 * 4.0 / 5]])
    torch.testing.assert_close(grad, expected, rtol=0, atol=1e-6)
    torch.testing.assert_close(m["tis_weight_mean"], torch.tensor(6.5 / 5))
    torch.testing.assert_close(m["tis_clip_frac"], torch.tensor(0.2))
    # r = pi_old / pi_engine = w_raw on the 5 loss tokens: mean(r - 1 - log r)
    engine_kl = sum(w - 1 - math.log(w) for w in (1.0, 3.0, 0.5, 2.0, 1.0)) / 5
    torch.testing.assert_close(m["engine_kl"], torch.tensor(engine_kl))


def test_tis_compares_the_engine_with_the_old_policy_under_the_same_truncation():
    # The engine reports log q = log p - log(kept mass) under top-k / top-p; given the learner's
    # kept mass, an engine holding the old policy gives w = 1 and engine_kl = 0 (the full
    # distribution against the truncated one would give w = kept mass < 1 on-policy).
    kept = torch.tensor([[-0.1, -0.3, -0.05], [-0.2, -0.02, -1.0]])
    _, m, grad = _loss(engine_logprobs=OLD - kept, old_log_kept_mass=kept, tis_cap=2.0)
    torch.testing.assert_close(m["tis_weight_mean"], torch.tensor(1.0))
    torch.testing.assert_close(m["engine_kl"], torch.tensor(0.0))
    # the loss's own ratio stays against the old log-probs of the full distribution
    _, plain, plain_grad = _loss()
    torch.testing.assert_close(grad, plain_grad, rtol=0, atol=1e-7)
    torch.testing.assert_close(m["ratio_mean"], plain["ratio_mean"])


def test_a_nonfinite_engine_logprob_or_overflowing_ratio_is_masked_and_counted():
    # slot [0, 1]: the engine reported -inf; slot [1, 2]: rho = exp(200) overflows fp32. Both are
    # dropped from the loss (never a NaN or inf step) and counted; the other three tokens train as
    # before: (-1.28 + 1.6 + 2.2) / 3 with w = 1.
    engine = OLD.clone()
    engine[0, 1] = float("-inf")
    lp = _logprobs().detach()
    lp[1, 2] = OLD[1, 2] + 200.0
    lp.requires_grad_(True)
    loss, m = _policy_loss(
        lp, OLD, ADV, MASK, engine_logprobs=engine, clip_low=0.2, clip_high=0.28, tis_cap=2.0
    )
    loss.backward()
    torch.testing.assert_close(loss, torch.tensor((-1.28 + 1.6 + 2.2) / 3), rtol=0, atol=1e-6)
    assert torch.isfinite(lp.grad).all()
    assert lp.grad[0, 1] == 0.0 and lp.grad[1, 2] == 0.0
    assert m["nonfinite_tokens"] == 2.0 and m["num_tokens"] == 3.0
    assert all(torch.isfinite(v) for k, v in m.items() if k != "ratio_min")
    torch.testing.assert_close(m["engine_kl"], torch.tensor(0.0))
    torch.testing.assert_close(m["tis_weight_mean"], torch.tensor(1.0))


def test_tis_cap_zero_switches_the_correction_off():
    w_raw = torch.tensor([[1.0, 3.0, 1.0], [0.5, 2.0, 1.0]])
    loss, m, _ = _loss(engine_logprobs=OLD - w_raw.log(), tis_cap=0.0)
    torch.testing.assert_close(loss, torch.tensor(9.82 / 5), rtol=0, atol=1e-6)
    assert "tis_weight_mean" not in m and "engine_kl" in m


def test_kl_estimators_k2_and_k3():
    lp = torch.tensor([[0.0, -1.0]])
    ref = torch.tensor([[math.log(2.0), -1.0]])  # d = log pi_ref - log pi = [ln 2, 0]
    torch.testing.assert_close(
        grpo.kl_penalty(lp, ref, "k2"), torch.tensor([[0.5 * math.log(2.0) ** 2, 0.0]])
    )
    torch.testing.assert_close(
        grpo.kl_penalty(lp, ref, "k3"), torch.tensor([[1.0 - math.log(2.0), 0.0]])
    )


def test_k1_is_not_a_kl_loss_estimator():
    assert grpo.KL_ESTIMATORS == ("k2", "k3")
    with pytest.raises(ValueError, match="kl_estimator"):
        grpo.kl_penalty(torch.zeros(1, 1), torch.zeros(1, 1), "k1")
    with pytest.raises(ValueError, match="kl_estimator"):
        _loss(ref_logprobs=OLD, kl_coef=0.1, kl_estimator="k1")


# Exact expectations by enumeration over a vocabulary of V = 5 tokens, in fp64.
THETA = torch.tensor([0.3, -1.2, 2.0, 0.0, -0.4], dtype=torch.float64)  # logits of pi
THETA_REF = torch.tensor([1.0, 0.5, -0.7, 0.2, 0.0], dtype=torch.float64)  # logits of pi_ref


def _expected_grad(per_token):
    """E_{x~pi}[grad k(x)] = sum_x pi(x) grad k(x), pi held fixed; per_token(logp, ref_logp) -> [V]."""
    theta = THETA.clone().requires_grad_(True)
    logp, ref = torch.log_softmax(theta, 0), torch.log_softmax(THETA_REF, 0)
    (grad,) = torch.autograd.grad((logp.exp().detach() * per_token(logp, ref)).sum(), theta)
    return grad


def _kl_grad(forward: bool):
    """grad wrt theta of the analytic KL(pi || pi_ref), or of KL(pi_ref || pi) if forward."""
    theta = THETA.clone().requires_grad_(True)
    logp, ref = torch.log_softmax(theta, 0), torch.log_softmax(THETA_REF, 0)
    kl = (ref.exp() * (ref - logp)).sum() if forward else (logp.exp() * (logp - ref)).sum()
    (grad,) = torch.autograd.grad(kl, theta)
    return grad


def _k(estimator):
    return lambda logp, ref: grpo.kl_penalty(logp.view(1, -1), ref.view(1, -1), estimator).view(-1)


def test_k2_expected_gradient_is_the_gradient_of_kl_pi_to_ref():
    torch.testing.assert_close(
        _expected_grad(_k("k2")), _kl_grad(forward=False), rtol=0, atol=1e-14
    )


def test_k3_expected_gradient_is_the_gradient_of_kl_ref_to_pi():
    torch.testing.assert_close(_expected_grad(_k("k3")), _kl_grad(forward=True), rtol=0, atol=1e-14)
    assert not torch.allclose(
        _kl_grad(forward=True), _kl_grad(forward=False), atol=1e-3
    )  # the two differ here


def test_k1_as_a_loss_term_has_zero_expected_gradient():
    grad = _expected_grad(lambda logp, ref: logp - ref)
    torch.testing.assert_close(grad, torch.zeros(5, dtype=torch.float64), rtol=0, atol=1e-15)


def test_k1_reward_penalty_is_the_masked_sequence_log_ratio():
    lp = torch.tensor([[-1.0, -2.0, -0.5], [-0.1, -0.2, -0.3]])
    ref = torch.tensor([[-1.5, -1.0, -9.0], [-0.1, -0.7, -0.3]])
    mask = torch.tensor([[1, 1, 0], [0, 1, 1]])
    # row 0: 0.5 - 1.0 (the masked 8.5 left out); row 1: 0.5 + 0
    torch.testing.assert_close(grpo.k1_reward_penalty(lp, ref, mask), torch.tensor([-0.5, 0.5]))


def test_k1_reward_penalty_policy_gradient_is_the_gradient_of_kl_pi_to_ref():
    # REINFORCE with reward k1(x): E_{x~pi}[k1(x) grad log pi(x)] over one-token sequences.
    def score(logp, ref):
        k1 = grpo.k1_reward_penalty(logp.view(-1, 1), ref.view(-1, 1), torch.ones(5, 1))
        return k1.double() * logp

    torch.testing.assert_close(_expected_grad(score), _kl_grad(forward=False), rtol=0, atol=1e-6)


def test_engine_kl_is_k3_of_train_over_engine_ratio_on_loss_tokens():
    train = torch.tensor(
        [[math.log(2.0), 0.0, 7.0], [-math.log(2.0), 0.0, 0.0]]
    )  # - engine = log r
    engine = torch.zeros(2, 3)
    mask = torch.tensor([[1, 0, 0], [1, 0, 0]])
    # r = 2: 1 - ln 2; r = 1/2: -1/2 + ln 2; mean = 1/4
    assert grpo.engine_kl(train, engine, mask).item() == pytest.approx(0.25, abs=1e-7)
    assert grpo.engine_kl(train, engine, torch.zeros(2, 3)).item() == 0.0


def test_engine_kl_expected_value_on_engine_samples_is_kl_engine_to_train():
    q = torch.log_softmax(THETA_REF, 0)  # engine
    p = torch.log_softmax(THETA, 0)  # trainer
    expected = sum(
        q[x].exp() * grpo.engine_kl(p[x].view(1, 1), q[x].view(1, 1), torch.ones(1, 1)).double()
        for x in range(5)
    )
    kl_engine_train = (q.exp() * (q - p)).sum()
    torch.testing.assert_close(expected, kl_engine_train, rtol=1e-6, atol=0)
    assert abs(kl_engine_train - (p.exp() * (p - q)).sum()) > 0.1  # not the other direction


def test_kl_penalty_is_added_with_kl_coef_and_its_gradient():
    d = torch.tensor([[math.log(2.0), 0.0, 5.0], [0.0, -math.log(2.0), 0.0]])  # ref - logprobs
    ref = OLD + RATIOS.log() + d
    loss, m, grad = _loss(ref_logprobs=ref, kl_coef=0.1, kl_estimator="k3")
    k3 = [1 - math.log(2.0), 0.0, 0.0, 0.5 + math.log(2.0) - 1, 0.0]
    torch.testing.assert_close(m["kl_ref"], torch.tensor(sum(k3) / 5))
    torch.testing.assert_close(m["kl_loss"], torch.tensor(sum(k3) / 5))
    torch.testing.assert_close(loss, torch.tensor(9.82 / 5 + 0.1 * sum(k3) / 5), rtol=0, atol=1e-6)
    # d k3 / d logprob = 1 - exp(d)
    dk3 = torch.tensor([[1 - 2.0, 0.0, 0.0], [0.0, 1 - 0.5, 0.0]])
    pg_grad = torch.tensor([[0.0, -0.7 / 5, 0.0], [0.0, 2 * 1.1 / 5, 2 * 4.0 / 5]])
    torch.testing.assert_close(grad, pg_grad + 0.1 * dk3 / 5, rtol=0, atol=1e-6)


def test_k2_loss_term_and_the_kl_ref_metric_which_stays_k3():
    d = torch.tensor([[math.log(2.0), 0.0, 5.0], [0.0, -math.log(2.0), 0.0]])  # ref - logprobs
    ref = OLD + RATIOS.log() + d
    loss, m, grad = _loss(ref_logprobs=ref, kl_coef=0.1, kl_estimator="k2")
    k2 = [0.5 * math.log(2.0) ** 2, 0.0, 0.0, 0.5 * math.log(2.0) ** 2, 0.0]
    k3 = [1 - math.log(2.0), 0.0, 0.0, 0.5 + math.log(2.0) - 1, 0.0]
    torch.testing.assert_close(m["kl_loss"], torch.tensor(sum(k2) / 5))
    torch.testing.assert_close(m["kl_ref"], torch.tensor(sum(k3) / 5))
    torch.testing.assert_close(loss, torch.tensor(9.82 / 5 + 0.1 * sum(k2) / 5), rtol=0, atol=1e-6)
    # d k2 / d logprob = -d
    dk2 = torch.tensor([[-math.log(2.0), 0.0, 0.0], [0.0, math.log(2.0), 0.0]])
    pg_grad = torch.tensor([[0.0, -0.7 / 5, 0.0], [0.0, 2 * 1.1 / 5, 2 * 4.0 / 5]])
    torch.testing.assert_close(grad, pg_grad + 0.1 * dk2 / 5, rtol=0, atol=1e-6)


def test_kl_coef_without_reference_is_an_error():
    with pytest.raises(ValueError, match="ref_logprobs"):
        _loss(kl_coef=0.1)


def test_no_loss_tokens_gives_zero_loss_and_zero_gradient():
    lp = _logprobs()
    loss, m = _policy_loss(lp, OLD, ADV, torch.zeros(2, 3), aggregation="seq_mean_token_mean")
    loss.backward()
    assert loss.item() == 0.0 and lp.grad.abs().sum().item() == 0.0
    assert m["num_tokens"].item() == 0.0 and m["ratio_min"].item() == float("inf")


def test_policy_loss_rejects_mismatched_shapes_naming_the_argument():
    with pytest.raises(ValueError, match="advantages"):
        _policy_loss(_logprobs(), OLD, torch.zeros(3), MASK)
    with pytest.raises(ValueError, match="loss_mask"):
        _policy_loss(_logprobs(), OLD, ADV, MASK[:, :2])
    with pytest.raises(ValueError, match="aggregation"):
        _policy_loss(_logprobs(), OLD, ADV, MASK, aggregation="sum")


# -----------------------------------------------------------------------------
# autograd of the written formula on random inputs, and the global denominator


def _written_formula(
    lp, old, adv, mask, eng, ref, agg, max_tokens, clip_low, clip_high, c, cap, kl_coef
):
    """The docstring's formula, one token at a time in plain Python arithmetic on scalars."""
    B, T = lp.shape
    seq_terms, total, n_tok = [], 0.0, 0
    for b in range(B):
        s, n = 0.0, 0
        for t in range(T):
            if not mask[b, t]:
                continue
            rho = torch.exp(lp[b, t] - old[b, t])
            a = float(adv[b])
            pg = torch.maximum(-a * rho, -a * torch.clamp(rho, 1 - clip_low, 1 + clip_high))
            if a < 0:
                pg = torch.minimum(pg, torch.tensor(-a * c, dtype=torch.float64))
            w = min(math.exp(float(old[b, t] - eng[b, t])), cap)
            d = ref[b, t] - lp[b, t]
            s = s + w * pg + kl_coef * (torch.exp(d) - d - 1)
            n += 1
        if n:
            seq_terms.append(s / n)
            total, n_tok = total + s, n_tok + n
    if agg == "token_mean":
        return total / n_tok
    if agg == "seq_mean_token_sum_norm":  # every sequence counts, empty or not
        return total / (B * max_tokens)
    return sum(seq_terms) / len(seq_terms)


@pytest.mark.parametrize("agg", grpo.AGGREGATIONS)
def test_gradient_matches_autograd_of_the_written_formula(agg):
    g = torch.Generator().manual_seed(0)
    B, T = 4, 7
    old = -torch.rand(B, T, generator=g, dtype=torch.float64) * 3
    lp_data = old + torch.randn(B, T, generator=g, dtype=torch.float64) * 0.4
    eng = old + torch.randn(B, T, generator=g, dtype=torch.float64) * 0.5
    ref = old + torch.randn(B, T, generator=g, dtype=torch.float64) * 0.3
    adv = torch.tensor([1.3, -0.7, -2.0, 0.4], dtype=torch.float64)
    mask = torch.rand(B, T, generator=g) < 0.7
    mask[3] = False  # a sequence with no loss token: counted by Dr.GRPO's normaliser only
    kw = dict(clip_low=0.2, clip_high=0.28, dual_clip=1.5, tis_cap=2.0, kl_coef=0.05)

    lp = lp_data.clone().requires_grad_(True)
    loss, _ = _policy_loss(
        lp,
        old,
        adv,
        mask,
        aggregation=agg,
        max_tokens=9,
        engine_logprobs=eng,
        ref_logprobs=ref,
        kl_estimator="k3",
        **kw,
    )
    loss.backward()
    lp_ref = lp_data.clone().requires_grad_(True)
    expected = _written_formula(lp_ref, old, adv, mask, eng, ref, agg, 9, 0.2, 0.28, 1.5, 2.0, 0.05)
    expected.backward()
    torch.testing.assert_close(loss, expected, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(lp.grad, lp_ref.grad, rtol=1e-12, atol=1e-12)
    assert lp.grad.abs().sum() > 0


@pytest.mark.parametrize("agg", grpo.AGGREGATIONS)
def test_micro_batches_with_global_denominator_sum_to_the_full_batch(agg):
    g = torch.Generator().manual_seed(1)
    B, T = 6, 5
    old = -torch.rand(B, T, generator=g, dtype=torch.float64)
    lp_data = old + torch.randn(B, T, generator=g, dtype=torch.float64) * 0.3
    adv = torch.randn(B, generator=g, dtype=torch.float64)
    mask = torch.rand(B, T, generator=g) < 0.6

    full = lp_data.clone().requires_grad_(True)
    loss_full, _ = _policy_loss(full, old, adv, mask, aggregation=agg, max_tokens=5)
    loss_full.backward()

    parts = [slice(0, 1), slice(1, 4), slice(4, 6)]
    denom = sum(grpo.loss_denominator(mask[p], agg, max_tokens=5) for p in parts)
    assert denom == grpo.loss_denominator(mask, agg, max_tokens=5)
    split = lp_data.clone().requires_grad_(True)
    total = 0.0
    for p in parts:
        loss, _ = _policy_loss(
            split[p], old[p], adv[p], mask[p], aggregation=agg, max_tokens=5, denominator=denom
        )
        loss.backward()
        total += loss.item()
    assert total == pytest.approx(loss_full.item(), abs=1e-12)
    torch.testing.assert_close(split.grad, full.grad, rtol=0, atol=1e-12)


def test_loss_denominator_counts_tokens_nonempty_sequences_or_all_sequences_times_max_tokens():
    mask = torch.tensor([[1, 1, 0], [0, 0, 0], [1, 0, 1]])
    assert grpo.loss_denominator(mask, "token_mean").item() == 4.0
    assert grpo.loss_denominator(mask, "seq_mean_token_mean").item() == 2.0
    assert grpo.loss_denominator(mask, "seq_mean_token_sum_norm", max_tokens=4).item() == 12.0


def test_metrics_of_two_optimizer_steps_are_summed_weighted_or_averaged_by_kind():
    first = {
        "num_tokens": 30.0,
        "nonfinite_tokens": 1.0,
        "pg_loss": 0.2,
        "kl_loss": 0.0,
        "ratio_mean": 1.0,
        "ratio_min": 1.0,
        "ratio_max": 1.0,
        "grad_norm": 2.0,
        "lr": 1e-6,
        "skipped_update": 0.0,
    }
    second = {
        "num_tokens": 10.0,
        "nonfinite_tokens": 2.0,
        "pg_loss": -0.4,
        "kl_loss": 0.0,
        "ratio_mean": 1.2,
        "ratio_min": 0.7,
        "ratio_max": 1.5,
        "grad_norm": 4.0,
        "lr": 2e-6,
        "skipped_update": 0.0,
    }
    skipped = {
        **second,
        "num_tokens": 0.0,
        "pg_loss": 0.0,
        "ratio_min": None,
        "ratio_max": None,
        "grad_norm": 0.0,
        "skipped_update": 1.0,
    }
    m = grpo.mean_over_minibatches([first, second])
    assert m["nonfinite_tokens"] == 3.0
    assert m["num_tokens"] == 40.0 and m["pg_loss"] == pytest.approx(-0.1, abs=1e-15)
    assert m["ratio_mean"] == pytest.approx(
        (30 * 1.0 + 10 * 1.2) / 40, abs=1e-15
    )  # token-weighted: 1.05
    assert (m["ratio_min"], m["ratio_max"], m["grad_norm"], m["lr"]) == (0.7, 1.5, 3.0, 1.5e-6)
    m = grpo.mean_over_minibatches([first, skipped])
    assert (m["ratio_min"], m["ratio_max"], m["skipped_update"], m["ratio_mean"]) == (
        1.0,
        1.0,
        0.5,
        1.0,
    )


def test_policy_loss_takes_its_knobs_from_the_grpo_config():
    # clip_high 0.5: row 0's ratio 1.5 is no longer clipped, -1.5 instead of -1.28
    inputs = grpo.LossInputs(_logprobs(), OLD, ADV, MASK)
    loss, _ = grpo.policy_loss(inputs, configs.GRPOConfig(clip_high=0.5))
    torch.testing.assert_close(
        loss, torch.tensor((-1.5 - 0.7 + 1.6 + 2.2 + 8.0) / 5), rtol=0, atol=1e-6
    )


def test_drgrpo_constant_is_the_episode_generation_budget_within_the_context():
    # Liu et al. 2025 divide by the maximum response length: turns x tokens per turn (the CPU
    # preset: 3 x 128 = 384), never more than the context holds
    assert grpo.generation_budget(3, 128, 2048) == 384
    assert grpo.generation_budget(32, 4096, 32768) == 32768
    assert grpo.generation_budget(1, 1024, 8192) == 1024
