"""KV-cache decoding for model.py's Transformer (gpt-fast style): the generation engine's side of the model.

setup_cache gives every attention layer a preallocated KVCache; prefill writes a prompt's K/V into a cache slot;
decode_one_token / decode_tokens step many slots at once; sample_tokens draws the next token from their logits
(the sampling convention every engine follows). The step reads every weight once, so on CPU its speed
is the speed of the weight matmuls at a handful of rows: `_linear` picks the fastest layout per row count
(measured in bench/bench_generate.py --linear). Training never comes here: it uses Transformer.forward.
"""

from __future__ import annotations

import weakref

import torch
import torch.nn.functional as F

from model import Block, CacheStep, KVCache, RMSNorm, Transformer, cache_step

def setup_cache(model: Transformer, max_batch: int, max_seq_len: int) -> None:
    """Allocate per-layer K/V caches: 2 x layers x max_batch x max_seq_len x n_kv x head_dim elements
    in the model's parameter dtype/device. Slots are integers in [0, max_batch). Replaces any old cache.
    """
    cfg = model.config
    if max_batch < 1 or max_seq_len < 1:
        raise ValueError(f"max_batch={max_batch}, max_seq_len={max_seq_len}: both must be >= 1")
    if max_seq_len > cfg.max_position_embeddings:
        raise ValueError(f"max_seq_len={max_seq_len} exceeds config max_position_embeddings={cfg.max_position_embeddings}")
    ref = model.model.embed_tokens.weight
    for block in model.model.layers:
        block.self_attn.kv_cache = KVCache(max_batch, max_seq_len, cfg.num_key_value_heads, cfg.head_dim,
                                           ref.dtype, ref.device)
    model.cache_shape = (max_batch, max_seq_len)
    fuse_projections(model)


@torch.no_grad()
def fuse_projections(model: Transformer) -> None:
    """Give each block one [(H + 2 kv) * hd, D] q/k/v weight and one [2 I, D] gate/up weight for the KV-cache
    path (one matmul instead of three, then two). The parameters become row views of these tensors, so
    copying into them (load_weights, an optimizer step) updates the fused ones too; no extra memory.
    Idempotent. Moving or casting the model afterwards (.to) breaks the aliasing: call it again."""
    for block in model.model.layers:
        a, m = block.self_attn, block.mlp
        for owner, name, linears in ((a, "qkv_weight", (a.q_proj, a.k_proj, a.v_proj)),
                                     (m, "gate_up_weight", (m.gate_proj, m.up_proj))):
            fused = getattr(owner, name, None)
            if fused is not None and _aliased(fused, linears):
                continue
            fused = torch.cat([lin.weight for lin in linears])
            row = 0
            for lin in linears:
                n = lin.weight.shape[0]
                lin.weight.data = fused[row:row + n]
                row += n
            setattr(owner, name, fused)  # the parameters' new data_ptrs make packed_weights pack again


def _aliased(fused: torch.Tensor, linears) -> bool:
    """Whether the linears' weights are consecutive row views of `fused`."""
    row = 0
    for lin in linears:
        w = lin.weight
        if w.untyped_storage().data_ptr() != fused.untyped_storage().data_ptr() or w.data_ptr() != fused[row].data_ptr():
            return False
        row += w.shape[0]
    return row == fused.shape[0]


def _rms(norm: RMSNorm, x: torch.Tensor) -> torch.Tensor:
    """RMSNorm; fp32 through F.rms_norm (one kernel, bitwise equal to RMSNorm.forward for fp32)."""
    if x.dtype == torch.float32:
        return F.rms_norm(x, norm.weight.shape, norm.weight, norm.eps)
    return norm(x)


PACK_ROWS = 16  # oneDNN's batch-size hint for the packed layout (measured best of 8 and 16 at 1..16 rows)
_PACKED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> (key, {id(weight): packed copy})


