"""`make learn-single`: does one-turn training help? Train the CPU default, then evaluate base and trained.

    python -m experiments.learn_single                              # preset cpu-learn, 2 ranks: ~31 min at load <= 4 on 2 cores
    python -m experiments.learn_single --k 4 -- --steps 2           # LearnSingleConfig knobs (settings.py); after `--`: train.py flags
    python -m experiments.learn_single --no-train                   # evaluate <out_dir>/train/hf again

1. train: torchrun --nproc_per_node=NPROC train.py --preset PRESET --out-dir OUT/train [train.py flags], under
   bookkeeping/launch.py (Ctrl-C: a clean stop, exit 0, nothing evaluated); a new run replaces OUT/train's
   checkpoints (--overwrite) unless the train.py flags hold --resume;
2. evaluate (evaluate.evaluate) the base policy (the preset's policy.path) and the trained one (OUT/train/hf),
   sampling exactly as training did (its policy, rollout, sandbox and reward sections) with a seed training
   never used: k episodes of each trained task, heldout_k of each easy task not trained on;
3. per policy and task set: mean reward with a 95% percentile-bootstrap interval, resolved rate with a 95%
   Wilson interval, episode counts (errored episodes are counted, never scored 0);
4. OUT/learning.json, OUT/learning.png and one verdict line: learning is shown when the trained policy's
   mean-reward interval on the trained tasks lies wholly above the base policy's.

Both policies see the same sampling seeds (paired), and each task the same number of episodes, so the
intervals over episodes are conservative for the mean over these tasks.
"""  # noqa: E501

import asyncio
import dataclasses
import json
import math
import os
import shlex
import signal
import sys
import textwrap
import time
from pathlib import Path

import numpy as np

import configs
import evaluate
import sandbox
from bookkeeping import launch
from bookkeeping.sanitise import install_log_sanitiser
from experiments import settings
from tasks import select_tasks

ROOT = Path(__file__).resolve().parent.parent
Z95 = 1.959963984540054  # standard normal 0.975 quantile

# -----------------------------------------------------------------------------
# statistics (pure)


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (Wilson, 1927): 95% for the default z.

        center = (p + z^2 / 2n) / (1 + z^2 / n),  half = z sqrt(p (1 - p) / n + z^2 / 4n^2) / (1 + z^2 / n)

    e.g. 3 of 10 -> (0.1078, 0.6032). Raises ValueError unless 0 <= successes <= n and n >= 1."""
    if not (n >= 1 and 0 <= successes <= n):
        raise ValueError(
            f"wilson_interval: need 0 <= successes <= n and n >= 1, got {successes} of {n}"
        )
    p, z2 = successes / n, z * z
    center = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, center - half), min(1.0, center + half)


def bootstrap_mean_interval(
    values: list[float], resamples: int = 10_000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean (Efron & Tibshirani, 1993): `resamples` resamples with
    replacement (numpy, seeded: the same values give the same interval). Chosen over a t interval because
    rewards are bounded and skewed (mostly 0 for a weak policy). Raises ValueError for no values."""
    if not values:
        raise ValueError("bootstrap_mean_interval: no values")
    x = np.asarray(values, dtype=np.float64)
    idx = np.random.default_rng(seed).integers(0, len(x), size=(resamples, len(x)))
    means = x[idx].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def policy_stats(trajectories: list[dict], resamples: int = 10_000) -> dict:
    """Summary of one policy on one task set from evaluation trajectories (dicts with task_id, reward: None when
    the episode errored, resolved): episodes, errors, scored, mean_reward and mean_reward_ci95, resolved_rate and
    resolved_rate_ci95 (over scored episodes; None without any), mean reward per task."""
    scored = [t for t in trajectories if t["reward"] is not None]
    rewards = [float(t["reward"]) for t in scored]
    resolved = sum(bool(t["resolved"]) for t in scored)
    per_task: dict[str, list[float]] = {}
    for t in scored:
        per_task.setdefault(t["task_id"], []).append(float(t["reward"]))
    out = {
        "episodes": len(trajectories),
        "errors": len(trajectories) - len(scored),
        "scored": len(scored),
        "mean_reward": None,
        "mean_reward_ci95": None,
        "resolved_rate": None,
        "resolved_rate_ci95": None,
        "per_task_mean_reward": {k: sum(v) / len(v) for k, v in sorted(per_task.items())},
    }
    if scored:
        out.update(
            mean_reward=sum(rewards) / len(rewards),
            mean_reward_ci95=list(bootstrap_mean_interval(rewards, resamples)),
            resolved_rate=resolved / len(scored),
            resolved_rate_ci95=list(wilson_interval(resolved, len(scored))),
        )
    return out


