"""GRPO training of terminal agents: the torchrun entry point, and the recipe in one story (`main`).

    torchrun --standalone --nproc_per_node=2 train.py --preset cpu-smollm2     # CPU, gloo
    python -m bookkeeping.launch --nproc 2 train.py --preset cpu-smollm2   # Ctrl-C: a clean stop
    torchrun --nnodes=2 --nproc_per_node=8 --rdzv_endpoint=$MASTER_ADDR:29500 \\
        train.py --preset qwen3-32b-16xh100
    python train.py --help                                                     # every knob
    python train.py --check-config [flags]    # validate config and task set only (make train)

parse (configs.parse_cli, the task set, what the start continues) -> set up (training/setup.py:
process group, policy, optimizer, engine, sandboxes, judge) -> for each step on each rank:
  1. sample tasks: this rank's slice of the step's tasks (TaskSampler), each run group_size times;
  2. sync weights: the policy's weights into this rank's engine if they changed (learner/sync.py);
  3. roll out: the agents in their containers (rollout.run_episodes): tests verify, the judge
     scores, each group's rewards by one rule (rollout.Group, reward.group_rewards);
  4. build samples: group advantages (grpo.compute_advantages), zero-variance groups dropped
     (learner/packing.py);
  5. update: the GRPO loss over micro-batches packed to a token budget, divided by the number of
     loss tokens (or sequences) summed over all micro-batches of all ranks, gradients summed over
     ranks (FSDP2 divide factor 1), AdamW, warmup + cosine/constant lr, grad clipping
     (learner/update.py);
  6. record: one line, metrics.jsonl, trajectories (bookkeeping/record.py); the curriculum
     learns from every rank's groups (TaskSampler.record_groups); a checkpoint every save_every
     steps;
-> finish (the HF export, the reward curve) and tear down.

The learner is FSDP2-sharded over all ranks (one mesh dimension, learner/distributed.py); each
rank also owns one generation engine with a full copy of the weights. A SIGINT/SIGTERM cuts the
step in flight short on every rank and keeps the last completed step (bookkeeping/stop.py).

The variants enter at one line each and wrap or replace the plain parts from their own modules:
- training/overlap.py (max_off_policy_steps >= 1): steps 4-5 on one rollout run in a worker
  thread from the end of the next rollout's generation, beside its verifications and judge calls
  (samples one optimizer step old, TIS on them);
- training/disaggregated.py (rollout_ranks >= 1): some ranks only generate, the others only
  train (learner/layout.py: the layout's collectives);
- training/refill.py (grpo.refill_rounds >= 1): DAPO's dynamic sampling, extra rounds of tasks;
- training/tensor_parallel.py (a vLLM engine over tp > 1 ranks): the ranks roll out as one.
"""

import dataclasses
import os
import sys
import time

import configs
from bookkeeping.checkpoints import plan_start, resume_state, run_complete
from bookkeeping.record import checkpoint, finish, record
from bookkeeping.sanitise import install_log_sanitiser
from learner.distributed import agreed_stop, leave_after_peer, peer_gone
from learner.packing import samples_from_groups
from tasks import TaskError, select_tasks
from training import disaggregated, overlap, refill, tensor_parallel
from training import step as step_lib
from training.setup import setup, teardown
from training.step import sync_engine, update_policy

# --check-config's exit status when --resume finds the run complete: nothing to start (make train
# then exits 0 without starting torchrun)
RUN_COMPLETE = 3


def load_task_set(cfg: configs.TrainConfig) -> list:
    """select_tasks of cfg, checked before anything is written or started: a missing folder, or
    one where no task loads, is a ConfigError of one line naming the folder and why."""
    try:
        return select_tasks(cfg.tasks, cfg.task_ids, cfg.difficulties)
    except (TaskError, FileNotFoundError) as e:
        # the folder's own error reads better without "task 'NAME', field 'tasks':" in front
        folder_level = isinstance(e, TaskError) and e.field in ("tasks", "path")
        why = e.message if folder_level else e
        raise configs.ConfigError(f"tasks = {cfg.tasks!r}: {why}") from e


