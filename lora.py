"""LoRA: low-rank adapters on the policy's linear layers (Hu et al. 2021, "LoRA: Low-Rank Adaptation
of Large Language Models", arXiv:2106.09685).

A target linear y = x W^T (W [out, in], frozen) becomes

    y = x W^T + (alpha / r) * (x A^T) B^T,    A [r, in], B [out, r] (the only trained parameters)

A starts as PEFT's default (kaiming-uniform, a = sqrt(5)) and B at zero, so at step 0 the adapted
model is exactly the base model. `add_lora` swaps each target nn.Linear for a LoRALinear that
keeps the same weight Parameter, so HF names are unchanged (`...q_proj.weight`) and the adapters sit
beside it as `...q_proj.lora_A` / `...q_proj.lora_B`. Applied before FSDP2 (model.apply_fsdp2):
the adapters are sharded, cast to fp32 masters and gathered like every other parameter, and the
frozen base weights get no gradient and no optimizer state.

What leaves the learner is either the merged weight W' = W + (alpha / r) B A (`merged_weight`: the
engines and the HF export load plain weights) or the adapters alone in PEFT's format
(`save_peft_adapter`: adapter_config.json + adapter_model.safetensors, keys
`base_model.model.<module>.lora_A.weight`), which `peft.PeftModel.from_pretrained` loads onto the
transformers model of the same base.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.tensor import DTensor, distribute_tensor

from configs import LoRAConfig


class LoRALinear(nn.Linear):
    """nn.Linear (no bias) plus a rank-r update: y = x W^T + scaling * (x A^T) B^T.

    x [..., in] in the weight's dtype; weight [out, in] (frozen), lora_A [r, in], lora_B [out, r]
    (trained), scaling = alpha / r. Returns [..., out]."""

    def __init__(self, base: nn.Linear, rank: int, alpha: float):
        nn.Module.__init__(self)  # not nn.Linear's: the base weight is kept, never allocated again
        self.in_features, self.out_features = base.in_features, base.out_features
        self.weight = base.weight
        self.register_parameter("bias", None)
        w = base.weight
        self.lora_A = nn.Parameter(
            torch.empty(rank, self.in_features, dtype=w.dtype, device=w.device)
        )
        self.lora_B = nn.Parameter(
            torch.zeros(self.out_features, rank, dtype=w.dtype, device=w.device)
        )
        self.scaling = alpha / rank
        self.reset_adapter()

    def reset_adapter(self, generator: torch.Generator | None = None) -> None:
        """A ~ kaiming_uniform(a=sqrt(5)) as PEFT (and nn.Linear), B = 0: the update starts at 0."""
        if self.lora_A.is_meta:
            return
        bound = 1.0 / math.sqrt(self.in_features)  # kaiming_uniform with a = sqrt(5)
        with torch.no_grad():
            full = torch.empty(self.lora_A.shape, dtype=torch.float32)
            full.uniform_(-bound, bound, generator=generator)
            copy_full(self.lora_A, full)
            copy_full(self.lora_B, torch.zeros(self.lora_B.shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (
            F.linear(x, self.weight)
            + F.linear(F.linear(x, self.lora_A), self.lora_B) * self.scaling
        )


def copy_full(p: torch.Tensor, full: torch.Tensor) -> None:
    """Copy the full tensor `full` into p, or into this rank's shard of it when p is a DTensor."""
    if isinstance(p, DTensor):
        # every rank holds the same full tensor: each slices its own shard, no communication
        shard = distribute_tensor(full.to(p.dtype), p.device_mesh, p.placements, src_data_rank=None)
        p.to_local().copy_(shard.to_local())
    else:
        p.copy_(full)


def add_lora(model: nn.Module, cfg: LoRAConfig) -> nn.Module:
    """Give every block's target linears an adapter (LoRALinear sharing the base weight) and freeze
    everything but the adapters. cfg.rank 0: the model is returned untouched. Works on the meta
    device (the adapters are initialised by `init_adapters` once materialised). Call before
    apply_fsdp2. Raises ValueError naming lora.targets when a target matches no linear layer."""
    if cfg.rank == 0:
        return model
    found = 0
    for block in model.model.layers:
        for owner in (block.self_attn, block.mlp):
            for name in cfg.targets:
                old = getattr(owner, name, None)
                if not isinstance(old, nn.Linear):
                    continue
                setattr(owner, name, LoRALinear(old, cfg.rank, cfg.alpha))
                found += 1
    if found == 0:
        raise ValueError(f"lora.targets = {cfg.targets!r}: matches no linear layer of the model")
    for name, p in model.named_parameters():
        p.requires_grad_(is_adapter(name))
    return model