def _fmt(s: dict) -> str:
    lo, hi = s["mean_reward_ci95"]
    return f"{s['mean_reward']:.2f} [{lo:.2f},{hi:.2f}]"


def verdict(results: dict) -> tuple[bool, str]:
    """(shown, one line) from results {"trained_tasks": {"base": stats, "trained": stats}, "heldout_tasks": ...}
    (policy_stats). Shown: on the trained tasks the trained policy's mean-reward 95% interval lies wholly
    above the base policy's. The held-out tasks are reported on the same line, never part of the decision."""
    base, trained = results["trained_tasks"]["base"], results["trained_tasks"]["trained"]
    held = results.get("heldout_tasks")
    tail = ""
    if held and held["base"]["scored"] and held["trained"]["scored"]:
        tail = f"; easy tasks not trained on: {_fmt(held['trained'])} vs {_fmt(held['base'])}"
    if not base["scored"] or not trained["scored"]:
        which = " and ".join(
            n for n, s in (("base", base), ("trained", trained)) if not s["scored"]
        )
        return False, f"not shown: no scored episode of the {which} policy on the trained tasks"
    pair = f"{_fmt(trained)} vs {_fmt(base)}"
    n = f"mean reward, {trained['scored']} vs {base['scored']} episodes"
    if trained["mean_reward_ci95"][0] > base["mean_reward_ci95"][1]:
        return (
            True,
            f"learning: trained beats base on trained tasks: {pair} (non-overlapping 95% CIs; {n}){tail}",
        )
    if trained["mean_reward_ci95"][1] < base["mean_reward_ci95"][0]:
        return (
            False,
            f"not shown: trained is worse than base on trained tasks: {pair} (non-overlapping 95% CIs; {n}){tail}",
        )
    return (
        False,
        f"not shown: trained vs base on trained tasks: {pair} (95% CIs overlap; {n}){tail}",
    )


# -----------------------------------------------------------------------------
# the figure


def plot(learning: dict, png: Path) -> Path:
    """learning.png: mean reward and resolved rate with their 95% intervals, base vs trained, per task set."""
    import matplotlib  # optional at import time: only this figure needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sets = [k for k in ("trained_tasks", "heldout_tasks") if k in learning["results"]]
    fig, axes = plt.subplots(1, 2, figsize=(9, 4))
    for ax, (key, title) in zip(
        axes, (("mean_reward", "mean reward"), ("resolved_rate", "resolved rate"))
    ):
        for j, policy in enumerate(("base", "trained")):
            xs, ys, errs = [], [], [[], []]
            for i, name in enumerate(sets):
                s = learning["results"][name][policy]
                if s[key] is None:
                    continue
                lo, hi = s[f"{key}_ci95"]
                xs.append(i + (j - 0.5) * 0.36)
                ys.append(s[key])
                errs[0].append(s[key] - lo)
                errs[1].append(hi - s[key])
            ax.bar(xs, ys, width=0.34, yerr=errs, capsize=4, label=policy)
        ax.set_xticks(
            range(len(sets)),
            [
                {"trained_tasks": "trained tasks", "heldout_tasks": "easy tasks not trained on"}[n]
                for n in sets
            ],
        )
        ax.set_ylim(0, 1)
        ax.set_title(f"{title} (95% CI)")
    axes[0].legend()
    fig.suptitle(textwrap.fill(learning["verdict"]["line"], 130), fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)
    return png


