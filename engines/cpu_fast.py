"""The CPU fast path of the KV-cache decode step: decode.py's plain step, computed faster on CPU.

decode.py's readable path runs `Transformer.hidden_states` (the learner's Block / Attention / MLP)
on the KV cache. On 2 CPU cores a decode step of a 135M model costs what its weight matmuls cost at
a handful of rows, where F.linear is slow, so with `policy.engine_fast_cpu` (the default) a CPU
TorchEngine steps through this module instead:
- `fuse_projections`: one q/k/v and one gate/up weight per block (1 matmul for 3, 1 for 2);
- `_linear`: oneDNN-packed weights (`packed_weights`, private `torch.ops.mkldnn` ops) from 4 rows;
- `_block`: the block forward written out for those fused weights (F.rms_norm, RoPE as a roll).
Greedy tokens equal the plain path's (tests/test_model.py); logits agree to fp32 rounding (~1e-5).
Speed against the plain path: BENCHMARKS.md, "Fast CPU decode path"
(`bench/bench_generate.py --baseline plain`).
"""

from __future__ import annotations

import weakref

import torch
import torch.nn.functional as F

from model import Block, CacheStep, RMSNorm, Transformer


@torch.no_grad()
def fuse_projections(model: Transformer) -> None:
    """Give each block one [(H + 2 kv) * hd, D] q/k/v weight and one [2 I, D] gate/up weight.

    The parameters become row views of these tensors, so copying into them (load_weights, an
    optimizer step) updates the fused ones too; no extra memory. Idempotent. Moving or casting the
    model afterwards (.to) breaks the aliasing: call it again (decode.setup_cache does)."""
    for block in model.model.layers:
        a, m = block.self_attn, block.mlp
        for owner, name, linears in (
            (a, "qkv_weight", (a.q_proj, a.k_proj, a.v_proj)),
            (m, "gate_up_weight", (m.gate_proj, m.up_proj)),
        ):
            fused = getattr(owner, name, None)
            if fused is not None and _aliased(fused, linears):
                continue
            fused = torch.cat([lin.weight for lin in linears])
            row = 0
            for lin in linears:
                n = lin.weight.shape[0]
                lin.weight.data = fused[row : row + n]
                row += n
            setattr(owner, name, fused)  # new data_ptrs: packed_weights packs again


def _aliased(fused: torch.Tensor, linears) -> bool:
    """Whether the linears' weights are consecutive row views of `fused`."""
    row = 0
    for lin in linears:
        w = lin.weight
        same_storage = w.untyped_storage().data_ptr() == fused.untyped_storage().data_ptr()
        if not same_storage or w.data_ptr() != fused[row].data_ptr():
            return False
        row += w.shape[0]
    return row == fused.shape[0]


PACK_ROWS = 16  # oneDNN's batch-size hint for the packed layout (best of 8 and 16 at 1..16 rows)
_PACKED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> (key, {id(w): packed})


def packed_weights(model: Transformer) -> dict[int, torch.Tensor] | None:
    """oneDNN-packed copies of the decode-step weights (q/k/v, o, gate/up, down, lm_head), by id().

    For `_linear` on CPU in fp32; None on other devices or dtypes, or without oneDNN. Built on first
    use and rebuilt when a parameter was written in place (its Tensor._version: `copy_` in
    TorchEngine.load_weights, an optimizer step) or replaced (its data_ptr: `.to()`, re-fusing).
    Writes that bypass both, `p.data.copy_(t)`, are not seen: call `forget_packed(model)` after
    them. Held outside the model (no state-dict, deepcopy or pickle effects). Costs one more copy of
    those weights (+0.75 GB RSS for SmolLM2-135M, steady over rebuilds) and ~0.2 s per rebuild."""
    head = model.lm_head.weight
    if (
        head.device.type != "cpu"
        or head.dtype != torch.float32
        or not torch.backends.mkldnn.is_available()
    ):
        forget_packed(model)
        return None
    key = tuple((p.data_ptr(), p._version) for p in model.parameters())
    cached = _PACKED.get(model)
    if cached is None or cached[0] != key:
        cached = None  # with the registry's entry, the last reference: old copies freed before new
        forget_packed(model)
        ws = [head]
        for b in model.model.layers:
            ws += [
                b.self_attn.qkv_weight,
                b.self_attn.o_proj.weight,
                b.mlp.gate_up_weight,
                b.mlp.down_proj.weight,
            ]
        reorder = torch.ops.mkldnn._reorder_linear_weight
        cached = _PACKED[model] = (key, {id(w): reorder(w, PACK_ROWS) for w in ws})
    return cached[1]


def forget_packed(model: Transformer) -> None:
    """Drop the model's packed weight copies (the next decode call packs the current weights)."""
    _PACKED.pop(model, None)


