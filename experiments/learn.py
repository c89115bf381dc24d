"""`make learn`: multi-turn learning, judged on held-out instances of the generated task family.

    python -m experiments.learn                              # preset cpu-learn-multiturn, 2 ranks
    python -m experiments.learn --demonstrations 8 -- --steps 4  # settings.py knobs; after `--`: train.py flags
    python -m experiments.learn --no-train                   # evaluate OUT/warm_start/hf and OUT/train/hf again
    python -m experiments.learn_single                       # the one-turn experiment (`make learn-single`)

1. generate (tasks/family.py): train instances, seeds 0..train_instances-1 of the train split, into OUT/tasks/train;
   held-out instances, seeds 0..eval_instances-1 of the eval split, into OUT/tasks/eval; family.check_disjoint
   refuses the two sets if they share a generator seed;
2. warm start (experiments/warm_start.py) on the first `demonstrations` train instances only (the eval folder is
   named as eval_tasks, so a demonstration of an eval instance is refused): the oracle acted out through the agent
   loop, sft_epochs of masked cross-entropy at sft_lr, exported to OUT/warm_start/hf. Light on purpose: a warm
   start that already solves everything leaves GRPO nothing to show;
3. GRPO: torchrun train.py --preset PRESET --tasks OUT/tasks/train --policy.path OUT/warm_start/hf
   --out-dir OUT/train [train.py flags], under bookkeeping/launch.py (Ctrl-C: a clean stop, nothing evaluated);
4. evaluate (evaluate.evaluate) on the held-out instances, with the preset's policy, rollout, sandbox and reward
   sections and a seed training never used: the warm start and warm start + GRPO, k episodes per instance each
   (and the base, base_k each); the control: both policies at rollout.max_turns = 1, control_k each;
5. per policy: mean reward with a 95% percentile-bootstrap interval, resolved rate with a 95% Wilson interval,
   turns per episode and stop reasons; the flow share of GRPO's resolved episodes (flow_share); training's seconds
   per step from OUT/train/metrics.jsonl (step_timings);
6. OUT/learning.json, OUT/learning.png and one verdict line: learning is shown when GRPO's resolved-rate
   interval lies wholly above the warm start's; the line also says whether the flow is real (>= 90% of resolved
   episodes carry a revealed value into a later command) and whether the control stays at or below 2%.
"""

import asyncio
import copy
import dataclasses
import json
import re
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import configs
import evaluate
import sandbox
from bookkeeping.sanitise import install_log_sanitiser
from experiments import settings
from experiments import warm_start as warm_start_lib
from experiments.learn_single import TrainFailed, TrainStopped, policy_stats, run_train
from sandboxing import hosts
from tasks import family, select_tasks
from tasks.checks import read_oracle_turns

ROOT = Path(__file__).resolve().parent.parent
# the flow is real when at least this share of the resolved episodes carried a revealed value forward
FLOW_REAL = 0.90
# the control (one turn) may resolve at most this share: the tasks need their turns
CONTROL_MAX = 0.02

# -----------------------------------------------------------------------------
# the flow share (pure)


def revealed_patterns(tasks: list) -> dict[str, list[str]]:
    """task id -> the capture regexes of its oracle_turns.json (tasks/checks.read_oracle_turns): each finds, in an
    observation, a value (a path, a program, a key, the code) that a later command of the oracle needs.
    Raises TaskError for a task without oracle_turns.json (every family instance has one)."""
    out = {}
    for task in tasks:
        if task.oracle_turns is None:
            raise configs.ConfigError(
                f"tasks: {task.id} has no oracle_turns.json, so its revealed values are unknown"
            )
        steps = read_oracle_turns(task.id, Path(task.oracle_turns))
        out[task.id] = [rx for step in steps for rx in step["capture"].values()]
    return out


def _commands(message: dict) -> str:
    """The bash commands one assistant message ran, joined by newlines."""
    calls = message.get("tool_calls") or []
    return "\n".join(
        str(c["arguments"].get("command", "")) for c in calls if c.get("name") == "bash"
    )


def carries_flow(messages: list[dict], patterns: list[str]) -> bool:
    """Whether an episode's conversation carried a revealed value forward: some value that a capture regex
    (group 1) finds in an observation, and that the conversation had not shown before the first assistant turn
    (the system prompt and the instruction), appears in a later assistant turn's bash command.
    messages: rollout.Trajectory.messages (dicts with role, content, tool_calls)."""
    first = next((i for i, m in enumerate(messages) if m["role"] == "assistant"), len(messages))
    given = "\n".join(str(m.get("content", "")) for m in messages[:first])
    revealed: set[str] = set()
    for message in messages[first:]:
        if message["role"] == "assistant":
            commands = _commands(message)
            if any(value in commands for value in revealed):
                return True
            continue
        for rx in patterns:
            for match in re.finditer(rx, str(message.get("content", ""))):
                if match.group(1) not in given:
                    revealed.add(match.group(1))
    return False


