"""N sandboxes x M commands over two Docker engines against one, measured in the same run.

    python bench/bench_hosts.py [--sandboxes 128] [--commands 5] [--pairs 3] \
        [--second unix:///run/termrl-docker2.sock]

A: one engine (`local=N`); B: two engines (`local=N/2`, the second `=N/2`; scripts/second_engine.sh
starts it). Each run places N sandboxes of the base image through hosts.acquire (least-loaded), all
at once, runs M cheap commands in each (`echo`, `sleep 0.1`), closes them; interleaved A B A B ...,
--pairs pairs. Per run: wall time, failures, where the sandboxes went, containers left on either
engine; the ratio B/A of wall times (median over the pairs, spread min-max) and the load average.
Both engines share this machine's CPUs and disk here, so B/A measures what spreading itself costs or
saves (a second dockerd, twice the per-engine Docker operations in flight), not the gain of more
machines.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import statistics
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sandbox
from sandboxing import calls, hosts, images

LIMITS = sandbox.Limits(memory_bytes=64 << 20, pids=64)  # `echo` and `sleep` need little


async def one(run_id: str, commands: int, where: collections.Counter) -> bool:
    url = await hosts.acquire()
    where[url] += 1
    error = None
    try:
        async with await sandbox.Sandbox.start(images.BASE_IMAGE, LIMITS, run_id, host=url) as sb:
            for k in range(commands):
                r = await sb.exec(f"echo {k}" if k % 2 == 0 else "sleep 0.1", timeout=60)
                if r.exit_code != 0:
                    raise RuntimeError(f"command {k} exit {r.exit_code}: {r.output[-200:]}")
        return True
    except Exception as e:  # noqa: BLE001 - counted as a failure, first one printed
        error = e
        print(f"    failure on {url}: {type(e).__name__}: {e}", file=sys.stderr)
        return False
    finally:
        await asyncio.to_thread(hosts.release, url, error)


def leaks(run_id: str, urls: list[str]) -> int:
    n = 0
    for url in urls:
        cmd = ["docker"] + (["-H", url] if url != hosts.LOCAL else [])
        n += len(
            subprocess.run(
                cmd + ["ps", "-aq", "--filter", f"label=termrl.run_id={run_id}"],
                capture_output=True,
                check=False,
                text=True,
                timeout=120,
            ).stdout.split()
        )
    return n


def run(entries: tuple[str, ...], n: int, commands: int) -> tuple[float, int, dict, int]:
    for line in hosts.configure(entries, 2 * LIMITS.memory_bytes):  # caps as admission sets them
        print("   ", line)
    run_id = f"bench-hosts-{uuid.uuid4().hex[:8]}"
    where: collections.Counter = collections.Counter()

    async def go():
        return await asyncio.gather(*(one(run_id, commands, where) for _ in range(n)))

    t = time.perf_counter()
    ok = asyncio.run(go())
    wall = time.perf_counter() - t
    left = leaks(run_id, [hosts.parse_entry(e)[0] for e in entries])
    sandbox.reap(run_id=run_id)
    return wall, ok.count(False), dict(where), left


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sandboxes", type=int, default=128)
    ap.add_argument("--commands", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--second", default="unix:///run/termrl-docker2.sock")
    args = ap.parse_args()
    if args.pairs < 3:
        ap.error("--pairs must be >= 3")
    n, half = args.sandboxes, args.sandboxes // 2
    one_engine = (f"local={n}",)
    two_engines = (f"local={half}", f"{args.second}={n - half}")
    print("$ python bench/bench_hosts.py " + " ".join(sys.argv[1:]))
    print(
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}, "
        f"max_concurrent={calls.MAX_CONCURRENT} "
        f"per engine, image {images.BASE_IMAGE}, {n} sandboxes x {args.commands} commands"
    )
    ratios, walls = [], {"A": [], "B": []}
    for k in range(args.pairs):
        load = os.getloadavg()[0]
        res = {
            name: run(entries, n, args.commands)
            for name, entries in (("A", one_engine), ("B", two_engines))
        }
        for name, (wall, failed, where, left) in res.items():
            walls[name].append(wall)
            print(
                f"    pair {k} {name}: wall {wall:.1f}s, failures {failed}, left {left}, "
                f"placed {where}"
            )
        ratios.append(res["B"][0] / res["A"][0])
        print(
            f"    pair {k}: ratio B/A {ratios[-1]:.3f} "
            f"(load {load:.1f} -> {os.getloadavg()[0]:.1f})"
        )
    ratios.sort()
    print(
        f"median wall A (one engine) {statistics.median(walls['A']):.1f}s, B (two engines) "
        f"{statistics.median(walls['B']):.1f}s; median ratio B/A {statistics.median(ratios):.3f} "
        f"(spread {ratios[0]:.3f}-{ratios[-1]:.3f}); load {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