def packed_weights(model: Transformer) -> dict[int, torch.Tensor] | None:
    """oneDNN-packed copies of the decode-step weights (q/k/v, o, gate/up, down, lm_head), keyed by id() of the
    weight, for `_linear` on CPU in fp32; None on other devices or dtypes, or without oneDNN. Built on first use
    and rebuilt when a parameter was written in place (its Tensor._version: `copy_` in TorchEngine.load_weights,
    an optimizer step) or replaced (its data_ptr: `.to()`, re-fusing). Writes that bypass both, `p.data.copy_(t)`,
    are not seen: call `forget_packed(model)` after them. Held outside the model (no state-dict, deepcopy or
    pickle effects). Costs one more copy of those weights (+0.75 GB RSS for SmolLM2-135M, steady over rebuilds)
    and ~0.2 s per rebuild."""
    head = model.lm_head.weight
    if head.device.type != "cpu" or head.dtype != torch.float32 or not torch.backends.mkldnn.is_available():
        forget_packed(model)
        return None
    key = tuple((p.data_ptr(), p._version) for p in model.parameters())
    cached = _PACKED.get(model)
    if cached is None or cached[0] != key:
        cached = None  # with the registry's entry, the last reference: the old copies are freed before the new
        forget_packed(model)
        ws = [head] + [w for b in model.model.layers for w in (b.self_attn.qkv_weight, b.self_attn.o_proj.weight,
                                                               b.mlp.gate_up_weight, b.mlp.down_proj.weight)]
        cached = _PACKED[model] = (key, {id(w): torch.ops.mkldnn._reorder_linear_weight(w, PACK_ROWS) for w in ws})
    return cached[1]


def forget_packed(model: Transformer) -> None:
    """Drop the model's packed weight copies (the next decode call packs the current weights again)."""
    _PACKED.pop(model, None)


def _linear(x: torch.Tensor, w: torch.Tensor, packed: dict[int, torch.Tensor] | None = None) -> torch.Tensor:
    """F.linear(x, w) for the KV-cache path, x [..., K], w [N, K] -> [..., N], by the fastest layout for n rows on
    CPU in fp32 (bench/bench_generate.py --linear; per decode step vs F.linear):
      n <= 2: (w @ x^T)^T, one row doubled if n == 1: MKL streams that layout where F.linear takes a slower
              GEMV/small-GEMM path (1.3x at batch 1, 2.3x at batch 2);
      n >= 3 with `packed` (packed_weights): oneDNN on the pre-packed weight (1.3-2.2x at 3..8 rows; the weight
              matmuls alone 1.5x at 32 rows, 1.2x at a 134-token prefill, bench/bench_generate.py --linear);
      otherwise (n <= 5, or 8 for a vocab-sized w, without packed) (w @ x^T)^T, else F.linear.
    Same values up to fp32 rounding order."""
    n = x.numel() // x.shape[-1]
    if x.dtype != torch.float32 or x.device.type != "cpu":
        return F.linear(x, w)
    rows = x.reshape(n, -1)
    pw = packed.get(id(w)) if packed is not None and n >= 3 else None
    if pw is not None:
        out = torch.ops.mkldnn._linear_pointwise(rows, pw, None, "none", [], "")
    elif n <= (8 if w.shape[0] >= 8192 else 5):
        out = (w @ (rows.repeat(2, 1) if n == 1 else rows).t()).t()[:n].contiguous()  # a stride-0 expand is slow
    else:
        return F.linear(x, w)
    return out.view(*x.shape[:-1], w.shape[0])


