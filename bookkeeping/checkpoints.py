"""Resumable training checkpoints (torch.distributed.checkpoint) and RNG state, for train.py.

Layout of out_dir/checkpoints/step_NNNNNN: the sharded DCP checkpoint of {"model", "optim"}; rankR.pt per
rank with the step, lr schedule, TaskSampler and RNG state; COMPLETE, written last by rank 0.
"""

import random
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict


def rng_state() -> dict:
    state = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def checkpoint_dir(out_dir: Path, step: int) -> Path:
    return Path(out_dir) / "checkpoints" / f"step_{step:06d}"


def latest_checkpoint(out_dir: Path) -> Path | None:
    """The complete checkpoint with the highest step under out_dir/checkpoints, or None."""
    root = Path(out_dir) / "checkpoints"
    done = (
        sorted(p for p in root.glob("step_*") if (p / "COMPLETE").exists()) if root.is_dir() else []
    )
    return done[-1] if done else None


def save_checkpoint(path: Path, model, optimizer, scheduler, sampler, step: int) -> None:
    """Save a resumable checkpoint (collective).

    Layout of `path`: the DCP checkpoint of {"model", "optim"} (sharded, every rank writes its
    shards); rank{r}.pt per rank with step (completed steps), scheduler, sampler and RNG state;
    COMPLETE written by rank 0 last, so a checkpoint cut off by a crash is never resumed from."""
    path = Path(path)
    rank = dist.get_rank() if dist.is_initialized() else 0
    if rank == 0:
        path.mkdir(parents=True, exist_ok=True)
        (path / "COMPLETE").unlink(
            missing_ok=True
        )  # an older run's marker must not vouch for this write
    if dist.is_initialized():
        dist.barrier()
    model_sd, optim_sd = get_state_dict(model, optimizer)
    dcp.save({"model": model_sd, "optim": optim_sd}, checkpoint_id=str(path))
    torch.save(
        {
            "step": step,
            "scheduler": scheduler.state_dict(),
            "sampler": sampler.state_dict(),
            "rng": rng_state(),
        },
        path / f"rank{rank}.pt",
    )
    if dist.is_initialized():
        dist.barrier()
    if rank == 0:
        (path / "COMPLETE").write_text(f"{step}\n")


def load_checkpoint(path: Path, model, optimizer, scheduler, sampler) -> int:
    """Restore everything save_checkpoint wrote, in place (collective); returns the completed step count.
    Raises FileNotFoundError if the checkpoint or this rank's state file is missing (e.g. a
    different number of ranks than when it was saved)."""
    path = Path(path)
    rank = dist.get_rank() if dist.is_initialized() else 0
    state_file = path / f"rank{rank}.pt"
    if not (path / "COMPLETE").exists() or not state_file.exists():
        raise FileNotFoundError(
            f"checkpoint {path}: missing COMPLETE or {state_file.name} (saved with other ranks?)"
        )
    model_sd, optim_sd = get_state_dict(model, optimizer)
    state = {"model": model_sd, "optim": optim_sd}
    dcp.load(state, checkpoint_id=str(path))
    set_state_dict(
        model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"]
    )
    extra = torch.load(state_file, weights_only=False)
    scheduler.load_state_dict(extra["scheduler"])
    sampler.load_state_dict(extra["sampler"])
    set_rng_state(extra["rng"])
    return int(extra["step"])
