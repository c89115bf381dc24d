"""The policy: a Qwen3 / Llama decoder in plain PyTorch.

Read top to bottom in the order data flows: config -> RMSNorm -> RoPE -> attention
(packed rows, KV cache) -> MLP -> Block -> Transformer -> log-probs, then FSDP2 wrapping (torchtitan
style). The KV-cache decoding functions (gpt-fast style) that run this forward on the cache live in
engines/decode.py. Weight I/O (HF safetensors, tokenizer, GGUF import, the embedded default model) lives in
hf/weights.py.

Parameter names are the Hugging Face ones (`model.layers.0.self_attn.q_proj.weight`, ...),
so a state dict moves between this file, transformers and vLLM without renaming.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.utils.checkpoint import checkpoint

try:  # GPU-only kernel; the CPU path uses torch SDPA.
    from flash_attn import flash_attn_varlen_func
except ImportError:
    flash_attn_varlen_func = None


# ----------------------------------------------------------------------------- config

ARCHITECTURES = {"Qwen3ForCausalLM": "qwen3", "LlamaForCausalLM": "llama"}
MODEL_TYPES = {"qwen3": "Qwen3ForCausalLM", "llama": "LlamaForCausalLM"}


@dataclass
class ModelConfig:
    """Decoder architecture. Field names follow HF `config.json`; defaults are Qwen3-0.6B."""

    family: str = "qwen3"  # "qwen3" (Llama + per-head q/k RMSNorm) or "llama"
    vocab_size: int = 151936
    hidden_size: int = 1024
    intermediate_size: int = 3072
    num_hidden_layers: int = 28
    num_attention_heads: int = 16
    num_key_value_heads: int = 8
    head_dim: int = 128
    rms_norm_eps: float = 1e-6
    rope_theta: float = 1_000_000.0
    # None = plain RoPE; else {"rope_type": "llama3" | "yarn", ...}
    rope_scaling: dict | None = None
    max_position_embeddings: int = 40960
    tie_word_embeddings: bool = True
    bos_token_id: int | None = None
    eos_token_id: int | list[int] | None = None

    def __post_init__(self):
        if self.family not in MODEL_TYPES:
            raise ValueError(
                f"ModelConfig.family = {self.family!r}; supported: {sorted(MODEL_TYPES)}"
            )
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError(
                f"ModelConfig: num_attention_heads={self.num_attention_heads} is not a multiple of "
                f"num_key_value_heads={self.num_key_value_heads}"
            )

    @classmethod
    def from_hf(cls, path_or_dict: str | os.PathLike | dict) -> ModelConfig:
        """Read an HF `config.json` (a model dir, the file itself, or its parsed dict).

        Accepts `architectures[0]` in {Qwen3ForCausalLM, LlamaForCausalLM}; RoPE from either
        transformers>=5 `rope_parameters` or the older `rope_theta` + `rope_scaling`, with
        rope_type default, llama3 (Llama 3.1) or yarn (Peng et al. 2023).
        Raises FileNotFoundError (no config.json) or ValueError naming the offending field.
        """
        if isinstance(path_or_dict, dict):
            hf = path_or_dict
            where = "config"
        else:
            path = Path(path_or_dict)
            path = path / "config.json" if path.is_dir() else path
            if not path.is_file():
                raise FileNotFoundError(f"{path}: config.json not found")
            hf = json.loads(path.read_text())
            where = str(path)

        archs = hf.get("architectures")
        if not isinstance(archs, list) or not archs or archs[0] not in ARCHITECTURES:
            raise ValueError(
                f"{where}: field 'architectures' is {archs!r}; supported: {sorted(ARCHITECTURES)}"
            )
        family = ARCHITECTURES[archs[0]]
        for name in (
            "vocab_size",
            "hidden_size",
            "intermediate_size",
            "num_hidden_layers",
            "num_attention_heads",
        ):
            if not isinstance(hf.get(name), int):
                raise ValueError(f"{where}: field '{name}' missing or not an int: {hf.get(name)!r}")
        # Features of the HF classes that this decoder does not implement: refuse, never ignore.
        unsupported = {
            "hidden_act": hf.get("hidden_act", "silu") != "silu",
            "attention_bias": bool(hf.get("attention_bias", False)),
            "mlp_bias": bool(hf.get("mlp_bias", False)),
            "use_sliding_window": bool(hf.get("use_sliding_window", False)),
            "layer_types": any(t != "full_attention" for t in hf.get("layer_types") or []),
        }
        for name, bad in unsupported.items():
            if bad:
                raise ValueError(f"{where}: field '{name}' = {hf.get(name)!r} is not supported")

        heads = hf["num_attention_heads"]
        # transformers' defaults when a field is absent: Qwen3Config head_dim=128, LlamaConfig hidden/heads.
        default_head_dim = 128 if family == "qwen3" else hf["hidden_size"] // heads
        max_pos = hf.get("max_position_embeddings", 32768 if family == "qwen3" else 2048)
        rope_theta, rope_scaling = _rope_from_hf(hf, max_pos, where)
        return cls(
            family=family,
            vocab_size=hf["vocab_size"],
            hidden_size=hf["hidden_size"],
            intermediate_size=hf["intermediate_size"],
            num_hidden_layers=hf["num_hidden_layers"],
            num_attention_heads=heads,
            num_key_value_heads=hf.get("num_key_value_heads") or heads,
            head_dim=hf.get("head_dim") or default_head_dim,
            rms_norm_eps=float(hf.get("rms_norm_eps", 1e-6)),
            rope_theta=rope_theta,
            rope_scaling=rope_scaling,
            max_position_embeddings=max_pos,
            tie_word_embeddings=bool(hf.get("tie_word_embeddings", False)),
            bos_token_id=hf.get("bos_token_id"),
            eos_token_id=hf.get("eos_token_id"),
        )

    def to_hf(self) -> dict:
        """The `config.json` dict transformers (v4 and v5 field names both present) and vLLM read."""
        rope = {"rope_type": "default", "rope_theta": self.rope_theta, **(self.rope_scaling or {})}
        out = {
            "architectures": [MODEL_TYPES[self.family]],
            "model_type": self.family,
            "vocab_size": self.vocab_size,
            "hidden_size": self.hidden_size,
            "intermediate_size": self.intermediate_size,
            "num_hidden_layers": self.num_hidden_layers,
            "num_attention_heads": self.num_attention_heads,
            "num_key_value_heads": self.num_key_value_heads,
            "head_dim": self.head_dim,
            "hidden_act": "silu",
            "rms_norm_eps": self.rms_norm_eps,
            "max_position_embeddings": self.max_position_embeddings,
            "tie_word_embeddings": self.tie_word_embeddings,
            "attention_bias": False,
            "bos_token_id": self.bos_token_id,
            "eos_token_id": self.eos_token_id,
            "rope_theta": self.rope_theta,
            "rope_parameters": rope,
        }
        if self.rope_scaling is not None:
            out["rope_scaling"] = dict(self.rope_scaling)
        return out


def _rope_from_hf(hf: dict, max_pos: int, where: str) -> tuple[float, dict | None]:
    """(rope_theta, rope_scaling or None) from either config style; validates required keys."""
    params = dict(hf.get("rope_parameters") or {})
    if hf.get("rope_scaling"):
        params.update(hf["rope_scaling"])
    theta = float(params.get("rope_theta", hf.get("rope_theta", 10000.0)))
    if params.get("partial_rotary_factor", hf.get("partial_rotary_factor", 1.0)) != 1.0:
        raise ValueError(f"{where}: field 'partial_rotary_factor' is not supported (must be 1.0)")
    rope_type = params.get("rope_type", params.get("type", "default"))
    if rope_type == "default":
        return theta, None
    required = {
        "llama3": ("factor", "low_freq_factor", "high_freq_factor"),
        "yarn": ("factor",),
    }
    if rope_type not in required:
        raise ValueError(
            f"{where}: field 'rope_scaling.rope_type' = {rope_type!r}; supported: default, llama3, yarn"
        )
    for key in required[rope_type]:
        if params.get(key) is None:
            raise ValueError(
                f"{where}: field 'rope_scaling.{key}' is required for rope_type {rope_type!r}"
            )
    keep = (
        "factor",
        "low_freq_factor",
        "high_freq_factor",
        "original_max_position_embeddings",
        "beta_fast",
        "beta_slow",
        "attention_factor",
        "mscale",
        "mscale_all_dim",
        "truncate",
    )
    scaling = {"rope_type": rope_type, **{k: params[k] for k in keep if params.get(k) is not None}}
    scaling.setdefault("original_max_position_embeddings", max_pos)
    return theta, scaling


# ----------------------------------------------------------------------------- layers


class RMSNorm(nn.Module):
    """y = w * x / sqrt(mean(x^2) + eps), computed in fp32 and cast back before the scale (as HF)."""

    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(x.dtype)


def rope_inv_freq(cfg: ModelConfig) -> tuple[torch.Tensor, float]:
    """Inverse frequencies [head_dim/2] fp32 and the cos/sin scale (RoFormer; Llama 3.1; YaRN).

    default: inv_freq_i = theta^(-2i/d).
    llama3: wavelengths longer than L/low_freq_factor are divided by `factor`, shorter than
        L/high_freq_factor kept, and smoothly interpolated between (L = original context).
    yarn: blend of interpolated (inv_freq/factor) and extrapolated frequencies with a linear
        ramp over dims [low, high] from beta_fast/beta_slow rotations; cos/sin scaled by
        0.1*ln(factor)+1 (or the mscale ratio / attention_factor when given).
    """
    d = cfg.head_dim
    theta = cfg.rope_theta
    rs = cfg.rope_scaling
    inv_freq = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float) / d))
    if rs is None:
        return inv_freq, 1.0
    factor = rs["factor"]
    orig = rs["original_max_position_embeddings"]
    if rs["rope_type"] == "llama3":
        low_wavelen = orig / rs["low_freq_factor"]
        high_wavelen = orig / rs["high_freq_factor"]
        wavelen = 2 * math.pi / inv_freq
        scaled = torch.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
        smooth = (orig / wavelen - rs["low_freq_factor"]) / (
            rs["high_freq_factor"] - rs["low_freq_factor"]
        )
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
        return torch.where(medium, smoothed, scaled), 1.0

    def mscale(scale: float, m: float = 1.0) -> float:
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    attention_factor = rs.get("attention_factor")
    if attention_factor is None:
        if rs.get("mscale") and rs.get("mscale_all_dim"):
            attention_factor = mscale(factor, rs["mscale"]) / mscale(factor, rs["mscale_all_dim"])
        else:
            attention_factor = mscale(factor)

    def correction_dim(rotations: float) -> float:
        return (d * math.log(orig / (rotations * 2 * math.pi))) / (2 * math.log(theta))

    low = correction_dim(rs.get("beta_fast") or 32)
    high = correction_dim(rs.get("beta_slow") or 1)
    if rs.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        # avoid 0/0 in the ramp
        high += 0.001
    ramp = ((torch.arange(d // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)
    extrapolation = 1 - ramp
    pos_freqs = theta ** (torch.arange(0, d, 2, dtype=torch.float) / d)
    interpolated = 1.0 / (factor * pos_freqs)
    extrapolated = 1.0 / pos_freqs
    inv_freq = interpolated * (1 - extrapolation) + extrapolated * extrapolation
    return inv_freq, float(attention_factor)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x [B, T, H, hd] rotated by cos/sin [B, T, hd] (rotate-half convention of HF/Llama)."""
    cos, sin = cos.unsqueeze(2), sin.unsqueeze(2)
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