# -----------------------------------------------------------------------------
# the run


def parse_args(
    argv: list[str],
) -> tuple[settings.LearnSingleConfig, configs.TrainConfig, list[str]]:
    """Split argv at `--`: LearnSingleConfig flags before it, train.py flags after (with --overwrite: a new
    training run replaces OUT/train's, unless they hold --resume). Returns (learn config, the
    training config those flags give (configs.parse_cli, as train.py will see it), the train.py argv).
    Raises configs.ConfigError naming a bad field, or when a held-out task is also a training task."""
    cut = argv.index("--") if "--" in argv else len(argv)
    cfg = settings.parse_learn_single_cli(argv[:cut], description=__doc__)
    rest = argv[cut + 1 :]
    fresh = [] if "--resume" in rest else ["--overwrite"]  # an experiment trains from scratch
    train_argv = [
        "--preset",
        cfg.preset,
        "--out-dir",
        str(Path(cfg.out_dir) / "train"),
        *fresh,
        *rest,
    ]
    train_cfg = configs.parse_cli(train_argv)
    trained = {
        t.id for t in select_tasks(train_cfg.tasks, train_cfg.task_ids, train_cfg.difficulties)
    }
    both = sorted(trained & set(cfg.heldout_task_ids))
    configs.need(not both, "heldout_task_ids", cfg.heldout_task_ids, f"{both} are training tasks")
    hf = Path(train_cfg.out_dir) / "hf"
    configs.need(
        cfg.train or (hf / "config.json").is_file(),
        "train",
        cfg.train,
        f"no trained policy in {hf} to evaluate",
    )
    return cfg, train_cfg, train_argv


class TrainFailed(Exception):
    """train.py exited with a non-zero status (its own output says why)."""


class TrainStopped(Exception):
    """train.py was stopped by a signal (cleanly: its last line says what was kept)."""


def train(cfg: settings.LearnSingleConfig, train_argv: list[str]) -> float:
    """Run train.py under torchrun (cfg.nproc ranks) as run_train does, its stop line saying how to
    resume this command; returns seconds. Raises as run_train."""
    again = [a for a in sys.argv[1:] if a != "--resume"]
    again += [*([] if "--" in again else ["--"]), "--resume"]
    os.environ.setdefault(
        launch.RESUME_CMD_ENV, shlex.join(["python", "-m", "experiments.learn_single", *again])
    )
    return run_train(cfg.nproc, train_argv)


def run_train(nproc: int, train_argv: list[str]) -> float:
    """Run train.py under torchrun (nproc ranks, bookkeeping/launch.py: Ctrl-C stops it cleanly) in
    the repository root; returns seconds. Raises TrainFailed with train.py's exit code when it
    fails, TrainStopped when a signal stopped it."""
    t0 = time.perf_counter()
    cmd = ["train.py", *train_argv]
    print(f"[learn] {shlex.join(launch.torchrun_cmd(nproc, cmd))}", flush=True)
    code, signum = launch.run(nproc, cmd, cwd=str(ROOT))
    if code != 0:
        raise TrainFailed(f"train.py exited with {code}; nothing evaluated")
    if signum is not None:
        raise TrainStopped(f"training stopped by {signal.Signals(signum).name}; nothing evaluated")
    return time.perf_counter() - t0