def init_adapters(model: nn.Module, seed: int = 0) -> None:
    """Initialise every adapter (LoRALinear.reset_adapter) from one generator seeded with `seed`,
    in module order: the same adapters whatever the number of ranks sharding them."""
    generator = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, LoRALinear):
            m.reset_adapter(generator)


def is_adapter(name: str) -> bool:
    """Whether a parameter name is an adapter's (`...lora_A` / `...lora_B`)."""
    return name.endswith((".lora_A", ".lora_B"))


def adapted_modules(model: nn.Module) -> dict[str, LoRALinear]:
    """{HF name of the adapted weight ('model.layers.0.self_attn.q_proj.weight'): its LoRALinear};
    empty without adapters."""
    return {f"{n}.weight": m for n, m in model.named_modules() if isinstance(m, LoRALinear)}


def _full(p: torch.Tensor, dtype: torch.dtype | None = None) -> torch.Tensor:
    """p (cast to dtype first, so dtype-sized bytes are gathered), whole: a collective for a DTensor."""
    p = p.detach().to(dtype) if dtype is not None else p.detach()
    return p.full_tensor() if isinstance(p, DTensor) else p


def merged_weight(
    module: LoRALinear, weight: torch.Tensor, dtype: torch.dtype | None = None
) -> torch.Tensor:
    """W' = W + scaling * B A, in fp32, returned in `dtype` (None: W's). weight: the full base
    weight [out, in] (already gathered). Gathers the adapters (a collective under FSDP2)."""
    a = _full(module.lora_A, torch.float32)
    b = _full(module.lora_B, torch.float32)
    merged = weight.float() + module.scaling * (b @ a)
    return merged.to(dtype or weight.dtype)


# PEFT 0.21's names: a linear's adapters are saved as `base_model.model.<module>.lora_A.weight`.
PEFT_PREFIX = "base_model.model."


def peft_name(name: str) -> str:
    """Our adapter name ('model.layers.0.self_attn.q_proj.lora_A') -> PEFT's key in
    adapter_model.safetensors ('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight')."""
    return f"{PEFT_PREFIX}{name}.weight"


def save_peft_adapter(model: nn.Module, path: str | Path, base_model: str = "") -> Path | None:
    """Write the adapters as a PEFT LoRA folder: adapter_config.json (peft_type LORA, r, lora_alpha,
    target_modules, task_type CAUSAL_LM) and adapter_model.safetensors (fp32, PEFT's key names).
    `base_model` goes into base_model_name_or_path. Collective under FSDP2 (the adapters are
    gathered); rank 0 writes. Returns the folder, or None when the model has no adapters."""
    from safetensors.torch import save_file

    modules = adapted_modules(model)
    if not modules:
        return None
    state = {}
    for name, p in model.named_parameters():
        if is_adapter(name):
            state[peft_name(name)] = _full(p, torch.float32).cpu().contiguous()
    if torch.distributed.is_initialized() and torch.distributed.get_rank() != 0:
        return Path(path)
    first = next(iter(modules.values()))
    rank = first.lora_A.shape[0]
    targets = sorted({n.split(".")[-2] for n in modules})
    config = {
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "base_model_name_or_path": base_model,
        "r": rank,
        "lora_alpha": first.scaling * rank,
        "lora_dropout": 0.0,
        "target_modules": targets,
        "bias": "none",
        "fan_in_fan_out": False,
        "use_rslora": False,
        "use_dora": False,
        "init_lora_weights": True,
        "inference_mode": True,
    }
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / "adapter_config.json").write_text(json.dumps(config, indent=2))
    save_file(state, str(path / "adapter_model.safetensors"), metadata={"format": "pt"})
    return path
