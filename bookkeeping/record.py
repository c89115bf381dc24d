"""What a training run keeps of each step and of its end: the step's record (one line,
metrics.jsonl, wandb/tensorboard: `record`, for every layout), its checkpoint (`checkpoint`), and
after the loop the last checkpoint, the Hugging Face export, the reward curve and the line saying
how to resume a stopped run (`finish`).

`record` takes the values it records and changes nothing; `checkpoint` and `finish` read the rank's
training.setup.Run (out_dir, cfg, rank, step, saved_step, run_id, policy, optimizer, scheduler,
sampler, stop, learner_group, ...), so bookkeeping imports nothing above it. `checkpoint` returns
the step the last checkpoint holds, which its caller keeps as run.saved_step (the loop's line;
`finish`'s after a stop).
"""

import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import torch.distributed as dist

from bookkeeping.checkpoints import checkpoint_dir, save_checkpoint
from bookkeeping.launch import RESUME_CMD_ENV
from bookkeeping.logs import (
    append_jsonl,
    format_step_line,
    gather_episodes,
    plot_reward_curve,
    step_record,
)
from bookkeeping.memory import gather_peak_rss
from hf import weights


@dataclass
class StepLog:
    """Where a run's step records go and over which ranks they are gathered (built once by
    training.setup)."""

    out_dir: Path
    rank: int
    # the run's last step, for the line's "step N/steps"
    steps: int
    kl_coef: float
    # the ranks that train (their episodes are gathered), and their process group (None: all)
    learners: int
    learner_group: object = None
    # wandb or tensorboard: (record, step)
    extra_log: Callable[[dict, int], None] | None = None


class RolloutFigures(Protocol):
    """What `record` reads of a rollout (training.step.Rollout)."""

    indices: list[int]
    groups: list
    rollout_s: float
    generate_s: float
    sync_s: float
    refill_rounds: int
    refill_episodes: int
    refill_s: float


def record(
    log: StepLog,
    step: int,
    ro: RolloutFigures,
    counts: dict,
    metrics: dict,
    train_s: float,
    step_s: float,
    judge: dict,
    rss_others: list[int] | tuple = (),
) -> list[tuple[int, list[float | None]]]:
    """Step 6 of `step` (optimizer steps done) after the update on rollout `ro`: every training
    rank's episodes gathered, one line (rank 0) and its metrics.jsonl record. counts: this rank's
    group counts (learner.packing.samples_from_groups), to which the rollout's refill_rounds and
    refill_episodes are added (summed over the ranks; refill_s is rank 0's seconds, as
    rollout_s); metrics, train_s: the update's (training.step.update_policy); step_s: seconds
    since the previous step was recorded; judge: judge metrics to add up over the training ranks
    (judging.judge.Judge.metrics, or {}); rss_others: peak RSS in bytes of ranks that do not train
    (the disaggregated layout's rollout ranks), appended to the training ranks'. Collective over
    the ranks that train. Returns every rank's groups as (task index, rewards), the same list on
    every rank, for the curriculum (tasks.sampler.TaskSampler.record_groups)."""
    # dynamic sampling's extra rounds and episodes on this rank, summed over the ranks below
    counts = dict(counts, refill_rounds=ro.refill_rounds, refill_episodes=ro.refill_episodes)
    groups, counts, judge_metrics = gather_episodes(
        ro.indices, ro.groups, counts, judge, log.learners, log.learner_group
    )
    rss = gather_peak_rss(log.learners, log.learner_group, rss_others)
    if log.rank == 0:
        times = dict(
            rollout_s=ro.rollout_s,
            generate_s=ro.generate_s,
            train_s=train_s,
            sync_s=ro.sync_s,
            refill_s=ro.refill_s,
            step_s=step_s,
        )
        episodes = [e for _, eps in groups for e in eps]
        rec = step_record(step, episodes, counts, metrics, times, log.kl_coef)
        rec.update(judge_metrics)
        rec.update(rss)
        append_jsonl(log.out_dir / "metrics.jsonl", rec)
        print(format_step_line(step, log.steps, rec), flush=True)
        if log.extra_log is not None:
            log.extra_log(rec, step)
    return [(i, [e["reward"] for e in eps]) for i, eps in groups]


