"""`make learn`: multi-turn learning, judged on held-out instances of the generated task family.

    python -m experiments.learn                              # preset cpu-learn-multiturn, 2 ranks
    python -m experiments.learn --demonstrations 8 -- --steps 4  # settings.py knobs; after `--`: train.py flags
    python -m experiments.learn --no-train                   # evaluate OUT/warm_start/hf and OUT/train/hf again
    python -m experiments.learn --no-train --evaluate-on test  # the test split: once per trained run
    python -m experiments.learn --no-progress                # no progress bars (tqdm, stderr)
    python -m experiments.learn_single                       # the one-turn experiment (`make learn-single`)

1. generate (tasks/family.py): seeds 0..train_instances-1 of the train split into OUT/tasks/train, seeds
   0..eval_instances-1 of the validation split into OUT/tasks/validation and of the family's eval split into
   OUT/tasks/test; family.check_disjoint refuses two splits that share a generator seed, and each folder's
   family.json refuses a folder written for another experiment;
2. warm start (experiments/warm_start.py) on the first `demonstrations` train instances only (the evaluated
   folder is named as eval_tasks, so a demonstration of an evaluated instance is refused): the oracle acted out
   through the agent loop, sft_epochs of masked cross-entropy at sft_lr, exported to OUT/warm_start/hf;
3. GRPO: torchrun train.py --preset PRESET --tasks OUT/tasks/train --policy.path OUT/warm_start/hf
   --out-dir OUT/train [train.py flags], under bookkeeping/launch.py (Ctrl-C: a clean stop, nothing evaluated);
4. evaluate (evaluate.evaluate) on the split evaluate_on (validation, where every choice of knobs is made; test
   once per trained run, recorded in OUT/test_evaluated.json with the training config's hash, a second look
   refused unless --reevaluate-test), with the preset's policy, rollout, sandbox and reward sections and a seed
   training never used: the warm start and warm start + GRPO, k episodes per instance each (and the base,
   base_k each); the control: the shortcut suite (tasks/shortcuts.py) on the first shortcut_instances
   instances of that split, with the oracle acted out turn by turn;
5. per policy: resolved share per instance (the mean of its k episodes) per (shape, hops) cell, GRPO - warm
   start as an instance-level paired bootstrap overall and per cell; mean reward and resolved rate over episodes
   (Wilson; descriptive only); the flow share of resolved episodes (flow_share) and per hop, the final write
   excluded (flow_per_hop); per training step entropy, clip fractions, zero-variance share and turns from
   OUT/train/metrics.jsonl (training_curves) and its seconds per step (step_timings);
6. OUT/learning.json and OUT/learning.png (learning_test.* for the test split; the episodes under
   OUT/eval/<split>/<policy>) and one verdict line: learning is shown when the paired 95% interval of
   GRPO - warm start lies wholly above 0; the line names the split and its instance count, and says whether the
   flow is real (>= 90% of resolved episodes carry a revealed value into a later read) and whether the control
   holds (every shortcut within a turn resolves at most 5%, the oracle 100%).
"""

import asyncio
import copy
import dataclasses
import hashlib
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
from reward import verify
from sandboxing import hosts
from tasks import family, select_tasks, shortcuts
from tasks.checks import read_oracle_turns

ROOT = Path(__file__).resolve().parent.parent
# the flow is real when at least this share of the resolved episodes carried a revealed value forward
FLOW_REAL = 0.90

# -----------------------------------------------------------------------------
# the flow share (pure)


def revealed_patterns(per_hop: dict[str, list[list[str]]]) -> dict[str, list[str]]:
    """task id -> every capture regex of its oracle_turns.json, from hop_patterns' result: each finds, in an
    observation, a value (a path, a program, a key, the code) that a later command of the oracle needs."""
    return {task_id: [rx for hop in hops for rx in hop] for task_id, hops in per_hop.items()}


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


def hop_patterns(tasks: list) -> dict[str, list[list[str]]]:
    """task id -> the capture regexes of each read of its oracle_turns.json in order: entry h - 1 finds the
    value hop h reveals (the next note, program or key; the code at the last hop). Raises ConfigError for a
    task without oracle_turns.json."""
    out = {}
    for task in tasks:
        if task.oracle_turns is None:
            raise configs.ConfigError(
                f"tasks: {task.id} has no oracle_turns.json, so its revealed values are unknown"
            )
        steps = read_oracle_turns(task.id, Path(task.oracle_turns))
        out[task.id] = [list(step["capture"].values()) for step in steps if step.get("capture")]
    return out


