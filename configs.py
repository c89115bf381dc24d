"""Every knob of termrl as a typed dataclass, plus named presets.

Configs are data: presets are instances, not subclasses, and no logic anywhere branches on a
preset's name. `parse_cli` turns `--preset NAME` plus field overrides into a validated
`TrainConfig` through tyro, so `python train.py --help` lists every knob with its one-line doc.

    python train.py --preset qwen3-8b-2xa100 --grpo.group-size 16 --train.steps 200
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

# Names that PolicyConfig.path accepts besides a folder: the embedded default and a tiny random Qwen3.
BUILTIN_MODELS = ("default", "tiny-random-qwen3")


def cache_dir() -> Path:
    """Where termrl caches the imported default model, tiny models, materialised CSV tasks and build
    locks: $TERMRL_CACHE, else ~/.cache/termrl (scripts/setup.sh keeps its stamps there too)."""
    return Path(os.environ.get("TERMRL_CACHE") or Path.home() / ".cache" / "termrl")


class ConfigError(ValueError):
    """A config value is invalid. The message names the field, e.g. `grpo.group_size`."""


@dataclass
class PolicyConfig:
    """The policy model and the generation engine it is served by."""

    path: str = "default"  # HF folder (config.json + safetensors), or 'default' (embedded SmolLM2-135M-Instruct) or 'tiny-random-qwen3'
    dtype: Literal["float32", "bfloat16"] = "float32"  # learner parameter dtype (bf16 params need a GPU)
    activation_checkpointing: bool = False  # recompute each block's activations in backward (saves memory)
    action_format: Literal["hermes", "markdown"] = "hermes"  # how the model calls tools: Hermes <tool_call> JSON or fenced bash blocks
    engine: Literal["auto", "torch", "vllm", "openai"] = "auto"  # generation engine; auto = vllm on CUDA when installed, else torch
    max_seq_len: int = 8192  # longest trajectory (prompt + all turns) the engine and learner handle, in tokens
    engine_max_batch: int = 32  # sequences decoded together by the torch engine
    vllm_gpu_memory_utilization: float = 0.5  # share of GPU memory vLLM may take for weights + KV cache
    openai_base_url: str = ""  # base URL of an OpenAI-compatible server (engine=openai)


@dataclass
class SandboxConfig:
    """Docker sandboxes: one container per episode."""

    base_image: str = "termrl/base:bookworm"  # image task Dockerfiles build FROM (env BASE_IMAGE overrides)
    memory_mb: int = 1024  # container memory limit, MiB (swap equal: no swap)
    cpus: float = 1.0  # CPU quota per container, cores
    pids: int = 256  # max processes per container
    max_concurrent: int = 0  # containers started/used at once; 0 = from CPU count and memory
    output_limit_bytes: int = 16384  # bytes of command output kept (head + tail) per exec
    exec_timeout_s: float = 60.0  # default timeout of one agent command, seconds
    # FROM images that are not present locally (no registry is reachable) -> local base, "fnmatch-pattern=image";
    # the first match wins (images.py). Defaults: the Terminal-Bench / terminal-bench-rl base images.
    image_map: tuple[str, ...] = (
        "ghcr.io/laude-institute/t-bench/python-3-13:*=termrl/base:trixie",
        "ghcr.io/laude-institute/t-bench/ubuntu-24-04:*=termrl/base:trixie",
        "python:3*=termrl/base:trixie", "ubuntu:*=termrl/base:trixie", "debian:*=termrl/base:trixie",
        "buildpack-deps:*=termrl/base:trixie")
    build_network: str = "auto"  # task builds: 'none', 'host', or 'auto' (host when a package mirror answers)


@dataclass
class RolloutConfig:
    """The agent loop and its limits."""

    max_turns: int = 16  # assistant turns per episode (a task's max_turns overrides)
    max_context_tokens: int = 8192  # stop the episode before the trajectory would exceed this, tokens
    max_tokens_per_turn: int = 1024  # tokens generated per assistant turn
    episode_timeout_s: float = 900.0  # wall clock per episode, seconds (a task's agent_timeout_s, if lower, wins)
    max_format_errors: int = 3  # consecutive malformed turns that end the episode
    max_tool_arg_bytes: int = 65536  # larger tool arguments get an error observation
    temperature: float = 1.0  # sampling temperature
    top_p: float = 1.0  # nucleus sampling threshold (1.0 = off)
    top_k: int = 0  # top-k sampling (0 = off)
    max_concurrent_episodes: int = 64  # episodes in flight per rank


@dataclass
class RewardConfig:
    """Reward = w_tests * weighted test pass fraction + w_judge * judge score."""

    w_tests: float = 0.65  # weight of the hidden tests
    w_judge: float = 0.35  # weight of the LLM judge (ignored when no judge backend is set)
    judge_backends: tuple[str, ...] = ()  # chain tried in order: 'anthropic:MODEL[@BASE_URL]' or 'openai:MODEL@BASE_URL'
    judge_timeout_s: float = 60.0  # per request, seconds
    judge_max_retries: int = 2  # retries per backend before moving to the next one
    judge_cooldown_s: float = 300.0  # a backend that keeps failing is skipped this long, seconds
    judge_max_concurrent: int = 8  # judge requests in flight
    judge_transcript_tokens: int = 6000  # transcript budget; longer ones are cut in the middle (approx. tokens)
    judge_cache_dir: str = ""  # on-disk cache of judge replies ('' = <out_dir>/judge_cache)
    judge_switch_file: str = ""  # file whose content names the primary backend; re-read while training
    judge_backoff_s: float = 1.0  # first retry delay, doubled per retry (jittered), seconds
    judge_backoff_max_s: float = 30.0  # cap on one retry delay, seconds
    judge_max_retry_after_s: float = 60.0  # a longer retry-after moves on to the next backend at once, seconds
    judge_cooldown_after: int = 2  # consecutive failed calls before a backend is skipped for judge_cooldown_s
    judge_max_tokens: int = 1024  # judge reply budget, tokens
    judge_temperature: float = 0.0  # judge sampling temperature (openai backends; the anthropic SDK 2.x has none)
    judge_default_price: tuple[float, float] = (3.0, 15.0)  # USD per million input/output tokens, models not in reward.PRICES


@dataclass
class GRPOConfig:
    """Advantages and the clipped policy-gradient loss (grpo.py)."""

    group_size: int = 8  # rollouts per task (G); must be >= 2
    advantage: Literal["grpo", "drgrpo", "rloo"] = "grpo"  # advantage estimator
    clip_low: float = 0.2  # ratio lower clip: 1 - clip_low
    clip_high: float = 0.28  # ratio upper clip: 1 + clip_high (DAPO clip-higher)
    dual_clip: float = 0.0  # dual-clip constant c > 1 for negative advantages (0 = off)
    kl_coef: float = 0.0  # weight of the KL penalty to the reference policy (0 = no reference model)
    kl_estimator: Literal["k2", "k3"] = "k3"  # KL loss term: k2 descends KL(pi||pi_ref), k3 descends KL(pi_ref||pi)
    tis_cap: float = 2.0  # truncated importance sampling cap on pi_learner/pi_engine (0 = off)
    aggregation: Literal["token_mean", "seq_mean_token_mean", "seq_mean_token_sum_norm"] = "token_mean"  # loss aggregation
    drop_zero_variance_groups: bool = True  # drop groups whose rewards are all equal (no signal)
    mask_truncated: bool = False  # exclude episodes cut off by a limit from the loss
    num_minibatches: int = 1  # optimizer steps per rollout batch; > 1 recomputes old log-probs first (PPO-style)


@dataclass
class TrainConfig:
    """The whole run: what `torchrun ... train.py` and `python evaluate.py` read."""

    policy: PolicyConfig = field(default_factory=PolicyConfig)
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    rollout: RolloutConfig = field(default_factory=RolloutConfig)
    reward: RewardConfig = field(default_factory=RewardConfig)
    grpo: GRPOConfig = field(default_factory=GRPOConfig)

    tasks: str = "tasks/data"  # task folder, Terminal-Bench folder or CSV
    task_ids: tuple[str, ...] = ()  # only these task ids (empty = all)
    difficulties: tuple[str, ...] = ()  # only these difficulties (empty = all)
    steps: int = 100  # optimizer steps
    tasks_per_step: int = 8  # tasks per step over all ranks (each run group_size times)
    lr: float = 1e-6  # peak learning rate
    lr_schedule: Literal["cosine", "constant"] = "cosine"  # after warmup
    warmup_steps: int = 0  # linear warmup steps
    weight_decay: float = 0.0  # AdamW weight decay
    grad_clip: float = 1.0  # max global gradient norm (0 = off)
    micro_batch_tokens: int = 16384  # tokens per packed micro-batch on each rank
    epochs_shuffle: bool = True  # reshuffle the tasks every epoch
    curriculum: bool = False  # skip tasks whose recent groups were all 0 or all 1
    curriculum_window: int = 2  # how many recent groups of a task the curriculum looks at
    seed: int = 0  # seeds the sampler, sampling and init
    out_dir: str = "runs/default"  # checkpoints, logs, trajectories, HF export
    save_every: int = 50  # checkpoint every N steps (and at the end)
    resume: bool = False  # continue from the latest checkpoint in out_dir
    checkpoint_on_signal: bool = True  # write a checkpoint when stopped by SIGINT/SIGTERM
    logger: Literal["none", "wandb", "tensorboard"] = "none"  # extra metrics sink when installed
    nproc_per_node: int = 1  # ranks per node this preset is meant for (documentation; torchrun decides)
    nnodes: int = 1  # nodes this preset is meant for (documentation; torchrun decides)


def _replace(cfg: TrainConfig, **sections) -> TrainConfig:
    """A copy of cfg with some fields of some sections replaced: _replace(c, grpo=dict(group_size=4))."""
    out = copy.deepcopy(cfg)  # presets share no section objects
    for name, changes in sections.items():
        if isinstance(changes, dict):
            setattr(out, name, dataclasses.replace(getattr(cfg, name), **changes))
        else:
            setattr(out, name, changes)
    return out


_QWEN3_32B_8XH100 = _replace(
    TrainConfig(),
    policy=dict(path="checkpoints/Qwen3-32B", dtype="bfloat16", activation_checkpointing=True, engine="vllm",
                max_seq_len=32768, vllm_gpu_memory_utilization=0.5),
    rollout=dict(max_turns=32, max_context_tokens=32768, max_tokens_per_turn=4096, max_concurrent_episodes=128),
    grpo=dict(group_size=8),
    steps=300, tasks_per_step=32, lr=5e-7, warmup_steps=10, micro_batch_tokens=32768,
    out_dir="runs/qwen3-32b-8xh100", save_every=25, nproc_per_node=8,
)

PRESETS: dict[str, TrainConfig] = {
    # The embedded default: 2 gloo ranks on a CPU box, SmolLM2-135M-Instruct, easy starter tasks.
    "cpu-smollm2": _replace(
        TrainConfig(),
        policy=dict(path="default", action_format="markdown", engine="torch", max_seq_len=2048, engine_max_batch=8),
        sandbox=dict(memory_mb=512, cpus=0.5),
        # temperature 0.7 / top_p 0.95 / top_k 40: at 1.0 the 135M model rambles; sampled, so groups still vary
        rollout=dict(max_turns=3, max_context_tokens=2048, max_tokens_per_turn=128, episode_timeout_s=240.0,
                     temperature=0.7, top_p=0.95, top_k=40, max_concurrent_episodes=8),
        grpo=dict(group_size=4),
        # easy tasks on which SmolLM2-135M gets partial credit some of the time (reward variance within a group)
        task_ids=("write-hello-file", "make-output-dir", "delete-tmp-log", "rename-file", "append-line", "copy-config"),
        difficulties=("easy",), steps=8, tasks_per_step=2, lr=2e-6, micro_batch_tokens=4096,
        out_dir="runs/cpu-smollm2", save_every=4, nproc_per_node=2,
    ),
    "qwen3-8b-2xa100": _replace(
        TrainConfig(),
        policy=dict(path="checkpoints/Qwen3-8B", dtype="bfloat16", activation_checkpointing=True, engine="vllm",
                    max_seq_len=16384, vllm_gpu_memory_utilization=0.45),
        rollout=dict(max_turns=24, max_context_tokens=16384, max_tokens_per_turn=2048, max_concurrent_episodes=64),
        grpo=dict(group_size=8),
        steps=200, tasks_per_step=16, lr=1e-6, warmup_steps=10, micro_batch_tokens=32768,
        out_dir="runs/qwen3-8b-2xa100", save_every=25, nproc_per_node=2,
    ),
    "qwen3-32b-8xh100": _QWEN3_32B_8XH100,
    # The same recipe on 4 nodes x 8 GPUs: 4x the tasks per step, larger groups.
    "qwen3-32b-32xh100": _replace(_QWEN3_32B_8XH100, grpo=dict(group_size=16), tasks_per_step=128,
                                  out_dir="runs/qwen3-32b-32xh100", nnodes=4),
}
DEFAULT_PRESET = "cpu-smollm2"


def validate(cfg: TrainConfig, check_paths: bool = True) -> TrainConfig:
    """Check every value that has a valid range; return cfg unchanged.

    Raises:
        ConfigError: naming the field (`section.field`) and the value, e.g.
            "grpo.group_size = 1: must be >= 2 (GRPO needs a group to compare)".
    """

    def need(ok: bool, name: str, value, why: str) -> None:
        if not ok:
            raise ConfigError(f"{name} = {value!r}: {why}")

    g, r, ro, sb, p = cfg.grpo, cfg.reward, cfg.rollout, cfg.sandbox, cfg.policy
    need(g.group_size >= 2, "grpo.group_size", g.group_size, "must be >= 2 (GRPO compares rollouts within a group)")
    need(g.clip_low > 0, "grpo.clip_low", g.clip_low, "must be > 0")
    need(g.clip_high > 0, "grpo.clip_high", g.clip_high, "must be > 0")
    need(g.dual_clip == 0 or g.dual_clip > 1, "grpo.dual_clip", g.dual_clip, "must be 0 (off) or > 1")
    need(g.kl_coef >= 0, "grpo.kl_coef", g.kl_coef, "must be >= 0")
    need(g.tis_cap == 0 or g.tis_cap >= 1, "grpo.tis_cap", g.tis_cap, "must be 0 (off) or >= 1")
    need(r.w_tests >= 0, "reward.w_tests", r.w_tests, "must be >= 0")
    need(r.w_judge >= 0, "reward.w_judge", r.w_judge, "must be >= 0")
    need(r.w_tests + r.w_judge > 0, "reward.w_tests + reward.w_judge", r.w_tests + r.w_judge, "must have a positive sum")
    need(r.judge_max_retries >= 0, "reward.judge_max_retries", r.judge_max_retries, "must be >= 0")
    need(r.judge_timeout_s > 0, "reward.judge_timeout_s", r.judge_timeout_s, "must be > 0")
    for spec in r.judge_backends:
        kind = spec.split(":", 1)[0]
        need(kind in ("anthropic", "openai") and ":" in spec, "reward.judge_backends", spec,
             "each entry must be 'anthropic:MODEL[@BASE_URL]' or 'openai:MODEL@BASE_URL'")
        need(kind != "openai" or "@" in spec, "reward.judge_backends", spec, "an openai backend needs '@BASE_URL'")
    need(ro.max_turns >= 1, "rollout.max_turns", ro.max_turns, "must be >= 1")
    need(ro.max_tokens_per_turn >= 1, "rollout.max_tokens_per_turn", ro.max_tokens_per_turn, "must be >= 1")
    need(ro.max_context_tokens > ro.max_tokens_per_turn, "rollout.max_context_tokens", ro.max_context_tokens,
         "must exceed rollout.max_tokens_per_turn")
    need(ro.episode_timeout_s > 0, "rollout.episode_timeout_s", ro.episode_timeout_s, "must be > 0")
    need(ro.temperature > 0, "rollout.temperature", ro.temperature, "must be > 0 (GRPO needs sampled, not greedy, rollouts)")
    need(0 < ro.top_p <= 1, "rollout.top_p", ro.top_p, "must be in (0, 1]")
    need(ro.top_k >= 0, "rollout.top_k", ro.top_k, "must be >= 0")
    need(ro.max_format_errors >= 1, "rollout.max_format_errors", ro.max_format_errors, "must be >= 1")
    need(sb.memory_mb >= 64, "sandbox.memory_mb", sb.memory_mb, "must be >= 64")
    need(sb.cpus > 0, "sandbox.cpus", sb.cpus, "must be > 0")
    need(sb.pids >= 16, "sandbox.pids", sb.pids, "must be >= 16")
    need(sb.max_concurrent >= 0, "sandbox.max_concurrent", sb.max_concurrent, "must be >= 0 (0 = auto)")
    need(sb.output_limit_bytes >= 256, "sandbox.output_limit_bytes", sb.output_limit_bytes, "must be >= 256")
    need(p.max_seq_len >= ro.max_context_tokens, "policy.max_seq_len", p.max_seq_len,
         "must be >= rollout.max_context_tokens")
    need(p.engine != "openai" or bool(p.openai_base_url), "policy.openai_base_url", p.openai_base_url,
         "is required when policy.engine = 'openai'")
    need(cfg.steps >= 1, "steps", cfg.steps, "must be >= 1")
    need(cfg.tasks_per_step >= 1, "tasks_per_step", cfg.tasks_per_step, "must be >= 1")
    need(cfg.lr > 0, "lr", cfg.lr, "must be > 0")
    need(cfg.warmup_steps >= 0, "warmup_steps", cfg.warmup_steps, "must be >= 0")
    need(cfg.grad_clip >= 0, "grad_clip", cfg.grad_clip, "must be >= 0 (0 = off)")
    need(cfg.micro_batch_tokens >= 64, "micro_batch_tokens", cfg.micro_batch_tokens, "must be >= 64")
    need(cfg.save_every >= 1, "save_every", cfg.save_every, "must be >= 1")
    bad = [d for d in cfg.difficulties if d not in ("easy", "medium", "hard", "extremely_hard")]
    need(not bad, "difficulties", cfg.difficulties, "each must be one of easy, medium, hard, extremely_hard")
    if check_paths:
        need(Path(cfg.tasks).exists(), "tasks", cfg.tasks, "path does not exist")
        need(p.path in BUILTIN_MODELS or Path(p.path).is_dir(), "policy.path", p.path,
             f"must be a model folder or one of {BUILTIN_MODELS}")
    return cfg


def parse_cli(args: list[str] | None = None, description: str | None = None, check_paths: bool = True) -> TrainConfig:
    """Parse `--preset NAME` (default cpu-smollm2) and tyro field overrides into a validated TrainConfig.

    Raises:
        ConfigError: unknown preset (listing the known ones) or an invalid value (naming the field).
        SystemExit: from tyro on unknown flags or `--help`.
    """
    import tyro  # imported here so `import configs` stays cheap for worker processes

    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--preset", default=os.environ.get("TERMRL_PRESET", DEFAULT_PRESET))
    known, rest = pre.parse_known_args(args)
    if known.preset not in PRESETS:
        raise ConfigError(f"preset = {known.preset!r}: unknown; choose one of {', '.join(PRESETS)}")
    doc = (description or "termrl") + f"\n\npreset: {known.preset} (--preset NAME, one of: {', '.join(PRESETS)})"
    cfg = tyro.cli(TrainConfig, default=PRESETS[known.preset], args=rest, description=doc)
    return validate(cfg, check_paths=check_paths)
