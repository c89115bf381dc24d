"""`make learn`: multi-turn learning, judged on held-out instances of the generated task family.

    python -m experiments.learn                              # preset cpu-learn-multiturn, 2 ranks
    python -m experiments.learn --demonstrations 8 -- --steps 4  # settings.py knobs; after `--`: train.py flags
    python -m experiments.learn --no-train                   # evaluate OUT/warm_start/hf and OUT/train/hf again
    python -m experiments.learn --no-progress                # no progress bars (tqdm, stderr)
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
import random
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
from experiments import counterfactual as counterfactual_lib
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


def carried_values(messages: list[dict], patterns: list[str]) -> set[str]:
    """The revealed values an episode's conversation carried forward: each a value that a capture regex
    (group 1) finds in an observation, that the conversation had not shown before the first assistant turn
    (the system prompt and the instruction), and that a later assistant turn's bash command uses. A command
    that writes the answer file (family.ANSWER) is left out: writing the code read last is no hop, so only
    the values that led to another read count. messages: rollout.Trajectory.messages (dicts with role,
    content, tool_calls)."""
    first = next((i for i, m in enumerate(messages) if m["role"] == "assistant"), len(messages))
    given = "\n".join(str(m.get("content", "")) for m in messages[:first])
    revealed: set[str] = set()
    carried: set[str] = set()
    for message in messages[first:]:
        if message["role"] == "assistant":
            commands = "\n".join(
                line for line in _commands(message).splitlines() if family.ANSWER not in line
            )
            carried |= {value for value in revealed if value in commands}
            continue
        for rx in patterns:
            for match in re.finditer(rx, str(message.get("content", ""))):
                if match.group(1) not in given:
                    revealed.add(match.group(1))
    return carried


def carries_flow(messages: list[dict], patterns: list[str]) -> bool:
    """Whether an episode carried at least one revealed value into a later read (carried_values)."""
    return bool(carried_values(messages, patterns))


def flow_share(
    trajectories: list[dict], patterns: dict[str, list[str]], hops: dict[str, int]
) -> dict:
    """Over the resolved, scored episodes of instances with at least 2 hops (a 1-hop instance has no value
    to carry but the code, whose write is left out): how many carried a revealed value into a later read
    (carries_flow), and per hop count h the share of the h - 1 values that lead to a read that the
    episodes carried (carried_values). Returns {"resolved": n, "flowed": m, "share": m / n or None without
    such an episode, "by_hops": {h: {"resolved", "flowed", "hop_share"}}}. patterns, hops: task id ->
    capture regexes (revealed_patterns), hops (task meta). Raises KeyError naming a task id that either
    lacks."""
    resolved = [t for t in trajectories if t["reward"] is not None and t["resolved"]]
    flowed = 0
    counted = 0
    by_hops: dict[int, dict] = {}
    for t in resolved:
        if t["task_id"] not in patterns or t["task_id"] not in hops:
            raise KeyError(f"flow_share: no capture regexes or hops for task {t['task_id']}")
        h = hops[t["task_id"]]
        if h < 2:
            continue
        carried = carried_values(t["messages"], patterns[t["task_id"]])
        counted += 1
        flowed += bool(carried)
        cell = by_hops.setdefault(h, {"resolved": 0, "flowed": 0, "values": 0})
        cell["resolved"] += 1
        cell["flowed"] += bool(carried)
        # the code is among the values only if a read used it; cap at the h - 1 values that lead on
        cell["values"] += min(len(carried), h - 1)
    for h, cell in by_hops.items():
        cell["hop_share"] = cell.pop("values") / (cell["resolved"] * (h - 1))
    return {
        "resolved": counted,
        "flowed": flowed,
        "share": flowed / counted if counted else None,
        "by_hops": dict(sorted(by_hops.items())),
    }


def episode_shape(trajectories: list[dict]) -> dict:
    """Turns per episode (mean) and stop reasons ({reason: episodes}) of evaluation trajectories."""
    n = len(trajectories)
    return {
        "turns_mean": sum(t["num_turns"] for t in trajectories) / n if n else 0.0,
        "stop_reasons": dict(sorted(Counter(t["stop_reason"] for t in trajectories).items())),
    }


# -----------------------------------------------------------------------------
# the instance-level paired bootstrap (pure)


def instance_means(trajectories: list[dict]) -> dict[str, float]:
    """task id -> resolved share of its scored episodes (the k episodes of one instance count as one
    observation: they share the instance, so they are not independent). Errored episodes (reward None) are
    left out; an instance without a scored episode is absent."""
    runs: dict[str, list[bool]] = {}
    for t in trajectories:
        if t["reward"] is not None:
            runs.setdefault(t["task_id"], []).append(bool(t["resolved"]))
    return {task: sum(v) / len(v) for task, v in sorted(runs.items())}


def paired_bootstrap(
    a: dict[str, float], b: dict[str, float], resamples: int = 10_000, seed: int = 0
) -> dict:
    """The percentile bootstrap of the paired difference b - a over instances (Efron & Tibshirani 1993, An
    Introduction to the Bootstrap, ch. 13; paired: the instances are resampled with replacement and each
    keeps both its values, so what the instances share cancels). a, b: instance -> per-instance mean over
    its episodes (instance_means) for two policies on the same instances. Returns {"instances": n,
    "a": mean of a, "b": mean of b, "diff": mean of b - a, "ci95": [2.5th, 97.5th percentile of the
    resampled mean differences]}. Raises ValueError naming the instances only one policy has, or when there
    is none."""
    if set(a) != set(b):
        only = sorted(set(a) ^ set(b))
        raise ValueError(f"paired_bootstrap: instances scored for one policy only: {only[:5]}")
    if not a:
        raise ValueError("paired_bootstrap: no instance scored for either policy")
    tasks = sorted(a)
    diffs = [b[t] - a[t] for t in tasks]
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(resamples))
    lo = means[int(0.025 * (resamples - 1))]
    hi = means[int(round(0.975 * (resamples - 1)))]
    return {
        "instances": n,
        "a": sum(a[t] for t in tasks) / n,
        "b": sum(b[t] for t in tasks) / n,
        "diff": sum(diffs) / n,
        "ci95": [lo, hi],
    }


def cell_of(task) -> str:
    """A generated instance's (shape, hops) cell as a key: `pointer-h3`."""
    return f"{task.meta['shape']}-h{task.meta['hops']}"


