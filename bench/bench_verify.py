"""Verification seconds per episode: this tree's verifier (B) against a baseline (A), same run.

    python bench/bench_verify.py [--baseline plain|COMMIT] [--pairs 5] [--tests 20]

Baseline `plain` (default): the same hidden tests copied into the agent's own container and run there
with plain `python3 -m pytest` (docker exec), as Terminal-Bench does: the cost of no protection at all.
Baseline COMMIT: that commit's `sandboxing/verifier.py` (`git show`), its `run_tests_blocking`.

Each measure gets a fresh sandbox on the base image with the agent's answer written (not timed); then
A or B is timed from the call to the verdict: B is `Sandbox.run_tests` (snapshot, verifier container,
pytest, report; the removal runs after the verdict, beside the sandbox's close, and is printed apart).
A and B interleave (A B A B ...) after one warm-up of each (the first verification probes the image
and may fill the toolchain volume, a cost paid once per toolchain). Prints each pair, B's parts
(TestReport.phases, medians), the median B/A ratio with its spread (min-max) and the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sandbox
from sandboxing import images, reaping

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


def _plain(api, sb, tests_dir: Path) -> None:
    """The hidden tests into the agent's container at /tests, then `python3 -m pytest` there."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(tests_dir, arcname="tests")
    api.put_archive(sb.id, "/", buf.getvalue())
    eid = api.exec_create(sb.id, ["python3", "-m", "pytest", "-q", "-rA", "/tests"], workdir="/app")
    out = api.exec_start(eid["Id"]).decode("utf-8", "replace")
    if api.exec_inspect(eid["Id"])["ExitCode"] != 0:
        raise SystemExit(f"plain run: pytest failed:\n{out[-2000:]}")


async def one(which, tests_dir: Path, run_id: str) -> tuple[float, dict]:
    """Seconds to the verdict of one verification of a fresh sandbox, and B's phases (after close)."""
    phases: dict = {}
    async with await sandbox.Sandbox.start(images.BASE_IMAGE, run_id=run_id) as sb:
        await sb.write_file("/app/answer.txt", "42")
        api = sandbox.docker_api(300.0)
        t0 = time.monotonic()
        if which == "plain":
            await asyncio.to_thread(_plain, api, sb, tests_dir)
        elif which == "B":
            report = await sb.run_tests(tests_dir, timeout=60.0)
            phases = report.phases
        else:
            labels = {**reaping.labels(run_id), "termrl.verifies": sb.name}
            report = await asyncio.to_thread(
                which.run_tests_blocking, api, sb.id, sb.name, labels, sb.limits, tests_dir, 60.0
            )
        dt = time.monotonic() - t0
        if which != "plain" and (not report.tests.get("test_answer") or report.error):
            raise SystemExit(f"{which}: unexpected report {report}")
    return dt, phases  # B's removal_s is there once the sandbox is closed


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--baseline", default="plain", help="plain, or a commit whose verifier is A")
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
    a = "plain" if args.baseline == "plain" else baseline_module(args.baseline)
    run_id = f"bench-verify-{os.getpid()}"
    try:
        warm = [asyncio.run(one(w, tests_dir, run_id))[0] for w in (a, "B")]
        print(f"warm-up (first of each, probe included): A {warm[0]:.2f} s, B {warm[1]:.2f} s")
        ratios, parts = [], []
        for i in range(args.pairs):
            ta, _ = asyncio.run(one(a, tests_dir, run_id))
            tb, ph = asyncio.run(one("B", tests_dir, run_id))
            ratios.append(tb / ta)
            parts.append(ph)
            print(
                f"pair {i + 1}: A {ta:.2f} s  B {tb:.2f} s  B/A {tb / ta:.2f}  "
                f"load {os.getloadavg()[0]:.2f}"
            )
        names = [k for k in parts[0] if all(k in p for p in parts)]
        print(
            "B's parts, medians (removal after the verdict): "
            + ", ".join(f"{k} {statistics.median(p[k] for p in parts):.2f}" for k in names)
        )
        print(
            f"verification per episode, B/A ({args.baseline}): median "
            f"{statistics.median(ratios):.2f} (spread {min(ratios):.2f}..{max(ratios):.2f}) over "
            f"{args.pairs} pairs; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
        )
    finally:
        sandbox.reap(run_id=run_id)


if __name__ == "__main__":
    main()
