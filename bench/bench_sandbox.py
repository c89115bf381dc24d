"""Sandbox latency and concurrency against the docker CLI, measured in the same run.

    python bench/bench_sandbox.py [--starts 10] [--execs 20] [--pairs 5] [--concurrent 32] [--commands 10] [--parts abcd]

(a) start-to-first-exec: `Sandbox.start` + `exec("true")` vs `docker run --rm` with the same isolation flags
    running `true` (p50 / p95, seconds).
(b) exec round trip: `sb.exec("true")` (B) vs `docker exec <ctr> true` (A) on running containers, interleaved
    A B A B ...: each run is --execs round trips (p50); the ratio is the median over --pairs pairs of B/A,
    with its spread (min-max) and the load average.
(c) N concurrent sandboxes x M commands each (start, M x `echo`, close) vs the same with the CLI
    (`docker run -d`, M x `docker exec`, `docker rm -f`) from N threads: wall time, failures, leaks.
(d) how long `exec("sleep 1000", timeout=2)` takes to return, plain and with SIGTERM ignored (no baseline:
    the docker CLI has no exec timeout).
Ratios are ours / CLI (lower is better). Goals: (b) <= 0.1 (aim 0.05), (a) p50 <= 1 s, (c) 0 failures,
0 leaks.
"""  # noqa: E501

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
import sandbox  # noqa: E402
from sandboxing import calls, images  # noqa: E402

CLI_FLAGS = [
    "--init",
    "--network",
    "none",
    "--memory",
    "1g",
    "--memory-swap",
    "1g",
    "--cpus",
    "1",
    "--pids-limit",
    "256",
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges",
]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def docker(*args: str, check: bool = True) -> str:
    return subprocess.run(
        ["docker", *args], capture_output=True, text=True, check=check, timeout=300
    ).stdout


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
        docker(
            "run",
            "--rm",
            *CLI_FLAGS,
            "--label",
            "termrl=1",
            "--label",
            f"termrl.run_id={run_id}",
            images.BASE_IMAGE,
            "true",
        )
        out.append(time.perf_counter() - t)
    return out


async def exec_pairs(n: int, pairs: int, run_id: str) -> list[tuple[float, float]]:
    """[(docker exec p50, Sandbox.exec p50)] per pair, seconds; runs interleaved A B A B ..."""
    cid = docker(
        "run",
        "-d",
        *CLI_FLAGS,
        "--label",
        "termrl=1",
        "--label",
        f"termrl.run_id={run_id}",
        images.BASE_IMAGE,
        "sleep",
        "600",
    ).strip()
    try:
        async with await sandbox.Sandbox.start(images.BASE_IMAGE, run_id=run_id) as sb:
            await sb.exec("true")  # the worker shell starts on the first command
            docker("exec", cid, "true")
            out = []
            for _ in range(pairs):
                a, b = [], []
                for _ in range(n):
                    t = time.perf_counter()
                    docker("exec", cid, "true")
                    a.append(time.perf_counter() - t)
                for _ in range(n):
                    t = time.perf_counter()
                    r = await sb.exec("true")
                    b.append(time.perf_counter() - t)
                    assert r.exit_code == 0, r
                out.append((statistics.median(a), statistics.median(b)))
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
            cid = docker(
                "run",
                "-d",
                *CLI_FLAGS,
                "--label",
                "termrl=1",
                "--label",
                f"termrl.run_id={run_id}",
                images.BASE_IMAGE,
                "sleep",
                "600",
            ).strip()
        except subprocess.CalledProcessError as e:
            print(f"  cli: container {i} failed: {e.stderr.strip()}", file=sys.stderr)
            return m
        fails = 0
        try:
            for j in range(m):
                r = subprocess.run(
                    ["docker", "exec", cid, "echo", f"{i}-{j}"],
                    capture_output=True,
                    text=True,
                    timeout=300,
                )
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
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--starts", type=int, default=10)
    ap.add_argument("--execs", type=int, default=20, help="round trips per run in (b)")
    ap.add_argument("--pairs", type=int, default=5, help="A B pairs in (b), >= 3")
    ap.add_argument("--parts", default="abcd", help="which measurements to run")
    ap.add_argument("--concurrent", type=int, default=32)
    ap.add_argument("--commands", type=int, default=10)
    args = ap.parse_args()
    if args.pairs < 3:
        ap.error("--pairs must be >= 3")
    rid = f"bench-{uuid.uuid4().hex[:8]}"
    print("$ python bench/bench_sandbox.py " + " ".join(sys.argv[1:]))
    print(
        f"docker {docker('version', '-f', '{{.Server.Version}}').strip()}, {os.cpu_count()} CPUs, "
        f"load {os.getloadavg()[0]:.1f}, max_concurrent={calls.MAX_CONCURRENT}, image {images.BASE_IMAGE}"
    )

    if "a" in args.parts:
        start_to_first_exec(args.starts, rid + "-a")
    if "b" in args.parts:
        round_trip(args.execs, args.pairs, rid + "-b")
    if "d" in args.parts:
        plain, stubborn = asyncio.run(ours_timeouts(rid + "-b"))
        print(
            f"(d) timeout=2 s returns after: sleep {plain:.2f}s, SIGTERM-ignoring sleep {stubborn:.2f}s (goal <= 3 s)"
        )
    if "c" in args.parts:
        concurrent_sandboxes(args.concurrent, args.commands, rid)
    left = sum(leaks(rid + s) for s in ("-a", "-b", "-c", "-d"))
    print(f"containers left by this run: {left}")
    sandbox.reap(run_id=rid + "-d")


