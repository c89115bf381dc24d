"""The GPU memory plan: the per-GPU bytes of FSDP2 training beside a colocated vLLM engine, and the
three conditions they must meet. Pure arithmetic over a config and a model's config.json; train.py
prints the report at start-up on CUDA and refuses a configuration that cannot fit, the presets are
sized by it (tests/test_gpu_paths.py), and bench/first_light.py measures against its items.

`count_params` counts a decoder's parameters from its config.json, `memory_items` lists the per-GPU
items, `memory_budget` checks them, `check_memory_budget` adds the tensor-parallel layout rules and
raises, `engine_memory_report` reads a model folder. `QWEN3_CONFIGS` holds the config.json fields of
the Qwen3 checkpoints the presets name.
"""

from __future__ import annotations

import json
from pathlib import Path

from configs import ConfigError, TrainConfig

GiB = 2**30
# vLLM's CUDA context, CUDA graphs and sampler buffers, awake or asleep
ENGINE_RESERVE_BYTES = 2 * GiB


# config.json fields (those count_params, memory_budget and model.ModelConfig.from_hf read) of the
# Qwen3 checkpoints the presets name (Hugging Face hub, Qwen/Qwen3-*); bench/first_light.py builds
# random-weight models of these shapes.
_QWEN3 = dict(
    architectures=["Qwen3ForCausalLM"],
    model_type="qwen3",
    num_key_value_heads=8,
    head_dim=128,
    vocab_size=151936,
    rms_norm_eps=1e-6,
    rope_theta=1_000_000.0,
    max_position_embeddings=40960,
)
QWEN3_CONFIGS: dict[str, dict] = {
    "Qwen3-1.7B": dict(
        _QWEN3,
        hidden_size=2048,
        intermediate_size=6144,
        num_hidden_layers=28,
        num_attention_heads=16,
        tie_word_embeddings=True,
    ),
    "Qwen3-4B": dict(
        _QWEN3,
        hidden_size=2560,
        intermediate_size=9728,
        num_hidden_layers=36,
        num_attention_heads=32,
        tie_word_embeddings=True,
    ),
    "Qwen3-8B": dict(
        _QWEN3,
        hidden_size=4096,
        intermediate_size=12288,
        num_hidden_layers=36,
        num_attention_heads=32,
        tie_word_embeddings=False,
    ),
    "Qwen3-14B": dict(
        _QWEN3,
        hidden_size=5120,
        intermediate_size=17408,
        num_hidden_layers=40,
        num_attention_heads=40,
        tie_word_embeddings=False,
    ),
    "Qwen3-32B": dict(
        _QWEN3,
        hidden_size=5120,
        intermediate_size=25600,
        num_hidden_layers=64,
        num_attention_heads=64,
        tie_word_embeddings=False,
    ),
}


def count_params(hf: dict) -> tuple[int, int, int]:
    """(total, per block, root) parameter counts of a Llama/Qwen3-style decoder from its HF config.json
    fields: hidden_size, intermediate_size, num_hidden_layers, num_attention_heads, num_key_value_heads,
    head_dim (default hidden/heads), vocab_size, tie_word_embeddings; q/k norms for model_type qwen3.
    Root = embeddings + final norm + untied lm_head (FSDP2's root unit)."""
    h = hf["hidden_size"]
    i = hf["intermediate_size"]
    L = hf["num_hidden_layers"]
    V = hf["vocab_size"]
    H = hf["num_attention_heads"]
    KV = hf.get("num_key_value_heads", H)
    d = hf.get("head_dim") or h // H
    attention = h * H * d * 2 + h * KV * d * 2
    mlp = 3 * h * i
    norms = 2 * h
    if hf.get("model_type") == "qwen3":
        # q_norm and k_norm over head_dim
        norms += 2 * d
    block = attention + mlp + norms
    lm_heads = 1 if hf.get("tie_word_embeddings") else 2
    root = V * h * lm_heads + h
    return root + L * block, block, root


