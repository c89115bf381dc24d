"""Every knob of training and evaluation as a typed dataclass, plus named presets. The experiments'
own knobs (`make learn`, `make learn-single`, the warm start) are in experiments/settings.py.

Configs are data: presets are instances, not subclasses, and no logic anywhere branches on a
preset's name. `parse_cli` turns `--preset NAME` plus field overrides into a validated
`TrainConfig` through tyro, so `python train.py --help` lists every knob with its one-line doc.

    python train.py --preset qwen3-8b-4xa100 --grpo.group-size 16 --train.steps 200
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import importlib.util
import json
import math
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

import tyro

# Names that PolicyConfig.path accepts besides a folder: the embedded default and a tiny random Qwen3.
BUILTIN_MODELS = ("default", "tiny-random-qwen3")

# The base images, built by scripts/base_image.sh under content-addressed tags (suite-recipe hash), so a
# changed recipe is a new tag and runs of the old code keep theirs; tests/test_setup.py checks these
# against `base_image.sh [suite] --print-recipe-hash`. bookworm: Python 3.11; trixie: Python 3.13.
BASE_TAGS = {
    "bookworm": "termrl/base:bookworm-4b4886f50960d0c1",
    "trixie": "termrl/base:trixie-e078242fabb9e112",
}
# The image task Dockerfiles build FROM; $BASE_IMAGE replaces it everywhere.
DEFAULT_BASE_IMAGE = BASE_TAGS["bookworm"]
# grpo.refill_rounds' upper bound: each round is another rollout of the step, so a step of tasks with
# no reward variance takes up to 1 + this many rollouts before it trains
MAX_REFILL_ROUNDS = 8


def default_base_image() -> str:
    """$BASE_IMAGE if set (README: any local Debian/Ubuntu image with python3 and pytest), else
    DEFAULT_BASE_IMAGE. The one source of SandboxConfig.base_image's default and images.BASE_IMAGE."""
    return os.environ.get("BASE_IMAGE") or DEFAULT_BASE_IMAGE


def cache_dir() -> Path:
    """Where termrl caches the imported default model, tiny models, materialised CSV tasks and build
    locks: $TERMRL_CACHE, else ~/.cache/termrl (scripts/setup.sh keeps its stamps there too)."""
    return Path(os.environ.get("TERMRL_CACHE") or Path.home() / ".cache" / "termrl")


class ConfigError(ValueError):
    """A config value is invalid. The message names the field, e.g. `grpo.group_size`."""


@dataclass
class PolicyConfig:
    """The policy model and the generation engine it is served by."""

    # HF folder (config.json + safetensors), or 'default' (embedded SmolLM2-135M-Instruct) or
    # 'tiny-random-qwen3'
    path: str = "default"
    # learner parameter dtype (bf16 params need a GPU)
    dtype: Literal["float32", "bfloat16"] = "float32"
    # recompute each block's activations in backward (saves memory)
    activation_checkpointing: bool = False
    # how the model calls tools: Hermes <tool_call> JSON or fenced bash blocks
    action_format: Literal["hermes", "markdown"] = "hermes"
    # generation engine; auto = vllm on CUDA when installed, else torch
    engine: Literal["auto", "torch", "vllm"] = "auto"
    # longest trajectory (prompt + all turns) the engine and learner handle, in tokens
    max_seq_len: int = 8192
    engine_max_batch: int = 32  # sequences decoded together by the torch engine
    # torch engine on CPU: step via engines/cpu_fast.py (same greedy tokens)
    engine_fast_cpu: bool = True
    # torch engine: prompt-lookup draft tokens while <= this many sequences decode (0 = off;
    # measured on CPU)
    engine_speculate_max_batch: int = 4
    # torch engine, while drafting: most draft tokens per sequence and step (<= 6 fed per step,
    # yet >= 1 each)
    engine_speculate_tokens: int = 5
    # torch engine: batch each turn of a rollout's episodes together in a fixed order, so a run
    # (and its resume) samples the same tokens whatever the containers' timing (off: continuous
    # batching, a request admitted as soon as a slot is free)
    engine_lockstep: bool = True
    # share of GPU memory vLLM may take for weights + KV cache
    vllm_gpu_memory_utilization: float = 0.5
    # GPUs per vLLM engine (consecutive ranks of one node); ranks / tp engines
    vllm_tensor_parallel_size: int = 1
    # vLLM KV cache in MiB (0 = from vllm_gpu_memory_utilization on CUDA, 512 on CPU)
    vllm_kv_cache_mib: int = 0
    # between rollouts: 1 = weights to host RAM, 2 = discard them (pushed again each step); a
    # rollout rank with max_off_policy_steps 1 sleeps at 1 (its next rollout runs before a push)
    vllm_sleep_level: Literal[1, 2] = 2
    # share of max_concurrent_episodes x max_context_tokens the KV cache must hold (start-up check)
    vllm_kv_fill: float = 0.25


@dataclass
class SandboxConfig:
    """Docker sandboxes: one container per episode."""

    # image task Dockerfiles build FROM (default: $BASE_IMAGE, else BASE_TAGS['bookworm'])
    base_image: str = field(default_factory=default_base_image)
    memory_mb: int = 1024  # container memory limit, MiB (swap equal: no swap)
    cpus: float = 1.0  # CPU quota per container, cores
    pids: int = 256  # max processes per container
    storage_mb: int = 2048  # disk a container may write (no file larger), MiB; past it: killed
    # files, folders and links a container's writable layer may hold; past it: killed (a snapshot
    # writes each one: a header and an inode on the host)
    max_files: int = 100_000
    max_concurrent: int = 0  # containers started/used at once; 0 = from CPU count and memory
    output_limit_bytes: int = 16384  # bytes of command output kept (head + tail) per exec
    exec_timeout_s: float = 60.0  # default timeout of one agent command, seconds
    # the verifier's wall clock, seconds, without tests that hung (0 = 3 x the task's per-test timeout);
    # past it the machine was too slow: the episode is an error (masked), never a 0
    verify_wall_s: float = 0.0
    # FROM images that are not present locally (no registry is reachable) -> local base, "fnmatch-pattern=image";
    # the first match wins (images.py). Defaults: the Terminal-Bench / terminal-bench-rl base images.
    # Ubuntu images map to Debian trixie: no Ubuntu mirror here; an apt package Debian names otherwise
    # fails the build with a line naming the package and this mapping (images.py).
    image_map: tuple[str, ...] = (
        f"ghcr.io/laude-institute/t-bench/python-3-13:*={BASE_TAGS['trixie']}",
        f"ghcr.io/laude-institute/t-bench/ubuntu-24-04:*={BASE_TAGS['trixie']}",
        f"python:3.11*={BASE_TAGS['bookworm']}",  # the Python a task names: 3.11 on Debian 12,
        f"python:3*={BASE_TAGS['trixie']}",  # else 3.13 (the newest here)
        f"ubuntu:*={BASE_TAGS['trixie']}",
        f"debian:*={BASE_TAGS['trixie']}",
        f"buildpack-deps:*={BASE_TAGS['trixie']}",
    )
    # task builds: 'none', 'bridge' (the engine's bridge: never the host's loopback), or 'auto' (bridge
    # when a package mirror answers and the Dockerfile fetches packages)
    build_network: Literal["auto", "bridge", "none"] = "auto"
    # memory of each RUN step of an image build, MiB (no swap)
    build_memory_mb: int = 4096
    # processes of an image build's RUN steps at once (a local cgroupfs engine)
    build_pids: int = 4096
    # wall clock of one whole image build, seconds (however much it prints)
    build_timeout_s: float = 3600.0
    # Docker engines the sandboxes spread over: 'local', unix:///PATH, tcp://HOST:PORT (TLS), ssh://HOST, each
    # optionally '=N' (episodes at once there; default what its memory and disk fit). Empty: local only (hosts.py).
    docker_hosts: tuple[str, ...] = ()


