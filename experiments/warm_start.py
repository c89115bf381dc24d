"""A warm start from demonstrations: the policy a GRPO run starts from when the base cannot start it.

    python -m experiments.warm_start --tasks DIR [--task-ids ...] [--eval-tasks DIR] [--sft.epochs 3]
    python -m experiments.warm_start --tasks DIR --sft-best.tasks VALIDATION_DIR   # and the best SFT-only
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
   seconds per demonstration episode and per epoch, the NLL of the action tokens before and after);
4. with --sft-best.tasks VALIDATION (never the evaluation set): the best SFT-only policy from the same
   demonstrations, the baseline GRPO must beat to show what RL adds beyond imitation (sft_best): from
   the same base, the same SFT recipe epoch after epoch (lr --sft-best.lr, else sft.lr); after every
   --sft-best.eval-every epochs the policy is evaluated on the validation tasks (evaluate.evaluate,
   k episodes per instance) and its resolved rate taken over instances; the best evaluation is kept
   (ties: the earlier), training stops after --sft-best.patience evaluations without improvement but
   never before --sft-best.min-steps optimizer steps (early_stop); the best exported to
   OUT/sft_best/hf, every evaluation recorded in OUT/sft_best/sft_best.json.

Its data never includes evaluation instances: the task set is taken as given (task ids), and with
--eval-tasks a demonstration task whose id or instruction is in that evaluation set is refused.
Generated instances (tasks/family.py) of more than --demo-max-hops hops (default 2) are left out of
the demonstrations and counted, so the demonstrations stop at a known horizon.
"""

import asyncio
import contextlib
import copy
import dataclasses
import json
import os
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

import torch

import configs
import evaluate
import sandbox as sandbox_lib
from agent.chat import ChatFormat
from agent.oracle import OracleReplies
from bookkeeping.sanitise import install_log_sanitiser, printable
from engines import ScriptedEngine
from experiments import settings
from experiments.learn_single import bootstrap_mean_interval
from hf import weights
from learner.packing import Sample
from learner.sft import demonstrations, masked_nll, sft_epochs, train_sft
from rollout import EpisodeOptions, Trajectory, run_episodes
from sandboxing import admission, hosts
from tasks import family, select_tasks
from tasks.oracle import oracle_steps


def refuse_eval_overlap(tasks: list, eval_tasks: list, name: str = "eval_tasks") -> None:
    """Raise ConfigError naming the tasks when a demonstration task shares its id or its
    instruction with a task of the evaluation set (a procedurally generated instance with the same
    seed has the same instruction). name: the field that named the evaluation set, for the message
    (eval_tasks, or sft_best.tasks for the validation set)."""
    ids = {t.id for t in eval_tasks}
    instructions = {t.instruction for t in eval_tasks}
    overlap = sorted(t.id for t in tasks if t.id in ids or t.instruction in instructions)
    if overlap:
        raise configs.ConfigError(
            f"tasks: {len(overlap)} demonstration task(s) are in the evaluation set {name} "
            f"(same id or instruction): {overlap[:8]}"
        )
    # a generated instance renamed or reworded is still the same instance: its generator seed says so
    generated = [t for t in tasks if t.meta.get("family") == family.FAMILY]
    generated_eval = [t for t in eval_tasks if t.meta.get("family") == family.FAMILY]
    if generated and generated_eval:
        try:
            family.check_disjoint(generated, generated_eval)
        except ValueError as e:
            raise configs.ConfigError(f"tasks: the evaluation set {name}: {e}") from None


def demonstration_tasks(tasks: list, max_hops: int) -> tuple[list, list[str]]:
    """(the tasks to demonstrate, the ids of those left out): a generated instance (tasks/family.py,
    meta "hops") of more than max_hops hops is left out, so the demonstrations stop at a known horizon
    and what a policy does beyond it was not imitated; a task without hops is kept. Raises
    ConfigError naming demo_max_hops when none is left."""
    over = {t.id for t in tasks if int(t.meta.get("hops", 0)) > max_hops}
    kept = [t for t in tasks if t.id not in over]
    if not kept:
        raise configs.ConfigError(
            f"demo_max_hops = {max_hops}: every one of the {len(tasks)} task(s) has more hops; "
            "none is left to demonstrate"
        )
    return kept, sorted(over)


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


# ----------------------------------------------------------------------------- the best SFT-only policy


def early_stop(
    rates: list[float], steps: list[int], patience: int, min_steps: int
) -> tuple[int, bool]:
    """The early-stopping rule over the validation evaluations so far: (index of the chosen
    evaluation, whether to stop now). Chosen: the highest validation resolved rate, the earlier on a
    tie (a later evaluation must be strictly better to replace it). Stop: the last `patience`
    evaluations brought no improvement over the chosen one, and the last came at or after min_steps
    optimizer steps. rates, steps: per evaluation in order, steps cumulative. Raises ValueError for
    no evaluation or lists of unequal length. E.g. rates [0.2, 0.5, 0.5, 0.4] at steps [6, 12, 18, 24]
    with patience 2: (1, True); with min_steps 30 as well: (1, False)."""
    if not rates or len(rates) != len(steps):
        raise ValueError(
            f"early_stop: need one step per validation rate, got {len(rates)} rates and "
            f"{len(steps)} steps"
        )
    chosen = 0
    for i, rate in enumerate(rates):
        if rate > rates[chosen]:
            chosen = i
    stale = len(rates) - 1 - chosen
    return chosen, stale >= patience and steps[-1] >= min_steps


