"""model.py against transformers, same run, same machine.

1. Training throughput: forward+backward of the summed target log-probs over one ragged batch.
   termrl packs the sequences into one row (cu_seqlens, per-sequence causal attention, chunked
   log-probs); the baseline is transformers' own Qwen3ForCausalLM (SDPA attention) on the same batch
   right-padded to the longest sequence, with log_softmax over the full logits. Same weights. Tokens/s
   counts real (non-pad) tokens. "termrl padded" runs our model on the padded batch, separating the
   gain of packing from the rest.
2. Log-prob peak memory at vocab 151,936 (Qwen3) and 8,192 tokens: `logprobs_and_entropy` (chunked,
   log-probs and entropy) vs a naive `log_softmax` over the full [tokens, vocab] logits (log-probs only).
   Each measurement runs in a fresh subprocess; peak = VmHWM after resetting it (/proc/self/clear_refs)
   minus RSS before the call, so it counts only memory the computation itself allocates.

    python bench/bench_model.py            # ~5-10 min on 2 shared cores (1 compute thread)
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import model as M  # noqa: E402
from hf import weights  # noqa: E402

LENGTHS = [24, 40, 64, 96, 128, 160, 200, 256]  # ragged batch: 968 real tokens, 2048 when padded
# SmolLM2-135M's layer shapes (hidden 576, 9/3 heads of 64, SwiGLU 1536, vocab 49,152, tied) with q/k norm
# (Qwen3 layout) and 8 of its 30 layers: more lm_head-heavy than the real model, so packing gains less here.
CFG = M.ModelConfig(
    family="qwen3",
    vocab_size=49152,
    hidden_size=576,
    intermediate_size=1536,
    num_hidden_layers=8,
    num_attention_heads=9,
    num_key_value_heads=3,
    head_dim=64,
    rope_theta=1e5,
    max_position_embeddings=8192,
    tie_word_embeddings=True,
)


def _batch(seed=0):
    g = torch.Generator().manual_seed(seed)
    seqs = [torch.randint(0, CFG.vocab_size, (n,), generator=g) for n in LENGTHS]
    return seqs, [torch.roll(s, -1) for s in seqs]


def _time_step(fn, params) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) of one forward+backward. CPU time is reported too because
    the machine is shared: it is far less disturbed by other processes than wall time."""
    for p in params:
        p.grad = None
    t0, c0 = time.perf_counter(), time.process_time()
    fn().backward()
    return time.perf_counter() - t0, time.process_time() - c0


def throughput(iters: int) -> dict:
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    ours = M.Transformer(CFG)
    with tempfile.TemporaryDirectory() as d:
        weights.save_hf(ours, d)
        hf = AutoModelForCausalLM.from_pretrained(
            d, dtype=torch.float32, attn_implementation="sdpa"
        )
    ours.train(), hf.train()
    seqs, targets = _batch()
    n_real = sum(LENGTHS)
    T = max(LENGTHS)
    packed_ids, packed_targets = torch.cat(seqs)[None], torch.cat(targets)[None]
    cu = torch.tensor([0] + [sum(LENGTHS[: i + 1]) for i in range(len(LENGTHS))], dtype=torch.int32)
    padded_ids = torch.zeros(len(seqs), T, dtype=torch.long)
    padded_targets = torch.zeros(len(seqs), T, dtype=torch.long)
    mask = torch.zeros(len(seqs), T)
    for i, (s, t) in enumerate(zip(seqs, targets)):
        padded_ids[i, : len(s)], padded_targets[i, : len(s)], mask[i, : len(s)] = s, t, 1

    def ours_packed():
        lp, _ = ours(packed_ids, cu_seqlens=cu, targets=packed_targets)
        return -lp.sum()

    def ours_padded():
        lp, _ = ours(
            padded_ids, targets=padded_targets
        )  # right padding: real tokens never see pads
        return -(lp * mask).sum()

    def hf_padded():
        logits = hf(input_ids=padded_ids, attention_mask=mask.long()).logits.float()
        lp = F.log_softmax(logits, dim=-1).gather(-1, padded_targets[..., None]).squeeze(-1)
        return -(lp * mask).sum()

    with torch.no_grad():  # same weights, same numbers
        a = ours(packed_ids, cu_seqlens=cu, targets=packed_targets)[0].sum()
        b = -hf_padded()
    assert abs(a.item() - b.item()) < 1e-2 * abs(b.item()), (a.item(), b.item())

    runs = {
        "termrl packed": (ours_packed, ours),
        "termrl padded": (ours_padded, ours),
        "transformers padded": (hf_padded, hf),
    }
    times = {k: [] for k in runs}
    for fn, m in runs.values():  # warm-up
        _time_step(fn, list(m.parameters()))
    for _ in range(iters):  # interleaved, so load from other processes hits all alike
        for name, (fn, m) in runs.items():
            times[name].append(_time_step(fn, list(m.parameters())))
    return {
        k: (
            n_real / statistics.median(t[0] for t in v),
            n_real / statistics.median(t[1] for t in v),
        )
        for k, v in times.items()
    }