@dataclass
class RolloutConfig:
    """The agent loop and its limits."""

    max_turns: int = 16  # assistant turns per episode (a task's max_turns, if lower, wins)
    # stop the episode before the trajectory would exceed this, tokens
    max_context_tokens: int = 8192
    max_tokens_per_turn: int = 1024  # tokens generated per assistant turn
    # wall clock per episode, seconds (a task's agent_timeout_s, if lower, wins)
    episode_timeout_s: float = 900.0
    max_format_errors: int = 3  # consecutive malformed turns that end the episode
    max_tool_arg_bytes: int = 65536  # larger tool arguments get an error observation
    temperature: float = 1.0  # sampling temperature
    top_p: float = 1.0  # nucleus sampling threshold (1.0 = off)
    top_k: int = 0  # top-k sampling (0 = off)
    max_concurrent_episodes: int = 64  # episodes in flight per rank
    # a turn cut at max_tokens_per_turn ends the episode (stop reason max_tokens_per_turn); False: a
    # cut turn without a complete action is a malformed turn (max_format_errors) and the episode goes on
    end_on_turn_cap: bool = False


@dataclass
class RewardConfig:
    """Reward = w_tests * weighted test pass fraction + w_judge * judge score."""

    w_tests: float = 0.65  # weight of the hidden tests
    w_judge: float = 0.35  # weight of the LLM judge (ignored when no judge backend is set)
    # chain tried in order: 'anthropic:MODEL[@BASE_URL]' or 'openai:MODEL@BASE_URL'
    judge_backends: tuple[str, ...] = ()
    judge_timeout_s: float = 60.0  # per request, seconds
    judge_max_retries: int = 2  # retries per backend before moving to the next one
    judge_cooldown_s: float = 300.0  # a backend that keeps failing is skipped this long, seconds
    judge_max_concurrent: int = 8  # judge requests in flight
    # transcript budget; longer ones are cut in the middle (approx. tokens)
    judge_transcript_tokens: int = 6000
    judge_cache_dir: str = ""  # on-disk cache of judge replies ('' = <out_dir>/judge_cache)
    # file whose content names the primary backend; re-read while training
    judge_switch_file: str = ""
    judge_backoff_s: float = 1.0  # first retry delay, doubled per retry (jittered), seconds
    judge_backoff_max_s: float = 30.0  # cap on one retry delay, seconds
    # a longer retry-after moves on to the next backend at once, seconds
    judge_max_retry_after_s: float = 60.0
    # consecutive failed calls before a backend is skipped for judge_cooldown_s
    judge_cooldown_after: int = 2
    judge_max_tokens: int = 1024  # judge reply budget, tokens
    # judge sampling temperature (openai backends; the anthropic SDK 2.x has none)
    judge_temperature: float = 0.0
    # USD per million input/output tokens, models not in judge.PRICES
    judge_default_price: tuple[float, float] = (3.0, 15.0)


@dataclass
class GRPOConfig:
    """Advantages and the clipped policy-gradient loss (grpo.py)."""

    group_size: int = 8  # rollouts per task (G); must be >= 2
    advantage: Literal["grpo", "drgrpo", "rloo"] = "grpo"  # advantage estimator
    clip_low: float = 0.2  # ratio lower clip: 1 - clip_low
    clip_high: float = 0.28  # ratio upper clip: 1 + clip_high (DAPO clip-higher)
    dual_clip: float = 0.0  # dual-clip constant c > 1 for negative advantages (0 = off)
    # weight of the KL penalty to the reference policy (0 = no reference model)
    kl_coef: float = 0.0
    # KL loss term: k2 descends KL(pi||pi_ref), k3 descends KL(pi_ref||pi)
    kl_estimator: Literal["k2", "k3"] = "k3"
    tis_cap: float = 2.0  # truncated importance sampling cap on pi_learner/pi_engine (0 = off)
    # loss aggregation
    aggregation: Literal["token_mean", "seq_mean_token_mean", "seq_mean_token_sum_norm"] = (
        "token_mean"
    )
    drop_zero_variance_groups: bool = True  # drop groups whose rewards are all equal (no signal)
    mask_truncated: bool = False  # exclude episodes cut off by a limit from the loss
    # optimizer steps per rollout batch; > 1 recomputes old log-probs first (PPO-style)
    num_minibatches: int = 1
    # DAPO dynamic sampling (Yu et al. 2025, 3.2): extra rollout rounds a rank may run per
    # step, each of as many new tasks as its share of the step, while fewer of its groups than that
    # share have reward variance (0 = off: a step trains on what its one round gave; at most 8)
    refill_rounds: int = 0


# the linear layers of a block (model.Attention, model.MLP) a LoRA adapter may target
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass
class LoRAConfig:
    """Low-rank adapters on the policy (lora.py, Hu et al. 2021); rank 0 trains every weight."""

    rank: int = 0  # r of each adapter (0 = off: no adapter, full fine-tuning)
    alpha: float = 16.0  # the adapters' update is scaled by alpha / rank
    # linear layers of every block that get an adapter (PEFT's target_modules)
    targets: tuple[str, ...] = ("q_proj", "v_proj")