def validation_rate(trajectories: list[dict], resamples: int) -> dict:
    """One evaluation's validation resolved rate, over instances: each instance's resolved share of
    its scored episodes (its k episodes count once: they share the instance, so they are not
    independent), the mean of those, and its 95% percentile-bootstrap interval resampling instances
    (learn_single.bootstrap_mean_interval). Episodes that errored (reward None) are left out and
    counted. trajectories: evaluate.evaluate's trajectories.jsonl rows (task_id, reward, resolved).
    Returns {"resolved_rate", "resolved_rate_ci95", "instances", "episodes", "errors"}. Raises
    ValueError when no episode was scored: a failed evaluation is not a rate of 0."""
    runs: dict[str, list[bool]] = {}
    for t in trajectories:
        if t["reward"] is not None:
            runs.setdefault(t["task_id"], []).append(bool(t["resolved"]))
    errors = sum(t["reward"] is None for t in trajectories)
    if not runs:
        raise ValueError(
            f"sft_best: none of the {len(trajectories)} validation episodes was scored "
            f"({errors} errored); the checkpoint cannot be judged"
        )
    means = [sum(v) / len(v) for v in runs.values()]
    return {
        "resolved_rate": sum(means) / len(means),
        "resolved_rate_ci95": list(bootstrap_mean_interval(means, resamples)),
        "instances": len(means),
        "episodes": len(trajectories),
        "errors": errors,
    }


def evaluate_on_validation(cfg: settings.WarmStartConfig, policy: Path, out: Path) -> list[dict]:
    """evaluate.evaluate of the policy folder on the validation tasks (cfg.sft_best.tasks and
    task_ids, k episodes each, seed cfg.sft_best.seed) with the warm start's policy, rollout and
    sandbox sections; the reward's tests alone (no judge: only resolved counts here). Returns its
    trajectories (out/trajectories.jsonl)."""
    ecfg = configs.EvalConfig(
        policy=dataclasses.replace(cfg.policy, path=str(policy)),
        tasks=cfg.sft_best.tasks,
        task_ids=cfg.sft_best.task_ids,
        k=cfg.sft_best.k,
        out_dir=str(out),
        device=cfg.device,
        seed=cfg.sft_best.seed,
        run_id=cfg.run_id,
        progress=cfg.progress,
        allow_errors=True,
        rollout=copy.deepcopy(cfg.rollout),
        sandbox=copy.deepcopy(cfg.sandbox),
    )
    asyncio.run(evaluate.evaluate(configs.validate_eval(ecfg)))
    return [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]


