"""TorchEngine decoding throughput vs transformers' `generate`, same model, same prompts, same process.

Both decode greedily exactly `--new-tokens` tokens for each of the 8 chat prompts below (no stop token on either
side, and nothing forbidden: every sequence runs the full length), B at a time: batch 1 is 8 generations one after another, batch 8 one
generation of 8. TorchEngine is one engine for the 8 (as it serves a rollout: a later request reuses the K/V of
the shared 113-token system prompt; inside a batch, requests share it too); HF generate has no such cache. Throughput = 8 * new_tokens / wall seconds, prefill included for both. Baseline: transformers' LlamaForCausalLM.generate with left padding and its default
dynamic KV cache, loaded from the same HF folder in fp32.

Method that holds on a shared machine: for each batch size the baseline (A) and TorchEngine (B) run
alternately, A B A B ..., `--pairs` times; each pair gives one ratio t_A / t_B measured seconds apart under
the same load. Printed: the median ratio, its spread (min..max over pairs), both median throughputs, how many
sequences have identical greedy tokens, and the load average (os.getloadavg) before and after. Also the
median ratio of CPU seconds (time.process_time, all threads of this process): on a machine loaded far beyond
its cores, wall time is mostly waiting for a turn on a core, and CPU time is the steadier measure of the work.
Goals: median >= 2x at batch 1 and >= 3x at batch 8, identical greedy tokens for >= 90%.

    python bench/bench_generate.py [--batches 1 8] [--new-tokens 32] [--pairs 3] [--threads 1] [--model default]
                                   [--no-speculate] [--draft-tokens 5] [--linear] [--compile-step]
                                   [--baseline plain]

--baseline plain: the baseline (A) is TorchEngine on decode.py's plain path (`fast_cpu=False`: the learner's
Block forward, F.linear) instead of HF generate, against the default fast path (B, engines/cpu_fast.py); the
same speculation on both. The table's "same tokens" then compares the two paths' greedy tokens.

TorchEngine runs as train.py builds it: while at most 4 sequences decode, each feeds up to --draft-tokens (5)
n-gram draft tokens, within a budget of 6 fed tokens per step yet at least 1 per sequence (speculation.py); the
table's last column is draft tokens kept / fed. --no-speculate turns that off.

--linear: the KV-cache decode step (decode_one_token) on the fast path with cpu_fast._linear's few-row routing
against plain F.linear, batch 1..8, context ~200: median ratio of interleaved step pairs, max |logit difference|.

--compile-step (measurement only; TorchEngine does not compile): the one-token KV-cache step on the plain path
(decode.logits: Transformer.hidden_states + lm_head) under torch.compile(dynamic=True) against the same step eager, batch 1 and 8, context ~160: compile
and warm-up time (wall and CPU seconds, printed separately), max |logit difference|, and the median ratio of
CPU seconds over --pairs x 3 interleaved (eager, compiled) step pairs. `--batches` with no value skips the table.
"""  # noqa: E501

import argparse
import asyncio
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import engines as E  # noqa: E402
import rollout  # noqa: E402
from engines import cpu_fast, decode  # noqa: E402
from hf import weights  # noqa: E402

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


def prompts_for(tok, n: int) -> list[list[int]]:
    chat = rollout.ChatFormat(tok, "markdown")
    return [chat.prompt_ids(QUESTIONS[i % len(QUESTIONS)] + f" (case {i})")[1] for i in range(n)]


def bench_engine(
    m,
    tok,
    prompts,
    batch: int,
    new_tokens: int,
    speculate: bool = True,
    draft_tokens: int = 5,
    fast_cpu: bool = True,
):
    """One TorchEngine(max_batch=batch) decoding `prompts` `batch` at a time, as an engine serves consecutive
    requests (a later request reuses the cached K/V of the shared system prompt; HF generate recomputes it).
    Returns (wall seconds, CPU seconds, token ids per prompt, (draft tokens kept, draft tokens fed))."""
    eng = E.TorchEngine(
        m,
        tok,
        max_batch=batch,
        max_seq_len=max(map(len, prompts)) + new_tokens + 1,
        stop_ids=set(),
        speculate_max_batch=4 if speculate else 0,
        speculate_tokens=draft_tokens,
        fast_cpu=fast_cpu,
    )
    sp = E.SamplingParams(temperature=0.0, max_tokens=new_tokens)

    async def go():
        t0, c0, outs = time.perf_counter(), time.process_time(), []
        for i in range(0, len(prompts), batch):
            outs += await asyncio.gather(*(eng.generate(p, sp) for p in prompts[i : i + batch]))
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        await eng.aclose()
        return dt, cpu, [o.token_ids for o in outs], (eng.accepted_drafts, eng.drafted_tokens)

    return asyncio.run(go())


def bench_hf_batches(hf, tok, prompts, batch: int, new_tokens: int):
    """bench_hf on consecutive batches of `batch` prompts: (summed wall seconds, summed CPU seconds, token ids)."""
    parts = [
        bench_hf(hf, tok, prompts[i : i + batch], new_tokens) for i in range(0, len(prompts), batch)
    ]
    return sum(p[0] for p in parts), sum(p[1] for p in parts), [t for p in parts for t in p[2]]


