"""Distributed set-up: the process group, collective helpers, and the FSDP2-sharded policy."""

import datetime
import math
import os
import signal
import socket
import time
from pathlib import Path

import torch
import torch.distributed as dist
from torch import Tensor
from torch.distributed.fsdp import FSDPModule

import configs
import lora
import model as modeling
from bookkeeping.launch import PEER_GONE_EXIT
from bookkeeping.stop import StopFlag
from hf import weights

# the ranks that train (learner/layout.py); None: every rank
_learner_group = None


def set_learner_group(group) -> None:
    """Make all_reduce (the update's loss normalisation, metrics, stop checks) span `group`, the
    trainer ranks of the disaggregated layout (learner/layout.py); None: the default group."""
    global _learner_group
    _learner_group = group


def all_reduce(x: Tensor, op=dist.ReduceOp.SUM) -> Tensor:
    """dist.all_reduce in place over the learner's ranks (set_learner_group; default: all) when
    they are more than one; returns x."""
    if dist.is_initialized() and dist.get_world_size(_learner_group) > 1:
        dist.all_reduce(x, op=op, group=_learner_group)
    return x


def set_gradient_sum(model: torch.nn.Module) -> None:
    """Make FSDP2 sum (not average) gradients over ranks: the loss already divides by the global
    count."""
    for m in model.modules():
        if isinstance(m, FSDPModule):
            m.set_gradient_divide_factor(1.0)
            # plain SUM: gloo has no PREMUL_SUM
            m.set_force_sum_reduction_for_comms(True)


def agreed_stop(flag: StopFlag, device: torch.device) -> bool:
    """True on every learner rank if any of them was asked to stop (collective over the learner's
    ranks, all of them but in the disaggregated layout)."""
    x = all_reduce(torch.tensor([int(flag.requested)], device=device), dist.ReduceOp.MAX)
    return bool(int(x))


# -----------------------------------------------------------------------------
# process group

# how long a rank whose collective lost its peer (peer_gone) waits for torchrun's SIGTERM, so that the
# rank that failed exits first (else it exits with PEER_GONE_EXIT)
PEER_GONE_WAIT_S = 10.0
# how gloo's TCP transport says that the rank at the other end is gone
_PEER_GONE = ("Connection closed by peer", "Connection reset by peer", "Broken pipe")


def peer_gone(error: BaseException) -> bool:
    """True when `error` is a collective's failure because another rank left (gloo's RuntimeError
    from its TCP transport), not this rank's own failure."""
    return isinstance(error, RuntimeError) and any(s in str(error) for s in _PEER_GONE)