@dataclass
class Packed:
    """Packed-row attention metadata: sequence bounds inside one row (B == 1)."""

    cu_seqlens: torch.Tensor  # int32 [S+1] on the model's device
    bounds: list[tuple[int, int]]  # [(start, end)] token offsets, python ints
    max_seqlen: int


@dataclass
class CacheStep:
    """KV-cache attention for one call: write K/V of the new tokens at (slot, position), attend over the slots.
    Built once per prefill/decode call and shared by every layer (no per-layer masks or syncs)."""

    slots: torch.Tensor  # int64 [B] cache row of each sequence
    positions: torch.Tensor  # int64 [B, T] absolute position of each new token
    max_len: int  # 1 + largest position: keys beyond it are never read
    # slots are exactly lo, lo+1, ...: the cache rows are read as a view; None: gathered
    lo: int | None
    # [B, 1, T, max_len]: bool (key visible) for T > 1, additive fp (0 / -inf) for T == 1
    mask: torch.Tensor
    # T == 1: mask per (row, KV head) [B * n_kv, 1, max_len], made by layer 0
    kv_mask: torch.Tensor | None = None


def cache_step(slots: list[int], positions: torch.Tensor, dtype: torch.dtype) -> CacheStep:
    """The CacheStep for sequences in cache rows `slots` (distinct ints) at positions int64 [B, T].
    Key j of a row is visible to a query at position p iff j <= p."""
    device = positions.device
    max_len = int(positions.max()) + 1
    lo = slots[0] if slots == list(range(slots[0], slots[0] + len(slots))) else None
    # [B, T, L]
    visible = torch.arange(max_len, device=device)[None, None, :] <= positions[:, :, None]
    if positions.shape[1] == 1:
        mask = torch.zeros(visible.shape, dtype=dtype, device=device).masked_fill_(
            ~visible, float("-inf")
        )
    else:
        mask = visible
    return CacheStep(
        torch.tensor(slots, dtype=torch.long, device=device), positions, max_len, lo, mask[:, None]
    )