@torch.no_grad()
def bench_hf(hf, tok, prompts, new_tokens: int) -> tuple[float, float, list[list[int]]]:
    width = max(map(len, prompts))
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    t0, c0 = time.perf_counter(), time.process_time()
    out = hf.generate(
        input_ids=ids,
        attention_mask=mask,
        max_new_tokens=new_tokens,
        do_sample=False,
        pad_token_id=pad,
    )
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    return dt, cpu, out[:, width:].tolist()


@torch.no_grad()
def compare_linear(m, pairs: int) -> None:
    """Print the time of decode_one_token at batch 1..8, and of a 134-token prefill, with plain F.linear over that
    with cpu_fast._linear (interleaved pairs), both on the fast path."""
    decode.setup_cache(m, 8, 512, fast=True)
    for s in range(8):
        decode.prefill(m, torch.arange(200) % 1000 + s, s, 0)
    routed, plain = cpu_fast._linear, lambda x, w, packed=None: torch.nn.functional.linear(x, w)

    def timed(run) -> tuple[float, torch.Tensor]:
        t0 = time.perf_counter()
        logits = run()
        return time.perf_counter() - t0, logits

    print(
        f"{'rows':>11} {'F.linear ms':>12} {'_linear ms':>11} {'median ratio':>13} {'spread':>11} {'max |dlogit|':>13} load"  # noqa: E501
    )
    cases = [
        (
            f"batch {b}",
            lambda b=b: decode.decode_one_token(
                m, torch.arange(b) + 100, list(range(b)), torch.full((b,), 200)
            ),
        )
        for b in range(1, 9)
    ]
    cases.append(("prefill 134", lambda: decode.prefill(m, torch.arange(134) % 1000, 7, 0)))
    for name, run in cases:
        times = []
        for i in range(3 * pairs + 1):
            cpu_fast._linear = plain
            t_plain, ref = timed(run)
            cpu_fast._linear = routed
            t_routed, out = timed(run)
            if i:  # the first pair warms up
                times.append((t_plain, t_routed))
        ratios = [a / c for a, c in times]
        print(
            f"{name:>11} {statistics.median(a for a, _ in times) * 1e3:>12.1f} "
            f"{statistics.median(c for _, c in times) * 1e3:>11.1f} {statistics.median(ratios):>12.2f}x "
            f"{min(ratios):.2f}..{max(ratios):.2f} {(out - ref).abs().max().item():>13.1e} {os.getloadavg()[0]:.1f}",
            flush=True,
        )


@torch.no_grad()
def compare_compiled_step(m, pairs: int) -> None:
    """Print compile time and the eager / torch.compile CPU-seconds ratio of one decode step (batch 1 and 8)."""
    decode.setup_cache(m, 8, 512, fast=False)

    def step_logits(tokens, positions, ctx):
        return decode.logits(m, tokens[:, None], positions, ctx)[:, 0]

    compiled = torch.compile(step_logits, dynamic=True)

    def step(fn, b: int, pos: int) -> torch.Tensor:
        positions = torch.full((b, 1), pos)
        return fn(
            torch.arange(b) + 100,
            positions,
            decode.cache_step(list(range(b)), positions, torch.float32),
        )

    decode.prefill(m, torch.arange(150) % 1000, 0, 0)
    for s in range(1, 8):
        decode.copy_prefix(m, 0, s, 150)
    t0, c0 = time.perf_counter(), time.process_time()
    for b in (1, 8):  # size 1 is specialised: two compilations
        step(compiled, b, 150)
        step(compiled, b, 151)
    print(
        f"torch.compile of the decode step, batch 1 and 8: {time.perf_counter() - t0:.0f} s wall, "
        f"{time.process_time() - c0:.0f} s CPU (compile + 4 warm-up steps), load {os.getloadavg()[0]:.1f}"
    )
    for b in (1, 8):
        diff = (step(step_logits, b, 160) - step(compiled, b, 160)).abs().max().item()
        ratios, cpu = [], []
        for i in range(3 * pairs):
            c0 = time.process_time()
            step(step_logits, b, 161 + i)
            c1 = time.process_time()
            step(compiled, b, 161 + i)
            cpu.append((c1 - c0, time.process_time() - c1))
            ratios.append(cpu[-1][0] / cpu[-1][1])
        print(
            f"batch {b}: eager / compiled CPU seconds per step, median {statistics.median(ratios):.2f}x, spread "
            f"{min(ratios):.2f}..{max(ratios):.2f} ({statistics.median(c for c, _ in cpu) * 1e3:.0f} ms vs "
            f"{statistics.median(c for _, c in cpu) * 1e3:.0f} ms), max |logit diff| {diff:.1e}, "
            f"load {os.getloadavg()[0]:.1f}",
            flush=True,
        )


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--batches",
        type=int,
        nargs="*",
        default=[1, 8],
        help="batch sizes for the table (default 1 8; none: skip the table)",
    )
    ap.add_argument(
        "--new-tokens", type=int, default=32, help="greedy tokens per prompt (default 32)"
    )
    ap.add_argument(
        "--pairs",
        type=int,
        default=3,
        help="interleaved (baseline, TorchEngine) pairs per batch size",
    )
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads for both (train.py's ranks run 1 each)",
    )
    ap.add_argument(
        "--model", default="default", help="HF folder or 'default' (SmolLM2-135M-Instruct)"
    )
    ap.add_argument(
        "--no-speculate", action="store_true", help="TorchEngine without prompt-lookup drafts"
    )
    ap.add_argument(
        "--draft-tokens",
        type=int,
        default=5,
        help="TorchEngine speculate_tokens: most draft tokens per sequence and step (default 5, >= 1)",
    )
    ap.add_argument(
        "--linear",
        action="store_true",
        help="also time the decode step with and without cpu_fast._linear",
    )
    ap.add_argument(
        "--baseline",
        choices=("hf", "plain"),
        default="hf",
        help="table baseline: HF generate (default) or TorchEngine's plain decode path",
    )
    ap.add_argument(
        "--compile-step", action="store_true", help="also time the decode step under torch.compile"
    )
    args = ap.parse_args()
    if args.draft_tokens < 1:
        ap.error(f"--draft-tokens {args.draft_tokens}: must be >= 1")
    return args


