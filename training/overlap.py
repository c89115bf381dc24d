"""The overlapped driver (TrainConfig.max_off_policy_steps >= 1): train.py's recipe with each update
run in a worker thread (the learner) beside the next rollout.

One iteration of `train`:

    1. this rollout's tasks (drawn, their sandboxes started, while the learner trained before)
    2. sync weights: the engine gets the policy of the last update
    3. roll out; once its generation ends (engine asleep), the learner starts the update on the
       previous rollout (4-5), beside this rollout's verifications and judge calls
    -  while the learner trains: the next rollout's tasks drawn and their sandboxes started
    6. the update joined: its step recorded and checkpointed (main thread, every rank in order)

The last iteration only trains. A stop signal ends the loop after the step in flight is recorded;
the sandboxes started ahead for a rollout that will not run are closed.

With max_off_policy_steps = 0 a step is synchronous (train.py): roll out with the current policy,
then train on it. With k = 1 the update on rollout N's samples runs in the learner thread from
the moment rollout N+1's generation ends (every episode stopped acting, the engine asleep:
rollout.run_episodes' on_generation_end) while the event loop finishes rollout N+1's
verifications and judge calls; the engine gets the new weights before rollout N+2. Engine and
learner never compute at once: on a CPU rank they share the cores, and running both side by side
was slower than one after the other (BENCHMARKS.md); what overlaps is the container and judge
work with the update. The pipeline is one rollout deep, so a sample is at most 1 optimizer step
old and k is 0 or 1 (configs refuses more: k = 2 would run as 1) (prime-rl's and verl's one-step
off-policy schedule; AReaL-style decoupled loss):

    iteration:   0        1                2                ...  steps
    rollout:     R0 (v0)  R1 (v0)          R2 (v1)               -
    update:      -        U(R0) -> v1      U(R1) -> v2           U(R_{steps-1})
                          (from R1's generation end, beside R1's verification tail)

Each sample carries the policy version it was generated with (`Sample.policy_version`,
`Trajectory.policy_version`: optimizer steps done when its rollout started); staleness = the
learner's version at the update - the sample's (learner.update.staleness). A stale sample's ratio
is taken against the current policy's detached log-probs (rho = 1 at the first optimizer step),
and truncated importance sampling against the engine's log-probs, min(pi_old / pi_engine,
tis_cap), corrects both the sampler mismatch and the staleness (Yao et al. 2025); it is on
whenever a sample is stale, with the configured grpo.tis_cap, or learner.update.STALE_TIS_CAP
when that is 0 (learner.update.loss_config).

Collectives: the learner thread issues the update's gloo/nccl collectives while the main thread
runs only the event loop, which issues none (tensor-parallel vLLM, whose followers' collectives
would interleave with the learner's, is refused by configs.validate). Sync, gather, log and
checkpoint run in the main thread after the update is joined, in the same order on every rank.
While the learner trains, the event loop also starts the next rollout's sandboxes
(training.ahead.start_ahead), its tasks drawn then; a stop before its episodes took them has them
closed (training.ahead.close_ahead, from the driver's rollout or its end; the teardown's
sandbox.reap_run also waits for the Docker calls still in flight). Left as they are: the
sampler's curriculum sees a rollout's groups one step later, and a checkpoint holds no rollout in
flight (the tasks of the one or two rollouts drawn after it are not redrawn on resume).
"""

import asyncio
import concurrent.futures
import functools
import time

