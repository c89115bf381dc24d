"""What the disk watchdog costs and how fast it stops a writer (sandboxing/disk.py), real Docker.

    python bench/bench_disk_watch.py [--pairs 5] [--tries 3]

(a) one check of a sandbox's layer: our UpperDir walk (B) against the engine's own measurement,
    `GET /containers/{id}/json?size=1` (A, what `docker inspect --size` asks), interleaved A B A B,
    on a fresh sandbox and on one holding 2,000 and 20,000 small files: wall ms per check (median
    over --pairs pairs, spread min-max) and the walk's CPU ms.
(b) a writer of 8 x 32 MiB files (0.2 s apart, 256 MiB at most) in a sandbox with storage_mb=64 and
    checks every 1 s: seconds from the command's start to the kill and MiB held at the kill (the
    overshoot past 64), median over --tries tries with spread. Bounded: never more than 256 MiB.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sandbox import DiskLimitError, Limits, Sandbox, docker_api  # noqa: E402
from sandboxing import images  # noqa: E402
from sandboxing.disk import DiskWatch, layer_usage  # noqa: E402

RUN_ID = f"bench-disk-{os.getpid()}"
MiB = 1 << 20


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"


async def check_cost(files: int, pairs: int) -> None:
    box = await Sandbox.start(
        images.BASE_IMAGE, limits=Limits(storage_check_s=3600.0), run_id=RUN_ID
    )
    try:
        if files:
            await box.exec(
                f"mkdir -p /app/d && cd /app/d && seq 1 {files} | xargs touch", timeout=300
            )
        api = docker_api()
        walk = DiskWatch(api, box.id, 1 << 40)
        engine = DiskWatch(api, box.id, 1 << 40)
        engine._roots = None  # the fallback: the engine's SizeRw
        a, b, cpu = [], [], []
        for _ in range(pairs):
            t = time.perf_counter()
            engine.measure()
            a.append((time.perf_counter() - t) * 1e3)
            t, c = time.perf_counter(), time.process_time()
            walk.measure()
            b.append((time.perf_counter() - t) * 1e3)
            cpu.append((time.process_time() - c) * 1e3)
        ratio = [y / x for x, y in zip(a, b)]
        print(
            f"(a) {files:>6} files: engine size=1 {spread(a)} ms, walk {spread(b)} ms "
            f"(CPU {spread(cpu)} ms), "
            f"walk/engine {spread(ratio)}x"
        )
    finally:
        await box.close()


async def detection(tries: int) -> None:
    fill = "for i in 1 2 3 4 5 6 7 8; do fallocate -l 32M /tmp/fill$i; sleep 0.2; done"
    secs, held = [], []
    for _ in range(tries):
        box = await Sandbox.start(
            images.BASE_IMAGE,
            limits=Limits(storage_bytes=64 * MiB, storage_check_s=1.0),
            run_id=RUN_ID,
        )
        try:
            t = time.monotonic()
            try:
                await box.exec(fill, timeout=60)
                while box.disk_exceeded is None and time.monotonic() - t < 30:
                    await asyncio.sleep(0.05)
            except DiskLimitError:
                pass
            secs.append(time.monotonic() - t)
            # the whole layer at the kill (the watchdog's own walk stops just past the limit)
            held.append(layer_usage(box._disk._roots, 1 << 40, 1 << 40).bytes / MiB)
        finally:
            await box.close()
    print(
        f"(b) 8 x 32 MiB writer, limit 64 MiB, check every 1 s: killed after {spread(secs)} s "
        "holding "
        f"{spread(held)} MiB"
    )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--pairs", type=int, default=5, help="interleaved A B pairs per size in (a)")
    ap.add_argument("--tries", type=int, default=3, help="writer runs in (b)")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()}")
    for files in (0, 2000, 20000):
        asyncio.run(check_cost(files, args.pairs))
    asyncio.run(detection(args.tries))
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
