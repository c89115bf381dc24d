"""KV-cache decoding for model.py's Transformer (gpt-fast style): the engine's side of the model.

setup_cache gives every attention layer a preallocated KVCache; prefill writes a prompt's K/V into a
cache slot; decode_one_token / decode_tokens step many slots at once; sample_tokens draws the next
token from their logits (the sampling convention every engine follows). A step is the learner's own
forward (`Transformer.hidden_states`: Block, Attention, MLP) on a `CacheStep`, then the lm_head.

The fast path sits at the edge: with `fast=True` (`policy.engine_fast_cpu`, the default) a CPU model
steps through engines/cpu_fast.py instead (fused projections, oneDNN-packed weights): the same
greedy tokens, faster on CPU. Training never comes here (Transformer.forward).
"""

from __future__ import annotations

import torch

from engines import cpu_fast
from model import CacheStep, KVCache, Transformer, cache_step, truncated_support


def setup_cache(model: Transformer, max_batch: int, max_seq_len: int, fast: bool = False) -> None:
    """Allocate per-layer K/V caches: 2 x layers x max_batch x max_seq_len x n_kv x head_dim
    elements in the model's parameter dtype/device. Slots are integers in [0, max_batch). Replaces
    any old cache.
    fast: step through cpu_fast.py when the model is on the CPU (elsewhere the plain path runs).
    Raises ValueError for sizes < 1 or max_seq_len beyond the model's max_position_embeddings."""
    cfg = model.config
    if max_batch < 1 or max_seq_len < 1:
        raise ValueError(f"max_batch={max_batch}, max_seq_len={max_seq_len}: both must be >= 1")
    if max_seq_len > cfg.max_position_embeddings:
        raise ValueError(
            f"max_seq_len={max_seq_len} exceeds config "
            f"max_position_embeddings={cfg.max_position_embeddings}"
        )
    ref = model.model.embed_tokens.weight
    for block in model.model.layers:
        block.self_attn.kv_cache = KVCache(
            max_batch, max_seq_len, cfg.num_key_value_heads, cfg.head_dim, ref.dtype, ref.device
        )
    model.cache_shape = (max_batch, max_seq_len)
    model.cache_fast = fast and ref.device.type == "cpu"
    if model.cache_fast:
        cpu_fast.fuse_projections(model)


def free_cache(model: Transformer) -> None:
    """Drop the K/V caches and the fast path's packed weight copies (cpu_fast.forget_packed): their
    memory goes back (2 x layers x max_batch x max_seq_len x n_kv x head_dim elements, plus one
    copy of the decode weights). setup_cache allocates them again; no slot keeps its K/V."""
    for block in model.model.layers:
        block.self_attn.kv_cache = None
    model.cache_shape = None
    cpu_fast.forget_packed(model)


def logits(
    model: Transformer,
    input_ids: torch.Tensor,
    position_ids: torch.Tensor,
    ctx: CacheStep,
    last_only: bool = False,
) -> torch.Tensor:
    """Logits fp32 [B, T, V] of tokens int64 [B, T] at positions [B, T] on the cache (ctx); T = 1
    with last_only (the last token's only, as prefill needs)."""
    if model.cache_fast:
        return cpu_fast.logits(model, input_ids, position_ids, ctx, last_only)
    h = model.hidden_states(input_ids, position_ids, ctx)
    return model.lm_head(h[:, -1:] if last_only else h).float()


def _check_cache(model: Transformer, slots: list[int], last_position: int) -> None:
    shape = getattr(model, "cache_shape", None)
    if shape is None:
        raise RuntimeError(
            "KV cache not set up: call setup_cache(model, max_batch, max_seq_len) first"
        )
    if min(slots) < 0 or max(slots) >= shape[0] or len(set(slots)) != len(slots):
        raise ValueError(f"slots {slots}: must be distinct and inside [0, max_batch={shape[0]})")
    if last_position >= shape[1]:
        raise ValueError(f"position {last_position} >= cache max_seq_len={shape[1]}")


@torch.no_grad()
def prefill(model: Transformer, input_ids: torch.Tensor, slot: int, start_pos: int) -> torch.Tensor:
    """Run tokens input_ids int64 [L] at positions start_pos..start_pos+L-1 of cache `slot`.

    Writes their K/V into the slot and returns the last token's logits, fp32 [V]. start_pos > 0
    continues the prefix already cached in that slot (positions < start_pos are reused, not
    recomputed). Raises ValueError for an empty input, a bad slot or a position beyond the cache.
    """
    if input_ids.dim() != 1 or input_ids.numel() == 0:
        raise ValueError(
            f"input_ids must be a non-empty 1-D tensor, got shape {tuple(input_ids.shape)}"
        )
    device = model.model.embed_tokens.weight.device
    L = input_ids.numel()
    _check_cache(model, [slot], start_pos + L - 1)
    positions = torch.arange(start_pos, start_pos + L, device=device)[None]
    ctx = cache_step([slot], positions, model.model.embed_tokens.weight.dtype)
    return logits(model, input_ids.to(device)[None], positions, ctx, last_only=True)[0, 0]


@torch.no_grad()
def copy_prefix(model: Transformer, src: int, dst: int, length: int) -> None:
    """Copy the K/V of positions 0..length-1 from cache slot src to slot dst in every layer (prefix
    sharing: requests that share a prompt prefix, e.g. a GRPO group or a common system prompt,
    compute it once). Costs 2 x layers x length x n_kv x head_dim element copies. Raises ValueError
    for bad slots or length."""
    _check_cache(model, [src], length - 1)
    _check_cache(model, [dst], length - 1)
    for block in model.model.layers:
        cache = block.self_attn.kv_cache
        cache.k[dst, :, :length] = cache.k[src, :, :length]
        cache.v[dst, :, :length] = cache.v[src, :, :length]


