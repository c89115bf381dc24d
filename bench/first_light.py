"""First light on one GPU: the learner, the torch engine and weight sync on one device.

One process, one device, a Qwen3 of a checkpoint's shape (gpu_memory.QWEN3_CONFIGS) with random
weights, the other knobs from a preset. Every part runs on CPU too (`--device cpu --model tiny`:
the rehearsal, tests/test_first_light.py); each writes its numbers to first_light.json, then one
table is printed (also first_light.txt).

  learner   FSDP2 (model.apply_fsdp2) on a 1-rank mesh (nccl; gloo on CPU): fp32 master weights
            and AdamW state, bf16 compute. One packed micro-batch of micro_batch_tokens tokens
            (sequences of --seq-len, half of each a loss token) through learner.update.accumulate_gradients
            + learner.update.optimizer_step (GRPO loss, AdamW), activation checkpointing on and off
            alternately on the same model (A B A B, --pairs): tokens/s of forward + backward +
            optimizer step; MFU = model FLOPs per second / the chip's dense bf16 peak (datasheet;
            also against the bf16 matmul rate measured in the same run), with model FLOPs per
            sequence of n tokens 6 * P_matmul * n + 6 * L * H * head_dim * n^2 (causal attention,
            forward and backward; recomputation not counted); peak memory
            (torch.cuda.max_memory_allocated of each step) against gpu_memory.memory_items' learner
            resident + training extra, same config, W = 1.
  master    the first two steps at lr 1e-6: parameters and AdamW state fp32, block outputs bf16,
            and the share of weights that changed (>= 99%; bf16 master weights would keep ~98%).
  sync      learner.sync.sync_weights from the learner into the engine's bf16 model: seconds per GiB
            moved (median of 3); the engine's weights equal the learner's cast to bf16, bit for
            bit.
  engine    engines.TorchEngine with the preset's engine knobs (speculation at <= 4 sequences)
            against transformers' Qwen3ForCausalLM.generate on the same weights: greedy decode of
            --new-tokens tokens for B prompts at once, B in --batches; interleaved pairs (HF,
            engine) x --pairs, a fresh engine each time; median tokens/s, the median ratio with
            its spread; greedy agreement (identical sequences, mean share of tokens before the
            first difference).
  logprobs  the engine's log-prob of each token it sampled at T 0.7, top-k 40, top-p 0.95 against
            the learner's under decode.sample_tokens' distribution (softmax(logits / T), the
            top-k, then each token whose preceding mass is < top_p, renormalised), from one full
            forward.
  thread    the device the engine's worker thread runs on (asyncio.to_thread, as TorchEngine's
            calls).

Random weights: every matrix N(0, 0.02) (transformers' initializer_range for Qwen3), the final
norm's gain 100 / sqrt(hidden), so logits have std ~2 (a trained model's range; torch's default
init gives std ~sqrt(hidden) through a tied N(0, 1) embedding: every distribution one-hot).

    python bench/first_light.py [--device cuda] [--preset qwen3-4b-2xa100]
        [--model Qwen3-1.7B | tiny] [--micro-batch-tokens T] [--seq-len N] [--pairs 3]
        [--batches 1 8 32] [--new-tokens 128]
        [--out DIR]
"""

import argparse
import asyncio
import dataclasses
import json
import os
import resource
import socket
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import configs  # noqa: E402
import engines  # noqa: E402
import model as modeling  # noqa: E402
from learner import gpu_memory  # noqa: E402

# The learner's weight sync and step, in one place (learner/).
from learner.distributed import set_gradient_sum  # noqa: E402
from learner.packing import Sample, make_micro_batches  # noqa: E402
from learner.sync import iter_full_weights, sync_weights  # noqa: E402
from learner.update import accumulate_gradients, build_optimizer, optimizer_step  # noqa: E402

