"""Resumable training checkpoints (torch.distributed.checkpoint), RNG state, and which run a start continues.

Layout of out_dir/checkpoints/step_NNNNNN: the sharded DCP checkpoint of {"model", "optim"}; rankR.pt per
rank with the step, lr schedule, TaskSampler and RNG state; config.json (the run's whole config);
meta.json (run id, step, world size, config hash); COMPLETE (the step), written last. All of it is
written into step_NNNNNN.tmp-RUNID and renamed into place, so a checkpoint is complete or absent: a
write cut off by a kill leaves only a .tmp- folder, which resume ignores and the next start removes.

A run has an id (8 hex digits, kept by every resume). `plan_start` decides what a start continues:
- no complete checkpoint in out_dir: a new run at step 0 (--resume says so);
- --resume: the newest complete checkpoint, refused (one line naming the fields) when the config
  differs in a field outside RESUME_MAY_DIFFER or the number of ranks differs;
- no --resume but a complete checkpoint there: refused (the old run is never resumed into, nor
  silently overwritten); --overwrite deletes its checkpoints and starts a new run.
`run_complete` says when what --resume continues has no step left to train.
"""

import hashlib
import json
import os
import random
import re
import shutil
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

import configs

# Knobs a resume may change: how long, how often saved, where logged, how fast episodes run (engine
# and Docker capacity). Any other field of TrainConfig, dotted, must equal the checkpoint's.
# `steps` may grow: the lr schedule is then that of the new length from the resumed step on.
RESUME_MAY_DIFFER = (
    "steps",
    "save_every",
    "resume",
    "overwrite",
    "checkpoint_on_signal",
    "logger",
    "out_dir",
    "nproc_per_node",
    "nnodes",
    "policy.engine_max_batch",
    "policy.engine_fast_cpu",
    "policy.engine_speculate_max_batch",
    "policy.engine_speculate_tokens",
    "policy.engine_lockstep",
    "policy.vllm_gpu_memory_utilization",
    "policy.vllm_kv_cache_mib",
    "policy.vllm_kv_fill",
    "sandbox.docker_hosts",
    "sandbox.max_concurrent",
    "sandbox.build_network",
    "rollout.max_concurrent_episodes",
    "reward.judge_cache_dir",
    # endpoints move (a restarted server has a new port)
    "reward.judge_backends",
)
_STEP_DIR = re.compile(r"step_\d{6,}")


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


def resume_state(sampler) -> dict:
    """What a resume needs besides the weights, optimizer and schedule: the TaskSampler's state
    (`sampler.state_dict()`) and the RNG state (`rng_state`), as they are now. Taken when a step is
    recorded (bookkeeping/record.py), before the next step draws its tasks: a checkpoint written
    later, when a stop cuts that next step short, saves this one, so the resumed run draws the
    cut step's tasks again (saving the sampler as it is at the stop skipped them)."""
    return {"sampler": sampler.state_dict(), "rng": rng_state()}


def checkpoint_dir(out_dir: Path, step: int) -> Path:
    return Path(out_dir) / "checkpoints" / f"step_{step:06d}"


def complete_checkpoints(out_dir: Path) -> list[Path]:
    """The complete checkpoints under out_dir/checkpoints (named step_N, COMPLETE inside), by step."""
    root = Path(out_dir) / "checkpoints"
    if not root.is_dir():
        return []
    done = [p for p in root.iterdir() if _STEP_DIR.fullmatch(p.name) and (p / "COMPLETE").exists()]
    return sorted(done, key=lambda p: int(p.name[5:]))


def latest_checkpoint(out_dir: Path) -> Path | None:
    """The complete checkpoint with the highest step under out_dir/checkpoints, or None."""
    done = complete_checkpoints(out_dir)
    return done[-1] if done else None


def partial_checkpoints(out_dir: Path) -> list[Path]:
    """Folders under out_dir/checkpoints that are no complete checkpoint: .tmp- writes cut off by a
    kill, .old- ones a kill left beside their replacement, step_N folders without COMPLETE."""
    root = Path(out_dir) / "checkpoints"
    if not root.is_dir():
        return []
    done = set(complete_checkpoints(out_dir))
    return sorted(p for p in root.iterdir() if p.is_dir() and p not in done)


def read_meta(path: Path) -> dict:
    """meta.json of a checkpoint ({} for one written before run ids)."""
    meta = Path(path) / "meta.json"
    return json.loads(meta.read_text()) if meta.exists() else {}


def _flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def config_diff(saved: dict, current: dict) -> list[str]:
    """'field (saved -> current)' for every dotted field outside RESUME_MAY_DIFFER that differs
    between two TrainConfig dicts (dataclasses.asdict, as JSON reads it back), sorted."""
    a = _flat(json.loads(json.dumps(saved)))
    b = _flat(json.loads(json.dumps(current)))
    keys = sorted((set(a) | set(b)) - set(RESUME_MAY_DIFFER))
    return [f"{k} ({a.get(k)!r} -> {b.get(k)!r})" for k in keys if a.get(k) != b.get(k)]


def config_hash(cfg: dict) -> str:
    """sha256 (first 16 hex digits) of the fields a resume must keep (all but RESUME_MAY_DIFFER)."""
    flat = _flat(json.loads(json.dumps(cfg)))
    kept = {k: v for k, v in sorted(flat.items()) if k not in RESUME_MAY_DIFFER}
    return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()[:16]