def sft_best(
    cfg: settings.WarmStartConfig, samples: list[Sample], model_dir: Path, out: Path
) -> dict:
    """The best SFT-only policy from `samples` (the warm start's demonstrations): step 4 of the module
    docstring, into out/sft_best (emptied first). Only the chosen checkpoint is kept on disk. Returns
    the record written to out/sft_best/sft_best.json: the settings, "evaluations" (per evaluation:
    step, epoch, train_nll (nats per action token over that epoch, as trained), resolved_rate,
    resolved_rate_ci95 over instances, instances, episodes, errors, seconds), "chosen" (the kept
    evaluation and its index), "steps" trained, "stop_reason" ("patience" or "max_epochs").
    Raises ConfigError when max_epochs cannot reach min_steps, ValueError when an evaluation scored
    no episode (validation_rate)."""
    best_cfg = cfg.sft_best
    sft_cfg = dataclasses.replace(cfg.sft, lr=best_cfg.lr or cfg.sft.lr)
    per_epoch = -(-len(samples) // sft_cfg.batch_size)
    if best_cfg.max_epochs * per_epoch < best_cfg.min_steps:
        raise configs.ConfigError(
            f"sft_best.min_steps = {best_cfg.min_steps}: more than sft_best.max_epochs "
            f"({best_cfg.max_epochs}) x {per_epoch} optimizer steps per epoch "
            f"({len(samples)} demonstrations, batch {sft_cfg.batch_size})"
        )
    folder = out / "sft_best"
    shutil.rmtree(folder, ignore_errors=True)
    checkpoints = folder / "checkpoints"
    device = torch.device(cfg.device)
    model = weights.load_hf(model_dir, dtype=torch.float32, device=device)
    t_start = time.monotonic()
    evaluations: list[dict] = []
    chosen = 0
    step = 0
    stop_reason = "max_epochs"
    epochs = sft_epochs(model, samples, sft_cfg, device, best_cfg.max_epochs, cfg.progress)
    with contextlib.closing(epochs):
        for record in epochs:
            step += record["steps"]
            last = record["epoch"] == best_cfg.max_epochs
            if record["epoch"] % best_cfg.eval_every and not last:
                continue
            policy = weights.save_hf(model, checkpoints / f"step-{step}", tokenizer_dir=model_dir)
            t0 = time.monotonic()
            trajectories = evaluate_on_validation(cfg, policy, folder / "eval" / f"step-{step}")
            evaluations.append(
                {
                    "step": step,
                    "epoch": record["epoch"],
                    "train_nll": record["nll"],
                    **validation_rate(trajectories, best_cfg.bootstrap_resamples),
                    "seconds": time.monotonic() - t0,
                }
            )
            chosen, stop = early_stop(
                [e["resolved_rate"] for e in evaluations],
                [e["step"] for e in evaluations],
                best_cfg.patience,
                best_cfg.min_steps,
            )
            # one checkpoint on disk at a time: the chosen one
            for path in checkpoints.iterdir():
                if path.name != f"step-{evaluations[chosen]['step']}":
                    shutil.rmtree(path)
            e = evaluations[-1]
            best = evaluations[chosen]
            print(
                f"[sft_best] epoch {e['epoch']}, step {step}: train NLL {e['train_nll']:.3f}, "
                f"validation resolved {e['resolved_rate']:.3f} [{e['resolved_rate_ci95'][0]:.3f},"
                f"{e['resolved_rate_ci95'][1]:.3f}] over {e['instances']} instances; best so far "
                f"step {best['step']} ({best['resolved_rate']:.3f})",
                file=sys.stderr,
                flush=True,
            )
            if stop:
                stop_reason = "patience"
                break
    best = evaluations[chosen]
    policy = folder / "hf"
    (checkpoints / f"step-{best['step']}").rename(policy)
    checkpoints.rmdir()
    result = {
        "policy": str(policy),
        "base": str(model_dir),
        "validation_tasks": best_cfg.tasks,
        "validation_task_ids": list(best_cfg.task_ids),
        "demonstrations": len(samples),
        "sft": dataclasses.asdict(sft_cfg),
        "k": best_cfg.k,
        "seed": best_cfg.seed,
        "eval_every": best_cfg.eval_every,
        "patience": best_cfg.patience,
        "min_steps": best_cfg.min_steps,
        "max_epochs": best_cfg.max_epochs,
        "steps": step,
        "stop_reason": stop_reason,
        "evaluations": evaluations,
        "chosen": {"index": chosen, **best},
        "seconds": time.monotonic() - t_start,
    }
    (folder / "sft_best.json").write_text(json.dumps(result, indent=2))
    print(
        f"[sft_best] chose step {best['step']} (epoch {best['epoch']}, validation resolved "
        f"{best['resolved_rate']:.3f}) of {len(evaluations)} evaluations over {step} steps, "
        f"stopped by {stop_reason}; policy: {policy}"
    )
    return result


def warm_start(cfg: settings.WarmStartConfig) -> dict:
    """Demonstrate, train, export (the module docstring's steps 1-3), then the best SFT-only policy
    when cfg.sft_best.tasks names a validation set (step 4, sft_best). cfg must be validated
    (settings.validate_warm_start). Returns the record written to OUT/warm_start.json, whose "policy"
    is the exported folder and "sft_best" the SFT-best record's path (or None). Raises ConfigError
    when the task set overlaps eval_tasks or sft_best.tasks, keeps no task under demo_max_hops or a
    task has no oracle (TaskError), ValueError when no demonstration resolved its task."""
    if cfg.device.startswith("cuda") and not torch.cuda.is_available():
        raise configs.ConfigError(f"device = {cfg.device!r}: this machine has no CUDA device")
    tasks, over_max_hops = demonstration_tasks(
        select_tasks(cfg.tasks, cfg.task_ids, cfg.difficulties), cfg.demo_max_hops
    )
    if over_max_hops:
        print(
            f"demonstrations: {len(over_max_hops)} task(s) of more than {cfg.demo_max_hops} hops "
            f"left out (demo_max_hops), {len(tasks)} kept",
            file=sys.stderr,
        )
    if cfg.eval_tasks:
        refuse_eval_overlap(tasks, select_tasks(cfg.eval_tasks, cfg.eval_task_ids))
    if cfg.sft_best.tasks:
        validation = select_tasks(cfg.sft_best.tasks, cfg.sft_best.task_ids)
        refuse_eval_overlap(tasks, validation, "sft_best.tasks")
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
        "demo_max_hops": cfg.demo_max_hops,
        "left_out_over_max_hops": over_max_hops,
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
        "sft_best": str(out / "sft_best" / "sft_best.json") if cfg.sft_best.tasks else None,
    }
    (out / "warm_start.json").write_text(json.dumps(record, indent=2))
    print(
        f"sft: NLL of the action tokens {nll_before:.3f} -> {nll_after:.3f} nats over "
        f"{cfg.sft.epochs} epochs ({sum(e['seconds'] for e in epochs) / len(epochs):.1f} s per epoch)"
    )
    print(f"policy: {policy} (train.py --policy.path {policy}; evaluate.py --model {policy})")
    if cfg.sft_best.tasks:
        sft_best(cfg, samples, model_dir, out)
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
