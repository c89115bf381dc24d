"""Verification seconds per episode: this tree's verifier (B) against a baseline commit's (A), same run.

    python bench/bench_verify.py [--baseline 7751400] [--pairs 5] [--tests 20]

Each run: a fresh sandbox on the base image, the agent's answer written, then `run_tests_blocking` of one
verifier on a hidden test file of --tests tests (one reads the answer), timed from the call to its return
(snapshot, verifier container, pytest, report, clean-up). A and B interleave (A B A B ...), one warm-up of each
first (the baseline probes the image; this tree also fills its toolchain volume, a cost paid once per
toolchain and printed apart). Prints each pair, the median B/A ratio with its spread (min-max) and the load
average. The baseline's verifier.py is read from git (`git show <commit>:sandboxing/verifier.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sandbox
from sandboxing import images, verifier

ROOT = Path(__file__).resolve().parent.parent


def baseline_module(commit: str):
    src = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{commit}:sandboxing/verifier.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "verifier_baseline.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("verifier_baseline", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


async def one(mod, tests_dir: Path, run_id: str) -> float:
    """Seconds of one verification by `mod` (a verifier module) of a fresh sandbox."""
    async with await sandbox.Sandbox.start(images.BASE_IMAGE, run_id=run_id) as sb:
        await sb.write_file("/app/answer.txt", "42")
        labels = {
            "termrl": "1",
            "termrl.run_id": run_id,
            "termrl.started": f"{time.time():.3f}",
            "termrl.owner": sandbox._owner(),
            "termrl.verifies": sb.name,
        }
        t0 = time.monotonic()
        report = await asyncio.to_thread(
            mod.run_tests_blocking,
            sandbox.docker_api(180.0),
            sb.id,
            sb.name,
            labels,
            sb.limits,
            tests_dir,
            60.0,
        )
        dt = time.monotonic() - t0
        if not report.tests.get("test_answer") or report.error or report.tampered:
            raise SystemExit(f"{mod.__name__}: unexpected report {report}")
        return dt


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--baseline", default="7751400", help="commit whose sandboxing/verifier.py is A"
    )
    ap.add_argument("--pairs", type=int, default=5, help="A B pairs, >= 3")
    ap.add_argument("--tests", type=int, default=20, help="tests in the hidden test file")
    args = ap.parse_args()
    if args.pairs < 3 or args.tests < 1:
        ap.error("--pairs must be >= 3 and --tests >= 1")
    tests_dir = Path(tempfile.mkdtemp()) / "tests"
    tests_dir.mkdir()
    body = "def test_answer():\n    assert open('/app/answer.txt').read() == '42'\n"
    body += "".join(
        f"def test_n{i}():\n    assert sum(range({i})) == {i * (i - 1) // 2}\n"
        for i in range(args.tests - 1)
    )
    (tests_dir / "test_bench.py").write_text(body)
    a, b = baseline_module(args.baseline), verifier
    run_id = f"bench-verify-{os.getpid()}"
    try:
        t0 = time.monotonic()
        asyncio.run(one(a, tests_dir, run_id))
        warm_a = time.monotonic() - t0
        t0 = time.monotonic()
        asyncio.run(one(b, tests_dir, run_id))
        warm_b = time.monotonic() - t0
        print(
            f"warm-up (first verification, probe and toolchain copy included): A {warm_a:.2f} s, "
            f"B {warm_b:.2f} s"
        )
        ratios = []
        for i in range(args.pairs):
            ta = asyncio.run(one(a, tests_dir, run_id))
            tb = asyncio.run(one(b, tests_dir, run_id))
            ratios.append(tb / ta)
            print(
                f"pair {i + 1}: A {ta:.2f} s  B {tb:.2f} s  B/A {tb / ta:.2f}  load {os.getloadavg()[0]:.2f}"
            )
        print(
            f"verification per episode, B/A: median {statistics.median(ratios):.2f} "
            f"(spread {min(ratios):.2f}..{max(ratios):.2f}) over {args.pairs} pairs; load average "
            f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
        )
    finally:
        sandbox.reap(run_id=run_id)


if __name__ == "__main__":
    main()