def flow_share(trajectories: list[dict], patterns: dict[str, list[str]]) -> dict:
    """Over the resolved, scored episodes: how many carried a revealed value into a later command (carries_flow).
    Returns {"resolved": n, "flowed": m, "share": m / n or None without a resolved episode}.
    Raises KeyError naming a task id that `patterns` lacks."""
    resolved = [t for t in trajectories if t["reward"] is not None and t["resolved"]]
    flowed = 0
    for t in resolved:
        if t["task_id"] not in patterns:
            raise KeyError(f"flow_share: no capture regexes for task {t['task_id']}")
        flowed += carries_flow(t["messages"], patterns[t["task_id"]])
    return {
        "resolved": len(resolved),
        "flowed": flowed,
        "share": flowed / len(resolved) if resolved else None,
    }


def episode_shape(trajectories: list[dict]) -> dict:
    """Turns per episode (mean) and stop reasons ({reason: episodes}) of evaluation trajectories."""
    n = len(trajectories)
    return {
        "turns_mean": sum(t["num_turns"] for t in trajectories) / n if n else 0.0,
        "stop_reasons": dict(sorted(Counter(t["stop_reason"] for t in trajectories).items())),
    }


# -----------------------------------------------------------------------------
# the verdict (pure)


def _rate(s: dict) -> str:
    lo, hi = s["resolved_rate_ci95"]
    return f"{s['resolved_rate']:.3f} [{lo:.3f},{hi:.3f}]"


def verdict(results: dict, flow: dict, control: dict) -> tuple[bool, dict, str]:
    """(shown, criteria, one line) from results {"warm_start": stats, "grpo": stats} (policy_stats on the held-out
    instances), flow (flow_share of GRPO's resolved episodes) and control {"warm_start": stats, "grpo": stats}
    at max_turns = 1. Shown: GRPO's resolved-rate 95% Wilson interval lies wholly above the warm start's.
    criteria: {"interval_above": bool, "flow_real": share >= FLOW_REAL, "control_ok": both control resolved
    rates <= CONTROL_MAX} (None where there is nothing to judge); the line says each."""
    warm, grpo = results["warm_start"], results["grpo"]
    if not warm["scored"] or not grpo["scored"]:
        which = " and ".join(
            n for n, s in (("warm start", warm), ("GRPO", grpo)) if not s["scored"]
        )
        line = f"not shown: no scored held-out episode of the {which} policy"
        return False, {"interval_above": None, "flow_real": None, "control_ok": None}, line
    above = grpo["resolved_rate_ci95"][0] > warm["resolved_rate_ci95"][1]
    below = grpo["resolved_rate_ci95"][1] < warm["resolved_rate_ci95"][0]
    head = "learning" if above else "not shown"
    relation = "non-overlapping 95% CIs" if above or below else "95% CIs overlap"
    share = flow["share"]
    flow_real = None if share is None else share >= FLOW_REAL
    flow_text = (
        "flow: no resolved episode"
        if share is None
        else f"flow {flow['flowed']}/{flow['resolved']} = {share:.0%} of resolved episodes "
        f"({'real' if flow_real else 'not real'}: >= {FLOW_REAL:.0%} needed)"
    )
    rates = [control[p]["resolved_rate"] for p in ("warm_start", "grpo")]
    control_ok = None if None in rates else max(rates) <= CONTROL_MAX
    control_text = (
        "control: no scored episode"
        if control_ok is None
        else f"control at 1 turn: warm {rates[0]:.1%}, GRPO {rates[1]:.1%} "
        f"({'ok' if control_ok else 'too high'}: <= {CONTROL_MAX:.0%})"
    )
    worse = "; GRPO is worse" if below else ""
    line = (
        f"{head}: warm start + GRPO vs warm start, resolved rate on held-out instances: "
        f"{_rate(grpo)} vs {_rate(warm)} ({relation}; {grpo['scored']} vs {warm['scored']} episodes{worse}); "
        f"{flow_text}; {control_text}"
    )
    return above, {"interval_above": above, "flow_real": flow_real, "control_ok": control_ok}, line


