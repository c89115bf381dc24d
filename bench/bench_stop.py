"""Ctrl-C of `make train` mid-rollout: seconds from the ^C to the checkpoint written and to make's exit,
against torchrun's shutdown grace period (30 s: TORCH_ELASTIC_SHUTDOWN_TIMEOUT's default, after which it
SIGKILLs the workers when it is the one signalled; bookkeeping/launch.py keeps it from being signalled).

    flock /work/heavy.lock python bench/bench_stop.py --repeats 3 [--nproc 2] [-- make-train ARGS]

Each repeat: `make -o setup train` in a new pseudo-terminal (the CPU default unless ARGS say otherwise)
into a fresh out dir, ^C typed once step 2's rollout has begun (its trajectory file exists), the
terminal's lines timed as they arrive. Prints one line per repeat and the median with its spread.
"""

import argparse
import os
import pty
import select
import shutil
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GRACE_S = 30.0


def one(out: Path, args: list[str], nproc: int) -> dict:
    """One stop: seconds from ^C to 'checkpoint ... written' and to the exit; make's exit status."""
    shutil.rmtree(out, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    argv = " ".join(["--out-dir", str(out), "--steps", "8", "--save-every", "10", *args])
    cmd = ["make", "--no-print-directory", "-o", "setup", "train", f"NPROC={nproc}", f"ARGS={argv}"]
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(ROOT)
        os.execvp(cmd[0], cmd)
    sent, written, buf = None, None, b""
    with open(out.with_suffix(".log"), "wb") as log:
        while True:
            if select.select([fd], [], [], 0.1)[0]:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    break
                if not data:
                    break
                buf += data
                log.write(data)
            if sent is None and (out / "trajectories" / "step_000002_rank0.jsonl").exists():
                os.write(fd, b"\x03")
                sent = time.monotonic()
            if sent is not None and written is None and b"step_000001 written" in buf:
                written = time.monotonic()
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    end = time.monotonic()
    return dict(
        to_checkpoint_s=None if written is None else written - sent,
        to_exit_s=end - sent,
        make_status=os.waitstatus_to_exitcode(status),
        traceback=b"Traceback" in buf,
        load=os.getloadavg()[0],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--nproc", type=int, default=2, help="ranks (make train's NPROC)")
    parser.add_argument("--out", default="/tmp/bench_stop")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="after --: more make-train ARGS")
    a = parser.parse_args()
    extra = [x for x in a.args if x != "--"]
    runs = []
    for i in range(a.repeats):
        r = one(Path(a.out) / f"run{i}", extra, a.nproc)
        runs.append(r)
        print(f"[bench_stop] repeat {i + 1}: {r}", flush=True)
        shutil.rmtree(Path(a.out) / f"run{i}", ignore_errors=True)  # ~2 GB each; the log stays
    ok = [r["to_checkpoint_s"] for r in runs if r["to_checkpoint_s"] is not None]
    for key, vals in (("^C -> checkpoint", ok), ("^C -> exit", [r["to_exit_s"] for r in runs])):
        if vals:
            print(
                f"[bench_stop] {key}: median {statistics.median(vals):.1f} s "
                f"(min {min(vals):.1f}, max {max(vals):.1f}, n={len(vals)}) vs torchrun's "
                f"grace {GRACE_S:.0f} s: ratio {statistics.median(vals) / GRACE_S:.2f}"
            )
    print(
        f"[bench_stop] make exit statuses {[r['make_status'] for r in runs]}, "
        f"tracebacks {sum(r['traceback'] for r in runs)}, load {[round(r['load'], 1) for r in runs]}"
    )


if __name__ == "__main__":
    main()