def plan_start(out_dir: Path, cfg: dict, resume: bool, overwrite: bool, world: int | None):
    """The complete checkpoint this start continues, or None for a new run at step 0 (module
    docstring). `cfg` is dataclasses.asdict of the TrainConfig; `world` the number of ranks (None:
    not known yet, e.g. --check-config). Reads files only. Raises configs.ConfigError, one line
    naming the run, checkpoint and fields, when the start is refused."""
    if resume and overwrite:
        raise configs.ConfigError(
            "resume and overwrite: --overwrite deletes what --resume continues"
        )
    ckpt = latest_checkpoint(out_dir)
    if ckpt is None or (overwrite and not resume):
        return None
    meta = read_meta(ckpt)
    run = f"run {meta.get('run_id', '(no id)')}, checkpoint of step {meta.get('step', '?')}"
    if not resume:
        raise configs.ConfigError(
            f"out_dir = {str(out_dir)!r} holds {run} ({ckpt}): --resume continues it, "
            "--overwrite deletes its checkpoints and starts a new run, or use another --out-dir"
        )
    if not meta:
        raise configs.ConfigError(
            f"resume: {ckpt} has no meta.json (written before run ids); its run cannot be checked"
        )
    if world is not None and meta["world_size"] != world:
        raise configs.ConfigError(
            f"resume: {run} was written by {meta['world_size']} ranks, this start has {world}"
        )
    diff = config_diff(json.loads((ckpt / "config.json").read_text()), cfg)
    if diff:
        raise configs.ConfigError(
            f"resume: the config differs from {run} ({ckpt}) in {', '.join(diff)}; "
            "resume with the same values, or start a new run in another --out-dir"
        )
    return ckpt


def run_complete(ckpt: Path | None, steps: int) -> str | None:
    """One line saying that the run of checkpoint `ckpt` (plan_start's) has trained all of its
    `steps` (cfg.steps), or None when there is a step left to train (or no checkpoint)."""
    if ckpt is None:
        return None
    meta = read_meta(ckpt)
    if meta["step"] < steps:
        return None
    return (
        f"run {meta['run_id']} is complete: step {meta['step']} of {steps} checkpointed ({ckpt}); "
        "nothing to train (a larger --steps continues it)"
    )


def _rank() -> int:
    return dist.get_rank() if dist.is_initialized() else 0


def _barrier(group=None) -> None:
    if dist.is_initialized():
        dist.barrier(group=group)


def _write_synced(path: Path, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def _publish(tmp: Path, path: Path, step: int, meta: dict, cfg: dict) -> None:
    """Rank 0: config.json, meta.json, COMPLETE into tmp, then tmp renamed to path (a previous
    folder of that name is moved aside first and deleted after)."""
    _write_synced(tmp / "config.json", json.dumps(cfg, indent=2))
    _write_synced(tmp / "meta.json", json.dumps(meta, indent=2))
    _write_synced(tmp / "COMPLETE", f"{step}\n")
    old = path.with_name(f"{path.name}.old-{meta['run_id']}")
    if path.exists():
        path.rename(old)
    tmp.rename(path)
    # the rename itself reaches the disk
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    shutil.rmtree(old, ignore_errors=True)


def save_checkpoint(
    path: Path,
    model,
    optimizer,
    scheduler,
    sampler,
    step: int,
    run_id: str,
    cfg: dict,
    group=None,
    state: dict | None = None,
) -> None:
    """Save a resumable checkpoint atomically (collective; layout in the module docstring).

    Every rank writes its DCP shards and rank{r}.pt into path.tmp-RUN_ID; rank 0 adds config.json
    (`cfg`, dataclasses.asdict of the TrainConfig), meta.json (run_id, step = completed steps,
    world_size, config_hash) and COMPLETE, and renames the folder to `path`. group: the ranks that
    hold the policy (the trainers of the disaggregated layout, rank 0 among them); None: all.
    state: `resume_state` taken when step `step` was recorded (None: the sampler's and RNG's
    state now)."""
    path = Path(path)
    rank = _rank()
    tmp = path.with_name(f"{path.name}.tmp-{run_id}")
    if rank == 0:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
    _barrier(group)
    model_sd, optim_sd = get_state_dict(model, optimizer)
    dcp.save({"model": model_sd, "optim": optim_sd}, checkpoint_id=str(tmp), process_group=group)
    if state is None:
        state = resume_state(sampler)
    torch.save(
        {
            "step": step,
            "scheduler": scheduler.state_dict(),
            "sampler": state["sampler"],
            "rng": state["rng"],
        },
        tmp / f"rank{rank}.pt",
    )
    _barrier(group)
    if rank == 0:
        world = dist.get_world_size() if dist.is_initialized() else 1
        meta = dict(run_id=run_id, step=step, world_size=world, config_hash=config_hash(cfg))
        _publish(tmp, path, step, meta, cfg)
    # no rank reads or lists checkpoints before the rename
    _barrier(group)


def load_checkpoint(path: Path, model, optimizer, scheduler, sampler, group=None) -> int:
    """Restore everything save_checkpoint wrote, in place (collective over `group`, as saved);
    returns the completed step count.
    Raises FileNotFoundError if the checkpoint or this rank's state file is missing (e.g. a
    different number of ranks than when it was saved)."""
    path = Path(path)
    state_file = path / f"rank{_rank()}.pt"
    if not (path / "COMPLETE").exists() or not state_file.exists():
        raise FileNotFoundError(
            f"checkpoint {path}: missing COMPLETE or {state_file.name} (saved with other ranks?)"
        )
    model_sd, optim_sd = get_state_dict(model, optimizer)
    state = {"model": model_sd, "optim": optim_sd}
    dcp.load(state, checkpoint_id=str(path), process_group=group)
    set_state_dict(
        model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"]
    )
    extra = torch.load(state_file, weights_only=False)
    scheduler.load_state_dict(extra["scheduler"])
    sampler.load_state_dict(extra["sampler"])
    set_rng_state(extra["rng"])
    return int(extra["step"])