def evaluate_policy(
    cfg: settings.LearnSingleConfig,
    train_cfg: configs.TrainConfig,
    policy_path: str,
    task_ids: tuple,
    k: int,
    out: Path,
) -> list[dict]:
    """evaluate.evaluate of one policy on task_ids (k episodes each) with the training sections and cfg.seed;
    returns its trajectories (out/trajectories.jsonl) as dicts."""
    ecfg = configs.EvalConfig(
        policy=dataclasses.replace(train_cfg.policy, path=policy_path),
        tasks=train_cfg.tasks,
        task_ids=tuple(task_ids),
        k=k,
        out_dir=str(out),
        seed=cfg.seed,
        run_id=sandbox.RUN_ID,
        rollout=train_cfg.rollout,
        sandbox=train_cfg.sandbox,
        reward=train_cfg.reward,
    )
    asyncio.run(evaluate.evaluate(configs.validate_eval(ecfg)))
    return [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]


def run_single_turn_experiment(
    cfg: settings.LearnSingleConfig, train_cfg: configs.TrainConfig, train_argv: list[str]
) -> dict:
    """Train (unless --no-train), evaluate both policies on both task sets, write learning.json and
    learning.png under cfg.out_dir, print the verdict. Returns the learning.json dict."""
    out = Path(cfg.out_dir)
    train_s = train(cfg, train_argv) if cfg.train else 0.0
    trained_ids = tuple(
        t.id for t in select_tasks(train_cfg.tasks, train_cfg.task_ids, train_cfg.difficulties)
    )
    policies = {"base": train_cfg.policy.path, "trained": str(Path(train_cfg.out_dir) / "hf")}
    sets = {"trained_tasks": (trained_ids, cfg.k)}
    if cfg.heldout_task_ids:
        sets["heldout_tasks"] = (cfg.heldout_task_ids, cfg.heldout_k)
    t0 = time.perf_counter()
    results: dict = {name: {} for name in sets}
    for name, (ids, k) in sets.items():
        for policy, path in policies.items():
            trajs = evaluate_policy(cfg, train_cfg, path, ids, k, out / "eval" / f"{name}_{policy}")
            results[name][policy] = policy_stats(trajs, cfg.bootstrap_resamples)
    shown, line = verdict(results)
    learning = {
        "config": {
            "preset": cfg.preset,
            "train_argv": train_argv,
            "steps": train_cfg.steps,
            "lr": train_cfg.lr,
            "group_size": train_cfg.grpo.group_size,
            "tasks_per_step": train_cfg.tasks_per_step,
            "max_turns": train_cfg.rollout.max_turns,
            "max_tokens_per_turn": train_cfg.rollout.max_tokens_per_turn,
            "temperature": train_cfg.rollout.temperature,
            "eval_seed": cfg.seed,
            "train_seed": train_cfg.seed,
            "trained_task_ids": list(trained_ids),
            "heldout_task_ids": list(cfg.heldout_task_ids),
            "k": cfg.k,
            "heldout_k": cfg.heldout_k,
            "bootstrap_resamples": cfg.bootstrap_resamples,
        },
        "policies": policies,
        "results": results,
        "verdict": {"shown": shown, "line": line},
        "seconds": {"train": train_s, "evaluate": time.perf_counter() - t0},
    }
    (out / "learning.json").write_text(json.dumps(learning, indent=2))
    plot(learning, out / "learning.png")
    print(f"[learn] wrote {out / 'learning.json'} and {out / 'learning.png'}", flush=True)
    print(line, flush=True)
    return learning


def main(argv: list[str] | None = None) -> int:
    """CLI entry. Returns 0 when the run completed (whatever the verdict) or training was stopped
    cleanly by a signal (nothing evaluated), 1 when training failed.
    Raises configs.ConfigError naming a bad field (before anything runs)."""
    install_log_sanitiser()  # the evaluations' episode errors carry container text
    cfg, train_cfg, train_argv = parse_args(sys.argv[1:] if argv is None else argv)
    Path(cfg.out_dir).mkdir(parents=True, exist_ok=True)
    try:
        run_single_turn_experiment(cfg, train_cfg, train_argv)
    except TrainFailed as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except TrainStopped as e:
        print(f"[learn] {e}", flush=True)
    finally:
        sandbox.reap(run_id=sandbox.RUN_ID)  # the evaluations' containers; train.py reaps its own
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except configs.ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