def memory_items(
    cfg: TrainConfig, hf: dict, world_size: int
) -> tuple[dict[str, float], float, float]:
    """The per-GPU items of `memory_budget`, in bytes, in its order: learner resident (first 3),
    training extra (next 4), engine (last 3). Returns (items, KV bytes per token, KV tokens)."""
    p = cfg.policy
    tp = p.vllm_tensor_parallel_size
    W = world_size
    P, block, root = count_params(hf)
    h = hf["hidden_size"]
    i = hf["intermediate_size"]
    L = hf["num_hidden_layers"]
    V = hf["vocab_size"]
    kv_heads = hf.get("num_key_value_heads", hf["num_attention_heads"])
    d = hf.get("head_dim") or h // hf["num_attention_heads"]
    T = cfg.micro_batch_tokens
    if p.activation_checkpointing:
        act = 2 * L * T * h + 2 * T * (8 * h + 4 * i)
    else:
        act = 2 * L * T * (8 * h + 4 * i)
    kv_per_token = 2 * L * max(1.0, kv_heads / tp) * d * 2
    kv_tokens = (
        p.vllm_kv_fill * cfg.rollout.max_concurrent_episodes * cfg.rollout.max_context_tokens
    )
    items = {
        "fp32 master weights 4P/W": 4 * P / W,
        "AdamW state 8P/W": 8 * P / W,
        "reference model 2P/W": 2 * P / W if cfg.grpo.kl_coef > 0 else 0.0,
        "fp32 gradients 4P/W": 4 * P / W,
        "bf16 gathered root + 2 blocks": 2 * (root + 2 * block),
        f"activations (T={T})": act,
        "log-prob head": 2 * (2**25 // V) * V * 4 + 4 * V * h,
        f"engine weights 2P/tp (tp={tp})": 2 * P / tp,
        "KV cache": kv_per_token * kv_tokens,
        "engine reserve": ENGINE_RESERVE_BYTES,
    }
    return items, kv_per_token, kv_tokens


def memory_budget(cfg: TrainConfig, hf: dict, world_size: int, gpu_bytes: int) -> tuple[bool, str]:
    """Per-GPU memory of colocated training (FSDP2 over all ranks) and vLLM generation, and whether it fits.

    Returns (fits, report): the report lists every item in GiB and the three conditions. P parameters,
    W ranks, tp = policy.vllm_tensor_parallel_size, G = gpu_bytes, u = vllm_gpu_memory_utilization:

      learner resident   fp32 master 4P/W + AdamW m, v 8P/W (+ reference model 2P/W in bf16 when kl_coef > 0)
      training extra     fp32 grads 4P/W + bf16 gathered root and two blocks (FSDP2 prefetch)
                         + activations (micro_batch_tokens T: checkpointed block inputs 2*L*T*h + one block's
                           recompute 2*T*(8h + 4i); without checkpointing 2*L*T*(8h + 4i))
                         + log-prob head (two [2^25/V, V] fp32 chunks + fp32 [V, h] weight grad)
      engine             bf16 weights 2P/tp + KV cache (2 * L * max(1, kv_heads/tp) * head_dim * 2 bytes per
                         token) for vllm_kv_fill x max_concurrent_episodes x max_context_tokens tokens
                         + ENGINE_RESERVE (2 GiB)

      (1) start-up:  learner resident + u*G <= G      (vLLM refuses to start with less free memory)
      (2) rollout:   engine <= u*G                   (weights and the KV cache inside vLLM's share)
      (3) training:  learner resident + training extra + ENGINE_RESERVE <= G   (engine asleep)

    The kernels' workspace and fragmentation are not counted: treat a margin under ~5% as not fitting.
    The items come from `memory_items`.
    """
    p = cfg.policy
    ro = cfg.rollout
    tp = p.vllm_tensor_parallel_size
    u = p.vllm_gpu_memory_utilization
    G = gpu_bytes
    P = count_params(hf)[0]
    items, kv_per_token, kv_tokens = memory_items(cfg, hf, world_size)
    values = list(items.values())
    resident = sum(values[:3])
    extra = sum(values[3:7])
    engine = sum(values[7:])
    checks = [
        ("(1) start-up: learner resident + u*G <= G", resident + u * G, G),
        ("(2) rollout: engine <= u*G", engine, u * G),
        (
            "(3) training: resident + extra + reserve <= G",
            resident + extra + ENGINE_RESERVE_BYTES,
            G,
        ),
    ]
    lines = [
        f"memory per GPU: P = {P / 1e9:.2f}B params, W = {world_size} ranks, tp = {tp}, "
        f"G = {G / GiB:.1f} GiB, u = {u}"
    ]
    lines += [f"  {k:<34} {v / GiB:8.2f} GiB" for k, v in items.items()]
    lines.append(
        f"  KV cache = {kv_per_token / 2**10:.0f} KiB/token x {kv_tokens:,.0f} tokens "
        f"({p.vllm_kv_fill} x {ro.max_concurrent_episodes} episodes x {ro.max_context_tokens} tokens)"
    )
    fits = True
    for name, lhs, rhs in checks:
        ok = lhs <= rhs
        fits &= ok
        verdict = "ok" if ok else "DOES NOT FIT"
        lines.append(f"  {name}: {lhs / GiB:.2f} <= {rhs / GiB:.2f} GiB {verdict}")
    return fits, "\n".join(lines)


def check_memory_budget(cfg: TrainConfig, hf: dict, world_size: int, gpu_bytes: int) -> str:
    """`memory_budget`, plus the layout rules of tensor-parallel engines: world_size % tp == 0 and a TP
    group inside one node (tp <= nproc_per_node). Returns the report; raises ConfigError with the whole
    arithmetic when the configuration cannot fit."""
    tp = cfg.policy.vllm_tensor_parallel_size
    if world_size % tp:
        raise ConfigError(
            f"policy.vllm_tensor_parallel_size = {tp}: must divide the {world_size} ranks"
        )
    fits, report = memory_budget(cfg, hf, world_size, gpu_bytes)
    if not fits:
        raise ConfigError(f"policy: this configuration does not fit in GPU memory\n{report}")
    return report


def engine_memory_report(cfg: TrainConfig, model_dir: Path, world: int, device_bytes: int) -> str:
    """check_memory_budget of this node's vLLM engines on devices of `device_bytes` bytes,
    from model_dir's config.json: the resolved folder (weights.resolve_model_dir), since a
    built-in name such as 'default' is no folder. Raises ConfigError when it cannot fit."""
    hf = json.loads((Path(model_dir) / "config.json").read_text())
    return check_memory_budget(cfg, hf, world, device_bytes)
