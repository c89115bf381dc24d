"""Sandbox latency and concurrency against the docker CLI, measured in the same run.

    python bench/bench_sandbox.py [--starts 10] [--execs 50] [--concurrent 32] [--commands 10]

(a) start-to-first-exec: `Sandbox.start` + `exec("true")` vs `docker run --rm` with the same isolation flags
    running `true` (p50 / p95, seconds).
(b) exec round trip: `sb.exec("true")` vs `docker exec <ctr> true` on a running container (p50, seconds).
(c) N concurrent sandboxes x M commands each (start, M x `echo`, close) vs the same with the CLI
    (`docker run -d`, M x `docker exec`, `docker rm -f`) from N threads: wall time, failures, leaks.
(d) how long `exec("sleep 1000", timeout=2)` takes to return, plain and with SIGTERM ignored (no baseline:
    the docker CLI has no exec timeout).
Ratios are ours / CLI (lower is better). Goals (issue 3): (b) <= 0.5, (a) p50 <= 1 s, (c) 0 failures, 0 leaks.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import os
import statistics
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import images  # noqa: E402
import sandbox  # noqa: E402

CLI_FLAGS = ["--init", "--network", "none", "--memory", "1g", "--memory-swap", "1g", "--cpus", "1",
             "--pids-limit", "256", "--cap-drop", "ALL", "--security-opt", "no-new-privileges"]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def docker(*args: str, check: bool = True) -> str:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=check, timeout=300).stdout


async def ours_start(n: int, run_id: str) -> tuple[list[float], list[float]]:
    first, closes = [], []
    for _ in range(n):
        t = time.perf_counter()
        sb = await sandbox.Sandbox.start(images.BASE_IMAGE, run_id=run_id)
        r = await sb.exec("true")
        first.append(time.perf_counter() - t)
        assert r.exit_code == 0, r
        t = time.perf_counter()
        await sb.close()
        closes.append(time.perf_counter() - t)
    return first, closes


def cli_start(n: int, run_id: str) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        docker("run", "--rm", *CLI_FLAGS, "--label", "termrl=1", "--label", f"termrl.run_id={run_id}",
               images.BASE_IMAGE, "true")
        out.append(time.perf_counter() - t)
    return out


async def ours_exec(n: int, run_id: str) -> list[float]:
    async with await sandbox.Sandbox.start(images.BASE_IMAGE, run_id=run_id) as sb:
        await sb.exec("true")  # the shell server starts on the first command
        out = []
        for _ in range(n):
            t = time.perf_counter()
            await sb.exec("true")
            out.append(time.perf_counter() - t)
        return out


def cli_exec(n: int, run_id: str) -> list[float]:
    cid = docker("run", "-d", *CLI_FLAGS, "--label", "termrl=1", "--label", f"termrl.run_id={run_id}",
                 images.BASE_IMAGE, "sleep", "600").strip()
    try:
        out = []
        for _ in range(n):
            t = time.perf_counter()
            docker("exec", cid, "true")
            out.append(time.perf_counter() - t)
        return out
    finally:
        docker("rm", "-f", cid)


async def ours_concurrent(n: int, m: int, run_id: str) -> tuple[float, int]:
    async def one(i: int) -> int:
        fails = 0
        try:
            async with await sandbox.Sandbox.start(images.BASE_IMAGE, run_id=run_id) as sb:
                for j in range(m):
                    r = await sb.exec(f"echo {i}-{j}")
                    fails += r.output != f"{i}-{j}\n"
        except Exception as e:  # noqa: BLE001 - counted, reported
            print(f"  ours: sandbox {i} failed: {e!r}", file=sys.stderr)
            return m
        return fails

    t = time.perf_counter()
    fails = await asyncio.gather(*(one(i) for i in range(n)))
    return time.perf_counter() - t, sum(fails)


def cli_concurrent(n: int, m: int, run_id: str) -> tuple[float, int]:
    def one(i: int) -> int:
        try:
            cid = docker("run", "-d", *CLI_FLAGS, "--label", "termrl=1", "--label", f"termrl.run_id={run_id}",
                         images.BASE_IMAGE, "sleep", "600").strip()
        except subprocess.CalledProcessError as e:
            print(f"  cli: container {i} failed: {e.stderr.strip()}", file=sys.stderr)
            return m
        fails = 0
        try:
            for j in range(m):
                r = subprocess.run(["docker", "exec", cid, "echo", f"{i}-{j}"], capture_output=True, text=True,
                                   timeout=300)
                fails += r.stdout != f"{i}-{j}\n"
        finally:
            docker("rm", "-f", cid, check=False)
        return fails

    t = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        fails = list(pool.map(one, range(n)))
    return time.perf_counter() - t, sum(fails)


async def ours_timeouts(run_id: str) -> tuple[float, float]:
    async with await sandbox.Sandbox.start(images.BASE_IMAGE, run_id=run_id) as sb:
        a = await sb.exec("sleep 1000", timeout=2)
        b = await sb.exec("trap '' TERM; sleep 1000", timeout=2)
        assert a.timed_out and b.timed_out
        return a.duration_s, b.duration_s


def leaks(run_id: str) -> int:
    return len(docker("ps", "-aq", "--filter", f"label=termrl.run_id={run_id}").split())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--starts", type=int, default=10)
    ap.add_argument("--execs", type=int, default=50)
    ap.add_argument("--concurrent", type=int, default=32)
    ap.add_argument("--commands", type=int, default=10)
    args = ap.parse_args()
    rid = f"bench-{uuid.uuid4().hex[:8]}"
    print(f"docker {docker('version', '-f', '{{.Server.Version}}').strip()}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}, max_concurrent={sandbox.MAX_CONCURRENT}, image {images.BASE_IMAGE}")

    first, closes = asyncio.run(ours_start(args.starts, rid + "-a"))
    cli_first = cli_start(args.starts, rid + "-a")
    print(f"(a) start-to-first-exec  ours p50 {pct(first, .5):.3f}s p95 {pct(first, .95):.3f}s | "
          f"docker run p50 {pct(cli_first, .5):.3f}s p95 {pct(cli_first, .95):.3f}s | "
          f"ratio p50 {pct(first, .5) / pct(cli_first, .5):.2f} p95 {pct(first, .95) / pct(cli_first, .95):.2f} | "
          f"close p50 {pct(closes, .5):.3f}s")

    rt = asyncio.run(ours_exec(args.execs, rid + "-b"))
    cli_rt = cli_exec(max(10, args.execs // 2), rid + "-b")
    print(f"(b) exec round trip      ours p50 {statistics.median(rt) * 1e3:.1f}ms p95 {pct(rt, .95) * 1e3:.1f}ms | "
          f"docker exec p50 {statistics.median(cli_rt) * 1e3:.1f}ms p95 {pct(cli_rt, .95) * 1e3:.1f}ms | "
          f"ratio p50 {statistics.median(rt) / statistics.median(cli_rt):.2f}")

    plain, stubborn = asyncio.run(ours_timeouts(rid + "-b"))
    print(f"(d) timeout=2 s returns after: sleep {plain:.2f}s, SIGTERM-ignoring sleep {stubborn:.2f}s (goal <= 3 s)")

    wall, fails = asyncio.run(ours_concurrent(args.concurrent, args.commands, rid + "-c"))
    ours_leaks = leaks(rid + "-c")
    cli_wall, cli_fails = cli_concurrent(args.concurrent, args.commands, rid + "-d")
    print(f"(c) {args.concurrent} sandboxes x {args.commands} commands  ours wall {wall:.2f}s failures {fails} "
          f"leaks {ours_leaks} | CLI wall {cli_wall:.2f}s failures {cli_fails} leaks {leaks(rid + '-d')} | "
          f"ratio {wall / cli_wall:.2f}")
    left = sum(leaks(rid + s) for s in ("-a", "-b", "-c", "-d"))
    print(f"containers left by this run: {left}")
    sandbox.reap(run_id=rid + "-d")


if __name__ == "__main__":
    main()