class KVCache(nn.Module):
    """Per-layer K/V store [max_batch, n_kv_heads, max_seq_len, head_dim], preallocated once (gpt-fast
    layout: the keys of one (row, head) are contiguous, so attention reads a slice as a view)."""

    def __init__(self, max_batch: int, max_seq_len: int, n_kv: int, head_dim: int, dtype, device):
        super().__init__()
        shape = (max_batch, n_kv, max_seq_len, head_dim)
        self.register_buffer("k", torch.zeros(shape, dtype=dtype, device=device), persistent=False)
        self.register_buffer("v", torch.zeros(shape, dtype=dtype, device=device), persistent=False)


class Attention(nn.Module):
    """Causal GQA self-attention with RoPE; q/k per-head RMSNorm before RoPE for qwen3."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.n_heads, self.n_kv, self.head_dim = (
            cfg.num_attention_heads,
            cfg.num_key_value_heads,
            cfg.head_dim,
        )
        self.q_proj = nn.Linear(cfg.hidden_size, self.n_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(cfg.hidden_size, self.n_kv * self.head_dim, bias=False)
        self.v_proj = nn.Linear(cfg.hidden_size, self.n_kv * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.n_heads * self.head_dim, cfg.hidden_size, bias=False)
        if cfg.family == "qwen3":
            self.q_norm = RMSNorm(self.head_dim, cfg.rms_norm_eps)
            self.k_norm = RMSNorm(self.head_dim, cfg.rms_norm_eps)
        self.kv_cache: KVCache | None = None

    def forward(
        self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, ctx: Packed | CacheStep | None
    ):
        """x [B, T, D] -> [B, T, D]. ctx None: each row one causal sequence; Packed: packed rows
        (training); CacheStep: new tokens on the KV cache (engines/decode.py's plain decode step)."""
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.n_heads, self.head_dim)
        k = self.k_proj(x).view(B, T, self.n_kv, self.head_dim)
        v = self.v_proj(x).view(B, T, self.n_kv, self.head_dim)
        if hasattr(self, "q_norm"):
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)

        if isinstance(ctx, CacheStep):
            y = self._attend_cache(q, k, v, ctx)
        elif isinstance(ctx, Packed) and _use_flash(q):
            # flash-attn takes the packed row as [total_tokens, heads, hd] and never crosses cu_seqlens.
            y = flash_attn_varlen_func(
                q[0],
                k[0],
                v[0],
                ctx.cu_seqlens,
                ctx.cu_seqlens,
                ctx.max_seqlen,
                ctx.max_seqlen,
                causal=True,
            ).unsqueeze(0)
        else:
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # [B, H, T, hd]
            if isinstance(ctx, Packed):
                # One causal SDPA per sequence: exact, and costs sum(L_i^2) rather than T^2 for a mask.
                y = torch.cat(
                    [
                        F.scaled_dot_product_attention(
                            q[:, :, s:e],
                            k[:, :, s:e],
                            v[:, :, s:e],
                            is_causal=True,
                            enable_gqa=True,
                        )
                        for s, e in ctx.bounds
                    ],
                    dim=2,
                )
            else:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            y = y.transpose(1, 2)
        return self.o_proj(y.reshape(B, T, self.n_heads * self.head_dim))

    def _attend_cache(self, q, k, v, ctx: CacheStep) -> torch.Tensor:
        """Write k/v [B, T, n_kv, hd] at (slots, positions); attend q [B, T, H, hd] over the cached keys.

        One query per row (decode): scores = mask + q K^T / sqrt(hd) (one baddbmm), softmax, @ V (one bmm) over
        the cache rows, query heads grouped by their KV head (GQA without repeating K/V). Several queries
        (prefill): SDPA with the boolean mask.
        """
        cache = self.kv_cache
        if cache is None:
            raise RuntimeError(
                "KV cache not set up: call setup_cache(model, max_batch, max_seq_len) first"
            )
        B, T, H, hd = q.shape
        slot_idx = ctx.slots[:, None].expand_as(ctx.positions)
        # [B, T, n_kv, hd] into [B, n_kv, S, hd]
        cache.k[slot_idx, :, ctx.positions] = k.to(cache.k.dtype)
        cache.v[slot_idx, :, ctx.positions] = v.to(cache.v.dtype)
        if ctx.lo is not None:  # consecutive slots (the engine's usual case): views, no copy
            keys = cache.k[ctx.lo : ctx.lo + B, :, : ctx.max_len].to(q.dtype)  # [B, n_kv, L, hd]
            values = cache.v[ctx.lo : ctx.lo + B, :, : ctx.max_len].to(q.dtype)
        else:  # slots freed mid-batch: gather only the live rows' first max_len positions
            keys = cache.k[ctx.slots, :, : ctx.max_len].to(q.dtype)
            values = cache.v[ctx.slots, :, : ctx.max_len].to(q.dtype)
        if T > 1:
            return F.scaled_dot_product_attention(
                q.transpose(1, 2), keys, values, attn_mask=ctx.mask, enable_gqa=True
            ).transpose(1, 2)
        n_kv = self.n_kv
        L = keys.shape[2]
        if ctx.kv_mask is None:
            ctx.kv_mask = ctx.mask.expand(B, n_kv, 1, L).reshape(B * n_kv, 1, L)
        # head h reads KV head h // (H / n_kv), as HF repeat_kv
        qg = q.reshape(B * n_kv, H // n_kv, hd)
        scores = torch.baddbmm(
            ctx.kv_mask, qg, keys.reshape(B * n_kv, L, hd).transpose(1, 2), alpha=hd**-0.5
        )
        return torch.bmm(torch.softmax(scores, dim=-1), values.reshape(B * n_kv, L, hd)).view(
            B, 1, H, hd
        )


def _use_flash(q: torch.Tensor) -> bool:
    return (
        flash_attn_varlen_func is not None
        and q.is_cuda
        and q.dtype in (torch.float16, torch.bfloat16)
    )


class MLP(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x)) (Shazeer 2020)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    """Pre-norm decoder block: x + attn(norm(x)), then + mlp(norm(x))."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)
        self.activation_checkpointing = False  # set by apply_fsdp2

    def forward(self, x, cos, sin, ctx):
        # Checkpoint inside the block so FSDP2's hooks stay outside it and parameter names stay HF names.
        if self.activation_checkpointing and torch.is_grad_enabled():
            return checkpoint(self._forward, x, cos, sin, ctx, use_reentrant=False)
        return self._forward(x, cos, sin, ctx)

    def _forward(self, x, cos, sin, ctx):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, ctx)
        return x + self.mlp(self.post_attention_layernorm(x))


class Transformer(nn.Module):
    """Decoder-only LM with HF parameter names; `lm_head.weight` is `model.embed_tokens.weight` when tied."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.config = cfg
        self.model = nn.ModuleDict(
            dict(
                embed_tokens=nn.Embedding(cfg.vocab_size, cfg.hidden_size),
                layers=nn.ModuleList(Block(cfg) for _ in range(cfg.num_hidden_layers)),
                norm=RMSNorm(cfg.hidden_size, cfg.rms_norm_eps),
            )
        )
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        if cfg.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight
        inv_freq, self.rope_scale = rope_inv_freq(cfg)
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def rope(
        self, position_ids: torch.Tensor, dtype: torch.dtype
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """cos, sin [B, T, head_dim] for integer positions [B, T] (angles in fp32, as HF)."""
        freqs = position_ids[..., None].float() * self.inv_freq.float()
        emb = torch.cat((freqs, freqs), dim=-1)
        return (emb.cos() * self.rope_scale).to(dtype), (emb.sin() * self.rope_scale).to(dtype)

    def hidden_states(
        self, input_ids: torch.Tensor, position_ids: torch.Tensor, ctx
    ) -> torch.Tensor:
        """Final-norm hidden states [B, T, D] for token ids [B, T] at positions [B, T]."""
        x = self.model.embed_tokens(input_ids)
        cos, sin = self.rope(position_ids, x.dtype)
        for block in self.model.layers:
            x = block(x, cos, sin, ctx)
        return self.model.norm(x)

    def forward(
        self,
        input_ids: torch.Tensor,
        position_ids: torch.Tensor | None = None,
        cu_seqlens: torch.Tensor | None = None,
        targets: torch.Tensor | None = None,
        temperature: float = 1.0,
        truncation: tuple[float, int] | None = None,
    ):
        """Full-sequence forward (training / scoring).

        input_ids: int64 [B, T]; position_ids int64 [B, T] (default 0..T-1 per row).
        Packed rows: B == 1, cu_seqlens int32 [S+1] with cu_seqlens[0] == 0 and cu_seqlens[-1] == T;
        position_ids restart at 0 per sequence (derived from cu_seqlens if None). No attention crosses a
        boundary in cu_seqlens (flash_attn_varlen_func on CUDA bf16/fp16 when installed, else one causal
        SDPA per sequence). Without cu_seqlens each row is one causal sequence, whatever position_ids say.
        targets None: returns logits / temperature, fp32 [B, T, V].
        targets int64 [B, T] (the next token at each position; negative = ignore): returns
        (logprobs fp32 [B, T], entropy fp32 [B, T]) from `logprobs_and_entropy` (chunked; logprob 0.0
        where target < 0). With truncation = (top_p, top_k) as well: (logprobs, entropy,
        log_kept_mass fp32 [B, T], no gradient; see `logprobs_entropy_and_kept_mass`).
        Raises ValueError on inconsistent shapes.
        """
        B, T = input_ids.shape
        ctx = None
        if cu_seqlens is not None:
            bounds = cu_seqlens.tolist()
            if (
                B != 1
                or bounds[0] != 0
                or bounds[-1] != T
                or any(b <= a for a, b in zip(bounds, bounds[1:]))
            ):
                raise ValueError(
                    f"cu_seqlens {bounds} must be strictly increasing from 0 to T={T} with B == 1 (B={B})"
                )
            pairs = list(zip(bounds[:-1], bounds[1:]))
            ctx = Packed(
                cu_seqlens.to(device=input_ids.device, dtype=torch.int32),
                pairs,
                max(e - s for s, e in pairs),
            )
            if position_ids is None:
                position_ids = torch.cat(
                    [torch.arange(e - s, device=input_ids.device) for s, e in pairs]
                )[None]
        if position_ids is None:
            position_ids = torch.arange(T, device=input_ids.device)[None].expand(B, T)
        if position_ids.shape != input_ids.shape:
            raise ValueError(
                f"position_ids shape {tuple(position_ids.shape)} != input_ids shape {(B, T)}"
            )
        h = self.hidden_states(input_ids, position_ids, ctx)
        if targets is None:
            return self.lm_head(h).float() / temperature
        if targets.shape != input_ids.shape:
            raise ValueError(f"targets shape {tuple(targets.shape)} != input_ids shape {(B, T)}")
        top_p, top_k = truncation if truncation is not None else (1.0, 0)
        logprobs, entropy, kept = logprobs_entropy_and_kept_mass(
            h.reshape(B * T, -1),
            self.lm_head.weight,
            targets.reshape(B * T),
            temperature,
            top_p=top_p,
            top_k=top_k,
        )
        # Fresh tensors, not views: FSDP2's pre-backward hook on a view is lost by a later in-place op.
        if truncation is None:
            return logprobs.view(B, T).clone(), entropy.view(B, T).clone()
        return logprobs.view(B, T).clone(), entropy.view(B, T).clone(), kept.view(B, T)


# ----------------------------------------------------------------------------- log-probs


def _chunk_logits(h: torch.Tensor, weight: torch.Tensor, temperature: float) -> torch.Tensor:
    """z = h W^T / temperature, fp32 [n, V]."""
    z = (h @ weight.t()).float()
    return z.div_(temperature) if temperature != 1.0 else z


class _LogprobsEntropy(torch.autograd.Function):
    """Chunked log-probs/entropy with an analytic backward that recomputes each chunk's logits.

    With z the logits / temperature, p = softmax(z), H = -sum p log p:
      d logprob[t] / dz = onehot(t) - p;   dH / dz = -p * (log p + H).
    Only [N]-sized statistics are saved; a chunk holds two [chunk, V] fp32 buffers at a time.
    Row-wise fused softmax kernels keep each vocab row in cache (far fewer memory passes than
    composing max/exp/sum by hand). The third output, log_kept_mass of each row under (top_p,
    top_k), is read off the same chunk's log-probs and carries no gradient.
    """

    @staticmethod
    def forward(ctx, hidden, weight, targets, temperature, chunk_size, top_p, top_k):
        n = hidden.shape[0]
        logprobs = torch.empty(n, dtype=torch.float32, device=hidden.device)
        entropy = torch.empty(n, dtype=torch.float32, device=hidden.device)
        kept = torch.zeros(n, dtype=torch.float32, device=hidden.device)
        truncated = top_p < 1.0 or top_k > 0
        valid = targets >= 0
        safe_targets = targets.clamp(min=0)
        for s in range(0, n, chunk_size):
            e = min(s + chunk_size, n)
            logp = torch.log_softmax(_chunk_logits(hidden[s:e], weight, temperature), dim=-1)
            logprobs[s:e] = logp.gather(1, safe_targets[s:e, None]).squeeze(1)
            entropy[s:e] = -torch.bmm(logp.exp()[:, None, :], logp[:, :, None]).view(-1)
            if truncated:
                kept[s:e] = log_kept_mass(logp, top_p, top_k)
        logprobs = logprobs * valid
        ctx.save_for_backward(hidden, weight, safe_targets, valid, entropy)
        ctx.temperature, ctx.chunk_size = temperature, chunk_size
        ctx.set_materialize_grads(False)
        ctx.mark_non_differentiable(kept)
        return logprobs, entropy, kept

    @staticmethod
    def backward(ctx, grad_logprobs, grad_entropy, grad_kept):
        hidden, weight, targets, valid, entropy = ctx.saved_tensors
        n = hidden.shape[0]
        grad_hidden = torch.zeros_like(hidden) if ctx.needs_input_grad[0] else None
        grad_weight = (
            torch.zeros(weight.shape, dtype=torch.float32, device=weight.device)
            if ctx.needs_input_grad[1]
            else None
        )
        if grad_logprobs is None and grad_entropy is None:
            return grad_hidden, grad_weight, None, None, None, None, None
        if grad_logprobs is not None:
            grad_logprobs = grad_logprobs * valid  # ignored targets carry no gradient
        for s in range(0, n, ctx.chunk_size):
            e = min(s + ctx.chunk_size, n)
            z = _chunk_logits(hidden[s:e], weight, ctx.temperature)
            if grad_entropy is None:  # g = -g_lp * p
                g = torch.softmax(z, dim=-1).mul_(-grad_logprobs[s:e, None])
            else:  # g = -p * (g_H * (log p + H) + g_lp)
                logp = torch.log_softmax(z, dim=-1)
                coef = grad_entropy[s:e] * entropy[s:e]
                if grad_logprobs is not None:
                    coef = coef + grad_logprobs[s:e]
                g = logp.exp().mul_(logp.mul_(grad_entropy[s:e, None]).add_(coef[:, None])).neg_()
            if grad_logprobs is not None:
                g.scatter_add_(1, targets[s:e, None], grad_logprobs[s:e, None])
            if ctx.temperature != 1.0:
                g.div_(ctx.temperature)
            g = g.to(hidden.dtype)
            if grad_hidden is not None:
                grad_hidden[s:e] = g @ weight
            if grad_weight is not None:
                grad_weight.addmm_(g.t().float(), hidden[s:e].float())
        if grad_weight is not None:
            grad_weight = grad_weight.to(weight.dtype)
        return grad_hidden, grad_weight, None, None, None, None, None


def truncated_support(
    logp: torch.Tensor, top_p: torch.Tensor, top_k: torch.Tensor, rows: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The tokens that top-k then top-p sampling keeps: the one rule the engines sample by
    (engines/decode.sample_tokens) and the learner scores the TIS weight by (log_kept_mass).

    logp fp32 [B, V] (log_softmax of logits / temperature); top_p fp32 [B] in (0, 1]; top_k int64 [B]
    (0 = off); rows bool [B] or None: the rows that truncate (default all; the others' keep is not
    meaningful and only their top_k is left out of the width). Returns (sorted_logp [B, n], order
    int64 [B, n], keep bool [B, n]), the n most likely tokens in descending order:
        keep the tokens >= the top_k-th largest p (ties kept); renormalise them to pk, then keep,
        most likely first, each whose preceding pk mass is < top_p (nucleus); the most likely
        token always stays.
    vLLM 0.30.0's order (v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p). n = max top_k + 64
    (to see ties at the boundary) when every truncating row has a top-k, else V (a full sort).
    """
    V = logp.shape[-1]
    cut_k = top_k if rows is None else top_k[rows]
    kmax = int(cut_k.max()) if bool((cut_k > 0).all()) else V
    n = min(V, kmax + 64)
    if n < V:
        sorted_logp, order = logp.topk(n, dim=-1)
    else:
        sorted_logp, order = logp.sort(dim=-1, descending=True)
    probs = sorted_logp.exp()
    kth = sorted_logp.gather(1, (top_k.clamp(min=1, max=n) - 1)[:, None])
    keep = (top_k[:, None] <= 0) | (sorted_logp >= kth)
    pk = torch.where(keep, probs, torch.zeros_like(probs))
    pk = pk / pk.sum(-1, keepdim=True)
    # nucleus: the top-k mass before this token < top_p
    keep &= (pk.cumsum(-1) - pk) < top_p[:, None]
    keep[:, 0] = True
    return sorted_logp, order, keep


def log_kept_mass(logp: torch.Tensor, top_p: float, top_k: int) -> torch.Tensor:
    """log sum of p over the tokens truncated sampling keeps (truncated_support), per row.

    logp fp32 [N, V]. Returns fp32 [N], <= 0; exactly 0 when top_p = 1 and top_k = 0 (no truncation).
    The log-prob of a kept token x under the distribution the engine samples is log p(x) - this.
    Cost: a top-(top_k + 64) per row; with top-p alone (top_k = 0) a full sort of the vocabulary per
    row, which made the chunked log-prob pass several times slower on CPU (1024 tokens x 49,152,
    loaded machine: ~20-29 s against ~3-9 s untruncated or with top-k 40).
    """
    if top_p >= 1.0 and top_k <= 0:
        return torch.zeros(logp.shape[0], dtype=torch.float32, device=logp.device)
    n = logp.shape[0]
    p = torch.full((n,), float(top_p), dtype=torch.float32, device=logp.device)
    k = torch.full((n,), int(top_k), dtype=torch.long, device=logp.device)
    sorted_logp, _, keep = truncated_support(logp, p, k)
    kept = torch.where(keep, sorted_logp, torch.full_like(sorted_logp, float("-inf")))
    return torch.logsumexp(kept, dim=-1).float()


def logprobs_and_entropy(
    hidden: torch.Tensor,
    weight: torch.Tensor,
    targets: torch.Tensor,
    temperature: float = 1.0,
    chunk_size: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token log-probs of `targets` and entropy of the softmax, chunked over tokens.

    z = hidden @ weight^T / temperature;  log p = log_softmax(z);  logprob = log p[target];
    entropy = -sum_v p_v log p_v.
    hidden [N, D] (any float dtype), weight [V, D], targets int64 [N] (negative = ignore: logprob 0.0,
    no gradient). Returns (logprobs fp32 [N], entropy fp32 [N]), both differentiable.
    chunk_size tokens per chunk (default: 2^25 / V, i.e. 128 MiB of fp32 logits): forward and backward
    hold two [chunk_size, V] fp32 buffers, never the full [N, V]; backward recomputes each chunk's logits
    (one extra matmul) and accumulates the weight gradient in fp32 ([V, D]).
    Raises ValueError on inconsistent shapes.
    """
    logprobs, entropy, _ = logprobs_entropy_and_kept_mass(
        hidden, weight, targets, temperature, chunk_size
    )
    return logprobs, entropy


def logprobs_entropy_and_kept_mass(
    hidden: torch.Tensor,
    weight: torch.Tensor,
    targets: torch.Tensor,
    temperature: float = 1.0,
    chunk_size: int | None = None,
    top_p: float = 1.0,
    top_k: int = 0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`logprobs_and_entropy` and, per token, log_kept_mass under (top_p, top_k): fp32 [N], no
    gradient, 0 when both are off. logprob - log_kept_mass is the log-prob of a kept target under
    the truncated, renormalised distribution the engine samples from (its reported log-prob), the
    learner's side of the TIS weight. Raises ValueError as logprobs_and_entropy."""
    if hidden.dim() != 2 or targets.shape != hidden.shape[:1] or weight.shape[1] != hidden.shape[1]:
        raise ValueError(
            f"shapes hidden {tuple(hidden.shape)}, weight {tuple(weight.shape)}, "
            f"targets {tuple(targets.shape)}: want [N, D], [V, D], [N]"
        )
    chunk_size = chunk_size or max(1, 2**25 // weight.shape[0])
    return _LogprobsEntropy.apply(
        hidden, weight, targets, temperature, chunk_size, float(top_p), int(top_k)
    )


# ----------------------------------------------------------------------------- FSDP2


def apply_fsdp2(
    model: Transformer,
    mesh,
    param_dtype: torch.dtype | None = None,
    reduce_dtype: torch.dtype | None = None,
    activation_checkpointing: bool = False,
    master_dtype: torch.dtype | None = torch.float32,
) -> Transformer:
    """Shard `model` in place with FSDP2 (torchtitan recipe): fully_shard each block, then the root.

    Mixed precision (Micikevicius et al. 2018, "Mixed Precision Training"): the sharded parameters are
    the fp32 *master* weights (master_dtype; None keeps the model's dtype), so AdamW's state and the
    update are fp32 too; FSDP2's MixedPrecisionPolicy casts the all-gathered parameters to param_dtype
    for forward/backward and reduces gradients in reduce_dtype. An update of lr ~1e-6 is far below bf16's
    spacing (7.8e-3 near 1.0), so bf16 master weights would round nearly every update away.

    mesh: a 1-D DeviceMesh (gloo on CPU, nccl on CUDA). param_dtype/reduce_dtype None: bf16 compute with
    fp32 gradient reduction on CUDA, the master dtype on CPU (bf16 compute also runs on CPU with gloo).
    The last block keeps its parameters after forward (backward needs them first).
    activation_checkpointing recomputes each block in backward. Works on a meta-device model too
    (weights.load_hf_sharded then materialises only this rank's shards). Parameters become DTensors with
    the same names. Returns the model.
    """

    if mesh.device_type == "cuda":
        param_dtype = param_dtype or torch.bfloat16
        reduce_dtype = reduce_dtype or torch.float32
    if master_dtype is not None:
        model.to(master_dtype)  # in place, before sharding: a tied lm_head stays tied
    mp = MixedPrecisionPolicy(param_dtype=param_dtype, reduce_dtype=reduce_dtype)
    layers = model.model.layers
    for i, block in enumerate(layers):
        block.activation_checkpointing = activation_checkpointing
        fully_shard(block, mesh=mesh, mp_policy=mp, reshard_after_forward=i < len(layers) - 1)
    fully_shard(model, mesh=mesh, mp_policy=mp)
    return model
