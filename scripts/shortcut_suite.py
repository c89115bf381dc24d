"""The shortcut suite (tasks/shortcuts.py) on a whole split of the generated family, in real containers:
per shortcut the share of instances it resolves and its tokens, the oracle acted out turn by turn, and
the bar (at most tasks.shortcuts.SHORTCUT_MAX for every shortcut that fits one turn of the preset).
tests/test_family.py runs the same `suite` on a sample; BENCHMARKS.md quotes this script's figures.

    python3 scripts/shortcut_suite.py --split eval --seeds 0:24
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sandbox  # noqa: E402
from configs import PRESETS, ConfigError  # noqa: E402
from reward import verify  # noqa: E402
from sandboxing import images  # noqa: E402
from tasks import load_tasks, shortcuts  # noqa: E402
from tasks.family import SPLITS, instance_for_seed, parse_seeds, write_instance  # noqa: E402

PRESET = PRESETS["cpu-learn-multiturn"]


def suite(instances: list, root: Path, tokenizer, parallel: int = 2) -> list[shortcuts.SuiteResult]:
    """shortcuts.run_suite on each instance (`parallel` at a time): its folder written under `root`,
    its image built and removed after, the oracle scored by the hidden tests. Raises what the build or
    the sandbox raises (a failure is never a 0)."""

    async def one(inst):
        write_instance(inst, root)
        (task,) = load_tasks(root / inst.id)
        tag = await asyncio.to_thread(images.build_image, task)
        try:
            limits = sandbox.Limits().for_task(task)
            async with await sandbox.start_sandbox(task, tag, limits) as sb:
                result = await shortcuts.run_suite(
                    task, sb, tokenizer, inst.code, PRESET.sandbox.output_limit_bytes
                )
                report = await sb.run_tests(task.tests_dir, timeout=task.test_timeout_s)
                result.oracle_score = verify(report, task.weights).score
        finally:
            subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, timeout=120)
        return result

    async def all_of():
        gate = asyncio.Semaphore(parallel)

        async def gated(inst):
            async with gate:
                return await one(inst)

        return await asyncio.gather(*(gated(inst) for inst in instances))

    return asyncio.run(all_of())


def admissible_rates(results: list[shortcuts.SuiteResult]) -> dict[str, float]:
    """Shortcut -> share resolved, for the shortcuts that fit one turn of the preset on every instance."""
    cap = PRESET.rollout.max_tokens_per_turn
    rates = shortcuts.rates(results)
    return {
        name: rates[name]
        for name in results[0].resolved
        if max(r.tokens[name] for r in results) <= cap
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="eval", choices=SPLITS, help="the family's split")
    ap.add_argument("--seeds", default="0:24", help="START:STOP of the split's generator seeds")
    args = ap.parse_args(argv)
    try:
        seeds = parse_seeds(args.seeds)
    except ConfigError as e:
        ap.error(f"--seeds: {e}")
    from transformers import AutoTokenizer

    from hf.weights import resolve_model_dir

    tokenizer = AutoTokenizer.from_pretrained(resolve_model_dir(PRESET.policy.path))
    instances = [instance_for_seed(args.split, s) for s in seeds]
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="termrl-suite-") as root:
        results = suite(instances, Path(root), tokenizer)
    rates = shortcuts.rates(results)
    admissible = admissible_rates(results)
    cap = PRESET.rollout.max_tokens_per_turn
    print(
        f"shortcut suite: {len(results)} {args.split} instances (seeds {args.seeds}) in "
        f"{time.monotonic() - t0:.0f} s; a turn of cpu-learn-multiturn holds {cap} tokens"
    )
    for name in results[0].resolved:
        tokens = max(r.tokens[name] for r in results)
        fits = "fits a turn" if name in admissible else "over a turn"
        cut = sum(name in r.timed_out for r in results)
        cut_note = f"; cut at {shortcuts.COMMAND_TIMEOUT_S:.0f} s on {cut}" if cut else ""
        print(f"  {name:24s} {rates[name]:6.1%} resolved, up to {tokens} tokens ({fits}{cut_note})")
    oracle = sum(r.oracle_score == 1.0 for r in results) / len(results)
    worst = max(admissible.values(), default=0.0)
    print(f"  oracle, turn by turn     {oracle:6.1%} resolved")
    verdict = "holds" if worst <= shortcuts.SHORTCUT_MAX and oracle == 1.0 else "FAILS"
    print(
        f"bar (every admissible shortcut <= {shortcuts.SHORTCUT_MAX:.0%}, oracle 100%): {verdict}"
    )
    return 0 if verdict == "holds" else 1


if __name__ == "__main__":
    sys.exit(main())