def _rss_bytes(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/self/status has no {field}")


def mem_worker(kind: str, tokens: int, vocab: int, dim: int, grad: bool) -> None:
    torch.set_num_threads(2)
    g = torch.Generator().manual_seed(0)
    hidden = (torch.randn(tokens, dim, generator=g) * 0.1).requires_grad_(grad)
    weight = (torch.randn(vocab, dim, generator=g) * 0.02).requires_grad_(grad)
    targets = torch.randint(0, vocab, (tokens,), generator=g)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset VmHWM (peak RSS) to the current RSS
    before = _rss_bytes("VmRSS")
    with torch.set_grad_enabled(grad):
        if kind == "chunked":
            lp, ent = M.logprobs_and_entropy(hidden, weight, targets)
            loss = -lp.sum() - 0.01 * ent.sum()
        else:
            lp = F.log_softmax(hidden @ weight.t(), dim=-1).gather(1, targets[:, None]).squeeze(1)
            loss = -lp.sum()
        if grad:
            loss.backward()
    print(json.dumps({"peak_bytes": _rss_bytes("VmHWM") - before, "loss": loss.item()}))


def peak_memory(kind: str, tokens: int, vocab: int, dim: int, grad: bool) -> int:
    cmd = [
        sys.executable,
        __file__,
        "--mem-worker",
        kind,
        "--tokens",
        str(tokens),
        "--vocab",
        str(vocab),
        "--dim",
        str(dim),
    ] + (["--grad"] if grad else [])
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=1800)
    return json.loads(out.stdout.strip().splitlines()[-1])["peak_bytes"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=3)
    # One thread by default: on a shared, oversubscribed machine OpenMP threads spin at barriers and
    # inflate whichever run happens to collide with other load; one thread gives stable ratios.
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--mem-worker", choices=["chunked", "naive"])
    ap.add_argument("--tokens", type=int, default=8192)
    ap.add_argument("--vocab", type=int, default=151936)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--grad", action="store_true")
    args = ap.parse_args()
    if args.mem_worker:
        return mem_worker(args.mem_worker, args.tokens, args.vocab, args.dim, args.grad)

    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), cpu")
    cfg = CFG
    print(
        f"\n1. forward+backward, Qwen3 layout (hidden {cfg.hidden_size}, {cfg.num_hidden_layers} layers, "
        f"vocab {cfg.vocab_size}), ragged batch lengths {LENGTHS} = {sum(LENGTHS)} tokens "
        f"({len(LENGTHS) * max(LENGTHS)} padded), median of {args.iters}"
    )
    tps = throughput(args.iters)
    base = tps["transformers padded"]
    for name, (wall, cpu) in tps.items():
        print(
            f"   {name:22s} {wall:7.0f} tokens/s wall {wall / base[0]:5.2f}x   "
            f"{cpu:7.0f} tokens/CPU-s {cpu / base[1]:5.2f}x"
        )

    print(f"\n2. log-prob peak memory, vocab {args.vocab}, hidden {args.dim}, fp32")
    for tokens, grad in ((args.tokens, False), (2048, True)):
        naive = peak_memory("naive", tokens, args.vocab, args.dim, grad)
        chunked = peak_memory("chunked", tokens, args.vocab, args.dim, grad)
        label = f"{tokens} tokens, {'forward+backward' if grad else 'forward'}"
        print(
            f"   {label:32s} naive log_softmax {naive / 2**30:6.2f} GiB   chunked (logprobs+entropy) "
            f"{chunked / 2**30:6.2f} GiB   {chunked / naive:5.3f}x"
        )


if __name__ == "__main__":
    main()
