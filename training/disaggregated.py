"""The disaggregated driver (TrainConfig.rollout_ranks >= 1): train.py's recipe split by role. The
trainers only train, the rollout ranks only generate; learner/layout.py holds the two loops and
their collectives (G: the scored groups to the trainers, M: the policy to the rollout ranks), and
what this module gives them: a rollout rank's rollout and policy load, a trainer's update on its
share of the groups and its policy send. training/setup.py built each rank for its role.

    trainer:      1 sample tasks (as the rollout ranks) -> G -> 4-5 build samples, update on its
                  share -> 6 record, checkpoint (over the trainers) -> M: 2 sync weights
    rollout rank: 1 sample tasks -> 3 roll out -> G -> M: 2 the policy into the engine
"""

import functools
import time

from bookkeeping.memory import peak_rss_bytes
from bookkeeping.record import finish, record
from learner import layout
from learner.distributed import agreed_stop
from learner.packing import samples_from_groups
from learner.pipeline import Rollout
from learner.sync import iter_full_weights
from training.setup import Run, teardown
from training.step import learn, roll_out


def train(run: Run) -> int:
    """The steps of the disaggregated layout (learner/layout.py's two loops, this rank's role),
    then finish (trainers: checkpoint and export) and teardown. Returns the exit code
    (bookkeeping.record.finish)."""
    cfg = run.cfg
    lay = run.layout
    try:
        run.t_logged = time.perf_counter()
        if lay.is_trainer:
            trainer = _Trainer(run)
            why = layout.trainer_loop(
                lay,
                run.step,
                cfg.steps,
                # the same draws as the rollout ranks'
                run.sampler.next_batch,
                trainer.train_share,
                run.stop,
                run.device,
                trainer.send_policy,
            )
        else:
            generator = _RolloutRank(run)
            why = layout.rollout_loop(
                lay,
                run.step,
                cfg.steps,
                cfg.max_off_policy_steps,
                run.device,
                generator.roll_out_item,
                generator.load_policy,
                lambda: run.stop.requested,
                generator.record_groups,
            )
        if why != "done":
            run.say(f"[train] {why}; not trained on")
        return finish(run)
    finally:
        teardown(run)


class _RolloutRank:
    """A rollout rank's part in layout.rollout_loop: its rollouts and the policy loads between
    them."""

    def __init__(self, run: Run):
        self.run = run
        # seconds of the policy load before the next rollout
        self.sync_s = 0.0

    def roll_out_item(self, n: int, version: int) -> dict:
        """Rollout n (training.step.roll_out) on the engine's policy `version`, as G's item."""
        run = self.run
        # roll_out numbers its trajectories file by run.rollouts and versions them by run.step
        run.rollouts = n
        run.step = version
        indices = run.sampler.next_batch()
        ro = roll_out(run, indices)
        judge = run.judge.metrics if run.judge is not None else {}
        item = dict(
            # with the tasks dynamic sampling added (grpo.refill_rounds)
            indices=ro.indices if ro.groups is not None else indices,
            groups=layout.lean_groups(ro.groups or []),
            stop=ro.groups is None,
            rollout_s=ro.rollout_s,
            sync_s=self.sync_s,
            version=version,
            judge=dict(judge),
            generate_s=ro.generate_s,
            refill=(ro.refill_rounds, ro.refill_episodes, ro.refill_s),
            rss=peak_rss_bytes(),
        )
        self.sync_s = 0.0
        return item

    def load_policy(self, received, version: int) -> None:
        """M's policy into the engine; one line with the sums of what arrived and of what the
        engine's model holds after the load (layout.parameters_checksum), which tests compare
        with what trainer 0 sent."""
        run = self.run
        t0 = time.perf_counter()
        run.engine.load_weights(received)
        layout.drain(received)
        self.sync_s = time.perf_counter() - t0
        total, squares = received.checksum
        held, held_sq = layout.parameters_checksum(run.engine.held_parameters())
        print(
            f"[layout] rank {run.rank} loaded policy version {version} (sum {total:.12e}, sum of "
            f"squares {squares:.12e}); engine holds (sum {held:.12e}, sum of squares "
            f"{held_sq:.12e}) in {self.sync_s:.2f}s",
            flush=True,
        )

    def record_groups(self, items: list[dict]) -> None:
        """The sampler records G's groups in the trainers' order (its curriculum state stays
        the trainers')."""
        trainers = self.run.layout.trainers
        self.run.sampler.record_groups(layout.record_order(items, trainers))


class _Trainer:
    """A trainer's part in layout.trainer_loop: the update on its share of each G, recorded and
    checkpointed, and M."""

    def __init__(self, run: Run):
        self.run = run

    def train_share(self, items: list[dict]) -> bool:
        """The update on this trainer's share of G's groups, then the step's record and
        checkpoint over the trainers (bookkeeping.record.record). False when a stop cut the
        update short."""
        run = self.run
        indices, groups = layout.trainer_share(items, run.rank, run.layout.trainers)
        # dynamic sampling's cost counted once, by trainer 0 (record sums over the trainers)
        refill = (0, 0, 0.0)
        if run.rank == 0:
            refill = (
                sum(x["refill"][0] for x in items),
                sum(x["refill"][1] for x in items),
                max(x["refill"][2] for x in items),
            )
        ro = Rollout(
            indices,
            groups,
            max(x["rollout_s"] for x in items),
            max(x["sync_s"] for x in items),
            min(x["version"] for x in items),
            max(x["generate_s"] for x in items),
            *refill,
        )
        samples, counts = samples_from_groups(ro.groups, run.cfg.grpo)
        # synchronous: a stop cuts the update short; overlapped, the update finishes and is
        # checkpointed (the rollout ranks are rolling out)
        stop = None
        if run.cfg.max_off_policy_steps == 0:
            stop = functools.partial(agreed_stop, run.stop, run.device)
        trained = learn(run, samples, ro.version, stop)
        if trained is None:
            return False
        metrics, train_s = trained
        # the judge's figures are cumulative per rollout rank: summed once, by trainer 0
        judge: dict = {}
        if run.rank == 0:
            for x in items:
                judge = {k: judge.get(k, 0) + v for k, v in x["judge"].items()}
        rss = [x["rss"] for x in items]
        record(run, ro, counts, metrics, train_s, judge, rss)
        return True

    def send_policy(self, version: int, stop: bool) -> None:
        """M: the policy after `version` steps (engine dtype) to the rollout ranks, unless
        stop."""
        run = self.run
        t0 = time.perf_counter()
        named = None if stop else iter_full_weights(run.policy, run.engine_dtype)
        total, squares = layout.send_update(run.layout, version, stop, named)
        if not stop:
            run.say(
                f"[layout] policy version {version} sent to {run.layout.rollout_ranks} rollout "
                f"rank(s) (sum {total:.12e}, sum of squares {squares:.12e}) in "
                f"{time.perf_counter() - t0:.2f}s"
            )
