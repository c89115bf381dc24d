"""Weight sync: the policy's FSDP2 shards -> this rank's generation engine, one full tensor at a
time."""

import time

import torch
from torch.distributed.tensor import DTensor

import lora


def iter_full_weights(
    model: torch.nn.Module, dtype: torch.dtype | None = None, adapted_only: bool = False
):
    """Yield (HF name, full tensor) one parameter at a time, gathered from the FSDP2 shards, cast
    to `dtype`. A LoRA-adapted weight is yielded merged (lora.merged_weight), the adapters
    themselves never; adapted_only: only those merged weights (the frozen rest is what the
    engine already holds).

    named_parameters() lists a tied lm_head once (as model.embed_tokens.weight), as engines expect.
    Collective: every rank must exhaust the iterator in the same order."""
    adapted = lora.adapted_modules(model)
    for name, p in model.named_parameters():
        if lora.is_adapter(name) or (adapted_only and name not in adapted):
            continue
        # cast the shard, then gather: engine-dtype bytes cross the wire
        p = p.detach().to(dtype) if dtype is not None else p.detach()
        full = p.full_tensor() if isinstance(p, DTensor) else p
        yield name, (lora.merged_weight(adapted[name], full) if name in adapted else full)


def sync_weights(model: torch.nn.Module, engine, dtype: torch.dtype | None = None) -> float:
    """Push the policy into the engine (engine.load_weights) as `dtype` tensors (the engine's
    dtype; the fp32 master weights are cast on the way); returns seconds spent. Collective.
    With LoRA an engine that loads a subset of its weights (`partial_load`, the TorchEngine) and
    still holds them gets only the merged adapted weights; any other gets every weight, merged."""
    t0 = time.perf_counter()
    adapted_only = (
        bool(lora.adapted_modules(model))
        and engine.partial_load
        and not engine.weights_dropped
    )
    weights = iter_full_weights(model, dtype, adapted_only)
    engine.load_weights(weights)
    # an engine that stops early must not leave the other ranks waiting in full_tensor()
    for _ in weights:
        pass
    return time.perf_counter() - t0