def start_to_first_exec(n: int, rid: str) -> None:
    first, closes = asyncio.run(ours_start(n, rid))
    cli_first = cli_start(n, rid)
    print(
        f"(a) start-to-first-exec  ours p50 {pct(first, 0.5):.3f}s p95 {pct(first, 0.95):.3f}s | "
        f"docker run p50 {pct(cli_first, 0.5):.3f}s p95 {pct(cli_first, 0.95):.3f}s | "
        f"ratio p50 {pct(first, 0.5) / pct(cli_first, 0.5):.2f} p95 {pct(first, 0.95) / pct(cli_first, 0.95):.2f} | "
        f"close p50 {pct(closes, 0.5):.3f}s"
    )


def round_trip(n: int, pairs: int, rid: str) -> None:
    load = os.getloadavg()[0]
    res = asyncio.run(exec_pairs(n, pairs, rid))
    ratios = sorted(b / a for a, b in res)
    print(
        f"(b) exec round trip, {pairs} pairs A B A B ... of {n} each (load {load:.1f} -> {os.getloadavg()[0]:.1f})"
    )
    for k, (a, b) in enumerate(res):
        print(
            f"    pair {k}: docker exec p50 {a * 1e3:.1f}ms | Sandbox.exec p50 {b * 1e3:.2f}ms | ratio {b / a:.3f}"
        )
    print(
        f"    median ratio {statistics.median(ratios):.3f} (spread {ratios[0]:.3f}-{ratios[-1]:.3f}); "
        f"docker exec p50 {statistics.median(a for a, _ in res) * 1e3:.1f}ms, "
        f"Sandbox.exec p50 {statistics.median(b for _, b in res) * 1e3:.2f}ms"
    )


def concurrent_sandboxes(n: int, m: int, rid: str) -> None:
    wall, fails = asyncio.run(ours_concurrent(n, m, rid + "-c"))
    ours_leaks = leaks(rid + "-c")
    cli_wall, cli_fails = cli_concurrent(n, m, rid + "-d")
    print(
        f"(c) {n} sandboxes x {m} commands  ours wall {wall:.2f}s failures {fails} "
        f"leaks {ours_leaks} | CLI wall {cli_wall:.2f}s failures {cli_fails} leaks {leaks(rid + '-d')} | "
        f"ratio {wall / cli_wall:.2f}"
    )


if __name__ == "__main__":
    main()