@dataclass
class TrainConfig:
    """The whole run: what `torchrun ... train.py` and `python evaluate.py` read."""

    policy: PolicyConfig = field(default_factory=PolicyConfig)
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    rollout: RolloutConfig = field(default_factory=RolloutConfig)
    reward: RewardConfig = field(default_factory=RewardConfig)
    grpo: GRPOConfig = field(default_factory=GRPOConfig)
    lora: LoRAConfig = field(default_factory=LoRAConfig)

    tasks: str = "data/tasks"  # task folder, Terminal-Bench folder or CSV
    task_ids: tuple[str, ...] = ()  # only these ids (empty = all; reset by another --tasks)
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
    # optimizer steps a sample's policy may lag the learner's: 0 = synchronous; 1 trains on a
    # rollout while the next one runs (one rollout deep: samples 1 step old; training/overlap.py).
    # More is refused: the pipeline is one rollout deep, so 2 would run as 1.
    # 0 in every preset: on 2 CPU cores the overlap is not shown faster (BENCHMARKS.md, "make train seconds per step")
    max_off_policy_steps: int = 0
    # ranks that only generate (the last ones; the others only train and broadcast the policy to
    # them after each step: learner/layout.py); 0 = every rank trains and generates (colocated)
    rollout_ranks: int = 0
    out_dir: str = "runs/default"  # checkpoints, logs, trajectories, HF export
    save_every: int = 50  # checkpoint every N steps (and at the end)
    resume: bool = False  # continue from the latest checkpoint in out_dir
    overwrite: bool = False  # a new run deletes another run's checkpoints in out_dir (else refused)
    checkpoint_on_signal: bool = True  # write a checkpoint when stopped by SIGINT/SIGTERM
    logger: Literal["none", "wandb", "tensorboard"] = "none"  # extra metrics sink when installed
    # ranks per node this preset is meant for (documentation; torchrun decides)
    nproc_per_node: int = 1
    nnodes: int = 1  # nodes this preset is meant for (documentation; torchrun decides)
    # host RAM reserved for each training rank itself before its sandboxes, MiB (0 = none; the
    # CPU default peaks near 4 GB: BENCHMARKS.md "Memory per rank")
    rank_memory_mb: int = 0


def _replace(cfg: TrainConfig, **sections) -> TrainConfig:
    """A copy of cfg with some fields of some sections replaced: _replace(c, grpo=dict(group_size=4))."""
    out = copy.deepcopy(cfg)  # presets share no section objects
    for name, changes in sections.items():
        if isinstance(changes, dict):
            setattr(out, name, dataclasses.replace(getattr(cfg, name), **changes))
        else:
            setattr(out, name, changes)
    return out


# Sized by learner/gpu_memory.memory_budget for 80 GB GPUs (tests/test_gpu_paths.py): fp32 master
# weights and AdamW state take 12 bytes per parameter over all ranks, so 32B needs 16 GPUs (65 GiB per
# GPU on 8), and tensor-parallel engines of 4 GPUs leave room for the KV cache.
# What every GPU preset shares: bf16 compute over fp32 masters, recomputed activations, a vLLM
# engine that drops its weights between rollouts; 16k-token micro-batches, warm-up over 10 steps.
_GPU_POLICY = dict(
    dtype="bfloat16", activation_checkpointing=True, engine="vllm", vllm_sleep_level=2
)
_GPU_TRAIN = dict(lr=1e-6, warmup_steps=10, micro_batch_tokens=16384)
_QWEN3_32B_16XH100 = _replace(
    TrainConfig(),
    policy=dict(
        _GPU_POLICY,
        path="checkpoints/Qwen3-32B",
        max_seq_len=32768,
        vllm_gpu_memory_utilization=0.6,
        vllm_tensor_parallel_size=4,
    ),
    rollout=dict(
        max_turns=32, max_context_tokens=32768, max_tokens_per_turn=4096, max_concurrent_episodes=48
    ),
    grpo=dict(group_size=8),
    steps=300,
    tasks_per_step=32,
    **dict(_GPU_TRAIN, lr=5e-7),
    out_dir="runs/qwen3-32b-16xh100",
    save_every=25,
    nproc_per_node=8,
    nnodes=2,
)