def main(argv: list[str] | None = None) -> int:
    """Validate the config, the task set and what the start continues (checkpoints.plan_start),
    set up, train, export. Returns the exit code: 0 when all steps ran and after a clean stop by
    SIGINT/SIGTERM (the step in flight cut short, the last completed step checkpointed, one line
    saying so; torchrun would report any other status as a failure). `--check-config` only
    validates: exit 0, nothing written or started (the Makefile runs it before torchrun). A
    --resume of a run that trained all its steps says so and returns 0 before anything starts
    (RUN_COMPLETE with --check-config, which tells make not to start torchrun). Raises
    configs.ConfigError naming a bad field, the task folder, or the run and fields a start is
    refused for, before anything is written to out_dir or any model, container or API is used."""
    # parse
    install_log_sanitiser()  # episode errors carry container text
    argv = sys.argv[1:] if argv is None else list(argv)
    cfg = configs.parse_cli([a for a in argv if a != "--check-config"], description=__doc__)
    tasks = load_task_set(cfg)
    world = int(os.environ["WORLD_SIZE"]) if "WORLD_SIZE" in os.environ else None
    start = plan_start(cfg.out_dir, dataclasses.asdict(cfg), cfg.resume, cfg.overwrite, world)
    complete = run_complete(start, cfg.steps)
    if complete is not None:
        # under torchrun every rank finds it; one says so
        if os.environ.get("RANK", "0") == "0":
            print(f"[train] {complete}", flush=True)
        return RUN_COMPLETE if "--check-config" in argv else 0
    # make's check runs before torchrun, which gives the world size
    if world is not None or "--check-config" not in argv:
        configs.check_layout(cfg, world or 1)
    if "--check-config" in argv:
        return 0

    # set up
    run = setup(cfg, tasks, start)
    if cfg.rollout_ranks:
        # some ranks only generate, the others only train
        return disaggregated.train(run)
    if cfg.max_off_policy_steps:
        # each update runs beside the next rollout
        return overlap.train(run)

    # the variants of the rollout replace the plain one
    roll_out = step_lib.roll_out
    if cfg.grpo.refill_rounds:
        # DAPO's dynamic sampling: extra rounds of tasks while too few groups vary
        roll_out = refill.roll_out
    if run.tp > 1:
        # the ranks of a tensor-parallel engine roll out as one, sharing the leader's groups
        roll_out = tensor_parallel.roll_out

    try:
        t_logged = time.perf_counter()
        for step in range(run.step, cfg.steps):
            if agreed_stop(run.stop, run.device):
                break

            # 1. sample tasks: this rank's slice of the step's tasks
            indices = run.sampler.next_batch()

            # 2. sync weights: the engine gets the policy's weights (after every update, after a
            # sleep that dropped them)
            sync_s = sync_engine(run)

            # 3. roll out: group_size episodes per task in containers; tests, judge, group rewards
            ro = roll_out(run, indices, step, sync_s)
            if agreed_stop(run.stop, run.device):
                run.say(
                    f"[train] stopped during the rollout of step {step + 1}; it is not trained on"
                )
                break

            # 4. build samples: group advantages; groups whose rewards are all equal dropped
            samples, counts = samples_from_groups(ro.groups, cfg.grpo)

            # 5. update: the GRPO update over every rank's samples; a stop signal cuts it short
            # before its optimizer step (checked over all ranks per micro-batch)
            trained = update_policy(
                run, samples, ro.version, lambda: agreed_stop(run.stop, run.device)
            )
            if trained is None:
                run.say(f"[train] stopped during the update of step {step + 1}; not trained on")
                break
            metrics, train_s = trained
            # the policy is one step on; the engine's weights are one update behind it
            run.step = step + 1
            run.stale = True

            # 6. record: every rank's groups in one line and metrics.jsonl
            now = time.perf_counter()
            outcomes = record(
                run.log, run.step, ro, counts, metrics, train_s, now - t_logged, run.judge_metrics
            )
            t_logged = now
            # the curriculum learns from every rank's groups
            run.sampler.record_groups(outcomes)
            # what a resume from this step starts with, before the next step draws its tasks
            run.resume_state = resume_state(run.sampler)
            # a checkpoint every save_every steps and after the last
            due = run.step % cfg.save_every == 0 or run.step == cfg.steps
            run.saved_step = checkpoint(run, due)

        # finish
        return finish(run)
    finally:
        teardown(run)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt as e:
        # a second signal (stop.StopFlag): the containers are reaped
        if os.environ.get("RANK", "0") == "0":
            print(
                f"[train] {e}: stopped at once; nothing since the last checkpoint kept",
                file=sys.stderr,
            )
        sys.exit(130)
    except configs.ConfigError as e:
        # a bad flag, value or task folder: one line, no traceback; under torchrun every rank
        # fails alike: one says why
        if os.environ.get("RANK", "0") == "0":
            print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    except RuntimeError as e:
        # another rank failed and left a collective: that rank's error is the one to read
        if not peer_gone(e):
            raise
        sys.exit(leave_after_peer())
