"""Training logs: one human line per step, metrics.jsonl, the reward curve PNG, optional wandb/tensorboard."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import torch.distributed as dist

import configs


def format_step_line(step: int, steps: int, m: dict) -> str:
    """One human line per step from the metrics record (see step_record)."""
    if m.get("skipped_update"):
        learn = (
            f"no update: no loss token (groups dropped: "
            f"{m.get('groups_dropped_zero_variance', 0)} equal rewards, "
            f"{m.get('groups_dropped_failed', 0)} failed)"
        )
    else:
        learn = (
            f"loss {m['loss']:+.4f} kl {m['approx_kl']:.2e} ent {m['entropy']:.3f} "
            f"clip {m['clip_frac']:.3f}"
        )
    failed = ""
    if m.get("episodes_failed"):
        failed = f" failed {m['episodes_failed']}"
    # bookkeeping/memory.gather_peak_rss
    per_rank = m.get("rss_peak_gb_per_rank")
    rss = ""
    if per_rank:
        rss = f" | peak rss {' '.join(f'{x:.2f}' for x in per_rank)} GB"
    stops = " ".join(f"{k} {v}" for k, v in m.get("stop_reasons", {}).items())
    episodes = (
        f"turns {m.get('turns_mean', 0.0):.1f} malformed {m.get('malformed_turn_rate', 0.0):.2f} "
        f"stops {stops or '-'} | zero-variance groups {m.get('zero_variance_share', 0.0):.2f}"
    )
    refill = ""
    if m.get("refill_rounds"):
        # DAPO dynamic sampling's cost this step
        refill = (
            f" refill +{m['refill_episodes']} episodes in {m['refill_rounds']} round(s) "
            f"{m.get('refill_s', 0.0):.1f}s"
        )
    return (
        f"step {step}/{steps} | reward {m['reward_mean']:.3f}±{m['reward_std']:.3f} "
        f"resolved {m['resolved_rate']:.2f}{failed} | {episodes}{refill} | {learn} | "
        f"tokens {m['tokens']} "
        f"| rollout {m['rollout_s']:.1f}s (generate {m.get('generate_s', m['rollout_s']):.1f}s) "
        f"verify {m['verify_s']:.1f}s judge {m['judge_s']:.1f}s "
        f"train {m['train_s']:.1f}s sync {m['sync_s']:.1f}s{rss}"
    )


def append_jsonl(path: Path, record: dict) -> None:
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")


def truncate_metrics(path: Path, last_step: int) -> None:
    """Keep only metrics.jsonl records with step <= last_step (steps after a checkpoint are redone on resume)."""
    if not path.exists():
        return
    keep = [
        line
        for line in path.read_text().splitlines()
        if line.strip() and json.loads(line)["step"] <= last_step
    ]
    path.write_text("".join(line + "\n" for line in keep))


def plot_reward_curve(metrics_path: Path, png_path: Path) -> Path:
    """Reward mean ± std and resolved rate per step from metrics.jsonl, as a PNG (matplotlib Agg).
    Raises FileNotFoundError if metrics_path does not exist."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [
        json.loads(line) for line in Path(metrics_path).read_text().splitlines() if line.strip()
    ]
    steps = [r["step"] for r in rows]
    mean = np.array([r["reward_mean"] for r in rows])
    std = np.array([r["reward_std"] for r in rows])
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    ax.plot(steps, mean, marker="o", label="reward mean")
    ax.fill_between(steps, mean - std, mean + std, alpha=0.2, label="± std")
    ax.plot(steps, [r["resolved_rate"] for r in rows], marker="s", label="resolved rate")
    ax.set_xlabel("step")
    ax.set_ylim(-0.05, 1.05)
    ax.legend(loc="best")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png_path)
    plt.close(fig)
    return Path(png_path)


def open_logger(cfg: configs.TrainConfig, out_dir: Path):
    """A callable(record, step) for wandb or tensorboard, or None. Raises configs.ConfigError if the
    chosen logger is not installed (asked-for logs are never silently dropped; configs.validate
    refuses it at start-up already)."""
    if cfg.logger == "none":
        return None
    if cfg.logger == "wandb":
        try:
            import wandb
        except ImportError:
            raise configs.ConfigError("logger = 'wandb': package wandb is not installed") from None
        run = wandb.init(project="termrl", dir=str(out_dir), config=dataclasses.asdict(cfg))
        return lambda record, step: run.log(record, step=step)
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        raise configs.ConfigError(
            "logger = 'tensorboard': package tensorboard is not installed"
        ) from None
    writer = SummaryWriter(str(out_dir / "tensorboard"))

    def log(record, step):
        for k, v in record.items():
            if isinstance(v, (int, float)):
                writer.add_scalar(k, v, step)
        writer.flush()

    return log