GiB = 2**30
# Dense bf16 peak by device name (vendor datasheets, SXM parts), FLOP/s.
PEAK_BF16 = {"H200": 989e12, "H100": 989e12, "A100": 312e12}
# A Qwen3 small enough for a CPU rehearsal in seconds (weights.save_tiny_random's shape, 4 layers).
TINY = dict(
    gpu_memory.QWEN3_CONFIGS["Qwen3-1.7B"],
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=4,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=16,
    vocab_size=512,
)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def init_process_group(device: torch.device) -> None:
    """A 1-rank group on loopback (nccl on CUDA, gloo on CPU), as learner.distributed.init_distributed does."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.update(
        RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port)
    )
    if device.type == "cuda":
        torch.cuda.set_device(device)
        dist.init_process_group("nccl", device_id=device)
    else:
        dist.init_process_group("gloo")


def matmul_rate(device: torch.device) -> float:
    """Measured bf16 matmul FLOP/s: [n, n] @ [n, n], random, n 8192 (CUDA) or 512, mean of 10."""
    n = 8192 if device.type == "cuda" else 512
    a, b = (torch.randn(n, n, device=device, dtype=torch.bfloat16) for _ in range(2))
    for _ in range(3):
        a @ b
    sync(device)
    t0 = time.perf_counter()
    for _ in range(10):
        a @ b
    sync(device)
    return 10 * 2 * n**3 / (time.perf_counter() - t0)


def model_flops(hf: dict, lengths: list[int]) -> float:
    """Model FLOPs of forward + backward over packed sequences of these lengths (see the top)."""
    h, i, L, V = (
        hf["hidden_size"],
        hf["intermediate_size"],
        hf["num_hidden_layers"],
        hf["vocab_size"],
    )
    H, kv, d = hf["num_attention_heads"], hf["num_key_value_heads"], hf["head_dim"]
    matmul_params = L * (2 * h * H * d + 2 * h * kv * d + 3 * h * i) + V * h  # + the lm_head
    return sum(6 * matmul_params * n + 6 * L * H * d * n * n for n in lengths)


def build_learner(hf: dict, cfg: configs.TrainConfig, device: torch.device):
    """Random-weight Qwen3, FSDP2 on a 1-rank mesh (fp32 master, bf16 compute), learner.update.build_optimizer's AdamW."""  # noqa: E501
    torch.manual_seed(0)
    with torch.device(device):
        net = modeling.Transformer(modeling.ModelConfig.from_hf(hf))
    with torch.no_grad():
        for p in net.parameters():
            if p.dim() == 2:
                p.normal_(0.0, 0.02)  # transformers' initializer_range for Qwen3
        net.model.norm.weight.fill_(100 / hf["hidden_size"] ** 0.5)  # logits of std ~2 (docstring)
    mesh = init_device_mesh(device.type, (1,))
    net = modeling.apply_fsdp2(
        net,
        mesh,
        param_dtype=torch.bfloat16,
        reduce_dtype=torch.float32,
        activation_checkpointing=True,
    )
    set_gradient_sum(net)
    optimizer, scheduler = build_optimizer(net, cfg)
    return net, optimizer, scheduler


