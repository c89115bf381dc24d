"""The isolation of every container termrl runs from a task image (the sandbox, its compose sidecars, the
verifier's containers, the toolchain's probe and fill): `Limits` (the numbers, from sandbox.* of the run's
config, a task's own request clamped under them) and `host_config` (the engine settings that apply them).
Image builds have their own (sandboxing/images.py: `build_limits`)."""

from __future__ import annotations

import dataclasses
import logging
import os
from dataclasses import dataclass

import docker.types

from sandboxing.disk import MAX_FILES

log = logging.getLogger("termrl.sandbox")

# What a root shell needs for ordinary file and process work; everything else (NET_RAW, MKNOD, SYS_CHROOT,
# AUDIT_WRITE, SETFCAP, ...) stays dropped.
DEFAULT_CAPS = (
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "SETGID",
    "SETUID",
    "NET_BIND_SERVICE",
)


@dataclass
class Limits:
    """Per-sandbox resource limits and defaults. Values are trusted: configs.validate checks the
    SandboxConfig they come from (from_config) at start-up."""

    # memory limit, bytes; the swap limit is set equal (no swap)
    memory_bytes: int = 1 << 30
    # CPU quota, cores
    cpus: float = 1.0
    # max processes in the container (fork bombs stop here)
    pids: int = 256
    # bytes of output kept per exec (head + tail)
    output_bytes: int = 16384
    # default timeout of `exec`, seconds
    exec_timeout_s: float = 60.0
    # the container stops by itself after this long, seconds
    max_lifetime_s: float = 24 * 3600.0
    # capabilities kept after cap_drop=ALL
    cap_add: tuple[str, ...] = DEFAULT_CAPS
    # disk its writable layer may hold (no file larger), bytes
    storage_bytes: int = 2048 << 20
    # files, folders and links its writable layer may hold (what a snapshot writes an inode for)
    max_files: int = MAX_FILES
    # seconds between two checks of the layer's size
    storage_check_s: float = 1.0
    # the verifier's wall clock, seconds (0 = 3 x the per-test timeout)
    verify_wall_s: float = 0.0

    @classmethod
    def from_config(cls, cfg) -> Limits:
        """Limits from a configs.SandboxConfig (memory_mb, cpus, pids, output_limit_bytes, exec_timeout_s,
        storage_mb, max_files, verify_wall_s)."""
        return cls(
            memory_bytes=int(cfg.memory_mb) << 20,
            cpus=float(cfg.cpus),
            pids=int(cfg.pids),
            output_bytes=int(cfg.output_limit_bytes),
            exec_timeout_s=float(cfg.exec_timeout_s),
            storage_bytes=int(cfg.storage_mb) << 20,
            max_files=int(cfg.max_files),
            verify_wall_s=float(cfg.verify_wall_s),
        )

    def ulimits(self) -> list:
        """RLIMIT_FSIZE = storage_bytes (no file grows past the disk limit; sandboxing/disk.py), soft = hard."""
        return [docker.types.Ulimit(name="fsize", soft=self.storage_bytes, hard=self.storage_bytes)]

    def for_task(self, task) -> Limits:
        """These limits with a task's own request (Harbor [environment] memory_mb, cpus, storage_mb; Task
        fields, None = keep) taken where it is lower: the run's limits (sandbox.memory_mb, cpus,
        storage_mb, which the host admission counts; sandboxing/admission.py) and this machine's cores are
        the ceiling a task file cannot raise. A request above them is clamped, said in one warning line
        per task and process."""
        asked = {
            "memory_bytes": int(task.memory_mb) << 20 if task.memory_mb else None,
            "cpus": float(task.cpus) if task.cpus else None,
            "storage_bytes": int(task.storage_mb) << 20 if task.storage_mb else None,
        }
        ceiling = {
            "memory_bytes": self.memory_bytes,
            "cpus": min(self.cpus, float(os.cpu_count() or 1)),
            "storage_bytes": self.storage_bytes,
        }
        granted = {k: min(v, ceiling[k]) for k, v in asked.items() if v is not None}
        clamped = [k for k, v in granted.items() if v < asked[k]]
        if clamped and task.id not in _clamped_said:
            _clamped_said.add(task.id)
            log.warning(
                "task %s asks for %s: clamped to the run's sandbox limits (%s)",
                task.id,
                ", ".join(_limit_text(k, asked[k]) for k in clamped),
                ", ".join(_limit_text(k, granted[k]) for k in clamped),
            )
        return dataclasses.replace(self, **granted)


# tasks whose clamped request was said (once per task and process)
_clamped_said: set[str] = set()


def _limit_text(field: str, value: float) -> str:
    """`memory 65536 MiB`, `cpus 64`, `storage 10240 MiB`: a Limits field's value as the task file says it."""
    if field == "cpus":
        return f"cpus {value:g}"
    return f"{field.split('_')[0]} {int(value) >> 20} MiB"


def host_config(api, limits, mounts=None, logs: bool = True, network_mode: str = "none"):
    """The isolation of the sandbox and of every verifier-side container: limits (sandbox.Limits),
    no network (network_mode "none", or "container:<id>": a compose pod's namespace with only `lo`),
    capabilities dropped but limits.cap_add, no-new-privileges, docker-init; logs False keeps no
    container log (the sandbox's command output), else 1 MB of json-file."""
    return api.create_host_config(
        network_mode=network_mode,
        mem_limit=limits.memory_bytes,
        memswap_limit=limits.memory_bytes,
        nano_cpus=int(limits.cpus * 1e9),
        pids_limit=limits.pids,
        cap_drop=["ALL"],
        cap_add=list(limits.cap_add),
        security_opt=["no-new-privileges"],
        init=True,
        mounts=mounts,
        ulimits=limits.ulimits(),
        log_config=docker.types.LogConfig(type="json-file", config={"max-size": "1m"})
        if logs
        else docker.types.LogConfig(type="none"),
    )


@dataclass(frozen=True)
class BuildLimits:
    """What one image build may use (sandbox.build_memory_mb, build_pids, build_timeout_s): the engine's
    classic builder runs each RUN step in a container under `memory_bytes` (swap equal) and a cgroup
    holding at most `pids` processes; the whole build, however much it prints, ends at `deadline_s`
    (sandboxing/images.py `_build`)."""

    memory_bytes: int = 4 << 30
    pids: int = 4096
    deadline_s: float = 3600.0

    @classmethod
    def from_config(cls, cfg) -> BuildLimits:
        """BuildLimits from a configs.SandboxConfig (build_memory_mb, build_pids, build_timeout_s)."""
        return cls(
            memory_bytes=int(cfg.build_memory_mb) << 20,
            pids=int(cfg.build_pids),
            deadline_s=float(cfg.build_timeout_s),
        )