PRESETS: dict[str, TrainConfig] = {
    # The embedded default: 2 gloo ranks on a CPU box, SmolLM2-135M-Instruct, easy starter tasks.
    "cpu-smollm2": _replace(
        TrainConfig(),
        policy=dict(
            path="default",
            action_format="markdown",
            engine="torch",
            max_seq_len=2048,
            engine_max_batch=8,
            activation_checkpointing=True,  # 4 GB of fp32 activations otherwise (BENCHMARKS.md)
        ),
        sandbox=dict(memory_mb=512, cpus=0.5),
        # temperature 0.7 / top_p 0.95 / top_k 40: at 1.0 the 135M model rambles; sampled, so groups still vary
        rollout=dict(
            max_turns=3,
            max_context_tokens=2048,
            max_tokens_per_turn=128,
            episode_timeout_s=240.0,
            temperature=0.7,
            top_p=0.95,
            top_k=40,
            max_concurrent_episodes=8,
        ),
        grpo=dict(group_size=4),
        # easy tasks on which SmolLM2-135M gets partial credit some of the time (reward variance within a group)
        task_ids=(
            "write-hello-file",
            "make-output-dir",
            "delete-tmp-log",
            "rename-file",
            "append-line",
            "copy-config",
        ),
        difficulties=("easy",),
        steps=8,
        tasks_per_step=2,
        lr=2e-6,
        micro_batch_tokens=4096,
        out_dir="runs/cpu-smollm2",
        save_every=4,
        nproc_per_node=2,
    ),
    # 2 x A100 80GB: Qwen3-4B, the largest Qwen3 whose fp32 master weights and AdamW state
    # (12P/2 = 22.5 GiB per GPU) leave room for a vLLM engine with 32k context (the numbers:
    # tests/test_gpu_paths.py). On A100 40GB it is refused at start-up: 22.5 + 20 GiB > 40 GiB.
    "qwen3-4b-2xa100": _replace(
        TrainConfig(),
        policy=dict(
            _GPU_POLICY,
            path="checkpoints/Qwen3-4B",
            max_seq_len=32768,
            vllm_gpu_memory_utilization=0.5,
            vllm_tensor_parallel_size=1,
        ),
        rollout=dict(
            max_turns=32,
            max_context_tokens=32768,
            max_tokens_per_turn=4096,
            max_concurrent_episodes=24,
        ),
        grpo=dict(group_size=8),
        steps=200,
        tasks_per_step=8,
        **_GPU_TRAIN,
        out_dir="runs/qwen3-4b-2xa100",
        save_every=25,
        nproc_per_node=2,
    ),
    # 4 GPUs, not 2: on 2, the fp32 master weights and AdamW state alone take 46 GiB per GPU.
    "qwen3-8b-4xa100": _replace(
        TrainConfig(),
        policy=dict(
            _GPU_POLICY,
            path="checkpoints/Qwen3-8B",
            max_seq_len=16384,
            vllm_gpu_memory_utilization=0.5,
            vllm_tensor_parallel_size=1,
        ),
        rollout=dict(
            max_turns=24,
            max_context_tokens=16384,
            max_tokens_per_turn=2048,
            max_concurrent_episodes=32,
        ),
        grpo=dict(group_size=8),
        steps=200,
        tasks_per_step=16,
        **_GPU_TRAIN,
        out_dir="runs/qwen3-8b-4xa100",
        save_every=25,
        nproc_per_node=4,
    ),
    # One node of 8 x H100 80GB: Qwen3-14B, four vLLM engines of 2 GPUs each (tensor parallel 2
    # halves the engine's weights and KV cache per GPU), 32k context, groups of 16.
    "qwen3-14b-8xh100": _replace(
        TrainConfig(),
        policy=dict(
            _GPU_POLICY,
            path="checkpoints/Qwen3-14B",
            max_seq_len=32768,
            vllm_gpu_memory_utilization=0.6,
            vllm_tensor_parallel_size=2,
        ),
        rollout=dict(
            max_turns=32,
            max_context_tokens=32768,
            max_tokens_per_turn=4096,
            max_concurrent_episodes=40,
        ),
        grpo=dict(group_size=16),
        steps=300,
        tasks_per_step=16,
        **_GPU_TRAIN,
        out_dir="runs/qwen3-14b-8xh100",
        save_every=25,
        nproc_per_node=8,
    ),
    "qwen3-32b-16xh100": _QWEN3_32B_16XH100,
    # The same recipe on 4 nodes x 8 GPUs: 4x the tasks per step, larger groups.
    "qwen3-32b-32xh100": _replace(
        _QWEN3_32B_16XH100,
        grpo=dict(group_size=16),
        tasks_per_step=128,
        out_dir="runs/qwen3-32b-32xh100",
        nnodes=4,
    ),
}
DEFAULT_PRESET = "cpu-smollm2"
# `make learn-single` (experiments/learn_single.py): the CPU default's model, tasks and sampling, with the
# 1-turn x 64-token episodes of the 30-step run in BENCHMARKS.md (mean reward 0.195 -> 0.375 at lr 2e-6,
# cosine); here 48 steps (16 epochs of the 6 tasks, 8 episodes = one engine batch per step) at a constant
# 2e-6, about 3x that run's summed lr x steps.
PRESETS["cpu-learn"] = _replace(
    PRESETS["cpu-smollm2"],
    rollout=dict(max_turns=1, max_tokens_per_turn=64),
    steps=48,
    lr=2e-6,
    lr_schedule="constant",
    out_dir="runs/learn-single/train",
    save_every=48,
)


# `make learn` (experiments/learn.py), multi-turn: GRPO from the warm start on the generated family's train
# instances (tasks/family.py, hops 1-2: 3-4 turns with DONE). Episodes of 4 turns x 48 tokens (a family command
# and its bash fence take under 40 tokens); groups of 4 over 4 instances a step; a refill round keeps a step alive
# when every group of a rank scored alike. Sizes chosen by the trials in BENCHMARKS.md "Multi-turn learning".
PRESETS["cpu-learn-multiturn"] = _replace(
    PRESETS["cpu-smollm2"],
    rollout=dict(max_turns=4, max_tokens_per_turn=48, episode_timeout_s=180.0),
    grpo=dict(group_size=4, refill_rounds=1),
    task_ids=(),
    difficulties=(),
    tasks="runs/learn/tasks/train",
    # 16 steps at a constant 1e-5 (twice run 1's 5e-6): from the warm start's 0.30 held-out to 0.65
    # on the earlier family of small trees (BENCHMARKS.md, "`make learn`: multi-turn learning", full
    # run 2); the present family, with decoys and large trees, has no such figure yet
    steps=16,
    tasks_per_step=4,
    lr=1e-5,
    lr_schedule="constant",
    out_dir="runs/learn/train",
    save_every=16,
)


@dataclass
class EvalConfig:
    """Evaluate a policy (or the oracle solutions) on a task set: k episodes per task (`python evaluate.py`).

    The policy, rollout and sandbox sections are the training ones (defaults: the cpu-smollm2 preset's);
    raise the limits for Qwen3 on GPUs, e.g. `--rollout.max-turns 24 --policy.action-format hermes`.
    """

    policy: PolicyConfig = field(
        default_factory=lambda: copy.deepcopy(PRESETS[DEFAULT_PRESET].policy)
    )
    # short for --policy.path (HF folder, 'default' or 'tiny-random-qwen3'); '' = policy.path
    model: str = ""
    # policy = the policy.engine on policy.path; openai = a server; scripted replays --script
    engine: Literal["policy", "openai", "scripted"] = "policy"
    tasks: str = "data/tasks"  # task folder, Terminal-Bench folder or CSV
    task_ids: tuple[str, ...] = ()  # only these task ids (empty = all)
    difficulties: tuple[str, ...] = ()  # only these difficulties (empty = all)
    k: int = 4  # episodes per task; pass@k uses all of them
    oracle: bool = False  # run each task's solution.sh instead of a model (expect 100%)
    out_dir: str = "runs/eval"  # trajectories.jsonl and summary.json go here
    device: str = "cpu"  # torch engine device ('cuda' on a GPU)
    openai_base_url: str = ""  # engine=openai: server base URL
    # engine=openai: model name on the server ('' = the policy folder's path)
    openai_model: str = ""
    # engine=openai: token-id completions or chat
    openai_mode: Literal["completions", "chat"] = "completions"
    script: str = ""  # engine=scripted: JSON list of assistant replies, replayed every episode
    script_delay_s: float = 0.0  # engine=scripted: seconds before each reply
    seed: int = 0  # sampling seed
    run_id: str = ""  # label of this run's containers ('' = sandbox.RUN_ID of this process)
    progress: bool = True  # progress line on stderr
    # exit 0 even when some episodes errored (default: exit 1, with the count)
    allow_errors: bool = False

    rollout: RolloutConfig = field(
        default_factory=lambda: copy.deepcopy(PRESETS[DEFAULT_PRESET].rollout)
    )
    sandbox: SandboxConfig = field(
        default_factory=lambda: copy.deepcopy(PRESETS[DEFAULT_PRESET].sandbox)
    )
    reward: RewardConfig = field(default_factory=RewardConfig)


