"""Hostile reads and writes against the harness: this tree (B) against a baseline commit (A).

    python bench/bench_hostile_reads.py [--baseline a7bc3bd] [--reps 3]

(a) Memory: the harness's peak RSS while it reads a hostile 256 MiB sparse reward.txt out of a stopped
    container. Each read runs in a fresh child process (ru_maxrss is a process's lifetime peak): A is
    the baseline commit's Harbor reward reader (`harbor_verifier._read`, its source taken with `git
    show` and run alone), B this tree's (sandboxing/archive.py); and, for the bound, B's JUnit report
    reader on a report of exactly its cap (16 MiB). Printed: RSS before the read, the peak after it,
    and tracemalloc's peak of the read itself, MiB (medians of --reps children).
(b) Snapshot: a sparse-file agent (six 60 MiB sparse files, no block on disk) in a sandbox capped at
    64 MiB, its watchdog asleep. A: the baseline's measure (`disk.layer_bytes`: allocated blocks) lets
    the layer through, and `docker commit` runs: the snapshot layer's size on the host and the commit's
    seconds. B: the frozen layer measured by this tree (`disk.check_layer`: apparent size) and refused
    before the commit: the check's seconds and the bytes committed (none).
(c) For scale, within the cap: one 256 MiB sparse file under the default 2 GiB cap, committed by both
    (the cap allows it): the layer's size and the commit's seconds.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import time
import tracemalloc
from pathlib import Path

import docker.errors

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sandbox  # noqa: E402
from sandboxing import disk, harbor_verifier, images, reaping, verifier  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RUN_ID = f"bench-hostile-{os.getpid()}"
MiB = 1 << 20
SPARSE = "for i in 1 2 3 4 5 6; do truncate -s 60M /tmp/sparse$i || exit 9; done"


def baseline_function(commit: str, module: str, name: str, namespace: dict):
    """Function `name` of `module` (a path in the repo) at `commit`, compiled alone in `namespace`."""
    src = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{commit}:{module}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    node = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name == name)
    code = ast.Module(body=[node], type_ignores=[])
    exec(compile(code, f"{commit}:{module}", "exec"), namespace)
    return namespace[name]


def child(which: str, cid: str, commit: str) -> None:
    """One read of /logs/verifier/reward.txt in a fresh process; prints its memory figures as JSON."""
    api = sandbox.docker_api(120.0)
    path = "/logs/verifier/reward.txt"
    if which == "A":
        namespace = {"docker": docker, "tarfile": tarfile, "io": io}
        read = baseline_function(commit, "sandboxing/harbor_verifier.py", "_read", namespace)
    elif which == "B":
        read = harbor_verifier._read
    else:
        # a report of exactly the cap: the most a legitimate read holds
        read = verifier.read_report
        path = "/report.xml"
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        data = read(api, cid, path)
        outcome = f"returned {len(data)} bytes"
    except Exception as e:  # noqa: BLE001 - the outcome is printed
        outcome = f"{type(e).__name__}: {e}"
    seconds = time.perf_counter() - t0
    peak_alloc = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    figures = {
        "rss_before_mib": before / 1024,
        "rss_peak_mib": after / 1024,
        "traced_peak_mib": peak_alloc / MiB,
        "seconds": seconds,
        "outcome": outcome,
    }
    print(json.dumps(figures))


def memory(commit: str, reps: int) -> None:
    api = sandbox.docker_api(120.0)
    cid = api.create_container(
        images.BASE_IMAGE,
        entrypoint=[],
        command=[
            "sh",
            "-c",
            "mkdir -p /logs/verifier && truncate -s 256M /logs/verifier/reward.txt "
            f"&& head -c {verifier.REPORT_BYTES} /dev/urandom > /report.xml",
        ],
        labels=reaping.labels(RUN_ID),
        host_config=api.create_host_config(network_mode="none"),
    )["Id"]
    try:
        api.start(cid)
        assert api.wait(cid, timeout=60)["StatusCode"] == 0
        for which in ("A", "B", "C"):
            runs = []
            for _ in range(reps):
                cmd = [
                    sys.executable,
                    __file__,
                    "--child",
                    which,
                    "--cid",
                    cid,
                    "--baseline",
                    commit,
                ]
                out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
                runs.append(json.loads(out.splitlines()[-1]))
            med = {k: statistics.median(r[k] for r in runs) for k in runs[0] if k != "outcome"}
            what = {
                "A": f"A ({commit}): 256 MiB sparse reward.txt",
                "B": "B (this tree): 256 MiB sparse reward.txt",
                "C": f"B (this tree): a JUnit report of the cap, {verifier.REPORT_BYTES / MiB:.0f} MiB",
            }[which]
            print(
                f"(a) {what}: "
                f"RSS {med['rss_before_mib']:.1f} -> peak {med['rss_peak_mib']:.1f} MiB "
                f"(+{med['rss_peak_mib'] - med['rss_before_mib']:.1f}), traced peak "
                f"{med['traced_peak_mib']:.2f} MiB, {med['seconds']:.3f} s; {runs[0]['outcome'][:90]}"
            )
    finally:
        api.remove_container(cid, force=True, v=True)


def commit_layer(api, cid: str) -> tuple[int, float]:
    """(the snapshot layer's bytes on the engine, seconds of the commit) of a frozen container."""
    base = api.inspect_image(api.inspect_container(cid)["Image"])["Size"]
    t0 = time.monotonic()
    snap = api.commit(
        cid,
        repository="termrl/bench-snapshot",
        conf={"Labels": reaping.labels(RUN_ID)},
        pause=False,
    )["Id"]
    seconds = time.monotonic() - t0
    try:
        return api.inspect_image(snap)["Size"] - base, seconds
    finally:
        api.remove_image(snap, force=True)


async def snapshot(commit: str, writer: str, storage_mb: int, label: str) -> None:
    api = sandbox.docker_api(300.0)
    limits = sandbox.Limits(storage_bytes=storage_mb * MiB, storage_check_s=3600.0)
    layer_bytes = baseline_function(
        commit, "sandboxing/disk.py", "layer_bytes", {"os": os, "ENTRY_BYTES": disk.ENTRY_BYTES}
    )
    async with await sandbox.Sandbox.start(images.BASE_IMAGE, limits=limits, run_id=RUN_ID) as sb:
        r = await sb.exec(writer, timeout=60)
        assert r.exit_code == 0, r.output
        api.pause(sb.id)
        try:
            roots = [api.inspect_container(sb.id)["GraphDriver"]["Data"]["UpperDir"]]
            counted = layer_bytes(roots, limits.storage_bytes)
            verdict = "within" if counted <= limits.storage_bytes else "over"
            size, seconds = commit_layer(api, sb.id) if verdict == "within" else (0, 0.0)
            print(
                f"(b) A ({commit}): {label}, cap {storage_mb} MiB: counted {counted / MiB:.1f} MiB "
                f"(blocks), {verdict} the cap; snapshot layer {size / MiB:.1f} MiB, commit {seconds:.2f} s"
            )
            t0 = time.monotonic()
            try:
                usage = disk.check_layer(api, sb.id, limits.storage_bytes, limits.max_files)
                check_s = time.monotonic() - t0
                size, seconds = commit_layer(api, sb.id)
                outcome = (
                    f"counted {usage.bytes / MiB:.1f} MiB (apparent), within the cap; snapshot layer "
                    f"{size / MiB:.1f} MiB, check {check_s * 1e3:.1f} ms + commit {seconds:.2f} s"
                )
            except disk.OverLimit as e:
                check_s = time.monotonic() - t0
                outcome = f"refused before the commit in {check_s * 1e3:.1f} ms ({e}); snapshot layer 0 MiB"
            print(f"(b) B (this tree): {label}, cap {storage_mb} MiB: {outcome}")
        finally:
            api.unpause(sb.id)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--baseline", default="a7bc3bd", help="the commit whose readers and measure are A"
    )
    ap.add_argument("--reps", type=int, default=3, help="child processes per reader")
    ap.add_argument("--child", choices=("A", "B", "C"), help=argparse.SUPPRESS)
    ap.add_argument("--cid", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.cid, args.baseline)
        return
    try:
        memory(args.baseline, args.reps)
        asyncio.run(snapshot(args.baseline, SPARSE, 64, "six 60 MiB sparse files"))
        asyncio.run(
            snapshot(args.baseline, "truncate -s 256M /tmp/sparse", 2048, "one 256 MiB sparse file")
        )
    finally:
        sandbox.reap(run_id=RUN_ID)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
