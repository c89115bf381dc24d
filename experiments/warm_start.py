"""A warm start from demonstrations: the policy a GRPO run starts from when the base cannot start it.

    python -m experiments.warm_start --tasks DIR [--task-ids ...] [--eval-tasks DIR] [--sft.epochs 3]
    torchrun ... train.py --policy.path runs/warm_start/hf ...     # GRPO from the warm start
    python evaluate.py --model runs/warm_start/hf --tasks ...      # or judge it alone

1. demonstrate: every task's oracle steps (tasks/oracle.py: its oracle_turns.json, else its solution
   script one top-level command a turn) acted out by the reactive oracle (agent/oracle.py) through
   engines.ScriptedEngine and the real agent loop (rollout.run_episodes) in real sandboxes, verified by
   the hidden tests: the trajectories are token for token what the policy would see and generate;
   written to OUT/demonstrations.jsonl;
2. train: the resolved episodes only (learner.sft.demonstrations), masked cross-entropy on their
   action tokens, AdamW, sft.epochs passes (learner/sft.py), starting from policy.path;
3. export: OUT/hf (hf.weights.save_hf with the tokenizer), OUT/warm_start.json (episodes, resolved,
   seconds per demonstration episode and per epoch, the NLL of the action tokens before and after).

Its data never includes evaluation instances: the task set is taken as given (task ids), and with
--eval-tasks a demonstration task whose id or instruction is in that evaluation set is refused.
"""

import asyncio
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

import torch

import configs
import sandbox as sandbox_lib
from agent.chat import ChatFormat
from agent.oracle import OracleReplies
from bookkeeping.sanitise import install_log_sanitiser, printable
from engines import ScriptedEngine
from experiments import settings
from hf import weights
from learner.sft import demonstrations, masked_nll, train_sft
from rollout import EpisodeOptions, Trajectory, run_episodes
from sandboxing import admission, hosts
from tasks import family, select_tasks
from tasks.oracle import oracle_steps


def refuse_eval_overlap(tasks: list, eval_tasks: list) -> None:
    """Raise ConfigError naming the tasks when a demonstration task shares its id or its
    instruction with a task of the evaluation set (a procedurally generated instance with the same
    seed has the same instruction)."""
    ids = {t.id for t in eval_tasks}
    instructions = {t.instruction for t in eval_tasks}
    overlap = sorted(t.id for t in tasks if t.id in ids or t.instruction in instructions)
    if overlap:
        raise configs.ConfigError(
            f"tasks: {len(overlap)} demonstration task(s) are in the evaluation set eval_tasks "
            f"(same id or instruction): {overlap[:8]}"
        )
    # a generated instance renamed or reworded is still the same instance: its generator seed says so
    generated = [t for t in tasks if t.meta.get("family") == family.FAMILY]
    generated_eval = [t for t in eval_tasks if t.meta.get("family") == family.FAMILY]
    if generated and generated_eval:
        try:
            family.check_disjoint(generated, generated_eval)
        except ValueError as e:
            raise configs.ConfigError(f"tasks: the evaluation set eval_tasks: {e}") from None


def oracle_plans(tasks: list, max_turns: int) -> dict[str, list[dict]]:
    """instruction -> the oracle's steps (tasks.oracle.oracle_steps) for every task. max_turns: the
    rollout's; a task's own max_turns, when lower, wins. Raises ConfigError naming two tasks that
    share an instruction but not their steps (the oracle finds an episode's task by its prompt)."""
    plans: dict[str, list[dict]] = {}
    owner: dict[str, str] = {}
    for t in tasks:
        steps = oracle_steps(t, min(max_turns, t.max_turns or max_turns))
        if t.instruction in plans and plans[t.instruction] != steps:
            raise configs.ConfigError(
                f"tasks {owner[t.instruction]!r} and {t.id!r}: the same instruction with other "
                "oracle steps; the oracle could not tell their episodes apart"
            )
        plans[t.instruction] = steps
        owner[t.instruction] = t.id
    return plans


async def demonstrate(cfg: settings.WarmStartConfig, tasks: list, tokenizer, out: Path) -> list:
    """Run cfg.k oracle episodes of every task through the agent loop (ScriptedEngine over
    OracleReplies) in real sandboxes; write OUT/demonstrations.jsonl. Returns the trajectories."""
    chat = ChatFormat(tokenizer, cfg.policy.action_format)
    replies = OracleReplies(chat, oracle_plans(tasks, cfg.rollout.max_turns))
    engine = ScriptedEngine(tokenizer, replies, max_seq_len=cfg.policy.max_seq_len)
    with open(out / "demonstrations.jsonl", "w") as jsonl:

        def write(t: Trajectory) -> None:
            jsonl.write(json.dumps(t.to_json(), default=str) + "\n")

        groups = await run_episodes(
            tasks,
            engine,
            tokenizer,
            cfg.k,
            cfg.rollout,
            opts=EpisodeOptions(cfg.policy.action_format, cfg.sandbox, run_id=cfg.run_id),
            progress=cfg.progress,
            on_trajectory=write,
        )
    return [t for g in groups for t in g.trajectories]