@torch.no_grad()
def decode_one_token(
    model: Transformer,
    tokens: torch.Tensor,
    slots: torch.Tensor | list[int],
    positions: torch.Tensor,
) -> torch.Tensor:
    """One decoding step for B sequences at once, each in its own slot at its own length: tokens
    int64 [B] (the newest token of each), slots int64 [B] or B distinct ints (sorted consecutive
    slots read the cache as views), positions int64 [B] (= tokens already cached in the slot).
    Writes their K/V; returns logits fp32 [B, V]. Raises ValueError for mismatched shapes, bad or
    repeated slots, or a position beyond the cache."""
    if not tokens.dim() == positions.dim() == 1:
        raise ValueError(
            f"tokens {tuple(tokens.shape)} and positions {tuple(positions.shape)} must be 1-D"
        )
    return decode_tokens(model, tokens[:, None], slots, positions[:, None])[:, 0]


@torch.no_grad()
def decode_tokens(
    model: Transformer,
    tokens: torch.Tensor,
    slots: torch.Tensor | list[int],
    positions: torch.Tensor,
) -> torch.Tensor:
    """`decode_one_token` for T new tokens per sequence (T = 1 + draft tokens when verifying a
    speculation).

    tokens int64 [B, T] at positions int64 [B, T] (consecutive per row, starting at the number of
    tokens already cached in the slot); each sees the cache and the earlier new tokens of its row.
    Writes all their K/V (those a caller drops are overwritten later); returns logits fp32 [B, T,
    V], [b, t] for the token after tokens[b, t]. Raises ValueError as decode_one_token."""
    slots = slots.tolist() if isinstance(slots, torch.Tensor) else list(slots)
    if not (
        tokens.dim() == 2 and tokens.shape == positions.shape and tokens.shape[0] == len(slots)
    ):
        raise ValueError(
            f"tokens {tuple(tokens.shape)}, slots ({len(slots)},), positions "
            f"{tuple(positions.shape)} must be [B, T], B ints and [B, T]"
        )
    device = model.model.embed_tokens.weight.device
    positions = positions.to(device)
    ctx = cache_step(slots, positions, model.model.embed_tokens.weight.dtype)
    _check_cache(model, slots, ctx.max_len - 1)
    return logits(model, tokens.to(device), positions, ctx)


def sample_tokens(
    logits: torch.Tensor,
    temperature: torch.Tensor,
    top_p: torch.Tensor,
    top_k: torch.Tensor,
    uniforms: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample one token per row by inverse-CDF with the given uniforms.

    logits fp32 [B, V]; temperature fp32 [B] (0 = greedy); top_p fp32 [B]; top_k int64 [B] (0 =
    off); uniforms fp32 [B] in [0, 1). Returns (tokens int64 [B], logprobs fp32 [B]).

    The sampling distribution of a row (the convention every engine follows; vLLM's "processed_logprobs"):
        p = softmax(logits / T);  keep the tokens >= the top_k-th largest p (ties kept);  renormalise them to
        pk, then keep, most likely first, each whose preceding pk mass is < top_p (nucleus, Holtzman et al.
        2020);  q = p * keep / sum(p * keep).  Top-k then top-p on the renormalised top-k: vLLM 0.30.0's
        order (v1/sample/ops/topk_topp_sampler.py), so TorchEngine and VLLMEngine sample the same set.
    logprob = log q[token], the log-prob of the sampled token under the distribution it was drawn from, so
    importance ratios pi_train / pi_engine compare the same distribution (equal to the learner's
    log_softmax(logits / T)[token] when top-k and top-p are off). Greedy rows (T = 0) return the argmax
    and log_softmax(logits)[token] (temperature 1, no truncation).
    """
    B, V = logits.shape
    greedy = temperature <= 0
    t = torch.where(greedy, torch.ones_like(temperature), temperature)
    logp = torch.log_softmax(logits / t[:, None], dim=-1)
    tokens = logits.argmax(-1)
    logprobs = logp.gather(1, tokens[:, None])[:, 0]
    # Each row by its own parameters only, so a request samples the same tokens whatever its batch:
    # untruncated rows invert the CDF in vocabulary order, truncated ones in sorted order.
    cut = ~greedy & ((top_k > 0) | (top_p < 1))
    full = ~greedy & ~cut
    if bool(full.any()):
        cdf = logp.exp().cumsum(-1)
        choice = torch.searchsorted(cdf, (uniforms * cdf[:, -1])[:, None]).clamp_(max=V - 1)[:, 0]
        tokens = torch.where(full, choice, tokens)
        logprobs = torch.where(full, logp.gather(1, choice[:, None])[:, 0], logprobs)
    if bool(cut.any()):
        # Only the max(top_k) most likely tokens (and their ties) can be kept when every truncated row has a
        # top-k: truncated_support sorts just those (a full sort cost ~10% of a step). The rule is the
        # learner's too (model.log_kept_mass), so its TIS weight compares the same distribution.
        sorted_logp, order, keep = truncated_support(logp, top_p, top_k, rows=cut)
        n = sorted_logp.shape[1]
        probs = sorted_logp.exp()
        cdf = torch.where(keep, probs, torch.zeros_like(probs)).cumsum(-1)
        choice = torch.searchsorted(cdf, (uniforms * cdf[:, -1])[:, None]).clamp_(max=n - 1)
        tokens = torch.where(cut, order.gather(1, choice)[:, 0], tokens)
        # log q = log p - log(kept mass), read in sorted order
        logprobs = torch.where(
            cut, sorted_logp.gather(1, choice)[:, 0] - cdf[:, -1].log(), logprobs
        )
    return tokens, logprobs