from bookkeeping.checkpoints import resume_state
from bookkeeping.memory import release_free_memory
from bookkeeping.record import checkpoint, finish, record
from learner.distributed import agreed_stop
from learner.packing import samples_from_groups
from training import ahead as ahead_lib
from training import step as step_lib
from training.refill import Refill, refilled_rollout, with_refill
from training.setup import Run, teardown
from training.step import Rollout, sync_engine, update_policy


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
        t_logged = time.perf_counter()
        # iteration n rolls out rollout n and trains on rollout n - 1: the last only trains
        for n in range(run.step, cfg.steps + 1):
            if agreed_stop(run.stop, run.device):
                break
            training = None
            more = n < cfg.steps
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
                ro = _roll_out(run, indices, n, sync_s, start_update, started)
            # the last iteration only trains; a cancelled rollout never ended its generation
            start_update()
            if training is not None and more and n + 1 < cfg.steps:
                # the next rollout's sandboxes, meanwhile
                ahead = _start_ahead(run, training)
            if training is not None:
                counts, metrics, train_s = training.result()
                # the policy is one step on; the engine's weights are one update behind it
                run.step = n
                run.stale = True
                # 6. record: one line, metrics.jsonl
                now = time.perf_counter()
                outcomes = record(
                    run.log,
                    run.step,
                    pending,
                    counts,
                    metrics,
                    train_s,
                    now - t_logged,
                    run.judge_metrics,
                )
                t_logged = now
                # the curriculum learns from every rank's groups (one rollout late: the next
                # rollout's tasks are drawn already)
                run.sampler.record_groups(outcomes)
                # what a resume from this step starts with
                run.resume_state = resume_state(run.sampler)
                # a checkpoint every save_every steps and after the last
                due = run.step % cfg.save_every == 0 or run.step == cfg.steps
                run.saved_step = checkpoint(run, due)
                pending = None
            if agreed_stop(run.stop, run.device):
                rolled = n + 1 if more else n
                run.say(
                    f"[train] stopped during the rollout of step {rolled}; it is not trained on"
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
            _close_started(run, ahead[1] if ahead else None)
        except Exception as e:
            # the teardown's reap still removes what it finds
            print(
                f"[train] closing the sandboxes started ahead: {type(e).__name__}: {e}", flush=True
            )
        teardown(run)


def _roll_out(
    run: Run,
    indices: list[int],
    n: int,
    sync_s: float,
    start_update,
    ahead: asyncio.Task | None,
) -> Rollout:
    """training.step.roll_out as the overlapped step runs it: once every episode stopped acting
    the engine sleeps and the update on the previous rollout starts (`start_update`), beside
    this rollout's verifications and judge calls; ahead: the sandboxes started for these indices
    while the learner trained (training.ahead.start_ahead), those no episode took (a stop before
    or during the rollout) closed here. With grpo.refill_rounds, the episodes refilled
    (training.refill.refilled_rollout)."""
    version = run.step
    t0 = time.perf_counter()
    # seconds until the last episode stopped acting
    generated = []

    def generation_end() -> None:
        generated.append(time.perf_counter() - t0)
        run.engine.sleep()
        # the KV cache and packed weights the engine freed
        release_free_memory()
        start_update()

    refill = Refill()
    play = step_lib.episodes
    if ahead is not None:
        # the episodes take the sandboxes started for these tasks
        play = ahead_lib.episodes(ahead, [run.tasks[i] for i in indices])
    if run.cfg.grpo.refill_rounds:
        play = functools.partial(refilled_rollout, n=n, refill=refill, play=play)
    seed = step_lib.episode_seed(run, n)
    run.engine.wake_up()
    with step_lib.trajectories(run, n, version) as write:
        job = play(run, indices, seed, write, on_generation_end=generation_end)
        try:
            groups = step_lib.until_done_or_stopped(run, job)
        finally:
            # a rollout cancelled before its episodes took their sandboxes
            _close_started(run, ahead)
    if not generated:
        run.engine.sleep()
        release_free_memory()
    seconds = time.perf_counter() - t0
    generate_s = generated[0] if generated else seconds
    ro = Rollout(indices, groups, seconds, sync_s, version, generate_s)
    if run.cfg.grpo.refill_rounds:
        ro = with_refill(run, ro, refill)
    return ro


def _train_on(run: Run, ro: Rollout) -> tuple[dict, dict, float]:
    """Steps 4-5 on one rollout in the learner thread: advantages -> samples -> the GRPO update
    (training.step.update_policy, never cut short: the main thread is rolling out). Returns
    (group counts, update metrics, seconds of the update)."""
    samples, counts = samples_from_groups(ro.groups, run.cfg.grpo)
    metrics, train_s = update_policy(run, samples, ro.version)
    return counts, metrics, train_s


def _start_ahead(run: Run, training: concurrent.futures.Future) -> tuple[list[int], asyncio.Task]:
    """Draw the next rollout's tasks and start their sandboxes (training.ahead.start_ahead) in the
    event loop while the learner thread trains, until it is done. Returns the indices and the
    task of their sandboxes, for _roll_out; the update's errors surface at training.result()."""
    cfg = run.cfg
    indices = run.sampler.next_batch()
    tasks = [run.tasks[i] for i in indices]
    job = ahead_lib.start_ahead(
        tasks, cfg.grpo.group_size, run.rollout_cfg, cfg.sandbox, run.episode_opts.run_id
    )
    ahead = run.loop.create_task(job)
    done = asyncio.wrap_future(training, loop=run.loop)
    # the sandboxes start meanwhile
    run.loop.run_until_complete(asyncio.wait([done]))
    return indices, ahead


def _close_started(run: Run, ahead: asyncio.Task | None) -> None:
    """Close the sandboxes training.ahead.start_ahead started that no episode took (none:
    nothing)."""
    if ahead is not None:
        run.loop.run_until_complete(ahead_lib.close_ahead(ahead))
