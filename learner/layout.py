"""The disaggregated layout (TrainConfig.rollout_ranks >= 1): some ranks only generate, the others
only train, and the policy is broadcast to the generators after each optimizer step (prime-rl's and
verl's fully-async layout). rollout_ranks = 0 (the default) keeps every rank colocated: an FSDP2
shard of the learner and its own engine (train.py). This module holds the layout's process groups
and its two collectives; training/disaggregated.py runs the two loops that issue them (and says in
which order), training/setup.py builds each rank for its role.

With W ranks and R rollout ranks, ranks 0..T-1 (T = W - R) are trainers and T..W-1 rollout ranks:

    trainers (FSDP2 over their own group)         rollout ranks (engine + sandboxes + judge)
    G(n): all_gather_object of the scored groups  <-  rollout n's groups, one list per rank
    update on its share of the groups (collectives over the trainers only)
    M(n+1): trainer 0 broadcasts {version, stop} and the policy in flat buckets  ->  engine
"""

import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh

from learner.distributed import set_learner_group

# policy bytes per broadcast (one flat tensor per dtype in a bucket)
BUCKET_BYTES = 256 << 20


@dataclass
class Layout:
    """This rank's place: ranks < trainers train, the others generate. trainer_group: the
    trainers (FSDP2 mesh, the update's collectives, checkpoints); weights_group: trainer 0 and
    the rollout ranks (the policy broadcast)."""

    rank: int
    world: int
    trainers: int
    trainer_group: object
    weights_group: object

    @property
    def is_trainer(self) -> bool:
        return self.rank < self.trainers

    @property
    def rollout_ranks(self) -> int:
        return self.world - self.trainers

    @property
    def rollout_index(self) -> int:
        """This rollout rank's slice of a step's tasks (0..rollout_ranks-1); 0 on a trainer."""
        return max(self.rank - self.trainers, 0)


def build_layout(rank: int, world: int, rollout_ranks: int) -> Layout:
    """The process groups of the layout, created on every rank in the same order (collective,
    before any other group: vLLM's and the mesh's follow), and the learner's all_reduce pointed
    at the trainers (learner.distributed.set_learner_group). Needs 1 <= rollout_ranks < world
    (configs.check_layout)."""
    trainers = world - rollout_ranks
    trainer_group = dist.new_group(list(range(trainers)))
    weights_group = dist.new_group([0, *range(trainers, world)])
    layout = Layout(rank, world, trainers, trainer_group, weights_group)
    if layout.is_trainer:
        set_learner_group(trainer_group)
    return layout


def trainer_mesh(layout: Layout, device: torch.device) -> DeviceMesh:
    """The 1-D FSDP2 mesh over the trainer ranks only (trainers call it; no collective)."""
    return DeviceMesh.from_group(layout.trainer_group, device.type)


def share_sampler(layout: Layout, sampler) -> None:
    """On a resume: trainer 0's task sampler state (the trainers' copy is the one checkpointed)
    broadcast to the rollout ranks, so every rank draws on alike. Collective over weights_group
    (trainer 0 and the rollout ranks); the other trainers return at once. sampler: any object
    with state_dict() and load_state_dict() (tasks.sampler.TaskSampler)."""
    if layout.is_trainer and layout.rank != 0:
        return
    box = [sampler.state_dict()]
    dist.broadcast_object_list(box, src=0, group=layout.weights_group)
    sampler.load_state_dict(box[0])


# -----------------------------------------------------------------------------
# M: the policy, trainer 0 -> rollout ranks


def _checksum(flat: torch.Tensor) -> torch.Tensor:
    """[sum, sum of squares] in float64 of a flat tensor: what tests compare across ranks."""
    x = flat.detach().float()
    return torch.stack([x.sum(dtype=torch.float64), (x * x).sum(dtype=torch.float64)]).cpu()


def send_update(
    layout: Layout,
    version: int,
    stop: bool,
    named: Iterable[tuple[str, torch.Tensor]] | None,
    bucket_bytes: int = BUCKET_BYTES,
) -> list[float]:
    """M on a trainer: every trainer calls it (exhausting `named`, e.g. learner.sync.
    iter_full_weights, a collective over the trainers); trainer 0 broadcasts {version, stop} and,
    unless stop or named is None, the tensors in buckets of ~bucket_bytes: a header of (name,
    shape, dtype) then one flat tensor per dtype (on the tensors' device: cpu for gloo, cuda
    for nccl). Returns the [sum, sum of squares] over every element sent (trainer 0; [0, 0] on
    the others and with no weights)."""
    head = layout.rank == 0
    box = [dict(version=version, stop=stop, weights=named is not None and not stop)]
    if head:
        dist.broadcast_object_list(box, src=0, group=layout.weights_group)
    total = torch.zeros(2, dtype=torch.float64)
    if not box[0]["weights"]:
        return total.tolist()
    bucket = []
    size = 0
    for name, t in named:
        if not head:
            # gathered for trainer 0's broadcast only
            continue
        bucket.append((name, t.detach().contiguous()))
        size += t.numel() * t.element_size()
        if size >= bucket_bytes:
            total += _send_bucket(layout, bucket)
            bucket = []
            size = 0
    if head:
        if bucket:
            total += _send_bucket(layout, bucket)
        # the end
        dist.broadcast_object_list([None], src=0, group=layout.weights_group)
    return total.tolist()