@dataclass
class SFTConfig:
    """The warm start's supervised fine-tuning on demonstrations (learner/sft.py)."""

    # passes over the demonstrations
    epochs: int = 3
    # peak learning rate of AdamW
    lr: float = 2e-5
    # after warmup
    lr_schedule: Literal["cosine", "constant"] = "cosine"
    # linear warmup, optimizer steps
    warmup_steps: int = 0
    # demonstrations per optimizer step (the loss is the token mean over their action tokens)
    batch_size: int = 8
    # tokens per packed micro-batch
    micro_batch_tokens: int = 8192
    # AdamW weight decay
    weight_decay: float = 0.0
    # max global gradient norm (0 = off)
    grad_clip: float = 1.0
    # seeds the order of the demonstrations in each epoch
    seed: int = 0


# ----------------------------------------------------------------------------- validation, once, at start-up
#
# A rule is one row: (field, check, message). `check` takes the field's value; when it returns
# False, `check_rules` raises ConfigError(f"{field} = {value!r}: {message}"), e.g.
# "grpo.clip_low = 1.5: must be in (0, 1)". Rows run in the order written. The rules that read two
# fields, every entry of a list, or the disk are the short functions after the tables.

Rule = tuple[str, Callable[[Any], bool], str]

POLICY_RULES: list[Rule] = [
    ("policy.max_seq_len", lambda v: v >= 64, "must be >= 64"),
    ("policy.engine_max_batch", lambda v: v >= 1, "must be >= 1"),
    ("policy.engine_fast_cpu", lambda v: isinstance(v, bool), "must be true or false"),
    ("policy.engine_speculate_max_batch", lambda v: v >= 0, "must be >= 0"),
    ("policy.engine_speculate_tokens", lambda v: v >= 1, "must be >= 1"),
    ("policy.vllm_gpu_memory_utilization", lambda v: 0 < v <= 1, "must be in (0, 1]"),
    ("policy.vllm_tensor_parallel_size", lambda v: v >= 1, "must be >= 1"),
    ("policy.vllm_kv_cache_mib", lambda v: v >= 0, "must be >= 0"),
    ("policy.vllm_sleep_level", lambda v: v in (1, 2), "must be 1 or 2"),
    ("policy.vllm_kv_fill", lambda v: 0 < v <= 1, "must be in (0, 1]"),
]

SANDBOX_RULES: list[Rule] = [
    ("sandbox.base_image", lambda v: bool(v), "must name an image"),
    ("sandbox.memory_mb", lambda v: v >= 64, "must be >= 64"),
    ("sandbox.cpus", lambda v: v > 0, "must be > 0"),
    ("sandbox.pids", lambda v: v >= 16, "must be >= 16"),
    ("sandbox.storage_mb", lambda v: v >= 16, "must be >= 16"),
    ("sandbox.max_files", lambda v: v >= 100, "must be >= 100"),
    ("sandbox.verify_wall_s", lambda v: 0 <= v < math.inf, "must be finite and >= 0 (0 = auto)"),
    ("sandbox.max_concurrent", lambda v: v >= 0, "must be >= 0 (0 = auto)"),
    ("sandbox.output_limit_bytes", lambda v: v >= 256, "must be >= 256"),
    ("sandbox.exec_timeout_s", lambda v: v > 0, "must be > 0"),
    (
        "sandbox.build_network",
        lambda v: v in ("auto", "bridge", "none"),
        "must be 'auto', 'bridge' or 'none'",
    ),
    ("sandbox.build_memory_mb", lambda v: v >= 64, "must be >= 64"),
    ("sandbox.build_pids", lambda v: v >= 16, "must be >= 16"),
    ("sandbox.build_timeout_s", lambda v: 0 < v < math.inf, "must be finite and > 0"),
]

# rollout.temperature has a row of its own for training and for evaluation (below).
ROLLOUT_RULES: list[Rule] = [
    ("rollout.max_turns", lambda v: v >= 1, "must be >= 1"),
    ("rollout.max_tokens_per_turn", lambda v: v >= 1, "must be >= 1"),
    ("rollout.episode_timeout_s", lambda v: v > 0, "must be > 0"),
    ("rollout.max_format_errors", lambda v: v >= 1, "must be >= 1"),
    ("rollout.max_tool_arg_bytes", lambda v: v >= 1, "must be >= 1"),
    ("rollout.top_p", lambda v: 0 < v <= 1, "must be in (0, 1]"),
    ("rollout.top_k", lambda v: v >= 0, "must be >= 0 (0 = off)"),
    ("rollout.max_concurrent_episodes", lambda v: v >= 1, "must be >= 1"),
]

REWARD_RULES: list[Rule] = [
    ("reward.w_tests", lambda v: v >= 0, "must be >= 0"),
    ("reward.w_judge", lambda v: v >= 0, "must be >= 0"),
    ("reward.judge_timeout_s", lambda v: v > 0, "must be > 0"),
    ("reward.judge_max_retries", lambda v: v >= 0, "must be >= 0"),
    ("reward.judge_cooldown_s", lambda v: v >= 0, "must be >= 0"),
    ("reward.judge_backoff_s", lambda v: v >= 0, "must be >= 0"),
    ("reward.judge_max_retry_after_s", lambda v: v >= 0, "must be >= 0"),
    ("reward.judge_temperature", lambda v: v >= 0, "must be >= 0"),
    ("reward.judge_max_concurrent", lambda v: v >= 1, "must be >= 1"),
    ("reward.judge_transcript_tokens", lambda v: v >= 1, "must be >= 1"),
    ("reward.judge_cooldown_after", lambda v: v >= 1, "must be >= 1"),
    ("reward.judge_max_tokens", lambda v: v >= 1, "must be >= 1"),
    (
        "reward.judge_default_price",
        lambda v: len(v) == 2 and min(v) >= 0,
        "must be two prices >= 0 (USD per million input, output tokens)",
    ),
]

