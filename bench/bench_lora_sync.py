"""Weight-sync seconds into a TorchEngine with and without LoRA adapters (learner/sync.py).

    python bench/bench_lora_sync.py [--model PATH] [--rank 8] [--targets q_proj v_proj] [--repeats 5]

One process, the policy unsharded (FSDP2's gather is left out: this measures what the engine is
sent and copies). Full fine-tuning sends every weight; with LoRA the TorchEngine (partial_load)
gets only the adapted weights, each merged (W + alpha/r B A) on the way; an engine that loads
whole models gets every weight, merged. Prints the median seconds of `--repeats` syncs of each
kind, interleaved, and the bytes sent; nothing is asserted.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

import configs  # noqa: E402
import lora  # noqa: E402
from engines.torch_engine import TorchEngine  # noqa: E402
from hf import weights  # noqa: E402
from learner.sync import iter_full_weights, sync_weights  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="default", help="HF folder, or 'default' (SmolLM2-135M)")
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--targets", nargs="+", default=["q_proj", "v_proj"])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(1)
    model_dir = weights.resolve_model_dir(args.model)
    full = weights.load_hf(model_dir)
    adapted = lora.add_lora(
        weights.load_hf(model_dir), configs.LoRAConfig(rank=args.rank, targets=tuple(args.targets))
    )
    lora.init_adapters(adapted)
    engine = TorchEngine(weights.load_hf(model_dir), None, stop_ids={0})
    kinds = {
        "full fine-tune (every weight)": (full, False),
        f"LoRA r={args.rank} {'+'.join(args.targets)} (adapted weights, merged)": (adapted, True),
        "LoRA, an engine that loads whole models (every weight, merged)": (adapted, False),
    }
    seconds = {k: [] for k in kinds}
    for _ in range(args.repeats):
        for kind, (model, partial) in kinds.items():
            engine.partial_load = partial
            t0 = time.perf_counter()
            sync_weights(model, engine)
            seconds[kind].append(time.perf_counter() - t0)
    for kind, (model, partial) in kinds.items():
        sent = sum(t.numel() * t.element_size() for _, t in iter_full_weights(model, None, partial))
        print(f"{kind}: {statistics.median(seconds[kind]):.4f} s median, {sent / 1e6:.1f} MB sent")


if __name__ == "__main__":
    main()