def packed_samples(hf: dict, tokens: int, seq_len: int) -> list[Sample]:
    """tokens // seq_len trajectories of seq_len + 1 ids (seq_len fed), the last half generated."""
    g = torch.Generator().manual_seed(1)
    out = []
    for k in range(tokens // seq_len):
        ids = torch.randint(0, hf["vocab_size"], (seq_len + 1,), generator=g).tolist()
        mask = [0] * (seq_len // 2 + 1) + [1] * (seq_len - seq_len // 2)
        out.append(Sample(ids, mask, [-2.0 * m for m in mask], 1.0 if k % 2 else -1.0))
    return out


def learner_step(net, optimizer, scheduler, samples, cfg, device) -> tuple[float, float]:
    """One GRPO update on one packed micro-batch: (seconds, peak bytes allocated; CPU: 0)."""
    micro_batches = make_micro_batches(samples, cfg.micro_batch_tokens)
    assert len(micro_batches) == 1, len(micro_batches)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    sync(device)
    t0 = time.perf_counter()
    accumulate_gradients(net, micro_batches, cfg, device)
    optimizer_step(net, optimizer, scheduler, cfg.grad_clip)
    sync(device)
    seconds = time.perf_counter() - t0
    return seconds, float(torch.cuda.max_memory_allocated(device)) if device.type == "cuda" else 0.0


def part_master(net, optimizer, scheduler, samples, cfg, device) -> dict:
    """Two updates at lr 1e-6 from the fresh model: dtypes of parameters and AdamW state, block
    output dtype, share of weights changed (an untied embedding is left out: its unseen rows get
    no gradient)."""
    seen = []
    hook = net.model.layers[0].register_forward_hook(lambda m, i, o: seen.append(str(o.dtype)))
    skip = set() if net.config.tie_word_embeddings else {"model.embed_tokens.weight"}
    before = {n: p.to_local().detach().clone() for n, p in net.named_parameters() if n not in skip}
    for _ in range(2):
        learner_step(net, optimizer, scheduler, samples, cfg, device)
    hook.remove()
    changed = sum(
        int((p.to_local() != before[n]).sum()) for n, p in net.named_parameters() if n in before
    )
    share = changed / sum(t.numel() for t in before.values())
    del before
    dtypes = sorted(
        {str(p.dtype) for p in net.parameters()}
        | {str(s["exp_avg"].dtype) for s in optimizer.state.values()}
    )
    ok = dtypes == ["torch.float32"] and set(seen) == {"torch.bfloat16"} and share >= 0.99
    return dict(
        ok=ok, master_and_adamw_dtypes=dtypes, block_output_dtypes=sorted(set(seen)), changed=share
    )


def part_learner(
    net,
    optimizer,
    scheduler,
    samples,
    cfg,
    hf,
    device,
    pairs: int,
    peak: float | None,
    measured_rate: float,
) -> dict:
    """Activation checkpointing on (A) and off (B) alternately, `pairs` times, on the same model."""
    tokens = sum(len(s.token_ids) - 1 for s in samples)
    flops = model_flops(hf, [len(s.token_ids) - 1 for s in samples])
    predicted = {}
    for ac in (True, False):
        items, _, _ = gpu_memory.memory_items(
            dataclasses.replace(
                cfg, policy=dataclasses.replace(cfg.policy, activation_checkpointing=ac)
            ),
            hf,
            1,
        )
        # learner resident + training extra (memory_budget's condition 3)
        predicted[ac] = sum(list(items.values())[:7])
    total = torch.cuda.get_device_properties(device).total_memory if device.type == "cuda" else None
    # An out-of-memory error mid-backward leaves FSDP2 half-way: what cannot fit is not run.
    runs = {ac: [] for ac in (True, False) if total is None or predicted[ac] < 0.9 * total}
    for _ in range(pairs):
        for ac in runs:
            for block in net.model.layers:
                block.activation_checkpointing = ac
            runs[ac].append(learner_step(net, optimizer, scheduler, samples, cfg, device))
    out = dict(
        tokens_per_step=tokens,
        sequences=len(samples),
        seq_len=len(samples[0].token_ids) - 1,
        model_tflop_per_step=flops / 1e12,
        load=os.getloadavg()[0],
    )
    for ac, name in ((True, "ac_on"), (False, "ac_off")):
        if ac not in runs:
            out[name] = dict(
                skipped=f"predicted {predicted[ac] / GiB:.1f} GiB > 90% of {total / GiB:.1f} GiB"
            )
            continue
        seconds = [s for s, _ in runs[ac]]
        t = statistics.median(seconds)
        out[name] = dict(
            seconds=seconds,
            tokens_per_s=tokens / t,
            spread=[tokens / max(seconds), tokens / min(seconds)],
            mfu=flops / t / peak if peak else None,
            of_measured_matmul=flops / t / measured_rate,
            peak_bytes=max(m for _, m in runs[ac]) or None,
            predicted_bytes=predicted[ac],
        )
    return out


def part_sync(net, engine, device) -> dict:
    """learner.sync.sync_weights into the engine, 3 times: seconds per GiB of bf16 moved, exactness."""
    moved = sum(p.numel() * 2 for p in net.parameters())  # bf16 bytes, a tied lm_head once
    seconds = []
    for _ in range(3):
        sync(device)
        t0 = time.perf_counter()
        sync_weights(net, engine, torch.bfloat16)
        sync(device)
        seconds.append(time.perf_counter() - t0)
    params = dict(engine.model.named_parameters())
    exact = all(torch.equal(params[n], t) for n, t in iter_full_weights(net, torch.bfloat16))
    return dict(
        ok=exact,
        exact=exact,
        bytes=moved,
        seconds=seconds,
        s_per_gib=statistics.median(seconds) / (moved / GiB),
    )


def fresh_engine(eng_model, batch: int, max_seq_len: int, policy: configs.PolicyConfig):
    return engines.TorchEngine(
        eng_model,
        None,
        max_batch=batch,
        max_seq_len=max_seq_len,
        seed=0,
        stop_ids=set(),
        speculate_max_batch=policy.engine_speculate_max_batch,
        speculate_tokens=policy.engine_speculate_tokens,
    )


def engine_generate(engine, prompts, sampling) -> list:
    async def go():
        outs = await asyncio.gather(*(engine.generate(p, sampling) for p in prompts))
        await engine.aclose()
        return outs

    return asyncio.run(go())


def hf_model(eng_model, device: torch.device):
    """transformers' Qwen3ForCausalLM with the engine's weights (same names) and dtype."""
    import transformers

    fields = {
        k: v
        for k, v in eng_model.config.to_hf().items()
        if k not in ("architectures", "model_type")
    }
    with torch.device(device):
        hf = transformers.Qwen3ForCausalLM(transformers.Qwen3Config(**fields))
    hf = hf.to(eng_model.model.embed_tokens.weight.dtype).eval()
    missing, unexpected = hf.load_state_dict(eng_model.state_dict(), strict=False)
    if missing or unexpected:
        raise RuntimeError(f"HF Qwen3 state dict: missing {missing}, unexpected {unexpected}")
    hf.generation_config.eos_token_id = None  # random weights: every sequence runs the full length
    return hf


@torch.no_grad()
def hf_generate(hf, prompts, new_tokens: int, device) -> list[list[int]]:
    ids = torch.tensor(prompts, device=device)  # equal lengths: no padding
    out = hf.generate(
        input_ids=ids,
        attention_mask=torch.ones_like(ids),
        max_new_tokens=new_tokens,
        min_new_tokens=new_tokens,
        do_sample=False,
        pad_token_id=0,
    )
    return out[:, ids.shape[1] :].tolist()


def prompts_of(hf: dict, n: int, length: int) -> list[list[int]]:
    """n random prompts of `length` ids sharing their first quarter (a system prompt)."""
    g = torch.Generator().manual_seed(2)
    shared = torch.randint(0, hf["vocab_size"], (length // 4,), generator=g).tolist()
    return [
        shared + torch.randint(0, hf["vocab_size"], (length - len(shared),), generator=g).tolist()
        for _ in range(n)
    ]


def part_engine(
    eng_model, hf, policy, device, batches, pairs: int, prompt_len: int, new_tokens: int
) -> dict:
    """Interleaved pairs (transformers generate, TorchEngine) per batch size; greedy agreement."""
    reference = hf_model(eng_model, device)
    greedy = engines.SamplingParams(temperature=0.0, max_tokens=new_tokens)
    max_seq_len = prompt_len + new_tokens + 8
    warm = prompts_of(hf, 1, prompt_len)
    hf_generate(reference, warm, 4, device)
    engine_generate(
        fresh_engine(eng_model, 1, max_seq_len, policy),
        warm,
        dataclasses.replace(greedy, max_tokens=4),
    )
    out = {}
    for b in batches:
        prompts = prompts_of(hf, b, prompt_len)
        times = []
        for _ in range(pairs):
            sync(device)
            t0 = time.perf_counter()
            ref = hf_generate(reference, prompts, new_tokens, device)
            t_hf = time.perf_counter() - t0
            engine = fresh_engine(eng_model, b, max_seq_len, policy)
            t0 = time.perf_counter()
            got = [c.token_ids for c in engine_generate(engine, prompts, greedy)]
            sync(device)
            times.append((t_hf, time.perf_counter() - t0))
        ratios = [a / e for a, e in times]
        prefix = [
            next((k for k, (x, y) in enumerate(zip(r, g)) if x != y), new_tokens) / new_tokens
            for r, g in zip(ref, got)
        ]
        out[str(b)] = dict(
            engine_tokens_per_s=b * new_tokens / statistics.median(e for _, e in times),
            hf_tokens_per_s=b * new_tokens / statistics.median(a for a, _ in times),
            ratio=statistics.median(ratios),
            spread=[min(ratios), max(ratios)],
            identical=sum(r == g for r, g in zip(ref, got)),
            sequences=b,
            agreeing_prefix=statistics.mean(prefix),
            load=os.getloadavg()[0],
            drafts_kept_fed=[engine.accepted_drafts, engine.drafted_tokens],
        )
    del reference
    return out


@torch.no_grad()
def part_logprobs(net, eng_model, hf, policy, device, prompt_len: int) -> dict:
    """Sampled log-probs of the engine vs the learner's, by decode.sample_tokens' distribution."""
    T, K, P = 0.7, 40, 0.95
    prompts = prompts_of(hf, 4, prompt_len)
    engine = fresh_engine(eng_model, 4, prompt_len + 40, policy)
    sampled = engine_generate(
        engine,
        prompts,
        engines.SamplingParams(temperature=T, top_k=K, top_p=P, max_tokens=32, seed=1),
    )
    diffs, outside = [], 0
    for p, c in zip(prompts, sampled):
        ids = torch.tensor([p + c.token_ids], device=device)
        z = net(ids)[0, len(p) - 1 : -1].float() * (
            1 / T
        )  # [n, V]: logits / T (forward returns logits / 1)
        logp = z.log_softmax(-1)
        top, order = logp.topk(K, dim=-1)  # the K most likely, in order
        probs = top.exp()
        keep = (probs.cumsum(-1) - probs) < P  # nucleus on the full distribution's mass
        kept = torch.where(keep, top, torch.full_like(top, float("-inf")))
        q = kept - kept.logsumexp(-1, keepdim=True)  # renormalised over the kept tokens
        hit = (order == torch.tensor(c.token_ids, device=device)[:, None]) & keep  # [n, K]
        inside = hit.any(-1)
        lp = torch.where(hit, q, torch.zeros_like(q)).sum(-1)
        outside += int((~inside).sum())
        diffs.append((lp[inside] - torch.tensor(c.logprobs, device=device)[inside]).abs())
    d = torch.cat(diffs)
    err = float(d.mean()) if d.numel() else float("nan")
    n = sum(len(c.token_ids) for c in sampled)
    return dict(
        ok=d.numel() > 0 and err < 0.05 and outside <= max(1, n // 50),
        mean_abs_diff=err,
        max_abs_diff=float(d.max()) if d.numel() else None,
        tokens=n,
        outside_learner_set=outside,
    )


def part_thread(engine_device: torch.device) -> dict:
    def current():
        return f"cuda:{torch.cuda.current_device()}" if engine_device.type == "cuda" else "cpu"

    seen = asyncio.run(asyncio.to_thread(current))
    return dict(ok=seen == str(engine_device), thread_device=seen, engine_device=str(engine_device))


def run_part(results: dict, name: str, fn, *args):
    """results[name] = fn(*args), or the error named (the run goes on; the exit status says so)."""
    t0 = time.perf_counter()
    try:
        results[name] = fn(*args)
    except (
        Exception
    ) as e:  # an OOM or a missing API on the device's versions must not lose the other parts
        results[name] = dict(ok=False, error=f"{type(e).__name__}: {e}"[:2000])
    results[name]["wall_s"] = time.perf_counter() - t0
    print(f"[first_light] {name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    return results[name]


def _learner_rows(add, lr: dict) -> None:
    """The learner's rows of the table (tokens/s, MFU, peak memory; checkpointing on and off)."""
    gib = lambda b: f"{b / GiB:.2f} GiB" if b else "n/a"  # noqa: E731
    pct = lambda x: f"{100 * x:.1f}%" if x is not None else "n/a"  # noqa: E731
    if "error" in lr:
        add("learner", "ERROR", "", lr["error"][:200])
    for key, label in (("ac_on", "AC on"), ("ac_off", "AC off")):
        x = lr.get(key)
        if not x or "skipped" in x:
            add("learner", f"{label}", "skipped", (x or {}).get("skipped", ""))
            continue
        add(
            "learner",
            f"tokens/s {label} ({lr['sequences']} x {lr['seq_len']})",
            f"{x['tokens_per_s']:,.0f}",
            f"spread {x['spread'][0]:,.0f}..{x['spread'][1]:,.0f} over {len(x['seconds'])} steps",
        )
        add(
            "learner",
            f"MFU {label}",
            pct(x["mfu"]),
            f"{pct(x['of_measured_matmul'])} of the measured matmul",
        )
        ratio = (
            f"{x['peak_bytes'] / x['predicted_bytes']:.2f}x"
            if x["peak_bytes"]
            else "CPU: not measured"
        )
        add(
            "learner",
            f"peak memory {label}",
            gib(x["peak_bytes"]),
            f"predicted {gib(x['predicted_bytes'])} (memory_items, W=1): {ratio}",
        )


def _engine_rows(add, e: dict) -> None:
    """The engine's rows of the table (decode tokens/s and greedy agreement per batch)."""
    if "error" in e:
        add("engine", "ERROR", "", e["error"][:200])
    for b, x in e.items():
        if b in ("error", "ok", "wall_s"):
            continue
        add(
            "engine",
            f"decode tokens/s batch {b}",
            f"{x['engine_tokens_per_s']:,.1f}",
            f"HF generate {x['hf_tokens_per_s']:,.1f}: {x['ratio']:.2f}x "
            f"({x['spread'][0]:.2f}..{x['spread'][1]:.2f})"
            f", load {x['load']:.1f}",
        )
        add(
            "engine",
            f"greedy agreement batch {b}",
            f"{x['identical']}/{x['sequences']} identical",
            f"mean agreeing prefix {x['agreeing_prefix']:.2f}",
        )


def table(r: dict) -> str:
    """The results as one plain-text table."""
    gib = lambda b: f"{b / GiB:.2f} GiB" if b else "n/a"  # noqa: E731
    rows = [
        f"first light: {r['device_name']} ({r['device']}), torch {r['torch']}, "
        f"{r['model']} random weights, "
        f"preset {r['preset']}, load {r['load_before']:.1f}",
        f"measured bf16 matmul: {r['matmul_tflops']:.3g} TFLOP/s; datasheet peak: "
        + (f"{r['peak_tflops']:.0f} TFLOP/s" if r["peak_tflops"] else "none for this device"),
    ]
    rows.append(f"{'part':<9} {'measure':<38} {'value':>22}   against")
    add = lambda part, what, value, against="": rows.append(
        f"{part:<9} {what:<38} {value:>22}   {against}"
    )  # noqa
    _learner_rows(add, r.get("learner", {}))
    m = r.get("master", {})
    add(
        "master",
        "fp32 params+AdamW, bf16 blocks, changed",
        f"{m.get('changed', 0):.4f}" if "changed" in m else "ERROR",
        f"{'ok' if m.get('ok') else 'FAILED'} "
        f"{m.get('master_and_adamw_dtypes', m.get('error', ''))}",
    )
    s = r.get("sync", {})
    add(
        "sync",
        "learner.sync.sync_weights s/GiB (bf16)",
        f"{s['s_per_gib']:.3f}" if "s_per_gib" in s else "ERROR",
        f"{gib(s.get('bytes'))} moved, exact: {s.get('exact', s.get('error'))}",
    )
    _engine_rows(add, r.get("engine", {}))
    p = r.get("logprobs", {})
    add(
        "logprobs",
        "mean |engine - learner| (T .7 k 40 p .95)",
        f"{p['mean_abs_diff']:.4f}" if "mean_abs_diff" in p else "ERROR",
        f"{'ok' if p.get('ok') else 'FAILED'}: {p.get('tokens')} tokens, "
        f"{p.get('outside_learner_set')} outside "
        f"the learner's set {p.get('error', '')}",
    )
    t = r.get("thread", {})
    add(
        "thread",
        "engine worker thread device",
        t.get("thread_device", "ERROR"),
        f"engine on {t.get('engine_device')}: {'ok' if t.get('ok') else 'FAILED'}",
    )
    rows.append(f"wall {r['wall_s']:.0f} s; all checks {'ok' if r['ok'] else 'NOT ok'}")
    return "\n".join(rows)


def parse_args(argv=None) -> tuple[argparse.Namespace, torch.device]:
    """The command line and the device it names (argparse errors exit 2)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda", help="cuda (the last visible GPU) or cpu")
    ap.add_argument(
        "--preset", default="qwen3-4b-2xa100", help="micro_batch_tokens, context and engine knobs"
    )
    ap.add_argument(
        "--model",
        default="Qwen3-1.7B",
        help="a gpu_memory.QWEN3_CONFIGS name, 'tiny', or '' (the preset's)",
    )
    ap.add_argument("--micro-batch-tokens", type=int, default=0, help="0 = the preset's")
    ap.add_argument(
        "--seq-len", type=int, default=0, help="tokens per packed sequence (0 = 4096, or T / 4)"
    )
    ap.add_argument("--pairs", type=int, default=3, help="interleaved pairs per comparison (>= 1)")
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--prompt-len", type=int, default=256)
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--out", default=os.environ.get("OUT") or "runs/first_light")
    a = ap.parse_args(argv)
    if a.pairs < 1 or min(a.batches) < 1 or a.prompt_len < 8 or a.new_tokens < 1:
        ap.error("--pairs, --batches and --new-tokens must be >= 1, --prompt-len >= 8")
    if a.device == "cuda":
        if not torch.cuda.is_available():
            ap.error(
                "--device cuda: torch sees no CUDA device (use --device cpu for the rehearsal)"
            )
        device = torch.device("cuda", torch.cuda.device_count() - 1)
    else:
        device = torch.device(a.device)
    return a, device


def engine_parts(r: dict, net, hf: dict, a, policy: configs.PolicyConfig, device) -> None:
    """The engine-side parts (sync, engine, logprobs, thread) on a bf16 engine model."""
    with torch.device(device):
        eng_model = modeling.Transformer(modeling.ModelConfig.from_hf(hf)).to(torch.bfloat16).eval()
    # fuses q/k/v, as in use
    engine = fresh_engine(eng_model, 1, a.prompt_len + a.new_tokens + 8, policy)
    run_part(r, "sync", part_sync, net, engine, device)
    run_part(
        r,
        "engine",
        part_engine,
        eng_model,
        hf,
        policy,
        device,
        a.batches,
        a.pairs,
        a.prompt_len,
        a.new_tokens,
    )
    run_part(r, "logprobs", part_logprobs, net, eng_model, hf, policy, device, a.prompt_len)
    run_part(r, "thread", part_thread, device)


def main(argv=None) -> int:
    a, device = parse_args(argv)
    preset = configs.PRESETS[a.preset]
    name = a.model or os.path.basename(preset.policy.path)
    hf = TINY if name == "tiny" else gpu_memory.QWEN3_CONFIGS[name]
    T = a.micro_batch_tokens or preset.micro_batch_tokens
    seq_len = a.seq_len or min(4096, T // 4)
    # lr 1e-6 from the first step (no warmup): the master-weight check needs a real update.
    cfg = dataclasses.replace(
        preset, micro_batch_tokens=T, lr=1e-6, warmup_steps=0, lr_schedule="constant"
    )
    t_start = time.perf_counter()
    init_process_group(device)
    r = dict(
        device=str(device),
        device_name=torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU",
        torch=torch.__version__,
        model=name,
        preset=a.preset,
        micro_batch_tokens=T,
        load_before=os.getloadavg()[0],
        rss_before=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    )
    peak = next((v for k, v in PEAK_BF16.items() if k in r["device_name"]), None)
    rate = matmul_rate(device)
    r.update(peak_tflops=peak / 1e12 if peak else None, matmul_tflops=rate / 1e12)
    net, optimizer, scheduler = build_learner(hf, cfg, device)
    samples = packed_samples(hf, T, seq_len)
    run_part(r, "master", part_master, net, optimizer, scheduler, samples, cfg, device)
    run_part(
        r,
        "learner",
        part_learner,
        net,
        optimizer,
        scheduler,
        samples,
        cfg,
        hf,
        device,
        a.pairs,
        peak,
        rate,
    )
    del optimizer, scheduler  # AdamW state: the engine and the reference model need the room
    for p in net.parameters():
        p.grad = None
    if device.type == "cuda":
        torch.cuda.empty_cache()
    engine_parts(r, net, hf, a, preset.policy, device)
    r["wall_s"] = time.perf_counter() - t_start
    r["ok"] = all(
        r[k].get("ok", "error" not in r[k])
        for k in ("master", "learner", "sync", "engine", "logprobs", "thread")
    )
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "first_light.json").write_text(json.dumps(r, indent=1))
    text = table(r)
    (out / "first_light.txt").write_text(text + "\n")
    print(text, flush=True)
    dist.destroy_process_group()
    return 0 if r["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
