"""The overlapped driver (TrainConfig.max_off_policy_steps >= 1): train.py's recipe with each update
run in a worker thread (the learner) beside the next rollout. learner/pipeline.py says what that
does to the samples (one step old, TIS on them) and why engine and learner never compute at once.

One iteration of `train`:

    1. this rollout's tasks (drawn, their sandboxes started, while the learner trained before)
    2. sync weights: the engine gets the policy of the last update
    3. roll out; once its generation ends (engine asleep), the learner starts the update on the
       previous rollout (4-5), beside this rollout's verifications and judge calls
    -  while the learner trains: the next rollout's tasks drawn and their sandboxes started
    6. the update joined: its step recorded and checkpointed (main thread, every rank in order)

The last iteration only trains. A stop signal ends the loop after the step in flight is recorded;
the sandboxes started ahead for a rollout that will not run are closed.
"""

import asyncio
import concurrent.futures
import time

import sandbox
from bookkeeping.record import finish, record
from episodes import ahead as ahead_lib
from learner.distributed import agreed_stop
from learner.packing import samples_from_groups
from learner.pipeline import Rollout
from training.setup import Run, teardown
from training.step import close_started, learn, roll_out, sync_engine


def train(run: Run) -> int:
    """The steps of an overlapped colocated run, then finish and teardown. Returns the exit code
    (bookkeeping.record.finish)."""
    cfg = run.cfg
    learner = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="learner")
    # the rollout the learner trains on beside the next one
    pending: Rollout | None = None
    # the learner's update on `pending`, once started
    training: concurrent.futures.Future | None = None
    # (indices, task of their sandboxes) of the next rollout, started while the learner trained
    ahead: tuple[list[int], asyncio.Task] | None = None

    def start_update() -> None:
        # 4-5. the update on the previous rollout, once (from this rollout's generation end)
        nonlocal training
        if pending is not None and training is None:
            training = learner.submit(_train_on, run, pending)

    try:
        run.t_logged = time.perf_counter()
        while run.step < cfg.steps and not agreed_stop(run.stop, run.device):
            training = None
            # the last iteration only trains
            more = run.rollouts < cfg.steps
            if more:
                # 1. this rank's tasks of the step (drawn while the learner trained)
                if ahead is not None:
                    indices, started = ahead
                else:
                    indices = run.sampler.next_batch()
                    started = None
                ahead = None
                # 2. the engine gets the policy's weights
                sync_s = sync_engine(run)
                # 3. group_size episodes per task; the update on the previous rollout starts
                # once this one's generation ended
                ro = roll_out(run, indices, sync_s, start_update, started)
            # the last iteration only trains; a cancelled rollout never ended its generation
            start_update()
            if training is not None and run.rollouts < cfg.steps:
                # the next rollout's sandboxes, meanwhile
                ahead = _start_ahead(run, training)
            if training is not None:
                # 6. record: one line, metrics.jsonl, a checkpoint every save_every steps
                record(run, pending, *training.result())
                pending = None
            if agreed_stop(run.stop, run.device):
                run.say(
                    f"[train] stopped during the rollout of step {run.rollouts}; "
                    "it is not trained on"
                )
                break
            if more:
                # trained on in the next iteration, beside the next rollout
                pending = ro
        return finish(run)
    finally:
        # an update in flight ends before the process group does
        learner.shutdown(wait=True)
        # a rollout's sandboxes started ahead: starts still in flight would escape the reap
        try:
            close_started(run, ahead[1] if ahead else None)
        except Exception as e:
            # the teardown's reap still removes what it finds
            print(
                f"[train] closing the sandboxes started ahead: {type(e).__name__}: {e}", flush=True
            )
        teardown(run)


def _train_on(run: Run, ro: Rollout) -> tuple[dict, dict, float]:
    """Steps 4-5 on one rollout in the learner thread: advantages -> samples -> the GRPO update
    (training.step.learn, never cut short: the main thread is rolling out). Returns (group
    counts, update metrics, seconds of the update)."""
    samples, counts = samples_from_groups(ro.groups, run.cfg.grpo)
    metrics, train_s = learn(run, samples, ro.version)
    return counts, metrics, train_s


def _start_ahead(run: Run, training: concurrent.futures.Future) -> tuple[list[int], asyncio.Task]:
    """Draw the next rollout's tasks and start their sandboxes (episodes.ahead.start_ahead) in the event
    loop while the learner thread trains, until it is done. Returns the indices and the task of
    their sandboxes, for roll_out; the update's errors surface at training.result()."""
    cfg = run.cfg
    indices = run.sampler.next_batch()
    tasks = [run.tasks[i] for i in indices]
    job = ahead_lib.start_ahead(
        tasks, cfg.grpo.group_size, cfg.rollout, cfg.sandbox, sandbox.RUN_ID
    )
    ahead = run.loop.create_task(job)
    done = asyncio.wrap_future(training, loop=run.loop)
    # the sandboxes start meanwhile
    run.loop.run_until_complete(asyncio.wait([done]))
    return indices, ahead
