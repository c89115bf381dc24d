"""First rollout turn of one `make train` step (preset cpu-smollm2): two code versions, interleaved.

The generation part of a training step without containers: 2 task prompts x 4 episodes (group_size 4) sent
to a fresh TorchEngine(max_batch 8, max_seq_len 2048) at once, sampled with the preset's T 0.7, top-p 0.95,
top-k 40, 128 tokens per turn, fixed seeds. Each run is a fresh process on a checkout (--a, the baseline,
e.g. main; --b, the candidate); runs alternate A B A B ... (--pairs), each pair giving t_A / t_B measured
under the same load. Prints the median ratio, its spread and the load average, for wall and CPU seconds
(time.process_time of the run: the steadier measure on a machine loaded far beyond its cores). make train itself is not run.

    python bench/bench_rollout_turn.py --a /path/to/main/checkout --b . [--pairs 3] [--threads 1]
"""  # noqa: E501

import argparse
import json
import os
import statistics
import subprocess
import sys

RUN = r"""
import asyncio, json, sys, time, torch
sys.path.insert(0, sys.argv[1])
torch.set_num_threads(int(sys.argv[2]))
import engines as E, rollout as R, weights
from tasks import load_tasks
from agent.chat import ChatFormat
path = weights.default_model_dir()
tok, m = weights.load_tokenizer(path), weights.load_hf(path)
tasks = {t: load_tasks(sys.argv[1] + "/data/tasks/" + t)[0] for t in ("write-hello-file", "count-lines")}
chat = ChatFormat(tok, "markdown")
prompts = [chat.prompt_ids(tasks[t].instruction)[1] for t in ("write-hello-file", "count-lines")]
async def go():
    eng = E.TorchEngine(m, tok, max_batch=8, max_seq_len=2048, seed=0)
    t0, c0 = time.perf_counter(), time.process_time()
    outs = await asyncio.gather(*(eng.generate(p, E.SamplingParams(0.7, 0.95, 40, 128, seed=1000 + 4 * i + j))
                                  for i, p in enumerate(prompts) for j in range(4)))
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    await eng.aclose()
    return dt, cpu, sum(len(o.token_ids) for o in outs)
dt, cpu, n = asyncio.run(go())
print(json.dumps({"seconds": dt, "cpu_seconds": cpu, "tokens": n}))
"""


def one(repo: str, threads: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", RUN, os.path.abspath(repo), str(threads)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if out.returncode != 0:
        raise RuntimeError(f"run on {repo} failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="baseline checkout (e.g. main)")
    ap.add_argument("--b", default=".", help="candidate checkout")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument(
        "--threads", type=int, default=1, help="torch threads (train.py's ranks run 1 each)"
    )
    args = ap.parse_args()
    print("$ python " + " ".join(sys.argv))
    load0, ratios, cpu_ratios = os.getloadavg()[0], [], []
    for i in range(args.pairs):
        a, b = one(args.a, args.threads), one(args.b, args.threads)
        ratios.append(a["seconds"] / b["seconds"])
        cpu_ratios.append(a["cpu_seconds"] / b["cpu_seconds"])
        print(
            f"pair {i}: A {a['seconds']:.1f} s ({a['cpu_seconds']:.1f} CPU s, {a['tokens']} tokens)  "
            f"B {b['seconds']:.1f} s ({b['cpu_seconds']:.1f} CPU s, {b['tokens']} tokens)  "
            f"ratio {ratios[-1]:.2f} (CPU {cpu_ratios[-1]:.2f})  load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    print(
        f"median ratio A/B {statistics.median(ratios):.2f}x, spread {min(ratios):.2f}..{max(ratios):.2f}; "
        f"CPU seconds {statistics.median(cpu_ratios):.2f}x, spread {min(cpu_ratios):.2f}..{max(cpu_ratios):.2f}; "
        f"load avg (1 min) {load0:.1f}..{os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
