"""What lockstep batching (`policy.engine_lockstep`, TorchEngine) costs against continuous batching:
generated tokens per second of a rollout-shaped load on the embedded default model, CPU.

    flock /work/heavy.lock python bench/bench_lockstep.py [--pairs 3] [--episodes 8] [--turns 3]

Each run: `--episodes` agents on one engine (max_batch = episodes, as make train's), each `--turns` turns
of up to `--tokens` sampled tokens (the CPU preset's temperature 0.7, top-p 0.95, top-k 40; per-request
seeds), each turn after a wait standing for its agent command in a container: log-normal, median
`--command-s` seconds (sigma 1: one command in ten takes 3.6x the median), the same seeded draws for
both modes. Lockstep then waits, each turn, for the slowest command of the turn; continuous batching
admits each request as it comes. The modes run interleaved (A B A B ...) so both see the same load;
printed: each pair's tokens/s, the median ratio lockstep / continuous with its spread, and the load
average (os.getloadavg) before and after.
"""

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.chat import ChatFormat  # noqa: E402
from engines.base import SamplingParams  # noqa: E402
from engines.torch_engine import TorchEngine  # noqa: E402
from hf import weights  # noqa: E402

INSTRUCTIONS = [
    "Write hello to /app/hello.txt.",
    "Create the directory /app/output.",
    "Delete /tmp/app.log.",
    "Rename /app/a.txt to /app/b.txt.",
    "Append the line done to /app/notes.txt.",
    "Copy /etc/app.conf to /app/app.conf.",
    "Count the lines of /app/data.csv.",
    "List the files in /app.",
]


def one(model, tok, args, lockstep: bool, seed: int) -> float:
    """One rollout-shaped load; returns generated tokens per wall second."""
    chat = ChatFormat(tok, "markdown")
    prompts = [
        chat.prompt_ids(INSTRUCTIONS[i % len(INSTRUCTIONS)])[1] for i in range(args.episodes)
    ]
    delays = random.Random(seed)
    waits = [
        [delays.lognormvariate(0.0, 1.0) * args.command_s for _ in range(args.turns)]
        for _ in prompts
    ]
    observation = tok.encode("\n```output\nok\n```\n")

    async def main() -> int:
        engine = TorchEngine(
            model, tok, max_batch=args.episodes, max_seq_len=2048, lockstep=lockstep
        )
        engine.expect_episodes(len(prompts))

        async def episode(i: int) -> int:
            ids = list(prompts[i])
            n = 0
            try:
                for turn in range(args.turns):
                    sampling = SamplingParams(
                        0.7, 0.95, 40, args.tokens, seed=1000 * seed + 10 * i + turn
                    )
                    c = await engine.generate(ids, sampling)
                    n += len(c.token_ids)
                    ids = ids + c.token_ids + observation
                    await asyncio.sleep(waits[i][turn])
            finally:
                engine.episode_done()
            return n

        try:
            return sum(await asyncio.gather(*(episode(i) for i in range(len(prompts)))))
        finally:
            await engine.aclose()

    t0 = time.perf_counter()
    tokens = asyncio.run(main())
    return tokens / (time.perf_counter() - t0)


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--episodes", type=int, default=8)
    p.add_argument("--turns", type=int, default=3)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--command-s", type=float, default=0.3)
    args = p.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    d = weights.default_model_dir()
    model = weights.load_hf(d)
    tok = weights.load_tokenizer(d)
    print(f"load average before: {os.getloadavg()}")
    ratios = []
    for k in range(args.pairs):
        lock = one(model, tok, args, True, seed=k)
        cont = one(model, tok, args, False, seed=k)
        ratios.append(lock / cont)
        print(
            f"pair {k}: lockstep {lock:.1f} tok/s, continuous {cont:.1f} tok/s, ratio {lock / cont:.3f}"
        )
    print(
        f"lockstep / continuous: median {statistics.median(ratios):.3f} "
        f"({min(ratios):.3f}-{max(ratios):.3f}) over {args.pairs} pairs"
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