GRPO_RULES: list[Rule] = [
    (
        "grpo.group_size",
        lambda v: v >= 2,
        "must be >= 2 (GRPO compares rollouts within a group)",
    ),
    ("grpo.clip_low", lambda v: 0 < v < 1, "must be in (0, 1)"),
    ("grpo.clip_high", lambda v: v > 0, "must be > 0"),
    ("grpo.dual_clip", lambda v: v == 0 or v > 1, "must be 0 (off) or > 1"),
    ("grpo.kl_coef", lambda v: v >= 0, "must be >= 0"),
    ("grpo.tis_cap", lambda v: v == 0 or v >= 1, "must be 0 (off) or >= 1"),
    ("grpo.num_minibatches", lambda v: v >= 1, "must be >= 1"),
    # each round is one more rollout of the rank's share of the step: past 8, a step of tasks with no
    # reward variance would take more than 9 times its rollout time before it trains
    (
        "grpo.refill_rounds",
        lambda v: 0 <= v <= MAX_REFILL_ROUNDS,
        f"must be in 0..{MAX_REFILL_ROUNDS} (0 = off; each round is one more rollout of the step)",
    ),
]

# The knobs of TrainConfig itself.
RUN_RULES: list[Rule] = [
    ("steps", lambda v: v >= 1, "must be >= 1"),
    ("tasks_per_step", lambda v: v >= 1, "must be >= 1"),
    ("save_every", lambda v: v >= 1, "must be >= 1"),
    ("curriculum_window", lambda v: v >= 1, "must be >= 1"),
    ("nproc_per_node", lambda v: v >= 1, "must be >= 1"),
    ("nnodes", lambda v: v >= 1, "must be >= 1"),
    ("warmup_steps", lambda v: v >= 0, "must be >= 0"),
    ("weight_decay", lambda v: v >= 0, "must be >= 0"),
    ("seed", lambda v: v >= 0, "must be >= 0"),
    ("rank_memory_mb", lambda v: v >= 0, "must be >= 0"),
    (
        "max_off_policy_steps",
        lambda v: v in (0, 1),
        "must be 0 or 1 (the pipeline is one rollout deep: more staleness is not implemented)",
    ),
    ("rollout_ranks", lambda v: v >= 0, "must be >= 0"),
    ("lr", lambda v: math.isfinite(v) and v > 0, "must be a finite number > 0"),
    ("grad_clip", lambda v: v >= 0, "must be >= 0 (0 = off)"),
    ("micro_batch_tokens", lambda v: v >= 64, "must be >= 64"),
]

LORA_RULES: list[Rule] = [
    ("lora.rank", lambda v: v >= 0, "must be >= 0 (0 = off)"),
    ("lora.alpha", lambda v: math.isfinite(v) and v > 0, "must be a finite number > 0"),
    ("lora.targets", lambda v: len(v) > 0, "must name at least one layer"),
    (
        "lora.targets",
        lambda v: set(v) <= set(LORA_TARGETS),
        f"each must be one of {', '.join(LORA_TARGETS)}",
    ),
]

TRAIN_RULES: list[Rule] = [
    *POLICY_RULES,
    *SANDBOX_RULES,
    *ROLLOUT_RULES,
    (
        "rollout.temperature",
        lambda v: v > 0,
        "must be > 0 (GRPO needs sampled, not greedy, rollouts)",
    ),
    *REWARD_RULES,
    *GRPO_RULES,
    *RUN_RULES,
    *LORA_RULES,
]

EVAL_RULES: list[Rule] = [
    *POLICY_RULES,
    *SANDBOX_RULES,
    *ROLLOUT_RULES,
    ("rollout.temperature", lambda v: v >= 0, "must be >= 0 (0 = greedy)"),
    *REWARD_RULES,
    ("k", lambda v: v >= 1, "must be >= 1"),
    ("seed", lambda v: v >= 0, "must be >= 0"),
    ("script_delay_s", lambda v: v >= 0, "must be >= 0"),
]

SFT_RULES: list[Rule] = [
    ("sft.epochs", lambda v: v >= 1, "must be >= 1"),
    ("sft.lr", lambda v: math.isfinite(v) and v > 0, "must be a finite number > 0"),
    ("sft.lr_schedule", lambda v: v in ("cosine", "constant"), "must be 'cosine' or 'constant'"),
    ("sft.warmup_steps", lambda v: v >= 0, "must be >= 0"),
    ("sft.batch_size", lambda v: v >= 1, "must be >= 1"),
    ("sft.micro_batch_tokens", lambda v: v >= 64, "must be >= 64"),
    ("sft.weight_decay", lambda v: v >= 0, "must be >= 0"),
    ("sft.grad_clip", lambda v: v >= 0, "must be >= 0 (0 = off)"),
    ("sft.seed", lambda v: v >= 0, "must be >= 0"),
]

# The numeric flags of `python -m tasks` (validate_tasks_cli), each checked when given.
TASKS_CLI_RULES: list[Rule] = [
    ("jobs", lambda v: v >= 1, "must be >= 1"),
    ("n", lambda v: v >= 1, "must be >= 1"),
    ("max_tokens", lambda v: v >= 1, "must be >= 1"),
    ("sample", lambda v: v >= 1, "must be >= 1 (omit it to validate every task)"),
    ("dedup_threshold", lambda v: 0 < v <= 1, "must be in (0, 1]"),
]


def need(ok: bool, name: str, value, why: str) -> None:
    """Raise ConfigError(f"{name} = {value!r}: {why}") unless ok."""
    if not ok:
        raise ConfigError(f"{name} = {value!r}: {why}")


def check_rules(cfg: object, rules: list[Rule]) -> None:
    """Check each row of `rules` against cfg, in order: the field is a dotted path into cfg
    ('grpo.clip_low' reads cfg.grpo.clip_low).
    Raises ConfigError(f"{field} = {value!r}: {message}") for the first row whose check fails."""
    for path, check, why in rules:
        value = cfg
        for name in path.split("."):
            value = getattr(value, name)
        need(check(value), path, value, why)


# The Docker engine docker.from_env() finds: $DOCKER_HOST or the default socket.
LOCAL_DOCKER_HOST = "local"
_DOCKER_URL = re.compile(r"unix:///\S+|tcp://[^\s/]+:\d+|ssh://[^\s/]+")


