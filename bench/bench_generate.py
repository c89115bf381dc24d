"""TorchEngine decoding throughput vs transformers' `generate`, same model, same prompts, same run.

Both decode greedily exactly `--new-tokens` tokens for each of B chat prompts of different lengths (stop
tokens disabled so every sequence runs the full length), at B = 1, 8, 32. Throughput = B * new_tokens /
wall seconds, prefill included for both. Baseline: transformers' LlamaForCausalLM.generate with left
padding and its default dynamic KV cache, loaded from the same HF folder. Goal: >= 2x at batch 8.

    python bench/bench_generate.py [--batches 1 8 32] [--new-tokens 32] [--model default]
"""

import argparse
import asyncio
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import engines as E  # noqa: E402
import rollout  # noqa: E402
import weights  # noqa: E402

QUESTIONS = [
    "Create /app/hello.txt containing hello.",
    "Count the lines of /app/data.txt and write the number to /app/count.txt.",
    "What is the capital of France?",
    "Rename every .log file in /app/logs to .txt, keeping the names otherwise unchanged.",
    "Write a bash one-liner that prints the five largest files under /var, with their sizes.",
    "Explain what `set -euo pipefail` does.",
    "Sort the names in /app/names.txt alphabetically, remove duplicates, and save them to /app/sorted.txt.",
    "Fix the failing test in /app/test_stats.py; the bug is in /app/stats.py, in the median function.",
]


def prompts_for(tok, batch: int) -> list[list[int]]:
    chat = rollout.ChatFormat(tok, "markdown")
    return [chat.prompt_ids(QUESTIONS[i % len(QUESTIONS)] + f" (case {i})")[1] for i in range(batch)]


def bench_engine(m, tok, prompts, new_tokens: int) -> tuple[float, list[list[int]]]:
    max_len = max(map(len, prompts)) + new_tokens + 1
    eng = E.TorchEngine(m, tok, max_batch=len(prompts), max_seq_len=max_len, stop_ids=set())
    sp = E.SamplingParams(temperature=0.0, max_tokens=new_tokens)

    async def go():
        t0 = time.perf_counter()
        outs = await asyncio.gather(*(eng.generate(p, sp) for p in prompts))
        dt = time.perf_counter() - t0
        await eng.aclose()
        return dt, [o.token_ids for o in outs]

    return asyncio.run(go())


@torch.no_grad()
def bench_hf(hf, tok, prompts, new_tokens: int) -> tuple[float, list[list[int]]]:
    width = max(map(len, prompts))
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    t0 = time.perf_counter()
    out = hf.generate(input_ids=ids, attention_mask=mask, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                      do_sample=False, pad_token_id=pad)
    dt = time.perf_counter() - t0
    return dt, out[:, width:].tolist()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--model", default="default", help="HF folder or 'default' (SmolLM2-135M-Instruct)")
    args = ap.parse_args()

    from transformers import AutoModelForCausalLM

    path = weights.default_model_dir() if args.model == "default" else args.model
    tok = weights.load_tokenizer(path)
    ours = weights.load_hf(path)
    hf = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32).eval()
    print(f"model {path}, torch {torch.__version__}, threads {torch.get_num_threads()}, new tokens {args.new_tokens}, greedy")
    bench_engine(ours, tok, prompts_for(tok, 2), 4)  # warm-up both
    bench_hf(hf, tok, prompts_for(tok, 2), 4)
    print(f"{'batch':>5} {'TorchEngine tok/s':>18} {'HF generate tok/s':>18} {'speedup':>8} {'same tokens':>12}")
    for b in args.batches:
        prompts = prompts_for(tok, b)
        t_ours, toks_ours = bench_engine(ours, tok, prompts, args.new_tokens)
        t_hf, toks_hf = bench_hf(hf, tok, prompts, args.new_tokens)
        n = b * args.new_tokens
        same = sum(a == h for a, h in zip(toks_ours, toks_hf))
        print(f"{b:>5} {n / t_ours:>18.1f} {n / t_hf:>18.1f} {t_hf / t_ours:>7.2f}x {same:>6}/{b:<5}", flush=True)


if __name__ == "__main__":
    main()