def step_record(
    step: int, episodes: list[dict], counts: dict, train_metrics: dict, times: dict, kl_coef: float
) -> dict:
    """The metrics.jsonl record of one step from every rank's episode summaries (all_gather_object)."""
    scored = [e for e in episodes if e["reward"] is not None]
    rewards = np.array([e["reward"] for e in scored], dtype=np.float64)

    def mean(xs) -> float:
        return float(np.mean(xs)) if len(xs) else 0.0

    rec = {
        "step": step,
        "reward_mean": mean(rewards),
        "reward_std": float(rewards.std()) if len(rewards) else 0.0,
        "resolved_rate": mean([float(e["resolved"]) for e in scored]),
        "episodes": len(episodes),
        "episodes_failed": len(episodes) - len(scored),
        "truncated_rate": mean([float(e["truncated"]) for e in episodes]),
        "tampered": int(sum(e.get("tampered", False) for e in episodes)),
        "tokens": int(sum(e["tokens"] for e in episodes)),
        "generated_tokens": int(sum(e["generated"] for e in episodes)),
    }
    rec.update(episode_shape(episodes))
    rec.update(counts)
    # the share of groups that taught nothing: all their rewards equal (DAPO drops them)
    rec["zero_variance_share"] = counts.get("groups_dropped_zero_variance", 0) / max(
        1, counts.get("groups", 0)
    )
    rec.update(train_metrics)
    rec["loss"] = train_metrics.get("pg_loss", 0.0) + kl_coef * train_metrics.get("kl_loss", 0.0)
    clip_low = train_metrics.get("clip_frac_low", 0.0)
    rec["clip_frac"] = clip_low + train_metrics.get("clip_frac_high", 0.0)
    # mean seconds per episode (they overlap in time)
    for key in ("start_s", "agent_s", "tools_s", "verify_s", "judge_s"):
        rec[key] = mean([e["timings"].get(key, 0.0) for e in episodes])
    rec.update(times)
    return rec


def episode_shape(episodes: list[dict]) -> dict:
    """How a step's episodes went, from their summaries (gather_episodes): turns_mean (assistant
    turns per episode), malformed_turn_rate (malformed turns / all turns; a turn cut at
    max_tokens_per_turn without a complete action counts as one), observations_cut (observations
    cut to fit the context, summed) and stop_reasons ({reason: episodes}, by reason). Zeros and {}
    for no episode."""
    turns = sum(e["turns"] for e in episodes)
    reasons: dict[str, int] = {}
    for e in episodes:
        reasons[e["stop_reason"]] = reasons.get(e["stop_reason"], 0) + 1
    return {
        "turns_mean": turns / len(episodes) if episodes else 0.0,
        "malformed_turn_rate": sum(e["format_errors"] for e in episodes) / max(1, turns),
        "observations_cut": int(sum(e["observations_cut"] for e in episodes)),
        "stop_reasons": dict(sorted(reasons.items())),
    }


def gather_episodes(
    indices: list[int], groups: list, counts: dict, judge: dict, world: int, group=None
) -> tuple[list[tuple[int, list[dict]]], dict, dict]:
    """Every rank's episode summaries, group counts and judge accounting (all_gather_object,
    collective). groups: this rank's rollout.Group values of the tasks `indices`; judge: this
    rank's judge metrics (judging.judge.Judge.metrics) or {}. Returns (every rank's groups in rank
    order as (task index, its episodes' summaries), counts summed, judge metrics summed:
    cumulative calls, failures, cost)."""

    def summary(i: int, t, r: float | None) -> dict:
        return dict(
            task_index=i,
            reward=r,
            resolved=bool(t.resolved),
            truncated=bool(t.truncated),
            tampered=t.stop_reason == "tampered",
            tokens=len(t.token_ids),
            generated=int(sum(t.loss_mask)),
            timings=dict(t.timings),
            stop_reason=t.stop_reason,
            turns=t.num_turns,
            format_errors=t.format_errors,
            observations_cut=t.observations_cut,
        )

    mine = [
        (i, [summary(i, t, r) for t, r in zip(g.trajectories, g.rewards)])
        for i, g in zip(indices, groups)
    ]
    gathered: list = [None] * world
    dist.all_gather_object(gathered, (mine, counts, dict(judge)), group=group)
    all_groups = [grp for per_rank, _, _ in gathered for grp in per_rank]

    def summed(dicts: list[dict]) -> dict:
        return {k: sum(d.get(k, 0) for d in dicts) for k in dicts[0]}

    return all_groups, summed([c for _, c, _ in gathered]), summed([j for _, _, j in gathered])
