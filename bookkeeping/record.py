"""What a training run keeps of each step and of its end: the step's record (one line,
metrics.jsonl, wandb/tensorboard) and checkpoint (`record`, for both layouts), and after the
loop the last checkpoint, the Hugging Face export, the reward curve and the line saying how to
resume a stopped run (`finish`).

`run` is the rank's training.setup.Run; only its fields are read here (out_dir, cfg, rank, step,
saved_step, run_id, policy, optimizer, scheduler, sampler, judge, stop, learners,
learner_group, ...), so bookkeeping imports nothing above it.
"""

import os
import signal
import sys
import time

import torch.distributed as dist

from bookkeeping.checkpoints import checkpoint_dir, resume_state, save_checkpoint
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


def record(
    run,
    ro,
    counts: dict,
    metrics: dict,
    train_s: float,
    judge: dict | None = None,
    rss_others: list[int] | tuple = (),
) -> None:
    """Step 6 after the update on rollout `ro` (learner.pipeline.Rollout): the step counted,
    every training rank's episodes gathered, one line and metrics.jsonl record (step_s: seconds
    since the previous step was logged), a checkpoint every save_every steps and after the last.
    counts: this rank's group counts (learner.packing.samples_from_groups), with the rollout's
    refill_rounds and refill_episodes added (summed over the ranks; refill_s is rank 0's seconds,
    as rollout_s); metrics, train_s:
    the update's (training.step.learn). judge: judge metrics to add up over the training ranks,
    None: this rank's judge's. rss_others: peak RSS in bytes of ranks that do not train (the
    disaggregated layout's rollout ranks), appended to the training ranks'. Collective over the
    ranks that train."""
    run.step += 1
    # the engine's weights are one update behind now
    run.stale = True
    if judge is None:
        judge = run.judge.metrics if run.judge is not None else {}
    # dynamic sampling's extra rounds and episodes on this rank, summed over the ranks below
    counts = dict(counts, refill_rounds=ro.refill_rounds, refill_episodes=ro.refill_episodes)
    episodes, counts, judge_metrics = gather_episodes(
        ro.indices, ro.groups, counts, judge, run.sampler, run.learners, run.learner_group
    )
    rss = gather_peak_rss(run.learners, run.learner_group, rss_others)
    now = time.perf_counter()
    times = dict(
        rollout_s=ro.rollout_s,
        generate_s=ro.generate_s,
        train_s=train_s,
        sync_s=ro.sync_s,
        refill_s=ro.refill_s,
        step_s=now - run.t_logged,
    )
    run.t_logged = now
    log_step(run, episodes, counts, judge_metrics, metrics, times, rss)
    # what a resume from this step starts with, before the next step draws its tasks
    run.resume_state = resume_state(run.sampler)
    due = run.step % run.cfg.save_every == 0 or run.step == run.cfg.steps
    checkpoint(run, due)


def log_step(
    run,
    episodes: list[dict],
    counts: dict,
    judge_metrics: dict,
    metrics: dict,
    times: dict,
    rss: dict,
) -> None:
    """Rank 0: the step's record to metrics.jsonl (and wandb/tensorboard), its line to stdout."""
    if run.rank != 0:
        return
    rec = step_record(run.step, episodes, counts, metrics, times, run.cfg.grpo.kl_coef)
    rec.update(judge_metrics)
    rec.update(rss)
    append_jsonl(run.out_dir / "metrics.jsonl", rec)
    run.say(format_step_line(run.step, run.cfg.steps, rec))
    if run.extra_log is not None:
        run.extra_log(rec, run.step)


def checkpoint(run, due: bool = True) -> bool:
    """save_checkpoint of the current step when `due` and not saved yet (collective over the
    ranks that train; every rank decides alike from shared state); one line with its path and
    seconds. Returns whether it wrote one."""
    if not due or run.step <= run.saved_step:
        return False
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
    run.saved_step = run.step
    run.say(f"[train] checkpoint {path} written ({time.perf_counter() - t0:.1f}s)")
    return True


def finish(run) -> int:
    """After the loop: a checkpoint when stopped by a signal (cfg.checkpoint_on_signal), the HF
    export, the reward curve; after a stop, one line saying what was kept and how to resume.
    Returns the exit code: 0 (all steps, or a clean stop)."""
    cfg = run.cfg
    stopped = run.step < cfg.steps
    # a rollout rank of the disaggregated layout holds no policy
    if stopped and run.policy is not None:
        checkpoint(run, due=cfg.checkpoint_on_signal)
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
