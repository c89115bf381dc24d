"""The disaggregated driver (TrainConfig.rollout_ranks >= 1): train.py's recipe split by role. The
trainers only train, the rollout ranks only generate; learner/layout.py holds the layout's
collectives (G: the scored groups to the trainers, M: the policy to the rollout ranks), this module
the two loops that issue them. training/setup.py built each rank for its role.

    trainer:      1 sample tasks (as the rollout ranks) -> G -> 4-5 build samples, update on its
                  share -> 6 record, checkpoint (over the trainers) -> M: 2 sync weights
    rollout rank: 1 sample tasks -> 3 roll out -> G -> M: 2 the policy into the engine

Both sides issue G and M in the same order (G(first), M(first+1), G(first+1), ...; a resumed run
starts with M(first), the checkpoint's policy), so the blocking collectives never cross. Where a
rollout rank runs rollout n in that order is the staleness: with max_off_policy_steps = 0 between
M(n) and G(n) (it waits for the new policy: synchronous); with k >= 1 between G(n-1) and M(n), on
the policy of the step before, while the trainers train on rollout n-1 (one rollout deep, samples
exactly 1 step old from the second step on, as the colocated pipeline in training/overlap.py).
A stop (any rank's signal) travels in G (every rank's flag) and in M (the trainers' agreed flag);
every rank leaves the loop at the same message. The task sampler runs on every rank with the same
state (rollout rank i keeps slice i of each step's tasks; the trainers' copy is the one
checkpointed): every rank draws once per rollout and records the groups of G in one order
(layout.record_order).
"""

import functools
import time

from bookkeeping.checkpoints import resume_state
from bookkeeping.memory import peak_rss_bytes
from bookkeeping.record import checkpoint, finish, record
from learner import layout
from learner.distributed import agreed_stop
from learner.packing import samples_from_groups
from learner.sync import iter_full_weights
from training import refill
from training import step as step_lib
from training.setup import Run, teardown
from training.step import Rollout, update_policy


def train(run: Run) -> int:
    """The steps of the disaggregated layout in this rank's role, then finish (trainers:
    checkpoint and export) and teardown. Returns the exit code (bookkeeping.record.finish)."""
    try:
        why = trainer_loop(run) if run.layout.is_trainer else rollout_loop(run)
        if why != "done":
            run.say(f"[train] {why}; not trained on")
        return finish(run)
    finally:
        teardown(run)


# -----------------------------------------------------------------------------
# a rollout rank


def rollout_loop(run: Run) -> str:
    """A rollout rank's rollouts from the checkpoint's step on (module docstring: where rollout n
    sits between M and G); run.step is the policy version its engine holds. Returns why it
    ended: "done", "stopped in rollout N" or "stopped after step N"."""
    cfg = run.cfg
    lay = run.layout
    roll_out = refill.roll_out if cfg.grpo.refill_rounds else step_lib.roll_out
    first = run.step
    # seconds of the policy load before the next rollout
    sync_s = 0.0
    if first > 0:
        # a resumed run: the checkpoint's policy, before the first rollout
        run.step, _, sync_s = _load_policy(run)
    # k >= 1: rollout n + 1, run between G(n) and M(n + 1)
    ahead = None
    for n in range(first, cfg.steps):
        if cfg.max_off_policy_steps == 0 and n > first:
            # the policy the trainers' last step made
            run.step, stop, sync_s = _load_policy(run)
            if stop:
                return f"stopped after step {n}"
        item = ahead or _roll_out_item(run, roll_out, n, sync_s)
        if ahead is None:
            sync_s = 0.0
        item["stop"] = item["stop"] or run.stop.requested
        # G: every rollout rank's groups to the trainers
        items, stop = layout.exchange(lay, item)
        # the curriculum learns from every group, in the trainers' order
        run.sampler.record_groups(layout.record_order(items, lay.trainers))
        if stop:
            return f"stopped in rollout {n + 1}"
        if cfg.max_off_policy_steps >= 1 and n + 1 < cfg.steps:
            # beside the trainers' update on rollout n
            ahead = _roll_out_item(run, roll_out, n + 1, sync_s)
            sync_s = 0.0
            run.step, stop, sync_s = _load_policy(run)
            if stop:
                return f"stopped after step {n + 1}"
    return "done"


def _roll_out_item(run: Run, roll_out, n: int, sync_s: float) -> dict:
    """Rollout n (training.step.roll_out, or `roll_out` that replaces it) on the engine's policy
    (run.step), as G's item."""
    indices = run.sampler.next_batch()
    ro = roll_out(run, indices, n, sync_s)
    return dict(
        # with the tasks dynamic sampling added (grpo.refill_rounds)
        indices=ro.indices if ro.groups is not None else indices,
        groups=layout.lean_groups(ro.groups or []),
        stop=ro.groups is None,
        rollout_s=ro.rollout_s,
        sync_s=sync_s,
        version=run.step,
        judge=dict(run.judge_metrics),
        generate_s=ro.generate_s,
        refill=(ro.refill_rounds, ro.refill_episodes, ro.refill_s),
        rss=peak_rss_bytes(),
    )


