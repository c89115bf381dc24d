"""Which tasks each rank rolls out at each step: seeded epoch shuffles, rank slices, an optional curriculum.

The sampler's state (epoch order, position, curriculum records, the task ids) is checkpointed with the
policy, so a resumed run continues the same sequence; a changed task set is refused on resume.
"""

from __future__ import annotations

from collections import deque

import torch

import configs


class TaskSampler:
    """Draws the tasks of each step: seeded epochs over all tasks, sharded over ranks.

    task_ids: the run's tasks in the order train.py indexes them (sorted by id); the sampler's state
    refers to tasks by these positions, so a checkpoint only resumes on the same task set.
    Every rank holds the same state and draws the same global batch of `tasks_per_step`
    task indices; rank r keeps global[r::world_size]. Within an epoch each task is drawn once,
    in the order of a permutation of range(num_tasks) seeded by (seed, epoch) when `shuffle`
    (else in index order); a batch that runs past the end of an epoch continues in the next.

    Curriculum (optional): `record(task_index, rewards)` keeps the rewards of the last `window`
    groups of each task; a task whose last `window` groups were all 0 or all 1 (too hard or
    solved) is skipped. If every task would be skipped, the epoch is drawn without skipping,
    so a step always has tasks. `record` must be called with the same arguments on every rank
    (train.py all-gathers the groups first), or the ranks' draws diverge.
    """

    def __init__(
        self,
        task_ids: list[str],
        tasks_per_step: int,
        rank: int = 0,
        world_size: int = 1,
        seed: int = 0,
        shuffle: bool = True,
        curriculum: bool = False,
        window: int = 2,
    ):
        assert (
            task_ids and tasks_per_step >= 1 and 0 <= rank < world_size
        )  # configs.validate, tasks.select_tasks
        self.task_ids = tuple(task_ids)
        self.num_tasks, self.tasks_per_step = len(self.task_ids), tasks_per_step
        self.rank, self.world_size, self.seed, self.shuffle = rank, world_size, seed, shuffle
        self.curriculum, self.window = curriculum, window
        self.epoch, self.pos = 0, 0
        self.history: dict[int, deque] = {}

    def _order(self, epoch: int) -> list[int]:
        if not self.shuffle:
            return list(range(self.num_tasks))
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + epoch)
        return torch.randperm(self.num_tasks, generator=g).tolist()

    def skipped(self, task_index: int) -> bool:
        """True if the curriculum currently skips this task (last `window` groups all 0 or all 1)."""
        h = self.history.get(task_index)
        if not self.curriculum or h is None or len(h) < self.window:
            return False
        rewards = [r for group in h for r in group]
        return all(r <= 0.0 for r in rewards) or all(r >= 1.0 for r in rewards)

    def next_global(self) -> list[int]:
        """The next step's task indices for all ranks (tasks_per_step of them); advances the state."""
        skip = self.curriculum and not all(self.skipped(i) for i in range(self.num_tasks))
        out: list[int] = []
        order = self._order(self.epoch)
        while len(out) < self.tasks_per_step:
            if self.pos >= self.num_tasks:
                self.epoch, self.pos = self.epoch + 1, 0
                order = self._order(self.epoch)
            i = order[self.pos]
            self.pos += 1
            if not (skip and self.skipped(i)):
                out.append(i)
        return out

    def next_batch(self) -> list[int]:
        """This rank's task indices for the next step: next_global()[rank::world_size]."""
        return self.next_global()[self.rank :: self.world_size]

    def record(self, task_index: int, rewards: list[float]) -> None:
        """Remember one group's rewards for the curriculum (a no-op history when curriculum is off)."""
        self.history.setdefault(task_index, deque(maxlen=self.window)).append(
            [float(r) for r in rewards]
        )

    def record_groups(self, groups: list[tuple[int, list[float | None]]]) -> None:
        """`record` every group of a step: (task index, the group's rewards), the same list on
        every rank; failed episodes (reward None) are left out."""
        for task_index, rewards in groups:
            scored = [r for r in rewards if r is not None]
            if scored:
                self.record(task_index, scored)

    def state_dict(self) -> dict:
        return {
            "task_ids": list(self.task_ids),
            "epoch": self.epoch,
            "pos": self.pos,
            "history": {i: list(h) for i, h in self.history.items()},
        }

    def load_state_dict(self, state: dict) -> None:
        """Restore a state_dict. Raises configs.ConfigError, naming the task ids added and removed, when the
        checkpoint was written for another task set: its positions would silently point at other tasks."""
        saved = tuple(state["task_ids"])
        if saved != self.task_ids:
            added = sorted(set(self.task_ids) - set(saved))
            removed = sorted(set(saved) - set(self.task_ids))
            raise configs.ConfigError(
                f"resume: the task set changed since the checkpoint ({len(saved)} -> {self.num_tasks} tasks; "
                f"added {added}, removed {removed}); resume with the same tasks, task_ids and difficulties, "
                f"or train into a new out_dir"
            )
        self.epoch, self.pos = int(state["epoch"]), int(state["pos"])
        self.history = {int(i): deque(h, maxlen=self.window) for i, h in state["history"].items()}