# -----------------------------------------------------------------------------
# training's seconds per step


def step_timings(metrics_path: Path) -> dict:
    """Means over the steps of OUT/train/metrics.jsonl: wall seconds per step (step_s) split into generation
    (generate_s: until the last generate call of rank 0's rollout ended), the rest of the rollout (rollout_s -
    generate_s: the tail of verifications and tool calls after generation), update (train_s + sync_s); and per
    episode (they overlap in time): tools_s (commands in the sandbox), verify_s (hidden tests), agent_s.
    Also turns_mean, malformed_turn_rate, zero_variance_share, stop_reasons summed, refill rounds and episodes,
    and the reward and resolved rate of the first and last step. Raises FileNotFoundError when there is no file,
    ValueError when it holds no step."""
    rows = [
        json.loads(line) for line in Path(metrics_path).read_text().splitlines() if line.strip()
    ]
    if not rows:
        raise ValueError(f"{metrics_path}: no step recorded")

    def mean(key: str) -> float:
        return sum(float(r.get(key, 0.0)) for r in rows) / len(rows)

    stops: Counter = Counter()
    for r in rows:
        stops.update(r.get("stop_reasons", {}))
    return {
        "steps": len(rows),
        "step_s": mean("step_s"),
        "generation_s": mean("generate_s"),
        "rollout_tail_s": mean("rollout_s") - mean("generate_s"),
        "update_s": mean("train_s") + mean("sync_s"),
        "tools_s_per_episode": mean("tools_s"),
        "verify_s_per_episode": mean("verify_s"),
        "agent_s_per_episode": mean("agent_s"),
        "episodes_per_step": mean("episodes"),
        "turns_mean": mean("turns_mean"),
        "malformed_turn_rate": mean("malformed_turn_rate"),
        "zero_variance_share": mean("zero_variance_share"),
        "refill_rounds": int(sum(r.get("refill_rounds", 0) for r in rows)),
        "refill_episodes": int(sum(r.get("refill_episodes", 0) for r in rows)),
        "stop_reasons": dict(sorted(stops.items())),
        "reward_first_last": [rows[0]["reward_mean"], rows[-1]["reward_mean"]],
        "resolved_first_last": [rows[0]["resolved_rate"], rows[-1]["resolved_rate"]],
    }


# -----------------------------------------------------------------------------
# the figure


def plot(learning: dict, png: Path) -> Path:
    """learning.png: resolved rate and mean reward with their 95% intervals per policy on the held-out instances."""
    import matplotlib  # optional at import time: only this figure needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = learning["results"]
    names = [p for p in ("base", "warm_start", "grpo") if p in results and results[p]["scored"]]
    fig, axes = plt.subplots(1, 2, figsize=(9, 4))
    for ax, (key, title) in zip(
        axes, (("resolved_rate", "resolved rate"), ("mean_reward", "mean reward"))
    ):
        ys = [results[p][key] for p in names]
        # clamped at 0: an interval end may sit a rounding error inside its estimate (Wilson at 0 of n)
        lows = [max(0.0, results[p][key] - results[p][f"{key}_ci95"][0]) for p in names]
        highs = [max(0.0, results[p][f"{key}_ci95"][1] - results[p][key]) for p in names]
        ax.bar(range(len(names)), ys, yerr=[lows, highs], capsize=4)
        ax.set_xticks(range(len(names)), names)
        ax.set_ylim(0, 1)
        ax.set_title(f"{title}, held-out instances (95% CI)")
    fig.suptitle(textwrap.fill(learning["verdict"]["line"], 130), fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)
    return png


# -----------------------------------------------------------------------------
# the run


def parse_args(argv: list[str]) -> tuple[settings.MultiTurnLearnConfig, list[str]]:
    """Split argv at `--`: MultiTurnLearnConfig flags before it, train.py flags after. Returns (config, train.py
    flags). Raises configs.ConfigError naming a bad field (shapes and hops by tasks/family.py's checks)."""
    cut = argv.index("--") if "--" in argv else len(argv)
    cfg = settings.parse_multiturn_learn_cli(argv[:cut], description=__doc__)
    family.check_shapes(tuple(cfg.shapes))
    family.parse_hops(cfg.hops)
    return cfg, argv[cut + 1 :]