def _linear(
    x: torch.Tensor, w: torch.Tensor, packed: dict[int, torch.Tensor] | None = None
) -> torch.Tensor:
    """F.linear(x, w), x [..., K], w [N, K] -> [..., N], by the fastest layout for n rows, CPU fp32.

    n >= 4 with `packed` (packed_weights): oneDNN on the pre-packed weight, 1.27x at 4 rows to 1.45x
    at 8 rows per decode step against F.linear; else F.linear, which at 1-3 rows beat oneDNN and
    the (W @ x^T)^T layout (0.46x at 1 row, measured 2026-12-01; bench/bench_generate.py --linear).
    Same values up to fp32 rounding order."""
    n = x.numel() // x.shape[-1]
    pw = packed.get(id(w)) if packed is not None and n >= 4 else None
    if pw is None or x.dtype != torch.float32 or x.device.type != "cpu":
        return F.linear(x, w)
    out = torch.ops.mkldnn._linear_pointwise(x.reshape(n, -1), pw, None, "none", [], "")
    return out.view(*x.shape[:-1], w.shape[0])


def _rms(norm: RMSNorm, x: torch.Tensor) -> torch.Tensor:
    """RMSNorm; fp32 through F.rms_norm (one kernel, bitwise equal to RMSNorm.forward for fp32)."""
    if x.dtype == torch.float32:
        return F.rms_norm(x, norm.weight.shape, norm.weight, norm.eps)
    return norm(x)


def _rope(x: torch.Tensor, cos: torch.Tensor, signed_sin: torch.Tensor) -> torch.Tensor:
    """model.apply_rope with rotate_half(x) * sin as roll(x, hd/2) * [-sin, sin] (bitwise the same).
    x [B, T, heads, hd]; cos, signed_sin [B, T, 1, hd]."""
    return x * cos + x.roll(x.shape[-1] // 2, -1) * signed_sin


def _block(block: Block, x: torch.Tensor, cos, signed_sin, ctx: CacheStep, packed) -> torch.Tensor:
    """Block.forward on the KV cache with the fused projections: x [B, T, D] -> [B, T, D]."""
    a, mlp = block.self_attn, block.mlp
    B, T, _ = x.shape
    H, kv, hd = a.n_heads, a.n_kv, a.head_dim
    qkv = _linear(_rms(block.input_layernorm, x), a.qkv_weight, packed)  # [B, T, (H + 2 kv) hd]
    v = qkv[..., (H + kv) * hd :].view(B, T, kv, hd)
    if hasattr(a, "q_norm"):
        q = _rope(a.q_norm(qkv[..., : H * hd].view(B, T, H, hd)), cos, signed_sin)
        k = _rope(a.k_norm(qkv[..., H * hd : (H + kv) * hd].view(B, T, kv, hd)), cos, signed_sin)
    else:  # no per-head norm: q and k rotated together
        qk = _rope(qkv[..., : (H + kv) * hd].view(B, T, H + kv, hd), cos, signed_sin)
        q, k = qk[:, :, :H], qk[:, :, H:]
    y = a._attend_cache(q, k, v, ctx)
    x = x + _linear(y.reshape(B, T, H * hd), a.o_proj.weight, packed)
    gate, up = _linear(_rms(block.post_attention_layernorm, x), mlp.gate_up_weight, packed).chunk(
        2, -1
    )
    return x + _linear(F.silu(gate).mul_(up), mlp.down_proj.weight, packed)


def hidden_states(
    model: Transformer, input_ids: torch.Tensor, position_ids: torch.Tensor, ctx: CacheStep, packed
) -> torch.Tensor:
    """Transformer.hidden_states on the KV cache: final-norm hidden states [B, T, D]."""
    x = model.model.embed_tokens(input_ids)
    cos, sin = model.rope(position_ids, x.dtype)  # [B, T, hd], both halves equal
    half = sin.shape[-1] // 2
    signed_sin = torch.cat((-sin[..., :half], sin[..., half:]), dim=-1)[:, :, None]
    cos = cos[:, :, None]
    for block in model.model.layers:
        x = _block(block, x, cos, signed_sin, ctx, packed)
    return _rms(model.model.norm, x)


def logits(
    model: Transformer,
    input_ids: torch.Tensor,
    position_ids: torch.Tensor,
    ctx: CacheStep,
    last_only: bool,
) -> torch.Tensor:
    """decode.logits on the fast path: fp32 [B, T, V] (T = 1 with last_only: the last token's
    only)."""
    packed = packed_weights(model)
    h = hidden_states(model, input_ids, position_ids, ctx, packed)
    return _linear(h[:, -1:] if last_only else h, model.lm_head.weight, packed).float()
