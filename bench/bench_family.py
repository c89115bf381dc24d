"""What a generated multi-turn instance (tasks/family.py) costs, against a shipped one-COPY task, real Docker.

    python bench/bench_family.py [--instances 6] [--hops 2]

(a) image build: each instance's image built from nothing (fresh generator seeds, so no cached tag), one
    at a time, beside the shipped task data/tasks/append-line (same Dockerfile shape: FROM the base,
    WORKDIR, one COPY of files/) copied under fresh ids: seconds per build (median, min-max) and the
    bytes the instance adds to the base image.
(b) oracle episode: a sandbox started, the instance's oracle_turns.json acted out one command at a time
    (each formatted from what the earlier outputs revealed), the hidden tests run, the sandbox closed,
    against append-line's episode with its solution.sh as one command: seconds (median, min-max).
Ratios are instance / shipped task. Every image built here is removed at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import sandbox  # noqa: E402
from reward import verify  # noqa: E402
from sandboxing import images  # noqa: E402
from tasks import load_tasks  # noqa: E402
from tasks.checks import read_oracle_turns  # noqa: E402
from tasks.family import SHAPES, make_instance, write_instance  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "data" / "tasks" / "append-line"


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"


def timed_build(task) -> tuple[str, float]:
    start = time.perf_counter()
    tag = images.build_image(task)
    return tag, time.perf_counter() - start


async def oracle_episode(task, tag: str) -> float:
    """Seconds for one episode acted out from oracle_turns.json; raises unless the tests score 1."""
    start = time.perf_counter()
    values = {}
    async with await sandbox.start_sandbox(task, tag, sandbox.Limits().for_task(task)) as sb:
        for step in read_oracle_turns(task.id, task.oracle_turns):
            result = await sb.exec(step["command"].format(**values), timeout=30)
            for var, regex in step["capture"].items():
                values[var] = re.search(regex, result.output).group(1)
        report = await sb.run_tests(task.tests_dir, timeout=task.test_timeout_s)
    score = verify(report, task.weights).score
    if score != 1.0:
        raise RuntimeError(f"{task.id}: the oracle scored {score}")
    return time.perf_counter() - start


async def solution_episode(task, tag: str) -> float:
    """Seconds for one episode of the shipped task: its solution.sh as one command, then its tests."""
    start = time.perf_counter()
    async with await sandbox.start_sandbox(task, tag, sandbox.Limits().for_task(task)) as sb:
        command = await sandbox.put_solution(sb, task, "/oracle/solution.sh")
        await sb.exec(command, timeout=60)
        report = await sb.run_tests(task.tests_dir, timeout=task.test_timeout_s)
    score = verify(report, task.weights).score
    if score != 1.0:
        raise RuntimeError(f"{task.id}: the solution scored {score}")
    return time.perf_counter() - start


def added_bytes(tag: str) -> int:
    """Bytes of the layers the image adds on top of the base image."""
    out = subprocess.run(
        ["docker", "history", "--no-trunc", "--format", "{{.Size}}\t{{.CreatedBy}}", tag],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    base = subprocess.run(
        ["docker", "history", "-q", images.BASE_IMAGE],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split()
    sizes = [line.split("\t")[0] for line in out.splitlines()][: len(out.splitlines()) - len(base)]
    units = {"B": 1, "kB": 1000, "KB": 1000, "MB": 1000**2, "GB": 1000**3}
    total = 0.0
    for size in sizes:
        number, unit = re.fullmatch(r"([\d.]+)\s*([A-Za-z]+)", size).groups()
        total += float(number) * units[unit]
    return int(total)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=6, help="instances (shapes in turn)")
    parser.add_argument("--hops", type=int, default=2, help="hops of each instance (1-8)")
    args = parser.parse_args()
    # Fresh seeds each run: an instance's image tag is its content, so an old run's image would be reused.
    first = 500_000 + os.getpid() % 400_000
    tags = []
    with tempfile.TemporaryDirectory(prefix="bench-family-") as tmp:
        out = Path(tmp)
        family = []
        shipped = []
        for i in range(args.instances):
            inst = make_instance("train", first + i, SHAPES[i % len(SHAPES)], args.hops)
            write_instance(inst, out / "family")
            (task,) = load_tasks(out / "family" / inst.id)
            family.append(task)
            copy = out / "shipped" / f"bench-append-line-{first + i}"
            shutil.copytree(SHIPPED, copy)
            toml = copy / "task.toml"
            toml.write_text(toml.read_text().replace('"append-line"', f'"{copy.name}"'))
            (task,) = load_tasks(copy)
            shipped.append(task)
        try:
            family_builds = []
            shipped_builds = []
            family_tags = []
            shipped_tags = []
            # interleaved A B A B so that load drifts alike on both
            for a, b in zip(shipped, family):
                tag, seconds = timed_build(a)
                tags.append(tag)
                shipped_tags.append(tag)
                shipped_builds.append(seconds)
                tag, seconds = timed_build(b)
                tags.append(tag)
                family_tags.append(tag)
                family_builds.append(seconds)
            layer = statistics.median(added_bytes(tag) for tag in family_tags)
            print(
                f"(a) image build, s: instance {spread(family_builds)} vs append-line "
                f"{spread(shipped_builds)}: ratio "
                f"{statistics.median(family_builds) / statistics.median(shipped_builds):.2f}; "
                f"the instance adds {layer / 1000:.1f} kB to the base image"
            )
            family_runs = []
            shipped_runs = []
            for a, tag_a, b, tag_b in zip(shipped, shipped_tags, family, family_tags):
                shipped_runs.append(asyncio.run(solution_episode(a, tag_a)))
                family_runs.append(asyncio.run(oracle_episode(b, tag_b)))
            print(
                f"(b) episode, s: oracle of {args.hops + 1} commands {spread(family_runs)} vs append-line's "
                f"solution {spread(shipped_runs)}: ratio "
                f"{statistics.median(family_runs) / statistics.median(shipped_runs):.2f} "
                f"(load average {os.getloadavg()[0]:.1f})"
            )
        finally:
            if tags:
                subprocess.run(["docker", "rmi", "-f", *tags], capture_output=True, timeout=300)


if __name__ == "__main__":
    main()