def generate(cfg: settings.MultiTurnLearnConfig, out: Path) -> tuple[list, list]:
    """Write the train and held-out instances (tasks/family.py) under out/tasks/{train,eval} and load them;
    returns (train tasks, held-out tasks). Raises ValueError (family.check_disjoint) when they share a
    generator seed, FileExistsError when a folder holds another instance."""
    hops = family.parse_hops(cfg.hops)
    for split, n in (("train", cfg.train_instances), ("eval", cfg.eval_instances)):
        family.generate_family(out / "tasks" / split, split, range(n), cfg.shapes, hops)
    train_ids = [
        family.instance_for_seed("train", s, cfg.shapes, hops).id
        for s in range(cfg.train_instances)
    ]
    eval_ids = [
        family.instance_for_seed("eval", s, cfg.shapes, hops).id for s in range(cfg.eval_instances)
    ]
    train_tasks = select_tasks(str(out / "tasks" / "train"), tuple(train_ids))
    eval_tasks = select_tasks(str(out / "tasks" / "eval"), tuple(eval_ids))
    family.check_disjoint(train_tasks, eval_tasks)
    print(
        f"[learn] {len(train_tasks)} train and {len(eval_tasks)} held-out instances (hops {cfg.hops}, "
        f"shapes {' '.join(cfg.shapes)}; disjoint generator seeds)",
        flush=True,
    )
    return train_tasks, eval_tasks


def warm_start_config(
    cfg: settings.MultiTurnLearnConfig,
    train_cfg: configs.TrainConfig,
    demo_ids: list[str],
    out: Path,
) -> settings.WarmStartConfig:
    """The warm start's config: the preset's policy (its base model), rollout and sandbox sections, the
    demonstration instances, the held-out folder as eval_tasks (refused if they overlap), SFT at sft_epochs,
    sft_lr and sft_batch_size."""
    return settings.validate_warm_start(
        settings.WarmStartConfig(
            policy=copy.deepcopy(train_cfg.policy),
            rollout=copy.deepcopy(train_cfg.rollout),
            sandbox=copy.deepcopy(train_cfg.sandbox),
            sft=configs.SFTConfig(
                epochs=cfg.sft_epochs, lr=cfg.sft_lr, batch_size=cfg.sft_batch_size
            ),
            tasks=str(out / "tasks" / "train"),
            task_ids=tuple(demo_ids),
            eval_tasks=str(out / "tasks" / "eval"),
            out_dir=str(out / "warm_start"),
            run_id=sandbox.RUN_ID,
            progress=False,
        )
    )


def evaluate_policy(
    cfg: settings.MultiTurnLearnConfig,
    train_cfg: configs.TrainConfig,
    policy_path: str,
    eval_dir: Path,
    k: int,
    max_turns: int,
    out: Path,
) -> list[dict]:
    """evaluate.evaluate of one policy on every held-out instance (k episodes each, rollout.max_turns =
    max_turns) with the preset's sections and cfg.seed; returns its trajectories (out/trajectories.jsonl)."""
    ecfg = configs.EvalConfig(
        policy=dataclasses.replace(train_cfg.policy, path=policy_path),
        tasks=str(eval_dir),
        k=k,
        out_dir=str(out),
        seed=cfg.seed,
        run_id=sandbox.RUN_ID,
        progress=False,
        rollout=dataclasses.replace(train_cfg.rollout, max_turns=max_turns),
        sandbox=copy.deepcopy(train_cfg.sandbox),
        reward=train_cfg.reward,
        allow_errors=True,
    )
    asyncio.run(evaluate.evaluate(configs.validate_eval(ecfg)))
    return [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]