def parse_docker_host(entry: str) -> tuple[str, int]:
    """One sandbox.docker_hosts entry, `URL` or `URL=N`, -> (url, cap); cap 0 = from capacity.

    URL: 'local', unix:///PATH, tcp://HOST:PORT or ssh://[USER@]HOST; N: episodes at once there.
    Raises ValueError naming the entry: a URL of none of these forms, or N not an integer >= 1.
    """
    text = str(entry).strip()
    url = text
    cap = 0
    if "=" in text:
        url, _, cap_text = text.rpartition("=")
        url = url.strip()
        if not re.fullmatch(r"\d+", cap_text.strip()):
            raise ValueError(
                f"sandbox.docker_hosts entry {entry!r}: the cap after '=' must be an integer >= 1"
            )
        cap = int(cap_text)
        if cap < 1:
            raise ValueError(f"sandbox.docker_hosts entry {entry!r}: cap = {cap}: must be >= 1")
    if url != LOCAL_DOCKER_HOST and not _DOCKER_URL.fullmatch(url):
        raise ValueError(
            f"sandbox.docker_hosts entry {entry!r}: must be 'local', unix:///PATH, "
            "tcp://HOST:PORT or ssh://[USER@]HOST, optionally '=N' (episodes at once)"
        )
    return url, cap


def check_sandbox_lists(sb: SandboxConfig) -> None:
    """sandbox.image_map entries are 'pattern=image'; sandbox.docker_hosts entries parse
    (parse_docker_host) and name no engine twice. Raises ConfigError naming the field."""
    for entry in sb.image_map:
        pattern, sep, target = entry.partition("=")
        ok = bool(sep and pattern.strip() and target.strip())
        need(ok, "sandbox.image_map", entry, "each entry must be 'pattern=image'")
    urls = []
    for entry in sb.docker_hosts:
        try:
            urls.append(parse_docker_host(entry)[0])
        except ValueError as e:
            raise ConfigError(str(e)) from None
    why = "an engine is listed twice"
    need(len(set(urls)) == len(urls), "sandbox.docker_hosts", sb.docker_hosts, why)


def check_lengths(ro: RolloutConfig) -> None:
    """rollout.max_context_tokens > rollout.max_tokens_per_turn, else ConfigError."""
    why = "must exceed rollout.max_tokens_per_turn"
    ok = ro.max_context_tokens > ro.max_tokens_per_turn
    need(ok, "rollout.max_context_tokens", ro.max_context_tokens, why)


def _check_judges(r: RewardConfig) -> None:
    total = r.w_tests + r.w_judge
    need(total > 0, "reward.w_tests + reward.w_judge", total, "must have a positive sum")
    for spec in r.judge_backends:
        kind = spec.split(":", 1)[0]
        why = "each entry must be 'anthropic:MODEL[@BASE_URL]' or 'openai:MODEL@BASE_URL'"
        need(kind in ("anthropic", "openai") and ":" in spec, "reward.judge_backends", spec, why)
        why = "an openai backend needs '@BASE_URL'"
        need(kind != "openai" or "@" in spec, "reward.judge_backends", spec, why)
    why = "must be >= reward.judge_backoff_s"
    ok = r.judge_backoff_max_s >= r.judge_backoff_s
    need(ok, "reward.judge_backoff_max_s", r.judge_backoff_max_s, why)


def check_context(cfg) -> None:
    """policy.max_seq_len >= rollout.max_context_tokens, else ConfigError. cfg: a config with policy
    and rollout sections (TrainConfig, EvalConfig, experiments/settings.py's WarmStartConfig)."""
    why = "must be >= rollout.max_context_tokens"
    ok = cfg.policy.max_seq_len >= cfg.rollout.max_context_tokens
    need(ok, "policy.max_seq_len", cfg.policy.max_seq_len, why)


def _check_tensor_parallel(cfg: TrainConfig) -> None:
    if cfg.policy.vllm_tensor_parallel_size == 1:
        return
    why = (
        "must be 0 with policy.vllm_tensor_parallel_size > 1 (the followers' collectives would "
        "interleave with the learner's)"
    )
    need(cfg.max_off_policy_steps == 0, "max_off_policy_steps", cfg.max_off_policy_steps, why)
    why = "must be 0 with policy.vllm_tensor_parallel_size > 1 (one engine per rollout rank)"
    need(cfg.rollout_ranks == 0, "rollout_ranks", cfg.rollout_ranks, why)


# (field, value, the package that value needs, how to install it): checked with the paths, on the
# machine that runs (train.py --check-config refuses a missing one before torchrun starts)
OPTIONAL_PACKAGES: list[tuple[str, str, str, str]] = [
    ("logger", "tensorboard", "tensorboard", "pip install tensorboard"),
    (
        "logger",
        "wandb",
        "wandb",
        "pip install wandb (without an account or network: WANDB_MODE=offline, `wandb sync` later)",
    ),
]


def _check_optional_packages(cfg: object) -> None:
    """Raise ConfigError naming the field, the package and how to install it when a knob's value
    needs a package (OPTIONAL_PACKAGES) that this Python cannot import."""
    for path, value, package, install in OPTIONAL_PACKAGES:
        current = cfg
        for name in path.split("."):
            current = getattr(current, name)
        installed = importlib.util.find_spec(package) is not None
        need(current != value or installed, path, current, f"needs {package}: {install}")


def check_model_path(path: str) -> None:
    """policy.path is a folder or one of BUILTIN_MODELS, else ConfigError."""
    ok = path in BUILTIN_MODELS or Path(path).is_dir()
    need(ok, "policy.path", path, f"must be a model folder or one of {BUILTIN_MODELS}")


def check_task_selection(tasks: str, difficulties: tuple[str, ...], check_paths: bool) -> None:
    """Each of difficulties is a known one; with check_paths, `tasks` exists. Raises ConfigError
    naming the field."""
    known = ("easy", "medium", "hard", "extremely_hard", "unknown")
    why = "each must be one of " + ", ".join(known)
    need(all(d in known for d in difficulties), "difficulties", difficulties, why)
    if check_paths:
        need(Path(tasks).exists(), "tasks", tasks, "path does not exist")


