"""Host memory of a training rank: its peak RSS, for the step line, metrics.jsonl and the launcher.

Peak RSS is the kernel's high-water mark of the process's resident set, VmHWM of
/proc/self/status (in KiB there); figures here are bytes, and GB in lines and records means 1e9
bytes. Each rank keeps `<out_dir>/memory/rank<R>.json` current (a
thread rewrites it every `RssRecorder.interval_s`), so when the kernel kills a rank for memory
(SIGKILL, exit -9), the launcher (bookkeeping/launch.py) still reads that rank's last peak and its
budget and says so in one line (`killed_line`).
"""

import ctypes
import ctypes.util
import json
import os
import threading
import time
from pathlib import Path

import torch.distributed as dist

GB = 1e9


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


def peak_rss_bytes() -> int:
    """This process's peak resident set size since it started, bytes: VmHWM of /proc/self/status
    (kB there means KiB). Not getrusage's ru_maxrss: the kernel updates that high-water mark
    lazily (when the RSS shrinks), so while the RSS is at its peak it reads lower."""
    return _status_kib("VmHWM") * 1024


def rss_bytes() -> int:
    """This process's resident set size now, bytes (VmRSS of /proc/self/status)."""
    return _status_kib("VmRSS") * 1024


# see fix_mmap_threshold
MMAP_THRESHOLD_BYTES = 1 << 20


def _libc():
    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name) if name else None


def fix_mmap_threshold(nbytes: int = MMAP_THRESHOLD_BYTES) -> bool:
    """Serve every allocation of at least `nbytes` bytes from its own mmap, returned to the OS when
    freed (glibc `mallopt(M_MMAP_THRESHOLD)`); False where libc has no mallopt (not glibc).
    Why: glibc raises its threshold to the largest block freed so far (up to 32 MiB), so after the
    first freed tensors every tensor under 32 MiB (a block's gathered weights, activations,
    gradients) comes from the heap, whose freed holes are reused only by fitting requests and
    given back only from the top: on cpu-smollm2 the update's RSS then rose 0.3-1.2 GB above what
    it holds, more in step 2 than in step 1. A fixed threshold also turns that rise off. 1 MiB,
    at a price: each tensor above it gets fresh zeroed pages (page faults), so the update took
    1.33x (1 MiB) and 1.26x (4 MiB) the time of glibc's own threshold, 0.97x at 8 MiB, but at
    8 MiB `make train` peaked at 3.15-3.18 GB per rank, over the 3 GB budget, and at 2.86-2.87 with
    1 MiB (BENCHMARKS.md "Memory per rank").
    Affects allocations made after the call; call it once at start-up."""
    libc = _libc()
    if libc is None or not hasattr(libc, "mallopt"):
        return False
    # <malloc.h>
    m_mmap_threshold = -3
    return bool(libc.mallopt(m_mmap_threshold, int(nbytes)))


def release_free_memory() -> bool:
    """Return the free pages of every malloc arena to the OS (glibc `malloc_trim(0)`); False where
    libc has no malloc_trim. Why: tensors under glibc's mmap threshold (which rises to 32 MiB as
    large blocks are freed) live in arenas, one per thread that allocated them (the engine steps in
    a worker thread, the update in the main one), and freed arena memory is kept for reuse by that
    arena only: without a trim, the rollout's and the update's freed memory add up in RSS
    (BENCHMARKS.md "Memory per rank")."""
    libc = _libc()
    if libc is None or not hasattr(libc, "malloc_trim"):
        return False
    libc.malloc_trim(0)
    return True


def gather_peak_rss(world: int, group=None, others: tuple = ()) -> dict:
    """Every rank's peak RSS as metrics.jsonl fields (all_gather_object over `group` of `world`
    ranks, None: all; collective when world > 1), then `others` (bytes, of ranks outside it):
    rss_peak_gb (the largest) and rss_peak_gb_per_rank (in rank order), GB = 1e9 bytes."""
    peaks: list = [peak_rss_bytes()]
    if world > 1:
        peaks = [None] * world
        dist.all_gather_object(peaks, peak_rss_bytes(), group=group)
    peaks += list(others)
    per_rank = [round(p / GB, 3) for p in peaks]
    return {"rss_peak_gb": max(per_rank), "rss_peak_gb_per_rank": per_rank}


def record_path(run_dir: Path, rank: int) -> Path:
    return Path(run_dir) / "memory" / f"rank{rank}.json"


def write_record(run_dir: Path, rank: int, budget_bytes: int) -> None:
    """Write rank's record {rank, pid, peak_rss_bytes, rss_bytes, budget_bytes, time} atomically
    (a temp file renamed over the old one: a reader never sees half a record)."""
    path = record_path(run_dir, rank)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = dict(
        rank=rank,
        pid=os.getpid(),
        peak_rss_bytes=peak_rss_bytes(),
        rss_bytes=rss_bytes(),
        budget_bytes=budget_bytes,
        time=time.time(),
    )
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record))
    os.replace(tmp, path)


def read_record(run_dir: Path, rank: int) -> dict | None:
    """rank's last record, or None when it never wrote one (or it is unreadable)."""
    try:
        return json.loads(record_path(run_dir, rank).read_text())
    except (OSError, ValueError):
        return None


class RssRecorder:
    """A daemon thread rewriting this rank's record every interval_s seconds until `close`.

    A step-end record alone would miss the growth of a step that the kernel cuts short; a record
    every 2 s costs one small file write. `budget_bytes` is the rank's share of host RAM from the
    host admission (sandboxing/admission.py), 0 when unknown; settable after start."""

    interval_s = 2.0

    def __init__(self, run_dir: Path, rank: int, budget_bytes: int = 0):
        self.run_dir = Path(run_dir)
        self.rank = rank
        self.budget_bytes = budget_bytes
        self._done = threading.Event()
        write_record(self.run_dir, rank, budget_bytes)
        self._thread = threading.Thread(target=self._loop, name="rss-recorder", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._done.wait(self.interval_s):
            try:
                write_record(self.run_dir, self.rank, self.budget_bytes)
            except OSError:
                # a full or vanished out_dir must not stop training
                pass

    def close(self) -> None:
        self._done.set()
        self._thread.join(timeout=5)
        try:
            write_record(self.run_dir, self.rank, self.budget_bytes)
        except OSError:
            pass


def killed_line(rank: int, signal_name: str, record: dict | None) -> str:
    """The one line for a rank killed by a signal: "rank 1 was killed (SIGKILL, likely out of
    memory): last peak RSS 5.80 GB, budget 3.00 GB"; SIGKILL is what the kernel's OOM killer
    sends. Without a record the figures are said to be unknown."""
    why = f"{signal_name}, likely out of memory" if signal_name == "SIGKILL" else signal_name
    if record is None:
        return f"rank {rank} was killed ({why}): it wrote no memory record (peak RSS unknown)"
    budget = record.get("budget_bytes") or 0
    budget_text = f"budget {budget / GB:.2f} GB" if budget else "no budget known"
    return (
        f"rank {rank} was killed ({why}): last peak RSS {record['peak_rss_bytes'] / GB:.2f} GB, "
        f"{budget_text}"
    )