def warm_start(cfg: settings.WarmStartConfig) -> dict:
    """Demonstrate, train, export (the module docstring's steps 1-3). cfg must be validated
    (settings.validate_warm_start). Returns the record written to OUT/warm_start.json, whose "policy"
    is the exported folder. Raises ConfigError when the task set overlaps eval_tasks or a task has
    no oracle (TaskError), ValueError when no demonstration resolved its task."""
    if cfg.device.startswith("cuda") and not torch.cuda.is_available():
        raise configs.ConfigError(f"device = {cfg.device!r}: this machine has no CUDA device")
    tasks = select_tasks(cfg.tasks, cfg.task_ids, cfg.difficulties)
    if cfg.eval_tasks:
        refuse_eval_overlap(tasks, select_tasks(cfg.eval_tasks, cfg.eval_task_ids))
    in_flight = min(cfg.rollout.max_concurrent_episodes, len(tasks) * cfg.k)
    fits, line = admission.host_budget(
        in_flight, cfg.sandbox.memory_mb, cfg.sandbox.storage_mb, 1, *sandbox_lib.host_resources()
    )
    print(line, file=sys.stderr)
    cfg.rollout.max_concurrent_episodes = fits
    model_dir = weights.resolve_model_dir(cfg.policy.path)
    tokenizer = weights.load_tokenizer(model_dir)
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)

    t0 = time.monotonic()
    trajectories = asyncio.run(demonstrate(cfg, tasks, tokenizer, out))
    demonstrate_s = time.monotonic() - t0
    samples = demonstrations(trajectories)
    resolved = [t for t in trajectories if t.resolved and t.error is None]
    unresolved = sorted({t.task_id for t in trajectories if not t.resolved})
    errors = Counter(printable(t.error) for t in trajectories if t.error).most_common(1)
    print(
        f"demonstrations: {len(samples)} resolved of {len(trajectories)} oracle episodes "
        f"({demonstrate_s / len(trajectories):.2f} s per episode with {fits} at once); "
        f"unresolved tasks: {unresolved[:8] or 'none'}"
        + (f"; most common error: {errors[0][0]}" if errors else ""),
        file=sys.stderr,
    )
    if not samples:
        raise ValueError(
            f"tasks = {cfg.tasks!r}: no oracle episode resolved its task, nothing to train on"
            + (f" (most common error: {errors[0][0]})" if errors else "")
        )

    device = torch.device(cfg.device)
    model = weights.load_hf(model_dir, dtype=torch.float32, device=device)
    nll_before = masked_nll(model, samples, cfg.sft.micro_batch_tokens, device)
    epochs = train_sft(model, samples, cfg.sft, device, cfg.progress)
    nll_after = masked_nll(model, samples, cfg.sft.micro_batch_tokens, device)
    policy = weights.save_hf(model, out / "hf", tokenizer_dir=model_dir)
    record = {
        "policy": str(policy),
        "base": str(model_dir),
        "tasks": cfg.tasks,
        "task_ids": [t.id for t in tasks],
        "eval_tasks": cfg.eval_tasks or None,
        "episodes": len(trajectories),
        "resolved": len(samples),
        "unresolved_tasks": unresolved,
        "stop_reasons": dict(sorted(Counter(t.stop_reason for t in trajectories).items())),
        "turns_per_resolved_episode": sum(t.num_turns for t in resolved) / len(resolved),
        "action_tokens": sum(sum(s.loss_mask) for s in samples),
        "seconds_per_episode": demonstrate_s / len(trajectories),
        "concurrent_episodes": fits,
        "epochs": epochs,
        "nll_before": nll_before,
        "nll_after": nll_after,
    }
    (out / "warm_start.json").write_text(json.dumps(record, indent=2))
    print(
        f"sft: NLL of the action tokens {nll_before:.3f} -> {nll_after:.3f} nats over "
        f"{cfg.sft.epochs} epochs ({sum(e['seconds'] for e in epochs) / len(epochs):.1f} s per epoch)"
    )
    print(f"policy: {policy} (train.py --policy.path {policy}; evaluate.py --model {policy})")
    return record


def main(argv: list[str] | None = None) -> int:
    """CLI entry: parse and validate WarmStartConfig before any model or container is touched, reap
    dead runs' leftovers, warm start, reap this run's containers. Returns the exit status."""
    install_log_sanitiser()
    cfg = settings.parse_warm_start_cli(argv, description=__doc__.split("\n\n")[0])
    cfg.run_id = cfg.run_id or sandbox_lib.RUN_ID
    for line in hosts.configure(cfg.sandbox.docker_hosts, 2 * cfg.sandbox.memory_mb << 20):
        print(line, file=sys.stderr)
    try:
        sandbox_lib.reap()
        warm_start(cfg)
    finally:
        sandbox_lib.reap_run(cfg.run_id)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (FileNotFoundError, ValueError) as e:
        # bad flags, tasks or policy path: one line, no traceback (ConfigError and TaskError are ValueErrors)
        if os.environ.get("TERMRL_DEBUG"):
            raise
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