def _send_bucket(layout: Layout, bucket: list[tuple[str, torch.Tensor]]) -> torch.Tensor:
    header = [(name, tuple(t.shape), str(t.dtype).removeprefix("torch.")) for name, t in bucket]
    dist.broadcast_object_list([header], src=0, group=layout.weights_group)
    total = torch.zeros(2, dtype=torch.float64)
    # first-seen order, as the receiver
    for dtype in dict.fromkeys(t.dtype for _, t in bucket):
        flat = torch.cat([t.reshape(-1) for _, t in bucket if t.dtype == dtype])
        dist.broadcast(flat, src=0, group=layout.weights_group)
        total += _checksum(flat)
    return total


def receive_update(layout: Layout, device: torch.device) -> tuple[int, bool, Iterator | None]:
    """M on a rollout rank: (version, stop, the policy's (name, tensor) pairs or None). The
    iterator must be exhausted (engine.load_weights, then `drain`) before the next collective;
    after it ends its `.checksum` attribute holds [sum, sum of squares] of what arrived."""
    box = [None]
    dist.broadcast_object_list(box, src=0, group=layout.weights_group)
    msg = box[0]
    if not msg["weights"]:
        return msg["version"], msg["stop"], None
    return msg["version"], msg["stop"], _Received(layout, device)


class _Received:
    """The tensors of one M, bucket by bucket, as views of the flat tensors received."""

    def __init__(self, layout: Layout, device: torch.device):
        self.layout = layout
        self.device = device
        self.done = False
        self.checksum = [0.0, 0.0]
        self._items = self._buckets()

    def __iter__(self):
        return self

    def __next__(self) -> tuple[str, torch.Tensor]:
        return next(self._items)

    def _buckets(self):
        total = torch.zeros(2, dtype=torch.float64)
        while True:
            box = [None]
            dist.broadcast_object_list(box, src=0, group=self.layout.weights_group)
            if box[0] is None:
                break
            header = box[0]
            for dtype_name in dict.fromkeys(d for _, _, d in header):
                dtype = getattr(torch, dtype_name)
                entries = [(n, s) for n, s, d in header if d == dtype_name]
                flat = torch.empty(
                    sum(_numel(s) for _, s in entries), dtype=dtype, device=self.device
                )
                dist.broadcast(flat, src=0, group=self.layout.weights_group)
                total += _checksum(flat)
                offset = 0
                for name, shape in entries:
                    n = _numel(shape)
                    yield name, flat[offset : offset + n].view(shape)
                    offset += n
        self.checksum = total.tolist()
        self.done = True


def _numel(shape: tuple) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def parameters_checksum(named: Iterable[tuple[str, torch.Tensor]]) -> list[float]:
    """[sum, sum of squares] in float64 over (name, tensor) pairs, e.g. an engine's held_parameters
    (a shared parameter once): after a load, equal to the sums of what arrived (same element
    multiset, however the engine fuses, packs or ties its tensors)."""
    total = torch.zeros(2, dtype=torch.float64)
    params = dict(named)
    embed = next((p for n, p in params.items() if n.endswith("embed_tokens.weight")), None)
    for name, p in params.items():
        # a tied lm_head re-tied by copy, not shared: counted once
        tied_copy = (
            name.endswith("lm_head.weight")
            and embed is not None
            and p.shape == embed.shape
            and torch.equal(p, embed)
        )
        if not tied_copy:
            total += _checksum(p.reshape(-1))
    return total.tolist()


def drain(weights: Iterator) -> None:
    """Consume what an engine left of a receive_update iterator (the broadcasts must complete)."""
    for _ in weights:
        pass


# -----------------------------------------------------------------------------
# G: the scored groups, rollout ranks -> trainers


def lean_groups(groups: list) -> list:
    """rollout.Group values without what the learner and the step record never read (the task,
    each trajectory's messages, test report and verification; the rollout rank wrote them to its
    trajectories file): what crosses the wire in G."""
    slim = dict(messages=[], test_report=None, verification=None)
    return [
        dataclasses.replace(
            g, task=None, trajectories=[dataclasses.replace(t, **slim) for t in g.trajectories]
        )
        for g in groups
    ]


def exchange(layout: Layout, item: dict) -> tuple[list[dict], bool]:
    """G: all_gather_object of every rank's item over all ranks (collective). A rollout rank's
    item: indices, groups (lean_groups), stop, and its figures (rollout_s, sync_s, version,
    judge, rss); a trainer's: {"stop": ...}. Returns (the rollout ranks' items in rank order,
    whether any rank asked to stop)."""
    items: list = [None] * layout.world
    dist.all_gather_object(items, item)
    return items[layout.trainers :], any(x["stop"] for x in items)


def trainer_share(items: list[dict], trainer: int, trainers: int) -> tuple[list, list]:
    """(task indices, groups) of trainer `trainer`: every trainers-th group of the step, in the
    rollout ranks' order."""
    pairs = [p for x in items for p in zip(x["indices"], x["groups"])]
    mine = pairs[trainer::trainers]
    return [i for i, _ in mine], [g for _, g in mine]


def record_order(items: list[dict], trainers: int) -> list[tuple[int, list]]:
    """(task index, rewards) of every group in the order the trainers' sampler records them
    (bookkeeping.logs.gather_episodes over the trainers' shares): rollout ranks record alike."""
    shares = [trainer_share(items, t, trainers) for t in range(trainers)]
    return [(i, list(g.rewards)) for idx, gs in shares for i, g in zip(idx, gs)]