def _rope(x: torch.Tensor, cos: torch.Tensor, signed_sin: torch.Tensor) -> torch.Tensor:
    """apply_rope with rotate_half(x) * sin written as roll(x, hd/2) * [-sin, sin] (bitwise the same result).
    x [B, T, heads, hd]; cos, signed_sin [B, T, 1, hd]."""
    return x * cos + x.roll(x.shape[-1] // 2, -1) * signed_sin


def _cache_block(block: Block, x: torch.Tensor, cos, signed_sin, ctx: CacheStep, packed) -> torch.Tensor:
    """Block._forward on the KV cache with the fused projections (`fuse_projections`): x [B, T, D] -> [B, T, D]."""
    a, mlp = block.self_attn, block.mlp
    B, T, _ = x.shape
    H, kv, hd = a.n_heads, a.n_kv, a.head_dim
    qkv = _linear(_rms(block.input_layernorm, x), a.qkv_weight, packed)  # [B, T, (H + 2 kv) hd]
    v = qkv[..., (H + kv) * hd:].view(B, T, kv, hd)
    if hasattr(a, "q_norm"):
        q = _rope(a.q_norm(qkv[..., :H * hd].view(B, T, H, hd)), cos, signed_sin)
        k = _rope(a.k_norm(qkv[..., H * hd:(H + kv) * hd].view(B, T, kv, hd)), cos, signed_sin)
    else:  # q and k rotated together
        qk = _rope(qkv[..., :(H + kv) * hd].view(B, T, H + kv, hd), cos, signed_sin)
        q, k = qk[:, :, :H], qk[:, :, H:]
    y = a._attend_cache(q, k, v, ctx)
    x = x + _linear(y.reshape(B, T, H * hd), a.o_proj.weight, packed)
    gate, up = _linear(_rms(block.post_attention_layernorm, x), mlp.gate_up_weight, packed).chunk(2, dim=-1)
    return x + _linear(F.silu(gate).mul_(up), mlp.down_proj.weight, packed)


def _cache_hidden(model: Transformer, input_ids: torch.Tensor, position_ids: torch.Tensor, ctx: CacheStep, packed):
    """Transformer.hidden_states on the KV cache: final-norm hidden states [B, T, D]. packed: packed_weights(model)."""
    x = model.model.embed_tokens(input_ids)
    cos, sin = model.rope(position_ids, x.dtype)  # [B, T, hd], both halves equal
    half = sin.shape[-1] // 2
    signed_sin = torch.cat((-sin[..., :half], sin[..., half:]), dim=-1)[:, :, None]
    cos = cos[:, :, None]
    for block in model.model.layers:
        x = _cache_block(block, x, cos, signed_sin, ctx, packed)
    return _rms(model.model.norm, x)


def _check_cache(model: Transformer, slots: list[int], last_position: int) -> None:
    shape = getattr(model, "cache_shape", None)
    if shape is None:
        raise RuntimeError("KV cache not set up: call setup_cache(model, max_batch, max_seq_len) first")
    if min(slots) < 0 or max(slots) >= shape[0] or len(set(slots)) != len(slots):
        raise ValueError(f"slots {slots}: must be distinct and inside [0, max_batch={shape[0]})")
    if last_position >= shape[1]:
        raise ValueError(f"position {last_position} >= cache max_seq_len={shape[1]}")


@torch.no_grad()
def prefill(model: Transformer, input_ids: torch.Tensor, slot: int, start_pos: int) -> torch.Tensor:
    """Run tokens input_ids int64 [L] at positions start_pos..start_pos+L-1 of cache `slot`.

    Writes their K/V into the slot and returns the last token's logits, fp32 [V]. start_pos > 0
    continues the prefix already cached in that slot (positions < start_pos are reused, not recomputed).
    Raises ValueError for an empty input, a bad slot or a position beyond the cache.
    """
    if input_ids.dim() != 1 or input_ids.numel() == 0:
        raise ValueError(f"input_ids must be a non-empty 1-D tensor, got shape {tuple(input_ids.shape)}")
    device = model.model.embed_tokens.weight.device
    L = input_ids.numel()
    _check_cache(model, [slot], start_pos + L - 1)
    positions = torch.arange(start_pos, start_pos + L, device=device)[None]
    ctx = cache_step([slot], positions, model.model.embed_tokens.weight.dtype)
    packed = packed_weights(model)
    h = _cache_hidden(model, input_ids.to(device)[None], positions, ctx, packed)
    return _linear(h[0, -1], model.lm_head.weight, packed).float()


@torch.no_grad()
def copy_prefix(model: Transformer, src: int, dst: int, length: int) -> None:
    """Copy the K/V of positions 0..length-1 from cache slot src to slot dst in every layer (prefix sharing:
    requests that share a prompt prefix, e.g. a GRPO group or a common system prompt, compute it once).
    Costs 2 x layers x length x n_kv x head_dim element copies. Raises ValueError for bad slots or length."""
    _check_cache(model, [src], length - 1)
    _check_cache(model, [dst], length - 1)
    for block in model.model.layers:
        cache = block.self_attn.kv_cache
        cache.k[dst, :, :length] = cache.k[src, :, :length]
        cache.v[dst, :, :length] = cache.v[src, :, :length]


@torch.no_grad()
def decode_one_token(model: Transformer, tokens: torch.Tensor, slots: torch.Tensor | list[int],
                     positions: torch.Tensor) -> torch.Tensor:
    """One decoding step for B sequences at once, each in its own slot at its own length: tokens int64 [B] (the
    newest token of each), slots int64 [B] or B distinct ints (sorted consecutive slots read the cache as views),
    positions int64 [B] (= tokens already cached in the slot). Writes their K/V; returns logits fp32 [B, V].
    Raises ValueError for mismatched shapes, bad or repeated slots, or a position beyond the cache."""
    if not tokens.dim() == positions.dim() == 1:
        raise ValueError(f"tokens {tuple(tokens.shape)} and positions {tuple(positions.shape)} must be 1-D")
    return decode_tokens(model, tokens[:, None], slots, positions[:, None])[:, 0]


@torch.no_grad()
def decode_tokens(model: Transformer, tokens: torch.Tensor, slots: torch.Tensor | list[int],
                  positions: torch.Tensor) -> torch.Tensor:
    """`decode_one_token` for T new tokens per sequence (T = 1 + draft tokens when verifying a speculation).

    tokens int64 [B, T] at positions int64 [B, T] (consecutive per row, starting at the number of tokens already
    cached in the slot); each sees the cache and the earlier new tokens of its row. Writes all their K/V (those a
    caller drops are overwritten later); returns logits fp32 [B, T, V], [b, t] for the token after tokens[b, t].
    Raises ValueError as decode_one_token."""
    slots = slots.tolist() if isinstance(slots, torch.Tensor) else list(slots)
    if not (tokens.dim() == 2 and tokens.shape == positions.shape and tokens.shape[0] == len(slots)):
        raise ValueError(f"tokens {tuple(tokens.shape)}, slots ({len(slots)},), positions "
                         f"{tuple(positions.shape)} must be [B, T], B ints and [B, T]")
    device = model.model.embed_tokens.weight.device
    positions = positions.to(device)
    ctx = cache_step(slots, positions, model.model.embed_tokens.weight.dtype)
    _check_cache(model, slots, ctx.max_len - 1)
    packed = packed_weights(model)
    h = _cache_hidden(model, tokens.to(device), positions, ctx, packed)
    return _linear(h, model.lm_head.weight, packed).float()


def sample_tokens(logits: torch.Tensor, temperature: torch.Tensor, top_p: torch.Tensor, top_k: torch.Tensor,
                  uniforms: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample one token per row by inverse-CDF with the given uniforms.

    logits fp32 [B, V]; temperature fp32 [B] (0 = greedy); top_p fp32 [B]; top_k int64 [B] (0 = off);
    uniforms fp32 [B] in [0, 1). Returns (tokens int64 [B], logprobs fp32 [B]).

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
    # Each row by its own parameters only, so a request samples the same tokens whatever it is batched with:
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
        # top-k: sort just those, plus 64 to see ties at the boundary (a full sort cost ~10% of a step).
        kmax = int(top_k[cut].max()) if bool((top_k[cut] > 0).all()) else V
        n = min(V, kmax + 64)
        sorted_logp, order = logp.topk(n, dim=-1) if n < V else logp.sort(dim=-1, descending=True)
        probs = sorted_logp.exp()
        # vLLM's rule (v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p): top-k keeps every token >= the
        # k-th largest value (ties included), then top-p runs on the top-k renormalised distribution.
        kth = sorted_logp.gather(1, (top_k.clamp(min=1, max=n) - 1)[:, None])
        keep = (top_k[:, None] <= 0) | (sorted_logp >= kth)
        pk = torch.where(keep, probs, torch.zeros_like(probs))
        pk = pk / pk.sum(-1, keepdim=True)
        keep &= (pk.cumsum(-1) - pk) < top_p[:, None]  # nucleus: top-k mass before this token < top_p
        keep[:, 0] = True  # the most likely token always stays
        cdf = torch.where(keep, probs, torch.zeros_like(probs)).cumsum(-1)
        choice = torch.searchsorted(cdf, (uniforms * cdf[:, -1])[:, None]).clamp_(max=n - 1)
        tokens = torch.where(cut, order.gather(1, choice)[:, 0], tokens)
        # log q = log p - log(kept mass), read in sorted order
        logprobs = torch.where(cut, sorted_logp.gather(1, choice)[:, 0] - cdf[:, -1].log(), logprobs)
    return tokens, logprobs