def table_row(args, ours, hf, tok, prompts: list, b: int) -> None:
    """One table row at batch b: interleaved (baseline, TorchEngine) pairs, median tok/s and ratios."""
    n = len(prompts) * args.new_tokens
    load0 = os.getloadavg()[0]
    t_hf, t_ours, ratios, cpu_ratios = [], [], [], []
    for _ in range(args.pairs):
        if args.baseline == "hf":
            dt_hf, cpu_hf, toks_hf = bench_hf_batches(hf, tok, prompts, b, args.new_tokens)
        else:
            dt_hf, cpu_hf, toks_hf, _ = bench_engine(
                ours,
                tok,
                prompts,
                b,
                args.new_tokens,
                not args.no_speculate,
                args.draft_tokens,
                False,
            )
        dt_ours, cpu_ours, toks_ours, drafts = bench_engine(
            ours, tok, prompts, b, args.new_tokens, not args.no_speculate, args.draft_tokens
        )
        t_hf.append(dt_hf)
        t_ours.append(dt_ours)
        ratios.append(dt_hf / dt_ours)
        cpu_ratios.append(cpu_hf / cpu_ours)
    same = sum(a == h for a, h in zip(toks_ours, toks_hf))
    spread = f"{min(ratios):.2f}..{max(ratios):.2f}"
    drafts = f"{drafts[0]}/{drafts[1]}"
    print(
        f"{b:>5} {n / statistics.median(t_hf):>18.1f} {n / statistics.median(t_ours):>18.1f} "
        f"{statistics.median(ratios):>12.2f}x {spread:>13} {same:>6}/{len(prompts):<5} "
        f"{load0:>15.1f}..{os.getloadavg()[0]:<14.1f} {statistics.median(cpu_ratios):>11.2f}x "
        f"{min(cpu_ratios):.2f}..{max(cpu_ratios):.2f} {drafts:>12}",
        flush=True,
    )


def main() -> None:
    args = parse_args()
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(args.threads)
    print("$ python " + " ".join(sys.argv))
    path = weights.default_model_dir() if args.model == "default" else args.model
    tok = weights.load_tokenizer(path)
    ours = weights.load_hf(path)
    hf = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32).eval()
    # No stop token on either side (TorchEngine: stop_ids=set()). min_new_tokens would instead forbid <|im_end|>
    # (HF's min-length logits processor), so HF's tokens after a reply's end would not be the model's greedy ones.
    hf.generation_config.eos_token_id = None
    print(
        f"model {path}, torch {torch.__version__}, threads {torch.get_num_threads()}, new tokens {args.new_tokens}, "
        f"greedy, {args.pairs} interleaved pairs per batch, {os.cpu_count()} CPUs"
    )
    bench_engine(ours, tok, prompts_for(tok, 2), 2, 4)  # warm-up both
    bench_hf(hf, tok, prompts_for(tok, 2), 4)
    if args.baseline == "plain":
        bench_engine(ours, tok, prompts_for(tok, 2), 2, 4, fast_cpu=False)
    base_name = "HF generate tok/s" if args.baseline == "hf" else "plain path tok/s"
    if args.batches:
        print(
            f"{'batch':>5} {base_name:>18} {'TorchEngine tok/s':>18} {'median ratio':>13} {'spread':>13} "
            f"{'same tokens':>12} {'load avg (1 min) before..after':>31} {'CPU-s ratio':>12} {'CPU spread':>11} "
            f"{'drafts kept':>12}"
        )
    prompts = prompts_for(tok, len(QUESTIONS))
    for b in args.batches:
        table_row(args, ours, hf, tok, prompts, b)
    if args.linear:
        compare_linear(ours, args.pairs)
    if args.compile_step:
        compare_compiled_step(ours, args.pairs)


if __name__ == "__main__":
    main()
