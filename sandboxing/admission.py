"""What fits where: episodes on a Docker host, a training rank's host memory, colocated training and
vLLM on a GPU. Pure arithmetic over configs and what the machines report; every caller (train.py,
evaluate.py, sandboxing/hosts.py, bench/first_light.py) admits by these rules, so there is one.

Host (`episode_bytes`, `episodes_fit`, `host_budget`): an episode holds its sandbox and, while
verified, a verifier container from its snapshot: at most 2 x sandbox.memory_mb of memory (both
containers' caps) and 2 x sandbox.storage_mb of disk (the layer, then its snapshot and the
verifier's writes, disk.py). A training rank may reserve `rank_memory_mb` of RAM for itself first;
what is left to it (`rank_budget_bytes`) is the budget its peak RSS is reported against.

GPU (`memory_items`, `memory_budget`, `check_memory_budget`): the per-GPU items of FSDP2 training
beside a colocated vLLM engine, and the three conditions they must meet.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from configs import ConfigError, TrainConfig

# ----------------------------------------------------------------------------- GPU memory budget

GiB = 2**30
ENGINE_RESERVE_BYTES = (
    2 * GiB
)  # vLLM's CUDA context, CUDA graphs and sampler buffers, awake or asleep


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
    h, i, L, V = (
        hf["hidden_size"],
        hf["intermediate_size"],
        hf["num_hidden_layers"],
        hf["vocab_size"],
    )
    H, KV = hf["num_attention_heads"], hf.get("num_key_value_heads", hf["num_attention_heads"])
    d = hf.get("head_dim") or h // H
    block = (
        h * H * d * 2
        + h * KV * d * 2
        + 3 * h * i
        + 2 * h
        + (2 * d if hf.get("model_type") == "qwen3" else 0)
    )
    root = V * h * (1 if hf.get("tie_word_embeddings") else 2) + h
    return root + L * block, block, root


def memory_items(
    cfg: TrainConfig, hf: dict, world_size: int
) -> tuple[dict[str, float], float, float]:
    """The per-GPU items of `memory_budget`, in bytes, in its order: learner resident (first 3),
    training extra (next 4), engine (last 3). Returns (items, KV bytes per token, KV tokens)."""
    p, ro = cfg.policy, cfg.rollout
    tp, W = p.vllm_tensor_parallel_size, world_size
    P, block, root = count_params(hf)
    h, i, L = hf["hidden_size"], hf["intermediate_size"], hf["num_hidden_layers"]
    V = hf["vocab_size"]
    kv_heads = hf.get("num_key_value_heads", hf["num_attention_heads"])
    d = hf.get("head_dim") or h // hf["num_attention_heads"]
    T = cfg.micro_batch_tokens
    if p.activation_checkpointing:
        act = 2 * L * T * h + 2 * T * (8 * h + 4 * i)
    else:
        act = 2 * L * T * (8 * h + 4 * i)
    kv_per_token = 2 * L * max(1.0, kv_heads / tp) * d * 2
    kv_tokens = p.vllm_kv_fill * ro.max_concurrent_episodes * ro.max_context_tokens
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
    p, ro = cfg.policy, cfg.rollout
    tp, W, u, G = p.vllm_tensor_parallel_size, world_size, p.vllm_gpu_memory_utilization, gpu_bytes
    P = count_params(hf)[0]
    items, kv_per_token, kv_tokens = memory_items(cfg, hf, world_size)
    values = list(items.values())
    resident, extra, engine = sum(values[:3]), sum(values[3:7]), sum(values[7:])
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
        f"memory per GPU: P = {P / 1e9:.2f}B params, W = {W} ranks, tp = {tp}, G = {G / GiB:.1f} GiB, u = {u}"
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
        lines.append(
            f"  {name}: {lhs / GiB:.2f} <= {rhs / GiB:.2f} GiB {'ok' if ok else 'DOES NOT FIT'}"
        )
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


# ----------------------------------------------------------------------------- host admission

MIB = 2**20


def episode_bytes(memory_mb: int, storage_mb: int) -> tuple[int, int]:
    """(memory, disk) one episode may hold at once, bytes: 2 x memory_mb MiB (sandbox and verifier
    caps) and 2 x storage_mb MiB (the sandbox's layer, its snapshot and the verifier's writes)."""
    return 2 * memory_mb * MIB, 2 * storage_mb * MIB


def episodes_fit(
    ram_bytes: int,
    episode_mem: int,
    disk_bytes: int | None = None,
    episode_disk: int | None = None,
    ranks: int = 1,
    rank_bytes: int = 0,
) -> int:
    """Episodes in flight per rank that ram_bytes of RAM and disk_bytes of disk hold (the one rule):

        floor((ram_bytes - ranks x rank_bytes) / (ranks x episode_mem)),
        and, when disk_bytes is known, floor(disk_bytes / (ranks x episode_disk)), the smaller one

    episode_mem, episode_disk from `episode_bytes`; `ranks` ranks share the host, each first
    reserving rank_bytes (0: nothing). All bytes; never below 0. Example: 0.8 x 25.3e9 B, 2 GiB
    per episode, 1 rank -> floor(20.2e9 / 2^31) = 9. Raises ValueError for a size <= 0."""
    if episode_mem <= 0 or (episode_disk is not None and episode_disk <= 0) or ranks < 1:
        raise ValueError(
            f"episode_mem = {episode_mem}, episode_disk = {episode_disk}, ranks = {ranks}: "
            "must be > 0"
        )
    n = math.floor((ram_bytes - ranks * rank_bytes) / (ranks * episode_mem))
    if disk_bytes is not None and episode_disk is not None:
        n = min(n, math.floor(disk_bytes / (ranks * episode_disk)))
    return max(0, n)


def rank_budget_bytes(ram_bytes: int, ranks: int, fits: int, memory_mb: int) -> int:
    """What the host admission leaves each rank for itself, bytes: its share of the available RAM
    less what its `fits` episodes may hold (episode_bytes). A rank killed for memory is reported
    against it (learner/launch.py)."""
    return ram_bytes // ranks - fits * episode_bytes(memory_mb, 0)[0]


def host_budget(
    episodes: int,
    memory_mb: int,
    storage_mb: int,
    ranks: int,
    ram_bytes: int,
    disk_bytes: int,
    rank_memory_mb: int = 0,
) -> tuple[int, str]:
    """Episodes in flight per rank that this host's available RAM and the Docker data root's free
    disk can hold, after each of the `ranks` ranks reserved rank_memory_mb MiB (`episodes_fit`):
    fits = min(episodes, what the RAM holds, what the disk holds).

    Returns (fits, the arithmetic as one line, saying when it lowers episodes).
    Raises:
        ConfigError: not even one episode per rank fits (the line says which resource is short).
    """
    mem, disk = episode_bytes(memory_mb, storage_mb)
    rank_bytes = rank_memory_mb * MIB
    by_ram = episodes_fit(ram_bytes, mem, ranks=ranks, rank_bytes=rank_bytes)
    by_disk = episodes_fit(2**62, mem, disk_bytes, disk, ranks=ranks)
    fits = min(episodes, by_ram, by_disk)
    per_rank = f"{episodes} episodes x (2 x {memory_mb} MiB memory, 2 x {storage_mb} MiB disk)"
    if rank_bytes:  # the rank's own memory first
        per_rank = f"({rank_memory_mb / 1024:.1f} GiB + {per_rank})"
    line = (
        f"[host] {ranks} rank(s) x {per_rank} = {ranks * (episodes * mem + rank_bytes) / GiB:.1f} "
        f"GiB of {ram_bytes / GiB:.1f} GiB available RAM, {ranks * episodes * disk / GiB:.1f} GiB "
        f"of {disk_bytes / GiB:.1f} GiB free disk: room for {by_ram} (RAM) and {by_disk} (disk) "
        "per rank"
    )
    if fits < 1:
        short = "RAM" if by_ram < 1 else "disk"
        raise ConfigError(
            f"{line}; not one episode fits in the host's {short}: lower sandbox.memory_mb / "
            "sandbox.storage_mb or free some"
        )
    if fits < episodes:
        return fits, f"{line}; rollout.max_concurrent_episodes lowered from {episodes} to {fits}"
    return fits, f"{line}; fits"


def admit_rank(
    cfg: TrainConfig, engines: int, local_ranks: int, ram: int, disk: int
) -> tuple[int, str, int]:
    """The episodes one training rank may run at once on this host: its share of a step's episodes
    over `engines` generation engines, at most rollout.max_concurrent_episodes, fitted by
    host_budget to `ram` / `disk` bytes (sandbox.host_resources) shared by `local_ranks` ranks.
    Returns (episodes, the `[host]` line, the rank's own RAM budget in bytes: rank_budget_bytes)."""
    per_rank = -(-cfg.tasks_per_step // engines) * cfg.grpo.group_size
    episodes = min(cfg.rollout.max_concurrent_episodes, per_rank)
    sb = cfg.sandbox
    fits, line = host_budget(
        episodes, sb.memory_mb, sb.storage_mb, local_ranks, ram, disk, cfg.rank_memory_mb
    )
    return fits, line, rank_budget_bytes(ram, local_ranks, fits, sb.memory_mb)


def engine_memory_report(cfg: TrainConfig, model_dir: Path, world: int, device_bytes: int) -> str:
    """check_memory_budget of this node's vLLM engines on devices of `device_bytes` bytes,
    from model_dir's config.json: the resolved folder (weights.resolve_model_dir), since a
    built-in name such as 'default' is no folder. Raises ConfigError when it cannot fit."""
    hf = json.loads((Path(model_dir) / "config.json").read_text())
    return check_memory_budget(cfg, hf, world, device_bytes)