def check_layout(cfg: TrainConfig, world: int) -> None:
    """The rollout ranks against the number of ranks, known once torchrun started (train.py).
    Raises ConfigError naming rollout_ranks unless 0 <= rollout_ranks < world and (disaggregated)
    each rollout rank gets a task per step."""
    n = cfg.rollout_ranks
    k = cfg.tasks_per_step
    need(n < world, "rollout_ranks", n, f"must be < the number of ranks ({world}): one trains")
    why = f"must be <= tasks_per_step ({k}): each rollout rank runs a task a step"
    need(n == 0 or k >= n, "rollout_ranks", n, why)


def validate(cfg: TrainConfig, check_paths: bool = True) -> TrainConfig:
    """Check every knob of a training run; return cfg unchanged. The functions below trust the result.

    check_paths: also check that `tasks` and `policy.path` exist and the packages a knob needs are
        installed (OPTIONAL_PACKAGES) (False for presets of other machines).
    Raises:
        ConfigError: naming the field (`section.field`) and the value, e.g.
            "grpo.clip_low = 1.5: must be in (0, 1)".
    """
    check_rules(cfg, TRAIN_RULES)
    check_sandbox_lists(cfg.sandbox)
    check_lengths(cfg.rollout)
    _check_judges(cfg.reward)
    check_context(cfg)
    _check_tensor_parallel(cfg)
    if check_paths:
        check_model_path(cfg.policy.path)
        _check_optional_packages(cfg)
    check_task_selection(cfg.tasks, cfg.difficulties, check_paths)
    return cfg


def validate_eval(cfg: EvalConfig, check_paths: bool = True) -> EvalConfig:
    """Check every knob of an evaluation; map `model` onto `policy.path` (then model = ''). Returns cfg.

    Raises:
        ConfigError: naming the field and the value, e.g. "k = 0: must be >= 1".
    """
    if cfg.model:
        cfg.policy.path = cfg.model
        cfg.model = ""
    check_rules(cfg, EVAL_RULES)
    check_sandbox_lists(cfg.sandbox)
    check_lengths(cfg.rollout)
    _check_judges(cfg.reward)
    if not cfg.oracle:
        check_context(cfg)
        _check_engine(cfg, check_paths)
        if check_paths:
            check_model_path(cfg.policy.path)
    check_task_selection(cfg.tasks, cfg.difficulties, check_paths)
    return cfg


def _check_engine(cfg: EvalConfig, check_paths: bool) -> None:
    """What evaluate.py's engine needs: a server URL for openai, a readable script for scripted."""
    need(
        cfg.engine != "openai" or bool(cfg.openai_base_url),
        "openai_base_url",
        cfg.openai_base_url,
        "is required with engine = 'openai'",
    )
    need(
        cfg.engine != "scripted" or bool(cfg.script),
        "script",
        cfg.script,
        "is required with engine = 'scripted'",
    )
    if not (check_paths and cfg.engine == "scripted"):
        return
    need(Path(cfg.script).is_file(), "script", cfg.script, "file does not exist")
    try:
        replies = json.loads(Path(cfg.script).read_text())
    except (ValueError, UnicodeDecodeError) as e:
        raise ConfigError(f"script = {cfg.script!r}: not JSON ({e})") from None
    need(
        isinstance(replies, list) and all(isinstance(r, str) for r in replies),
        "script",
        cfg.script,
        "must hold a JSON list of strings (the assistant replies)",
    )


def validate_tasks_cli(**knobs) -> None:
    """Check the numeric knobs of `python -m tasks` (jobs, n, max_tokens, dedup_threshold, sample) by name;
    a knob not given or None is not checked. Raises ConfigError naming the flag, e.g. "jobs = 0: must be >= 1"."""
    given = {name: value for name, value in knobs.items() if value is not None}
    rules = [rule for rule in TASKS_CLI_RULES if rule[0] in given]
    check_rules(SimpleNamespace(**given), rules)


def parse_cli(
    args: list[str] | None = None, description: str | None = None, check_paths: bool = True
) -> TrainConfig:
    """Parse `--preset NAME` (default cpu-smollm2) and tyro field overrides into a validated TrainConfig.

    A `--tasks` other than the preset's folder trains on every task of that folder: the preset's
    task_ids and difficulties select tasks of its own folder only (a --task-ids or --difficulties
    given beside it is kept).

    Raises:
        ConfigError: unknown preset (listing the known ones) or an invalid value (naming the field).
        SystemExit: from tyro on unknown flags or `--help`.
    """
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--preset", default=os.environ.get("TERMRL_PRESET", DEFAULT_PRESET))
    known, rest = pre.parse_known_args(args)
    choices = ", ".join(PRESETS)
    if known.preset not in PRESETS:
        raise ConfigError(f"preset = {known.preset!r}: unknown; choose one of {choices}")
    doc = f"{description or 'termrl'}\n\npreset: {known.preset} (--preset NAME, one of: {choices})"
    preset = PRESETS[known.preset]
    cfg = tyro.cli(TrainConfig, default=preset, args=rest, description=doc)
    if Path(cfg.tasks).resolve() != Path(preset.tasks).resolve():
        # The preset's selection names tasks of its own folder: another folder means all its tasks.
        given = {a.split("=")[0].replace("_", "-") for a in rest}
        if "--task-ids" not in given:
            cfg.task_ids = ()
        if "--difficulties" not in given:
            cfg.difficulties = ()
    return validate(cfg, check_paths=check_paths)


# a flag renamed -> its name now (evaluate.py's and learn.py's --out is --out-dir, as train.py's)
RENAMED_FLAGS = {"--out": "--out-dir"}


def refuse_renamed_flags(args: list[str]) -> None:
    """Raise ConfigError, one line pointing at the new name, when args hold a flag renamed so that
    every command has one name for one idea (RENAMED_FLAGS: `--out` is `--out-dir`, as train.py's)."""
    for arg in args:
        old = arg.split("=")[0]
        if old in RENAMED_FLAGS:
            raise ConfigError(f"{old} is now {RENAMED_FLAGS[old]}, the name train.py uses too")


def parse_eval_cli(
    args: list[str] | None = None, description: str | None = None, check_paths: bool = True
) -> EvalConfig:
    """Parse `python evaluate.py` flags into a validated EvalConfig (validate_eval).

    Raises:
        ConfigError: an invalid value, naming the field, or a renamed flag (refuse_renamed_flags).
        SystemExit: from tyro on unknown flags or `--help`.
    """
    refuse_renamed_flags(sys.argv[1:] if args is None else args)
    return validate_eval(
        tyro.cli(EvalConfig, args=args, description=description), check_paths=check_paths
    )