def by_cell(trajectories: list[dict], cells: dict[str, str]) -> dict[str, dict]:
    """Per (shape, hops) cell: {"instances", "resolved_rate"} with the rate the mean of the per-instance
    means (instance_means). cells: task id -> cell_of. Raises KeyError naming a task id cells lacks."""
    out: dict[str, list[float]] = {}
    for task, mean in instance_means(trajectories).items():
        if task not in cells:
            raise KeyError(f"by_cell: no (shape, hops) cell for task {task}")
        out.setdefault(cells[task], []).append(mean)
    return {
        c: {"instances": len(v), "resolved_rate": sum(v) / len(v)} for c, v in sorted(out.items())
    }


def paired_by_cell(
    a: list[dict], b: list[dict], cells: dict[str, str], resamples: int, seed: int = 0
) -> dict[str, dict]:
    """paired_bootstrap of policy b over policy a (trajectories) overall ("all", which also lists the
    "unpaired" instances scored for one policy only, left out) and within each (shape, hops) cell. With no
    instance scored for both, "all" is {"instances": 0, "diff": None, "ci95": None, "unpaired": [...]}:
    said in learning.json, not raised after the whole evaluation ran."""
    ma, mb = instance_means(a), instance_means(b)
    common = set(ma) & set(mb)
    if not common:
        return {
            "all": {
                "instances": 0,
                "diff": None,
                "ci95": None,
                "unpaired": sorted(set(ma) ^ set(mb)),
            }
        }
    out = {"all": paired_bootstrap(*_keep(ma, mb, common), resamples, seed)}
    # an instance scored for one policy only (its episodes errored) has no pair: counted, not hidden
    out["all"]["unpaired"] = sorted(set(ma) ^ set(mb))
    for cell in sorted({cells[t] for t in common}):
        keep = {t for t in common if cells[t] == cell}
        out[cell] = paired_bootstrap(*_keep(ma, mb, keep), resamples, seed)
    return out


def _keep(a: dict, b: dict, tasks: set) -> tuple[dict, dict]:
    return {t: a[t] for t in tasks}, {t: b[t] for t in tasks}


def held_out_shape_result(
    cfg, trajectories: dict[str, list[dict]], cells: dict[str, str]
) -> dict | None:
    """Leave-one-shape-out: GRPO over the warm start (paired_bootstrap) on the instances of the shape
    training never saw, apart from the rest; None without a held-out shape."""
    if not cfg.held_out_shape:
        return None
    ours = {t for t, c in cells.items() if c.startswith(f"{cfg.held_out_shape}-h")}
    warm, grpo = instance_means(trajectories["warm_start"]), instance_means(trajectories["grpo"])
    common = ours & set(warm) & set(grpo)
    if not common:
        return {"shape": cfg.held_out_shape, "paired": None}
    paired = paired_bootstrap(*_keep(warm, grpo, common), cfg.bootstrap_resamples)
    return {"shape": cfg.held_out_shape, "paired": paired}


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
    if cfg.held_out_shape and (cfg.held_out_shape not in cfg.shapes or len(cfg.shapes) < 2):
        raise configs.ConfigError(
            f"held_out_shape = {cfg.held_out_shape!r}: must be one of shapes "
            f"({' '.join(cfg.shapes)}), which must keep another shape to train on"
        )
    return cfg, argv[cut + 1 :]