def _load_policy(run: Run) -> tuple[int, bool, float]:
    """M on a rollout rank: the policy into the engine, the rest drained; one line with the sums
    of what arrived and of what the engine's model holds after the load
    (layout.parameters_checksum), which tests compare with what trainer 0 sent. Returns
    (version, stop, seconds of the load; 0.0 when no policy came)."""
    version, stop, received = layout.receive_update(run.layout, run.device)
    if received is None:
        return version, stop, 0.0
    t0 = time.perf_counter()
    run.engine.load_weights(received)
    layout.drain(received)
    sync_s = time.perf_counter() - t0
    total, squares = received.checksum
    held, held_sq = layout.parameters_checksum(run.engine.held_parameters())
    print(
        f"[layout] rank {run.rank} loaded policy version {version} (sum {total:.12e}, sum of "
        f"squares {squares:.12e}); engine holds (sum {held:.12e}, sum of squares "
        f"{held_sq:.12e}) in {sync_s:.2f}s",
        flush=True,
    )
    return version, stop, sync_s


# -----------------------------------------------------------------------------
# a trainer


def trainer_loop(run: Run) -> str:
    """A trainer's steps from the checkpoint's step on: the tasks drawn as the rollout ranks
    draw them, G, the update on this trainer's share, the record and checkpoint over the
    trainers, M. Returns why it ended: "done", "stopped in rollout N" (not trained on),
    "stopped in the update of step N" (not trained on) or "stopped after step N"."""
    cfg = run.cfg
    lay = run.layout
    if run.step > 0:
        _send_policy(run, run.step, False)
    t_logged = time.perf_counter()
    for step in range(run.step, cfg.steps):
        # the same draws as the rollout ranks'
        run.sampler.next_batch()
        # G: the rollout ranks' groups
        items, stop = layout.exchange(lay, {"stop": run.stop.requested})
        if stop:
            return f"stopped in rollout {step + 1}"
        ro, judge, rss = _share(run, items)
        samples, counts = samples_from_groups(ro.groups, cfg.grpo)
        # synchronous: a stop cuts the update short; overlapped, the update finishes and is
        # checkpointed (the rollout ranks are rolling out)
        cut = None
        if cfg.max_off_policy_steps == 0:
            cut = functools.partial(agreed_stop, run.stop, run.device)
        trained = update_policy(run, samples, ro.version, cut)
        if trained is not None:
            metrics, train_s = trained
            # the policy is one step on; the rollout ranks' engines one update behind it
            run.step = step + 1
            # 6. record over the trainers
            now = time.perf_counter()
            outcomes = record(
                run.log, run.step, ro, counts, metrics, train_s, now - t_logged, judge, rss
            )
            t_logged = now
            # the curriculum learns from every group (the rollout ranks record alike)
            run.sampler.record_groups(outcomes)
            # what a resume from this step starts with
            run.resume_state = resume_state(run.sampler)
            due = run.step % cfg.save_every == 0 or run.step == cfg.steps
            run.saved_step = checkpoint(run, due)
        stop = agreed_stop(run.stop, run.device) or trained is None
        if step + 1 < cfg.steps:
            # M: the policy to the rollout ranks
            _send_policy(run, step + 1, stop)
        if trained is None:
            return f"stopped in the update of step {step + 1}"
        if stop:
            return f"stopped after step {step + 1}"
    return "done"


def _share(run: Run, items: list[dict]) -> tuple[Rollout, dict, list[int]]:
    """This trainer's share of G's groups as a Rollout (the rollout ranks' slowest figures), the
    judge metrics to record (summed over the rollout ranks by trainer 0, {} on the others: the
    record sums over the trainers) and the rollout ranks' peak RSS."""
    indices, groups = layout.trainer_share(items, run.rank, run.layout.trainers)
    # dynamic sampling's cost counted once, by trainer 0 (record sums over the trainers)
    refill_figures = (0, 0, 0.0)
    judge: dict = {}
    if run.rank == 0:
        refill_figures = (
            sum(x["refill"][0] for x in items),
            sum(x["refill"][1] for x in items),
            max(x["refill"][2] for x in items),
        )
        # the judge's figures are cumulative per rollout rank
        for x in items:
            judge = {k: judge.get(k, 0) + v for k, v in x["judge"].items()}
    ro = Rollout(
        indices,
        groups,
        max(x["rollout_s"] for x in items),
        max(x["sync_s"] for x in items),
        min(x["version"] for x in items),
        max(x["generate_s"] for x in items),
        *refill_figures,
    )
    return ro, judge, [x["rss"] for x in items]


def _send_policy(run: Run, version: int, stop: bool) -> None:
    """M: the policy after `version` steps (engine dtype) to the rollout ranks, unless stop."""
    t0 = time.perf_counter()
    named = None if stop else iter_full_weights(run.policy, run.engine_dtype)
    total, squares = layout.send_update(run.layout, version, stop, named)
    if not stop:
        run.say(
            f"[layout] policy version {version} sent to {run.layout.rollout_ranks} rollout "
            f"rank(s) (sum {total:.12e}, sum of squares {squares:.12e}) in "
            f"{time.perf_counter() - t0:.2f}s"
        )