def run_multiturn_experiment(cfg: settings.MultiTurnLearnConfig, rest: list[str]) -> dict:
    """Steps 1-6 of the module docstring. Returns the learning.json dict (also written)."""
    out = Path(cfg.out_dir)
    t_start = time.perf_counter()
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    train_tasks, eval_tasks = generate(cfg, out)
    seconds["generate"] = time.perf_counter() - t0
    train_dir, eval_dir = out / "tasks" / "train", out / "tasks" / "eval"
    train_argv = [
        "--preset",
        cfg.preset,
        "--tasks",
        str(train_dir),
        "--policy.path",
        str(out / "warm_start" / "hf"),
        "--out-dir",
        str(out / "train"),
        *([] if "--resume" in rest else ["--overwrite"]),
        *rest,
    ]
    # the preset as train.py will see it (paths unchecked: the warm start is not there yet); the warm start
    # starts from the preset's policy, or from a --policy.path given after `--`
    train_cfg = configs.parse_cli(train_argv, check_paths=False)
    base_path = configs.PRESETS[cfg.preset].policy.path
    if "--policy.path" in rest:
        base_path = rest[rest.index("--policy.path") + 1]
    train_cfg.policy.path = base_path

    demo_ids = [t.id for t in train_tasks[: cfg.demonstrations]]
    warm_record = None
    if cfg.train:
        t0 = time.perf_counter()
        warm_record = warm_start_lib.warm_start(warm_start_config(cfg, train_cfg, demo_ids, out))
        seconds["warm_start"] = time.perf_counter() - t0
        seconds["grpo"] = run_train(cfg.nproc, train_argv)
    elif (out / "warm_start" / "warm_start.json").is_file():
        warm_record = json.loads((out / "warm_start" / "warm_start.json").read_text())

    policies = {"warm_start": str(out / "warm_start" / "hf"), "grpo": str(out / "train" / "hf")}
    if cfg.base_k:
        policies = {"base": base_path, **policies}
    t0 = time.perf_counter()
    trajectories: dict[str, list[dict]] = {}
    results, shapes, control = {}, {}, {}
    for name, path in policies.items():
        k = cfg.base_k if name == "base" else cfg.k
        trajs = evaluate_policy(
            cfg, train_cfg, path, eval_dir, k, train_cfg.rollout.max_turns, out / "eval" / name
        )
        trajectories[name] = trajs
        results[name] = policy_stats(trajs, cfg.bootstrap_resamples)
        shapes[name] = episode_shape(trajs)
    for name in ("warm_start", "grpo"):
        trajs = evaluate_policy(
            cfg,
            train_cfg,
            policies[name],
            eval_dir,
            cfg.control_k,
            1,
            out / "eval" / f"control_{name}",
        )
        control[name] = policy_stats(trajs, cfg.bootstrap_resamples)
    seconds["evaluate"] = time.perf_counter() - t0
    patterns = revealed_patterns(eval_tasks)
    flow = flow_share(trajectories["grpo"], patterns)
    flow_warm = flow_share(trajectories["warm_start"], patterns)
    shown, criteria, line = verdict(results, flow, control)
    metrics = out / "train" / "metrics.jsonl"
    seconds["total"] = time.perf_counter() - t_start
    learning = {
        "config": {
            **dataclasses.asdict(cfg),
            "train_argv": train_argv,
            "steps": train_cfg.steps,
            "lr": train_cfg.lr,
            "group_size": train_cfg.grpo.group_size,
            "tasks_per_step": train_cfg.tasks_per_step,
            "refill_rounds": train_cfg.grpo.refill_rounds,
            "max_turns": train_cfg.rollout.max_turns,
            "max_tokens_per_turn": train_cfg.rollout.max_tokens_per_turn,
            "temperature": train_cfg.rollout.temperature,
            "train_seed": train_cfg.seed,
            "train_ids": [t.id for t in train_tasks],
            "demonstration_ids": demo_ids,
            "eval_ids": [t.id for t in eval_tasks],
        },
        "policies": policies,
        "warm_start": warm_record,
        "results": results,
        "episodes": shapes,
        "flow": {"grpo": flow, "warm_start": flow_warm},
        "control": control,
        "verdict": {"shown": shown, **criteria, "line": line},
        "training": step_timings(metrics) if metrics.is_file() else None,
        "seconds": seconds,
    }
    (out / "learning.json").write_text(json.dumps(learning, indent=2))
    plot(learning, out / "learning.png")
    print(f"[learn] wrote {out / 'learning.json'} and {out / 'learning.png'}", flush=True)
    print(line, flush=True)
    return learning


def main(argv: list[str] | None = None) -> int:
    """CLI entry. Returns 0 when the run completed (whatever the verdict) or training was stopped cleanly by a
    signal (nothing evaluated), 1 when training failed. Raises configs.ConfigError naming a bad field (before
    anything runs)."""
    install_log_sanitiser()  # the evaluations' episode errors carry container text
    cfg, rest = parse_args(sys.argv[1:] if argv is None else argv)
    Path(cfg.out_dir).mkdir(parents=True, exist_ok=True)
    sandbox_cfg = configs.PRESETS[cfg.preset].sandbox
    for line in hosts.configure(sandbox_cfg.docker_hosts, 2 * sandbox_cfg.memory_mb << 20):
        print(line, file=sys.stderr)
    try:
        run_multiturn_experiment(cfg, rest)
    except TrainFailed as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except TrainStopped as e:
        print(f"[learn] {e}", flush=True)
    finally:
        # the warm start's and the evaluations' containers; train.py reaps its own
        sandbox.reap(run_id=sandbox.RUN_ID)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (configs.ConfigError, ValueError, FileExistsError) as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
