"""What fits where on a host: episodes on a Docker host and a training rank's own RAM. Pure
arithmetic over configs and what the machines report; every caller (train.py, evaluate.py,
sandboxing/hosts.py) admits by these rules, so there is one. The GPU memory plan of training beside
vLLM is the learner's (learner/gpu_memory.py).

An episode holds its sandbox and, while verified, a verifier container from its snapshot: at most
2 x sandbox.memory_mb of memory (both containers' caps) and 2 x sandbox.storage_mb of disk (the
layer, then its snapshot and the verifier's writes, disk.py); `episode_bytes`, `episodes_fit`,
`host_budget`. A training rank may reserve `rank_memory_mb` of RAM for itself first; what is left to
it (`rank_budget_bytes`) is the budget its peak RSS is reported against; `admit_rank` puts these
together for one rank.
"""

from __future__ import annotations

import math

from configs import ConfigError, TrainConfig

MIB = 2**20
GiB = 2**30


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
    against it (bookkeeping/launch.py)."""
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
    if rank_bytes:
        # the rank's own memory first
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