def carried_hops(messages: list[dict], hops_rx: list[list[str]]) -> list[bool]:
    """For each hop h of 1..H-1 (H = len(hops_rx)): whether a value revealed at hop h (one that hop h's
    capture regexes find, group 1, in an observation, and that the prompt before the first assistant turn
    did not hold) appears in a later bash command, every line that writes the answer file (family.ANSWER)
    left out. The last hop reveals the code, which only the final write needs, so it is not listed. Where
    two hops share one regex (the same record mark), a value counts for both. messages: as carried_values."""
    first = next((i for i, m in enumerate(messages) if m["role"] == "assistant"), len(messages))
    given = "\n".join(str(m.get("content", "")) for m in messages[:first])
    leading = hops_rx[:-1]
    revealed: list[set[str]] = [set() for _ in leading]
    carried = [False] * len(leading)
    for message in messages[first:]:
        if message["role"] == "assistant":
            commands = "\n".join(
                line for line in _commands(message).splitlines() if family.ANSWER not in line
            )
            for h, values in enumerate(revealed):
                carried[h] = carried[h] or any(v in commands for v in values)
            continue
        text = str(message.get("content", ""))
        for h, regexes in enumerate(leading):
            for rx in regexes:
                revealed[h] |= {
                    m.group(1) for m in re.finditer(rx, text) if m.group(1) not in given
                }
    return carried


