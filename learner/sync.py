"""Weight sync: the policy's FSDP2 shards -> this rank's generation engine, one full tensor at a
time."""

import time

import torch
from torch.distributed.tensor import DTensor


def iter_full_weights(model: torch.nn.Module, dtype: torch.dtype | None = None):
    """Yield (HF name, full tensor) one parameter at a time, gathered from the FSDP2 shards, cast
    to `dtype`.

    named_parameters() lists a tied lm_head once (as model.embed_tokens.weight), as engines expect.
    Collective: every rank must exhaust the iterator in the same order."""
    for name, p in model.named_parameters():
        # cast the shard, then gather: engine-dtype bytes cross the wire
        p = p.detach().to(dtype) if dtype is not None else p.detach()
        yield name, (p.full_tensor() if isinstance(p, DTensor) else p)


def sync_weights(model: torch.nn.Module, engine, dtype: torch.dtype | None = None) -> float:
    """Push the policy into the engine (engine.load_weights) as `dtype` tensors (the engine's
    dtype; the fp32 master weights are cast on the way); returns seconds spent. Collective."""
    t0 = time.perf_counter()
    weights = iter_full_weights(model, dtype)
    engine.load_weights(weights)
    # an engine that stops early must not leave the other ranks waiting in full_tensor()
    for _ in weights:
        pass
    return time.perf_counter() - t0