def generate(cfg: settings.MultiTurnLearnConfig, out: Path) -> tuple[list, list]:
    """Write the train and held-out instances (tasks/family.py) under out/tasks/{train,eval} and load them;
    returns (train tasks, held-out tasks). Raises ValueError (family.check_disjoint) when they share a
    generator seed, FileExistsError when a folder holds another instance."""
    hops = family.parse_hops(cfg.hops)
    # leave-one-shape-out: training never sees the held-out shape; evaluation sees every shape
    train_shapes = tuple(s for s in cfg.shapes if s != cfg.held_out_shape)
    family.generate_family(
        out / "tasks" / "train", "train", range(cfg.train_instances), train_shapes, hops
    )
    family.generate_family(
        out / "tasks" / "eval", "eval", range(cfg.eval_instances), cfg.shapes, hops
    )
    train_ids = [
        family.instance_for_seed("train", s, train_shapes, hops).id
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
            progress=cfg.progress,
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
    task_ids: tuple[str, ...] = (),
) -> list[dict]:
    """evaluate.evaluate of one policy on the held-out instances task_ids of eval_dir (k episodes each,
    rollout.max_turns = max_turns) with the preset's sections and cfg.seed; returns its trajectories
    (out/trajectories.jsonl)."""
    ecfg = configs.EvalConfig(
        policy=dataclasses.replace(train_cfg.policy, path=policy_path),
        tasks=str(eval_dir),
        task_ids=task_ids,
        k=k,
        out_dir=str(out),
        seed=cfg.seed,
        run_id=sandbox.RUN_ID,
        progress=cfg.progress,
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
    # the capture regexes and cells before any evaluation: a task without them fails here, not after it
    patterns = revealed_patterns(eval_tasks)
    hops = {t.id: int(t.meta["hops"]) for t in eval_tasks}
    cells = {t.id: cell_of(t) for t in eval_tasks}
    eval_ids = tuple(t.id for t in eval_tasks)
    t0 = time.perf_counter()
    trajectories: dict[str, list[dict]] = {}
    results, shapes, control = {}, {}, {}
    for name, path in policies.items():
        k = cfg.base_k if name == "base" else cfg.k
        trajs = evaluate_policy(
            cfg,
            train_cfg,
            path,
            eval_dir,
            k,
            train_cfg.rollout.max_turns,
            out / "eval" / name,
            eval_ids,
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
            eval_ids,
        )
        control[name] = policy_stats(trajs, cfg.bootstrap_resamples)
    seconds["evaluate"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    counterfactual = counterfactual_lib.counterfactual(
        policies,
        eval_tasks[: counterfactual_lib.LEARN_INSTANCES],
        train_cfg.policy,
        train_cfg.rollout,
        train_cfg.sandbox,
        n=counterfactual_lib.LEARN_SAMPLES,
        seed=cfg.seed,
        resamples=cfg.bootstrap_resamples,
        run_id=sandbox.RUN_ID,
        progress=cfg.progress,
        samples_path=out / "counterfactual_samples.jsonl",
    )
    seconds["counterfactual"] = time.perf_counter() - t0
    flow = flow_share(trajectories["grpo"], patterns, hops)
    flow_warm = flow_share(trajectories["warm_start"], patterns, hops)
    shown, criteria, line = verdict(results, flow, control)
    cell_results = {name: by_cell(trajs, cells) for name, trajs in trajectories.items()}
    paired = paired_by_cell(
        trajectories["warm_start"], trajectories["grpo"], cells, cfg.bootstrap_resamples
    )
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
        "cells": cell_results,
        "paired_grpo_minus_warm_start": paired,
        "held_out_shape": held_out_shape_result(cfg, trajectories, cells),
        "episodes": shapes,
        "flow": {"grpo": flow, "warm_start": flow_warm},
        "control": control,
        "counterfactual": counterfactual,
        "verdict": {"shown": shown, **criteria, "line": line},
        "training": step_timings(metrics) if metrics.is_file() else None,
        "seconds": seconds,
    }
    (out / "learning.json").write_text(json.dumps(learning, indent=2))
    plot(learning, out / "learning.png")
    print(f"[learn] wrote {out / 'learning.json'} and {out / 'learning.png'}", flush=True)
    both = paired["all"]
    if both["instances"]:
        print(
            f"[learn] paired over {both['instances']} held-out instances (instance-level bootstrap): "
            f"GRPO - warm start = {both['diff']:+.3f} [{both['ci95'][0]:+.3f},{both['ci95'][1]:+.3f}]",
            flush=True,
        )
    else:
        print(
            "[learn] paired: no held-out instance has a scored episode of both the warm start and GRPO "
            f"(scored for one only: {len(both['unpaired'])})",
            flush=True,
        )
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