def flow_per_hop(
    trajectories: list[dict],
    patterns: dict[str, list[list[str]]],
    cells: dict[str, str],
    resolved_only: bool,
) -> dict:
    """The share of episodes that carried the value of hop h into a later command, the final write
    excluded (carried_hops), per hop and per (shape, hops) cell, over the scored episodes (resolved_only:
    the resolved ones). Returns {"episodes": n, "by_hop": {h: {"episodes", "carried", "share"}},
    "by_cell": {cell: {h: {...}}}}; an episode of an H-hop instance counts at hops 1..H-1. patterns:
    hop_patterns; cells: task id -> cell_of. Raises KeyError naming a task id either lacks."""
    kept = [
        t for t in trajectories if t["reward"] is not None and (t["resolved"] or not resolved_only)
    ]
    by_hop: dict[int, dict] = {}
    by_cell: dict[str, dict[int, dict]] = {}
    for t in kept:
        if t["task_id"] not in patterns or t["task_id"] not in cells:
            raise KeyError(f"flow_per_hop: no capture regexes or cell for task {t['task_id']}")
        for h, carried in enumerate(carried_hops(t["messages"], patterns[t["task_id"]]), 1):
            for table in (by_hop, by_cell.setdefault(cells[t["task_id"]], {})):
                row = table.setdefault(h, {"episodes": 0, "carried": 0})
                row["episodes"] += 1
                row["carried"] += carried
    for table in (by_hop, *by_cell.values()):
        for row in table.values():
            row["share"] = row["carried"] / row["episodes"]
    return {
        "episodes": len(kept),
        "by_hop": dict(sorted(by_hop.items())),
        "by_cell": {c: dict(sorted(t.items())) for c, t in sorted(by_cell.items())},
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


def control_judgement(control: dict) -> tuple[bool | None, str]:
    """(control_ok, its clause) from the shortcut suite's summary (shortcut_control): ok when every
    shortcut that fits one turn of the run (at most turn_tokens tokens on every instance) resolves at most
    shortcuts.SHORTCUT_MAX of the instances and the oracle acted out turn by turn resolves all of them;
    None without an instance, and None when a shortcut that fits a turn was cut at
    shortcuts.COMMAND_TIMEOUT_S on an instance (control["timed_out"]): its "not resolved" there is no
    measurement. A shortcut over the turn cap cannot be issued in the rollout: its rate is reported
    (learning.json) and its name listed, not judged."""
    n = control["instances"]
    if not n:
        return None, "control: no instance in the shortcut suite"
    cap = control["turn_tokens"]
    fits = {name: r for name, r in control["rates"].items() if control["tokens"][name] <= cap}
    over = sorted(set(control["rates"]) - set(fits))
    worst = max(fits, key=fits.get) if fits else None
    oracle = control["oracle_rate"]
    cut = sorted(name for name in fits if control.get("timed_out", {}).get(name))
    if cut:
        return None, (
            f"control: shortcut suite on {n} {control['split']} instances not judged: "
            f"{' '.join(cut)} cut at {shortcuts.COMMAND_TIMEOUT_S:.0f} s"
        )
    ok = (worst is None or fits[worst] <= shortcuts.SHORTCUT_MAX) and oracle == 1.0
    worst_text = "no shortcut fits a turn" if worst is None else f"worst {worst} {fits[worst]:.0%}"
    return ok, (
        f"control: shortcut suite on {n} {control['split']} instances, within a {cap}-token turn "
        f"{worst_text} (<= {shortcuts.SHORTCUT_MAX:.0%} needed), oracle turn by turn {oracle:.0%} "
        f"(100% needed): {'ok' if ok else 'FAILS'}"
        + (f"; over a turn, not judged: {' '.join(over)}" if over else "")
    )


def verdict(
    paired: dict, flow: dict, control: dict, split: str, k: int, over_sft_best: dict | None = None
) -> tuple[bool, dict, str]:
    """(shown, criteria, one line). The headline is the instance-level paired bootstrap of GRPO over the warm
    start (paired: paired_by_cell(...)["all"], on the `split` instances, k episodes each): learning is shown
    only when the 95% interval of the mean per-instance difference lies wholly above 0. flow: flow_share of
    GRPO's resolved episodes; control: the shortcut suite's summary (control_judgement). criteria:
    {"interval_above": lower bound > 0, "flow_real": share >= FLOW_REAL, "control_ok"} (None where there is
    nothing to judge); the line names the instance count and says each. With over_sft_best (paired_by_cell(
    sft_best, grpo)["all"], the best SFT-only policy from the same demonstrations) learning also needs that
    interval wholly above 0: GRPO must beat more imitation, not only the warm start; criteria then has
    "above_sft_best" (None when no instance pairs)."""
    n = paired["instances"]
    if not n:
        line = (
            f"not shown: no {split} instance has a scored episode of both the warm start and GRPO "
            f"(scored for one only: {len(paired.get('unpaired', []))})"
        )
        return False, {"interval_above": None, "flow_real": None, "control_ok": None}, line
    lo, hi = paired["ci95"]
    above, below = lo > 0, hi < 0
    head = "learning" if above else "not shown"
    relation = "above 0" if above else "below 0: GRPO is worse" if below else "contains 0"
    share = flow["share"]
    flow_real = None if share is None else share >= FLOW_REAL
    flow_text = (
        "flow: no resolved episode"
        if share is None
        else f"flow {flow['flowed']}/{flow['resolved']} = {share:.0%} of resolved episodes "
        f"({'real' if flow_real else 'not real'}: >= {FLOW_REAL:.0%} needed)"
    )
    control_ok, control_text = control_judgement(control)
    unpaired = len(paired.get("unpaired", []))
    unpaired_text = f", {unpaired} scored for one policy only left out" if unpaired else ""
    criteria = {"interval_above": above, "flow_real": flow_real, "control_ok": control_ok}
    sft_text = ""
    if over_sft_best is not None:
        if over_sft_best["instances"]:
            s_lo, s_hi = over_sft_best["ci95"]
            criteria["above_sft_best"] = s_lo > 0
            where = "above 0" if s_lo > 0 else "below 0" if s_hi < 0 else "contains 0"
            sft_text = (
                f"; GRPO - SFT-best on {over_sft_best['instances']} instances: "
                f"{over_sft_best['diff']:+.3f} [{s_lo:+.3f},{s_hi:+.3f}], {where}"
            )
        else:
            criteria["above_sft_best"] = None
            sft_text = "; GRPO - SFT-best: no instance scored for both"
        above = above and criteria["above_sft_best"] is True
        head = "learning" if above else "not shown"
    line = (
        f"{head}: GRPO - warm start, resolved share per instance on {n} {split} instances "
        f"(k = {k} episodes each{unpaired_text}; paired bootstrap over instances): "
        f"{paired['diff']:+.3f} [{lo:+.3f},{hi:+.3f}], 95% interval {relation} "
        f"(warm start {paired['a']:.3f}, GRPO {paired['b']:.3f}){sft_text}; {flow_text}; {control_text}"
    )
    return above, criteria, line


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
        "sync_s": mean("sync_s"),
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


# what training logged per step that says whether it stayed healthy (RAGEN's echo trap: entropy, reward
# variance and turns collapse together); metrics.jsonl keys (bookkeeping/logs.step_record, grpo.py)
CURVES = ("entropy", "clip_frac_low", "clip_frac_high", "zero_variance_share", "turns_mean")


def training_curves(metrics_path: Path) -> dict[str, list]:
    """Per training step of OUT/train/metrics.jsonl: {"step": [...], and per key of CURVES its values}: the
    policy's mean token entropy (nats) over the loss tokens, the clip fractions below 1 - clip_low (A < 0)
    and above 1 + clip_high (A > 0), the share of groups whose rewards were all equal, and assistant turns
    per episode; None at a step that did not log the key. Raises FileNotFoundError when there is no file."""
    rows = [
        json.loads(line) for line in Path(metrics_path).read_text().splitlines() if line.strip()
    ]
    out: dict[str, list] = {"step": [r["step"] for r in rows]}
    for key in CURVES:
        out[key] = [r.get(key) for r in rows]
    return out


# -----------------------------------------------------------------------------
# the figure


def plot(learning: dict, png: Path) -> Path:
    """learning.png: resolved rate and mean reward with their 95% intervals per policy on the evaluated
    split (top), and, when learning["curves"] holds training's steps, entropy, clip fractions, zero-variance
    share and turns per episode per step (bottom)."""
    import matplotlib  # optional at import time: only this figure needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = learning["results"]
    split = learning.get("split", "held-out")
    curves = learning.get("curves")
    names = [
        p
        for p in ("base", "warm_start", "sft_best", "grpo")
        if p in results and results[p]["scored"]
    ]
    rows = 2 if curves and curves["step"] else 1
    fig, axes = plt.subplots(rows, 2, figsize=(9, 4 * rows), squeeze=False)
    for ax, (key, title) in zip(
        axes[0], (("resolved_rate", "resolved rate"), ("mean_reward", "mean reward"))
    ):
        ys = [results[p][key] for p in names]
        # clamped at 0: an interval end may sit a rounding error inside its estimate (Wilson at 0 of n)
        lows = [max(0.0, results[p][key] - results[p][f"{key}_ci95"][0]) for p in names]
        highs = [max(0.0, results[p][f"{key}_ci95"][1] - results[p][key]) for p in names]
        ax.bar(range(len(names)), ys, yerr=[lows, highs], capsize=4)
        ax.set_xticks(range(len(names)), names)
        ax.set_ylim(0, 1)
        ax.set_title(f"{title}, {split} episodes (95% CI)")
    if rows == 2:
        steps = curves["step"]
        shares, scale = axes[1]
        for key in ("clip_frac_low", "clip_frac_high", "zero_variance_share"):
            shares.plot(steps, [float("nan") if v is None else v for v in curves[key]], label=key)
        shares.set_ylim(0, 1)
        shares.set_xlabel("training step")
        shares.legend(fontsize=7)
        for key in ("entropy", "turns_mean"):
            scale.plot(steps, [float("nan") if v is None else v for v in curves[key]], label=key)
        scale.set_xlabel("training step")
        scale.legend(fontsize=7)
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
    if cfg.lora_rank and any(a.split("=")[0].startswith("--lora.") for a in argv[cut + 1 :]):
        raise configs.ConfigError(
            "lora_rank: a --lora.* flag after `--` makes every GRPO run a LoRA run; "
            "give --lora-rank for a LoRA run beside the full fine-tune, or the --lora.* flags alone"
        )
    if cfg.train_seeds and "--seed" in argv[cut + 1 :]:
        raise configs.ConfigError(
            "train_seeds: a --seed after `--` sets the training seed too; "
            "give the seeds in one place"
        )
    return cfg, argv[cut + 1 :]


def seed_runs(train_argv: list[str], seeds: tuple[int, ...], out: Path) -> dict[str, list[str]]:
    """policy name -> train.py argv of each GRPO run: without seeds {"grpo": train_argv}; with seeds the first
    is "grpo" into out/train, each other s "grpo_seed<s>" into out/train-seed<s>, every run with --seed s
    appended (train_argv's --out-dir value replaced)."""
    if not seeds:
        return {"grpo": train_argv}
    runs = {}
    for i, seed in enumerate(seeds):
        name, folder = ("grpo", "train") if i == 0 else (f"grpo_seed{seed}", f"train-seed{seed}")
        runs[name] = [*with_out_dir(train_argv, out / folder), "--seed", str(seed)]
    return runs


def with_out_dir(train_argv: list[str], folder: Path) -> list[str]:
    """train_argv with the value of its --out-dir replaced by folder (a run of its own). Raises ValueError
    when train_argv has no --out-dir."""
    at = train_argv.index("--out-dir") + 1
    return [*train_argv[:at], str(folder), *train_argv[at + 1 :]]


def lora_runs(train_argv: list[str], rank: int, lr: float, out: Path) -> dict[str, list[str]]:
    """{} when rank is 0; else {"grpo_lora": train.py argv}: train_argv (the full fine-tune's, from the one
    warm start) with its --out-dir value replaced by out/train-lora and `--lora.rank rank --lr lr` appended
    (tyro keeps the last value given, so these override the preset's and the user's)."""
    if not rank:
        return {}
    argv = with_out_dir(train_argv, out / "train-lora")
    return {"grpo_lora": [*argv, "--lora.rank", str(rank), "--lr", repr(lr)]}


def lora_line(lora: dict, full_training: dict | None, split: str) -> str:
    """One line for the LoRA run beside the full fine-tune: its paired difference over the warm start and
    over the full fine-tune (instance-level, 95%), and its seconds per step and weight-sync seconds per
    step against the full fine-tune's (step_timings of each run's metrics.jsonl; "-" where a run has none)."""
    over_warm = lora["paired_lora_minus_warm_start"]["all"]
    over_full = lora["paired_lora_minus_full"]

    def diff(p: dict) -> str:
        if p["diff"] is None:
            return "no paired instance"
        return f"{p['diff']:+.3f} [{p['ci95'][0]:+.3f},{p['ci95'][1]:+.3f}]"

    def per_step(t: dict | None) -> str:
        return "-" if t is None else f"{t['step_s']:.1f} s/step (sync {t['sync_s']:.2f} s)"

    return (
        f"[learn] LoRA r={lora['rank']} lr {lora['lr']:g} on {over_warm['instances']} {split} instances: "
        f"GRPO-LoRA - warm start {diff(over_warm)}; GRPO-LoRA - GRPO full {diff(over_full)}; "
        f"LoRA {per_step(lora['training'])} vs full {per_step(full_training)}"
    )


def over_seeds(paired: dict[str, dict], seeds: tuple[int, ...]) -> dict | None:
    """The headline over training seeds: paired: policy name (seed_runs) -> paired_by_cell(...)["all"] of
    that GRPO run over the warm start. Returns {"seeds", "diffs", "mean", "std" (sample, n - 1; 0.0 for one
    seed), "min", "max", "shown": seeds whose 95% interval lies above 0}, or None without seeds or when a
    seed's run has no paired instance (its diff is None)."""
    diffs = [p["diff"] for p in paired.values()]
    if not seeds or None in diffs:
        return None
    n = len(diffs)
    mean = sum(diffs) / n
    std = (sum((d - mean) ** 2 for d in diffs) / (n - 1)) ** 0.5 if n > 1 else 0.0
    return {
        "seeds": list(seeds),
        "diffs": diffs,
        "mean": mean,
        "std": std,
        "min": min(diffs),
        "max": max(diffs),
        "shown": sum(p["ci95"][0] > 0 for p in paired.values()),
    }


# folder under OUT/tasks -> the family's split its instances come from (tasks/family.py SPLITS)
SPLIT_FOLDERS = {"train": "train", "validation": "validation", "test": "eval"}


def generate(cfg: settings.MultiTurnLearnConfig, out: Path) -> tuple[list, list]:
    """Write the train, validation and test instances (tasks/family.py) under out/tasks/{train,validation,
    test} (SPLIT_FOLDERS: test holds the family's eval split) and load them; returns (train tasks, tasks of
    the evaluated split cfg.evaluate_on). Raises ValueError (family.check_disjoint) when two splits share a
    generator seed, FileExistsError when a folder was written for another experiment (family.json) or holds
    another instance."""
    hops = family.parse_hops(cfg.hops)
    # leave-one-shape-out: training never sees the held-out shape; evaluation sees every shape
    train_shapes = tuple(s for s in cfg.shapes if s != cfg.held_out_shape)
    counts = {
        "train": cfg.train_instances,
        "validation": cfg.eval_instances,
        "test": cfg.eval_instances,
    }
    loaded = {}
    for folder, split in SPLIT_FOLDERS.items():
        shapes = train_shapes if folder == "train" else cfg.shapes
        seeds = range(counts[folder])
        family.generate_family(out / "tasks" / folder, split, seeds, shapes, hops)
        ids = [family.instance_for_seed(split, s, shapes, hops).id for s in seeds]
        loaded[folder] = select_tasks(str(out / "tasks" / folder), tuple(ids))
    family.check_disjoint(loaded["train"], loaded["validation"] + loaded["test"])
    family.check_disjoint(loaded["validation"], loaded["test"])
    print(
        f"[learn] {len(loaded['train'])} train, {len(loaded['validation'])} validation and "
        f"{len(loaded['test'])} test instances (hops {cfg.hops}, shapes {' '.join(cfg.shapes)}; "
        f"disjoint generator seeds); evaluating on {cfg.evaluate_on}",
        flush=True,
    )
    return loaded["train"], loaded[cfg.evaluate_on]


# -----------------------------------------------------------------------------
# the test split: once per trained run

TEST_RECORD = "test_evaluated.json"
TRAINED_RUN = "trained_run.json"
# knobs that change what is evaluated or how it is shown, never the trained policies
EVALUATION_KNOBS = {
    "out_dir",
    "eval_instances",
    "evaluate_on",
    "reevaluate_test",
    "k",
    "shortcut_instances",
    "base_k",
    "train",
    "seed",
    "bootstrap_resamples",
    "progress",
}


def training_hash(cfg: settings.MultiTurnLearnConfig, train_argv: list[str]) -> str:
    """16 hex digits of sha256 over the knobs that make the trained policies: every MultiTurnLearnConfig
    field but EVALUATION_KNOBS, and train.py's argv less --overwrite / --resume."""
    knobs = {k: v for k, v in dataclasses.asdict(cfg).items() if k not in EVALUATION_KNOBS}
    argv = [a for a in train_argv if a not in ("--overwrite", "--resume")]
    text = json.dumps({"learn": knobs, "train_argv": argv}, sort_keys=True, default=list)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def check_test_evaluation(out: Path, config_hash: str, again: bool) -> list[dict]:
    """The test evaluations recorded in out/TEST_RECORD (a JSON list of {"config_hash", "utc"}; [] without
    the file). Raises ValueError in one line when one is of this trained run (config_hash) and `again`
    (--reevaluate-test) is not given: every choice is made on validation, the test split is looked at once."""
    path = Path(out) / TEST_RECORD
    held = json.loads(path.read_text()) if path.is_file() else []
    same = [e for e in held if e["config_hash"] == config_hash]
    if same and not again:
        raise ValueError(
            f"{path}: the test split was already evaluated for this trained run "
            f"(config {config_hash}, {same[0]['utc']}); make choices with --evaluate-on validation, "
            "or look again with --reevaluate-test"
        )
    return held


def record_test_evaluation(out: Path, config_hash: str, held: list[dict]) -> list[dict]:
    """Append this test evaluation to out/TEST_RECORD (written before the evaluation starts: one that
    stops half-way has still looked); returns the list written."""
    entry = {"config_hash": config_hash, "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    records = [*held, entry]
    (Path(out) / TEST_RECORD).write_text(json.dumps(records, indent=2) + "\n")
    return records


# -----------------------------------------------------------------------------
# the control: the shortcut suite on the evaluated split


def shortcut_control(tasks: list, train_cfg: configs.TrainConfig, split: str) -> dict:
    """tasks/shortcuts.run_suite on each of `tasks` (generated instances; two at a time) in a sandbox of the
    run's sandbox section, the oracle scored by the task's hidden tests. Returns {"split", "instances",
    "task_ids", "rates": shortcut -> share resolved, "any_rate", "tokens": shortcut -> most tokens (the
    policy's tokenizer) on any instance, "turn_tokens": the rollout's max_tokens_per_turn, "oracle_rate",
    "timed_out": shortcut -> instances cut at shortcuts.COMMAND_TIMEOUT_S, "seconds"}. Raises what the
    build, the sandbox or run_suite raises (a failure is never a 0)."""
    from transformers import AutoTokenizer

    from hf.weights import resolve_model_dir

    tokenizer = AutoTokenizer.from_pretrained(resolve_model_dir(train_cfg.policy.path))
    t0 = time.perf_counter()

    async def one(task) -> shortcuts.SuiteResult:
        m = task.meta
        # the secret code, from the generator itself: the instance is a function of these four
        code = family.make_instance(m["split"], int(m["seed"]), m["shape"], int(m["hops"])).code
        async with await sandbox.start_sandbox(
            task, run_id=sandbox.RUN_ID, cfg=train_cfg.sandbox
        ) as sb:
            result = await shortcuts.run_suite(
                task, sb, tokenizer, code, train_cfg.sandbox.output_limit_bytes
            )
            report = await sb.run_tests(task.tests_dir, timeout=task.test_timeout_s)
            result.oracle_score = verify(report, task.weights).score
        return result

    async def all_of() -> list[shortcuts.SuiteResult]:
        gate = asyncio.Semaphore(2)

        async def gated(task):
            async with gate:
                return await one(task)

        return await asyncio.gather(*(gated(t) for t in tasks))

    results = asyncio.run(all_of()) if tasks else []
    rates = shortcuts.rates(results) if results else {"any": 0.0}
    any_rate = rates.pop("any")
    n = len(results)
    return {
        "split": split,
        "instances": n,
        "task_ids": [r.task_id for r in results],
        "rates": rates,
        "any_rate": any_rate,
        "tokens": {name: max(r.tokens[name] for r in results) for name in rates},
        "turn_tokens": train_cfg.rollout.max_tokens_per_turn,
        "oracle_rate": sum(r.oracle_score == 1.0 for r in results) / n if n else 0.0,
        "timed_out": {name: sum(name in r.timed_out for r in results) for name in rates},
        "seconds": time.perf_counter() - t0,
    }


def warm_start_config(
    cfg: settings.MultiTurnLearnConfig,
    train_cfg: configs.TrainConfig,
    demo_ids: list[str],
    out: Path,
) -> settings.WarmStartConfig:
    """The warm start's config: the preset's policy (its base model), rollout and sandbox sections, the
    demonstration instances, the evaluated split's folder as eval_tasks (refused if they overlap), SFT at
    sft_epochs, sft_lr and sft_batch_size."""
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
            eval_tasks=str(out / "tasks" / cfg.evaluate_on),
            out_dir=str(out / "warm_start"),
            run_id=sandbox.RUN_ID,
            progress=cfg.progress,
            demo_max_hops=cfg.demo_max_hops,
            sft_best=settings.SFTBestConfig(
                tasks=str(out / "tasks" / "validation") if cfg.sft_best else "",
                k=cfg.k,
                seed=cfg.seed,
                patience=cfg.sft_best_patience,
                min_steps=train_cfg.steps if cfg.sft_best_min_steps < 0 else cfg.sft_best_min_steps,
                max_epochs=cfg.sft_best_max_epochs,
                bootstrap_resamples=cfg.bootstrap_resamples,
            ),
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
    train_dir, eval_dir = out / "tasks" / "train", out / "tasks" / cfg.evaluate_on
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
    # the trained run's identity: this config when it trains, else the one that trained OUT's policies
    config_hash = training_hash(cfg, train_argv)
    if not cfg.train and (out / TRAINED_RUN).is_file():
        config_hash = json.loads((out / TRAINED_RUN).read_text())["config_hash"]
    # refused before an hour of training, not after it
    tests_before = (
        check_test_evaluation(out, config_hash, cfg.reevaluate_test)
        if cfg.evaluate_on == "test"
        else None
    )

    demo_ids = [t.id for t in train_tasks if int(t.meta["hops"]) <= cfg.demo_max_hops]
    demo_ids = demo_ids[: cfg.demonstrations]
    if len(demo_ids) < cfg.demonstrations:
        print(
            f"[learn] only {len(demo_ids)} train instances of at most {cfg.demo_max_hops} hops to "
            f"demonstrate (demonstrations = {cfg.demonstrations})",
            flush=True,
        )
    runs = seed_runs(train_argv, cfg.train_seeds, out)
    lora_lr = cfg.lora_lr or 10 * train_cfg.lr
    lora = lora_runs(runs["grpo"], cfg.lora_rank, lora_lr, out)
    trained = {**runs, **lora}  # every GRPO run from the warm start, each into its own folder
    warm_record = None
    if cfg.train:
        t0 = time.perf_counter()
        warm_record = warm_start_lib.warm_start(warm_start_config(cfg, train_cfg, demo_ids, out))
        seconds["warm_start"] = time.perf_counter() - t0
        for name, argv in trained.items():
            seconds[name] = run_train(cfg.nproc, argv)
        (out / TRAINED_RUN).write_text(json.dumps({"config_hash": config_hash}) + "\n")
    elif (out / "warm_start" / "warm_start.json").is_file():
        warm_record = json.loads((out / "warm_start" / "warm_start.json").read_text())

    policies = {"warm_start": str(out / "warm_start" / "hf")}
    for name, argv in trained.items():
        policies[name] = str(Path(argv[argv.index("--out-dir") + 1]) / "hf")
    if cfg.base_k:
        policies = {"base": base_path, **policies}
    if cfg.sft_best:
        policies["sft_best"] = str(out / "warm_start" / "sft_best" / "hf")
    # the capture regexes and cells before any evaluation: a task without them fails here, not after it
    per_hop = hop_patterns(eval_tasks)
    patterns = revealed_patterns(per_hop)
    hops = {t.id: int(t.meta["hops"]) for t in eval_tasks}
    cells = {t.id: cell_of(t) for t in eval_tasks}
    eval_ids = tuple(t.id for t in eval_tasks)
    if tests_before is not None:
        record_test_evaluation(out, config_hash, tests_before)
    t0 = time.perf_counter()
    trajectories: dict[str, list[dict]] = {}
    results, shapes = {}, {}
    for name, path in policies.items():
        k = cfg.base_k if name == "base" else cfg.k
        trajs = evaluate_policy(
            cfg,
            train_cfg,
            path,
            eval_dir,
            k,
            train_cfg.rollout.max_turns,
            out / "eval" / cfg.evaluate_on / name,
            eval_ids,
        )
        trajectories[name] = trajs
        results[name] = policy_stats(trajs, cfg.bootstrap_resamples)
        shapes[name] = episode_shape(trajs)
    seconds["evaluate"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    sample = eval_tasks[: cfg.shortcut_instances] if cfg.shortcut_instances else eval_tasks
    control = shortcut_control(sample, train_cfg, cfg.evaluate_on)
    seconds["control"] = time.perf_counter() - t0
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
    cell_results = {name: by_cell(trajs, cells) for name, trajs in trajectories.items()}
    paired = paired_by_cell(
        trajectories["warm_start"], trajectories["grpo"], cells, cfg.bootstrap_resamples
    )
    over_sft = (
        paired_by_cell(
            trajectories["sft_best"], trajectories["grpo"], cells, cfg.bootstrap_resamples
        )
        if cfg.sft_best
        else None
    )
    shown, criteria, line = verdict(
        paired["all"], flow, control, cfg.evaluate_on, cfg.k, over_sft and over_sft["all"]
    )
    by_seed = {
        name: paired_by_cell(
            trajectories["warm_start"], trajectories[name], cells, cfg.bootstrap_resamples
        )["all"]
        for name in runs
    }
    seeds = over_seeds(by_seed, cfg.train_seeds)
    metrics = out / "train" / "metrics.jsonl"
    lora_result = None
    if lora:
        lora_metrics = out / "train-lora" / "metrics.jsonl"
        lora_result = {
            "rank": cfg.lora_rank,
            "lr": lora_lr,
            "argv": lora["grpo_lora"],
            "paired_lora_minus_warm_start": paired_by_cell(
                trajectories["warm_start"],
                trajectories["grpo_lora"],
                cells,
                cfg.bootstrap_resamples,
            ),
            # LoRA's GRPO against the full fine-tune's, instance by instance
            "paired_lora_minus_full": paired_by_cell(
                trajectories["grpo"], trajectories["grpo_lora"], cells, cfg.bootstrap_resamples
            )["all"],
            "training": step_timings(lora_metrics) if lora_metrics.is_file() else None,
        }
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
            "config_hash": config_hash,
        },
        # every figure below is on this split's instances (the control's sample too)
        "split": cfg.evaluate_on,
        "test_evaluations_before": tests_before,
        "policies": policies,
        "warm_start": warm_record,
        "results": results,
        "cells": cell_results,
        "paired_grpo_minus_warm_start": paired,
        # every GRPO run over the warm start (one per training seed), and their mean and spread
        "paired_by_seed": by_seed,
        "over_seeds": seeds,
        "paired_grpo_minus_sft_best": over_sft,
        "lora": lora_result,
        "held_out_shape": held_out_shape_result(cfg, trajectories, cells),
        "episodes": shapes,
        "flow": {"grpo": flow, "warm_start": flow_warm},
        "flow_per_hop": {
            name: {
                "resolved": flow_per_hop(trajs, per_hop, cells, resolved_only=True),
                "every": flow_per_hop(trajs, per_hop, cells, resolved_only=False),
            }
            for name, trajs in trajectories.items()
        },
        "control": control,
        "counterfactual": counterfactual,
        "verdict": {"shown": shown, **criteria, "line": line},
        "training": step_timings(metrics) if metrics.is_file() else None,
        "curves": training_curves(metrics) if metrics.is_file() else None,
        "seconds": seconds,
    }
    # a look at the test split never overwrites the validation figures the knobs were chosen on
    stem = "learning" if cfg.evaluate_on == "validation" else f"learning_{cfg.evaluate_on}"
    (out / f"{stem}.json").write_text(json.dumps(learning, indent=2))
    plot(learning, out / f"{stem}.png")
    print(f"[learn] wrote {out / f'{stem}.json'} and {out / f'{stem}.png'}", flush=True)
    # per (shape, hops) cell; the verdict line below gives the whole split
    for cell, r in paired.items():
        if cell != "all" and r["instances"]:
            lo, hi = r["ci95"]
            print(
                f"[learn] {cell}: {r['instances']} {cfg.evaluate_on} instances, GRPO - warm start "
                f"{r['diff']:+.3f} [{lo:+.3f},{hi:+.3f}]",
                flush=True,
            )
    if seeds:
        names = ",".join(map(str, seeds["seeds"]))
        print(
            f"[learn] over training seeds {names}: GRPO - warm start mean {seeds['mean']:+.3f}, "
            f"sd {seeds['std']:.3f}, range [{seeds['min']:+.3f},{seeds['max']:+.3f}]; interval "
            f"above 0 for {seeds['shown']} of {len(seeds['seeds'])}; the verdict below is seed "
            f"{seeds['seeds'][0]}'s",
            flush=True,
        )
    if lora_result:
        print(lora_line(lora_result, learning["training"], cfg.evaluate_on), flush=True)
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