def checkpoint(run, due: bool = True) -> int:
    """save_checkpoint of the current step when `due` and not saved yet (collective over the
    ranks that train; every rank decides alike from shared state); one line with its path and
    seconds. Returns the step the last checkpoint holds: run.step when it wrote one, else
    run.saved_step (the caller keeps it as run.saved_step)."""
    if not due or run.step <= run.saved_step:
        return run.saved_step
    t0 = time.perf_counter()
    path = checkpoint_dir(run.out_dir, run.step)
    save_checkpoint(
        path,
        run.policy,
        run.optimizer,
        run.scheduler,
        run.sampler,
        run.step,
        run.run_id,
        run.cfg_dict,
        run.learner_group,
        run.resume_state,
    )
    run.say(f"[train] checkpoint {path} written ({time.perf_counter() - t0:.1f}s)")
    return run.step


def finish(run) -> int:
    """After the loop: a checkpoint when stopped by a signal (cfg.checkpoint_on_signal), the HF
    export, the reward curve; after a stop, one line saying what was kept and how to resume.
    Returns the exit code: 0 (all steps, or a clean stop)."""
    cfg = run.cfg
    stopped = run.step < cfg.steps
    # a rollout rank of the disaggregated layout holds no policy
    if stopped and run.policy is not None:
        run.saved_step = checkpoint(run, due=cfg.checkpoint_on_signal)
    # Exported on a clean stop too, so `python evaluate.py --model <out_dir>/hf` evaluates it.
    if run.policy is not None:
        weights.save_hf(
            run.policy,
            run.out_dir / "hf",
            tokenizer_dir=run.model_dir,
            dtype=weights.DTYPES[cfg.policy.dtype],
        )
    run.say(f"[train] policy after step {run.step} exported to {run.out_dir / 'hf'}")
    if run.rank == 0 and (run.out_dir / "metrics.jsonl").exists():
        curve = plot_reward_curve(run.out_dir / "metrics.jsonl", run.out_dir / "reward_curve.png")
        run.say(f"[train] reward curve: {curve}")
    if stopped:
        run.say(stop_line(run))
    if dist.is_initialized():
        # no rank tears gloo down while rank 0 still writes (an abort at exit)
        dist.barrier()
    return 0


def stop_line(run) -> str:
    """The last line after a clean stop: what was kept (the checkpoint of run.saved_step, the
    steps up to run.step lost since) and the command that resumes it: $TERMRL_RESUME_CMD (set by
    bookkeeping/launch.py and the Makefile), else this process's command with --resume."""
    stop = run.stop
    sig = signal.Signals(stop.signum or signal.SIGTERM).name
    after = f"{time.monotonic() - stop.requested_at:.1f}s after the {sig}"
    if run.saved_step == 0:
        return (
            f"[train] stopped ({after}): no checkpoint of run {run.run_id} kept, nothing to resume"
        )
    launcher = ["python"]
    if "TORCHELASTIC_RUN_ID" in os.environ:
        # a plain torchrun (bookkeeping/launch.py sets the env)
        launcher = ["torchrun", f"--nproc_per_node={os.environ.get('LOCAL_WORLD_SIZE', 1)}"]
    again = [*launcher, *(a for a in sys.argv if a != "--resume"), "--resume"]
    resume = os.environ.get(RESUME_CMD_ENV) or " ".join(again)
    lost = ""
    if run.saved_step != run.step:
        lost = f" (steps {run.saved_step + 1}-{run.step} lost)"
    return (
        f"[train] stopped ({after}): kept step {run.saved_step} of run {run.run_id} in "
        f"{checkpoint_dir(run.out_dir, run.saved_step)}{lost}; resume: {resume}"
    )