def leave_after_peer(wait_s: float = PEER_GONE_WAIT_S) -> int:
    """What a rank does when its collective lost a peer (peer_gone): no traceback; it waits up to
    wait_s seconds for torchrun, which stops the other ranks with SIGTERM once the rank that
    failed has exited (SIGTERM's default action restored: it ends this process, never a stop
    request), so torchrun sees that rank's failure first. Returns PEER_GONE_EXIT (the launcher's:
    bookkeeping/launch.py), the exit status when no SIGTERM came."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    time.sleep(wait_s)
    return PEER_GONE_EXIT


# the verifier's wall clock when sandbox.verify_wall_s is 0 (auto: 3 x the task's per-test timeout,
# unknown before the tasks load): 3 x harbor's default per-test timeout of 600 s
AUTO_VERIFY_S = 1800.0
# what a collective may wait beyond the longest rollout: an update, a checkpoint, a weight sync
COLLECTIVE_MARGIN_S = 600.0


def collective_timeout_s(cfg: configs.TrainConfig) -> tuple[float, str]:
    """How long a rank may wait in a collective (the process group's timeout), seconds, and how
    it was sized (one line). A rank waits there for the whole of another rank's rollout (the
    disaggregated layout's trainers for the rollout ranks', a fast rank for a slow one), so the
    timeout is the longest rollout the config allows plus COLLECTIVE_MARGIN_S:
        episodes = tasks_per_step x group_size (at most, on one rank), run in
        waves = ceil(episodes / rollout.max_concurrent_episodes) x (1 + grpo.refill_rounds)
        (dynamic sampling's extra rounds), each lasting at most
        rollout.episode_timeout_s (the agent) + sandbox.verify_wall_s (AUTO_VERIFY_S when 0)
        + reward.judge_timeout_s x (judge_max_retries + 1) x backends (0 without a judge).
    NCCL's default (10 min) is shorter than one 64-turn episode at the GPU presets' budgets."""
    ro = cfg.rollout
    # dynamic sampling may run grpo.refill_rounds more rounds of as many episodes
    episodes = cfg.tasks_per_step * cfg.grpo.group_size
    waves = math.ceil(episodes / ro.max_concurrent_episodes) * (1 + cfg.grpo.refill_rounds)
    verify_s = cfg.sandbox.verify_wall_s or AUTO_VERIFY_S
    r = cfg.reward
    judge_s = r.judge_timeout_s * (r.judge_max_retries + 1) * len(r.judge_backends)
    episode_s = ro.episode_timeout_s + verify_s + judge_s
    total = COLLECTIVE_MARGIN_S + waves * episode_s
    why = (
        f"collective timeout {total / 60:.0f} min: {waves} wave(s) of episodes x (agent "
        f"{ro.episode_timeout_s:.0f} s + verify {verify_s:.0f} s + judge {judge_s:.0f} s) + "
        f"{COLLECTIVE_MARGIN_S:.0f} s"
    )
    return total, why


def init_distributed(timeout_s: float | None = None) -> tuple[int, int, int, torch.device]:
    """Init the default process group: nccl on CUDA, gloo on CPU, its collectives waiting up to
    timeout_s seconds (None: torch's default, 10 min for nccl; see collective_timeout_s).
    Returns (rank, world_size, local_rank, device).

    Without torchrun (no RANK in the environment) it starts a 1-process group on 127.0.0.1,
    so `python train.py` runs the same code path."""
    if "RANK" not in os.environ:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        os.environ.update(
            RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port)
        )
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    timeout = None if timeout_s is None else datetime.timedelta(seconds=timeout_s)
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
        dist.init_process_group("nccl", device_id=device, timeout=timeout)
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo", timeout=timeout)
    return dist.get_rank(), dist.get_world_size(), local_rank, device


def resolve_model_dir(path: str, rank: int) -> Path:
    """weights.resolve_model_dir, rank 0 first (collective): the embedded default is imported and
    the tiny random model written once, then the other ranks read them."""
    if rank == 0:
        d = weights.resolve_model_dir(path)
    dist.barrier()
    if rank != 0:
        d = weights.resolve_model_dir(path)
    return Path(d)


def load_policy(
    model_dir: Path, cfg: configs.TrainConfig, mesh, device: torch.device, trainable: bool = True
):
    """weights.load_hf_sharded, FSDP2-sharded over `mesh`, gradients summed over ranks.

    Built on the meta device and sharded first: each rank reads only its shard from the
    safetensors files. A trainable policy keeps fp32 master weights (AdamW state fp32 too) and
    computes in policy.dtype. With lora.rank > 0 the trainable policy gets adapters first
    (lora.add_lora: only they train) and FSDP2 shards them with the rest; the reference model
    (trainable False) is the base alone."""
    # compute dtype
    dtype = weights.DTYPES[cfg.policy.dtype]
    adapters = cfg.lora if trainable else configs.LoRAConfig()
    policy = weights.load_hf_sharded(
        model_dir,
        lambda m: modeling.apply_fsdp2(
            lora.add_lora(m, adapters),
            mesh,
            param_dtype=dtype,
            activation_checkpointing=cfg.policy.activation_checkpointing and trainable,
            master_dtype=torch.float32 if trainable else dtype,
        ),
        device=device,
        seed=cfg.seed,
    )
    if trainable:
        set_gradient_sum(policy)
    else:
        policy.requires_grad_(False).eval()
    return policy
