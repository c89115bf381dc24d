"""`make train` seconds per step: synchronous (max_off_policy_steps 0) against overlapped (1).

    python bench/bench_overlap.py                          # 3 interleaved pairs, 4 steps each
    python bench/bench_overlap.py --pairs 3 --steps 3 --preset cpu-learn     # make learn's episodes
    python bench/bench_overlap.py -- --tasks-per-step 2                      # after --: train.py flags

Each run is `make train`'s command (torchrun, 2 gloo ranks, preset cpu-smollm2 or --preset, the same seeds),
alternating A B A B ... (A = synchronous, the baseline, B = overlapped). Seconds per step = wall
from the line that ends set-up ("[train] N tasks ...") to the line of the last step, over steps:
set-up and the HF export are left out, and the overlapped run's extra first rollout (trained in
its second iteration) is counted in. Prints per run: seconds per step, mean rollout_s / train_s of
metrics.jsonl, the 1-minute load at its start; then the median ratio sync / overlapped over the
pairs with its spread (min-max). Nothing asserted (bench/ prints, tests/ assert).
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_once(k: int, preset: str, steps: int, out_dir: Path, extra: list[str]) -> dict:
    """One torchrun training; returns seconds per step, mean rollout_s and train_s, load."""
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node=2",
        "train.py",
        "--preset",
        preset,
        "--steps",
        str(steps),
        "--out-dir",
        str(out_dir),
        "--max-off-policy-steps",
        str(k),
        "--overwrite",  # the out dir of an earlier bench run
        *extra,
    ]
    load = os.getloadavg()[0]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    t_setup = t_last = None
    log = []
    try:
        for line in proc.stdout:
            log.append(line)
            if line.startswith("[train]") and " tasks, " in line and t_setup is None:
                t_setup = time.monotonic()
            if line.startswith(f"step {steps}/{steps} |"):
                t_last = time.monotonic()
    finally:  # a bench stopped by `timeout` leaves no training behind
        if proc.poll() is None:
            proc.terminate()  # torchrun forwards it to its workers
            proc.wait()
    if proc.wait() != 0 or t_setup is None or t_last is None:
        sys.exit(f"bench_overlap: run k={k} failed:\n{''.join(log[-40:])}")
    records = [json.loads(x) for x in (out_dir / "metrics.jsonl").read_text().splitlines()]
    mean = lambda key: statistics.fmean(r[key] for r in records)  # noqa: E731
    return dict(
        step_s=(t_last - t_setup) / steps,
        rollout_s=mean("rollout_s"),
        train_s=mean("train_s"),
        staleness=mean("staleness_mean"),
        load=load,
    )


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `timeout`: the finally above runs
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--preset", default="cpu-smollm2")
    ap.add_argument("--out", default="runs/bench_overlap")
    ap.add_argument("extra", nargs="*", help="train.py flags (after --)")
    args = ap.parse_args()
    ratios = []
    for i in range(args.pairs):
        pair = {}
        for k in (0, 1):
            r = run_once(k, args.preset, args.steps, Path(args.out) / f"pair{i}_k{k}", args.extra)
            pair[k] = r
            print(
                f"pair {i} k={k}: {r['step_s']:.1f} s/step (rollout {r['rollout_s']:.1f} s, "
                f"train {r['train_s']:.1f} s, staleness {r['staleness']:.2f}), "
                f"load {r['load']:.1f}",
                flush=True,
            )
        ratios.append(pair[0]["step_s"] / pair[1]["step_s"])
        print(  # after every pair: a run cut short by a time limit still leaves its figure
            f"overlapped vs synchronous, seconds per step: median {statistics.median(ratios):.2f}x "
            f"faster over {len(ratios)} pairs (spread {min(ratios):.2f}-{max(ratios):.2f}), "
            f"ratios {', '.join(f'{x:.2f}' for x in ratios)}",
            flush=True,
        )


if __name__ == "__main__":
    main()
