"""What one rank holds during training (`Run`), how it gets it (`setup`) and gives it back
(`teardown`).

One `_build` serves both layouts, parameterised by the rank's role: colocated (rollout_ranks = 0,
the default) every rank trains a shard of the FSDP2 policy and generates with its own engine; in the
disaggregated layout (training/disaggregated.py) a trainer only trains and a rollout rank only
generates. The process groups are created in the same order on every rank; tensor-parallel engine
groups (vLLM, colocated only) are made here and used only by training/tensor_parallel.py.
"""

import asyncio
import dataclasses
import json
import os
import random
import shutil
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh

import configs
import engines
import sandbox
from bookkeeping.checkpoints import load_checkpoint, partial_checkpoints, read_meta
from bookkeeping.logs import open_logger, truncate_metrics
from bookkeeping.memory import RssRecorder, fix_mmap_threshold
from bookkeeping.record import StepLog
from bookkeeping.stop import StopFlag
from hf import weights
from judging import judge as judge_lib
from learner import gpu_memory
from learner.distributed import (
    collective_timeout_s,
    init_distributed,
    load_policy,
    resolve_model_dir,
)
from learner.layout import Layout, build_layout, share_sampler, trainer_mesh
from learner.update import build_optimizer
from rollout import EpisodeOptions
from sandboxing import admission, hosts
from tasks.sampler import TaskSampler


@dataclass
class Run:
    """Everything one rank holds during training (built by `setup`, closed by `teardown`)."""

    cfg: configs.TrainConfig
    rank: int
    world: int
    device: torch.device
    out_dir: Path
    stop: StopFlag
    loop: asyncio.AbstractEventLoop
    tasks: list = dataclasses.field(default_factory=list)
    # ranks per generation engine (vLLM tensor parallel); rank % tp == 0 leads
    tp: int = 1
    tp_group: object = None
    model_dir: Path | None = None
    tokenizer: object = None
    policy: torch.nn.Module | None = None
    ref_model: torch.nn.Module | None = None
    optimizer: torch.optim.Optimizer | None = None
    scheduler: object = None
    sampler: TaskSampler | None = None
    engine: object = None
    judge: object = None
    # where the step records go (bookkeeping.record.record)
    log: StepLog | None = None
    # cfg.rollout with the episodes this rank may run at once on its host (sandboxing.admission)
    rollout_cfg: configs.RolloutConfig | None = None
    # what every episode shares: action format, sandbox, reward rule, judge, container label
    episode_opts: EpisodeOptions | None = None
    # <out_dir>/memory/rank<R>.json, for the launcher
    memory: RssRecorder | None = None
    # optimizer steps done (the resumed one included): the policy's version
    step: int = 0
    # step of the newest checkpoint of this run
    saved_step: int = 0
    # the sampler's and RNG's state when run.step was recorded (checkpoints.resume_state): what a
    # checkpoint written at a stop saves, not the state after the cut step's draw; None: now
    resume_state: dict | None = None
    # the checkpoint this start continues (checkpoints.plan_start)
    start: Path | None = None
    # kept by every resume (meta.json of its checkpoints)
    run_id: str = ""
    # cfg as given (config.json of its checkpoints)
    cfg_dict: dict = dataclasses.field(default_factory=dict)
    # the engine's weights differ from the policy's
    stale: bool = False
    # rollout_ranks >= 1: this rank's role (learner/layout.py); None: colocated
    layout: Layout | None = None

    @property
    def engine_dtype(self) -> torch.dtype:
        return weights.DTYPES[self.cfg.policy.dtype]

    @property
    def trains(self) -> bool:
        """This rank holds a shard of the policy (every rank, but a rollout rank)."""
        return self.layout is None or self.layout.is_trainer

    @property
    def judge_metrics(self) -> dict:
        """This rank's judge's cumulative calls, failures and cost; {} without a judge."""
        return self.judge.metrics if self.judge is not None else {}

    @property
    def learners(self) -> int:
        """How many ranks train: all, but the trainers of the disaggregated layout."""
        return self.world if self.layout is None else self.layout.trainers

    @property
    def learner_group(self):
        """The process group of the ranks that train; None: the default group (all ranks)."""
        return None if self.layout is None else self.layout.trainer_group

    def say(self, msg: str) -> None:
        if self.rank == 0:
            print(msg, flush=True)


def setup(cfg: configs.TrainConfig, tasks: list, start: Path | None) -> Run:
    """Process group, seeds, signal handling, then out_dir, sampler, policy, optimizer,
    checkpoint `start` (plan_start; None: a new run), engine and judge for `tasks`
    (train.load_task_set); torn down again if any of them fails. Collective."""
    # before the model loads: freed tensors go back to the OS
    fix_mmap_threshold()
    timeout_s, timeout_line = collective_timeout_s(cfg)
    rank, world, local_rank, device = init_distributed(timeout_s)
    if rank == 0:
        print(f"[train] {timeout_line}", flush=True)
    torch.manual_seed(cfg.seed + rank)
    random.seed(cfg.seed + rank)
    np.random.seed(cfg.seed + rank)
    # every rank gets the signal; rank 0 alone says so
    stop = StopFlag(
        "[train]", "cutting this step short, keeping the last completed one", announce=rank == 0
    )
    stop.install()
    run = Run(cfg, rank, world, device, Path(cfg.out_dir), stop, asyncio.new_event_loop(), tasks)
    run.start = start
    run.cfg_dict = dataclasses.asdict(cfg)
    try:
        _build(run, local_rank)
    except BaseException:
        teardown(run)
        raise
    return run


def _build(run: Run, local_rank: int) -> None:
    """setup's part that teardown must undo on failure: out_dir, the Docker engines and host
    admission, sampler, policy, optimizer, engine, judge. The role decides what a rank builds:
    colocated, all of it; a trainer of the disaggregated layout no engine, sandboxes or judge;
    a rollout rank no policy or optimizer."""
    cfg = run.cfg
    device = run.device
    if cfg.rollout_ranks:
        # the layout's process groups come before any other (vLLM's and the mesh's follow)
        run.layout = build_layout(run.rank, run.world, cfg.rollout_ranks)
    generates = run.layout is None or not run.layout.is_trainer
    # the first rank that generates speaks for the hosts (rank 0 colocated)
    first = run.rank == (0 if run.layout is None else run.layout.trainers)
    if run.rank == 0:
        run.out_dir.mkdir(parents=True, exist_ok=True)
        (run.out_dir / "config.json").write_text(json.dumps(dataclasses.asdict(cfg), indent=2))
    dist.barrier()
    (run.out_dir / "trajectories").mkdir(exist_ok=True)
    # its budget once the host admission ran
    run.memory = RssRecorder(run.out_dir, run.rank)
    # a wrong engine stops here, before any model loads
    kind = engines.engine_kind(cfg.policy, device)
    if kind == "vllm" and run.layout is None:
        run.tp = cfg.policy.vllm_tensor_parallel_size
    if generates:
        _admit_hosts(run, local_rank, first)
    # before any read of its config.json
    run.model_dir = resolve_model_dir(cfg.policy.path, run.rank)
    if kind == "vllm" and run.layout is None and device.type == "cuda":
        # the GPU memory plan of training beside vLLM (vLLM on CPU has its own KV size)
        total = torch.cuda.get_device_properties(device).total_memory
        run.say(gpu_memory.engine_memory_report(cfg, run.model_dir, run.world, total))
    if generates:
        _admit_episodes(run, first)
    # ranks of one vLLM engine share its leader's tasks (collective; None when tp = 1)
    run.tp_group = engines.tp_groups(run.world, run.tp)
    if run.layout is None:
        share = run.rank // run.tp
        shares = run.world // run.tp
    else:
        # every rank holds the sampler; a rollout rank keeps its slice, the trainers the checkpoint
        share = run.layout.rollout_index
        shares = run.layout.rollout_ranks
    run.sampler = TaskSampler(
        [t.id for t in run.tasks],
        cfg.tasks_per_step,
        share,
        shares,
        cfg.seed,
        cfg.epochs_shuffle,
        cfg.curriculum,
        cfg.curriculum_window,
    )
    run.tokenizer = weights.load_tokenizer(run.model_dir)
    if run.trains:
        if run.layout is None:
            mesh = init_device_mesh(device.type, (run.world,))
        else:
            mesh = trainer_mesh(run.layout, device)
        run.policy = load_policy(run.model_dir, cfg, mesh, device)
        if cfg.grpo.kl_coef > 0:
            run.ref_model = load_policy(run.model_dir, cfg, mesh, device, trainable=False)
        run.optimizer, run.scheduler = build_optimizer(run.policy, cfg)
    resume(run)
    if run.layout is not None and run.start is not None:
        # the rollout ranks draw on from the checkpoint's sampler
        share_sampler(run.layout, run.sampler)
    if generates:
        seed = cfg.seed + run.rank // run.tp
        # an overlapped rollout rank runs its next rollout before the next policy arrives: its
        # engine's sleep must keep the weights (vLLM at level 1; level 2 would discard them)
        keep_weights = run.layout is not None and cfg.max_off_policy_steps >= 1
        # a torch engine's KV cache slots beyond the episodes in flight would only hold stale
        # prefixes
        fits = run.rollout_cfg.max_concurrent_episodes
        policy = dataclasses.replace(
            cfg.policy, engine_max_batch=min(cfg.policy.engine_max_batch, fits)
        )
        run.engine = engines.build_engine(
            policy, run.model_dir, run.tokenizer, device, seed, run.tp_group, keep_weights
        )
        run.judge = judge_lib.build_judge(cfg.reward, run.out_dir)
        run.episode_opts = EpisodeOptions(
            cfg.policy.action_format, cfg.sandbox, cfg.reward, run.judge, sandbox.RUN_ID
        )
    elif kind == "vllm":
        # as the rollout ranks start their engines
        engines.vllm_engine.join_engine_groups(local_rank)
    extra_log = open_logger(cfg, run.out_dir) if run.rank == 0 else None
    run.log = StepLog(
        run.out_dir,
        run.rank,
        cfg.steps,
        cfg.grpo.kl_coef,
        run.learners,
        run.learner_group,
        extra_log,
    )
    announce(run)


def _admit_hosts(run: Run, local_rank: int, first: bool) -> None:
    """A rank that generates: the listed Docker engines asked what they hold (hosts.configure:
    one line per engine, from the first such rank), the containers of dead runs reaped, the
    cap on Docker calls at once set."""
    cfg = run.cfg
    episode = admission.episode_bytes(cfg.sandbox.memory_mb, cfg.sandbox.storage_mb)
    lines = hosts.configure(cfg.sandbox.docker_hosts, *episode)
    if first:
        # one line per listed engine: what it reports, the episodes it takes (per rank)
        for line in lines:
            print(line, file=sys.stderr)
    # containers of dead runs only: once per machine (the rollout ranks of the disaggregated
    # layout share one host)
    reaps = local_rank == 0 if run.layout is None else first
    if reaps:
        sandbox.reap()
    if cfg.sandbox.max_concurrent:
        sandbox.set_max_concurrent(cfg.sandbox.max_concurrent)


def _admit_episodes(run: Run, first: bool) -> None:
    """A rank that generates: the episodes it may run at once on this host (admission.admit_rank,
    one line from the first such rank) and its RAM budget; the engine's batch limited to them."""
    cfg = run.cfg
    if run.layout is None:
        engines_n = run.world // run.tp
    else:
        engines_n = run.layout.rollout_ranks
    local_ranks = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    fits, line, budget = admission.admit_rank(
        cfg, engines_n, local_ranks, *sandbox.host_resources()
    )
    run.memory.budget_bytes = budget
    if first:
        print(line, flush=True)
    # per rank; no collective depends on it
    run.rollout_cfg = dataclasses.replace(cfg.rollout, max_concurrent_episodes=fits)


def announce(run: Run) -> None:
    """The line that ends set-up (collective: every rank's sandbox run id gathered; those of the
    ranks with sandboxes are named): tasks, ranks, device, model, the step's shape, the steps to
    run (the first and last to train: `steps 1..8` for a new run of 8, `steps 4..8` for its
    resume after step 3). Tests find the run's containers by these ids; bench_overlap times from
    it."""
    cfg = run.cfg
    run_ids = [None] * run.world
    dist.all_gather_object(run_ids, sandbox.RUN_ID)
    if run.layout is None:
        ranks = f"{run.world} rank(s)"
        first = 0
    else:
        lay = run.layout
        ranks = f"{lay.trainers} trainer rank(s) and {lay.rollout_ranks} rollout rank(s)"
        first = lay.trainers
    run.say(
        f"[train] {len(run.tasks)} tasks, {ranks} on {run.device.type}, model {run.model_dir}, "
        f"{cfg.tasks_per_step} tasks x {cfg.grpo.group_size} per step, steps {run.step + 1}.."
        f"{cfg.steps}, sandbox run ids {','.join(run_ids[first:])}"
    )


# Knobs a resume may change (checkpoints.RESUME_MAY_DIFFER) that change how the engine batches
# requests: the resumed steps' log-probs (and then tokens) are no longer those of the run that never
# stopped (DESIGN.md, "Resume is exact"), so a resume that changes one says so
BATCHING_KNOBS = (
    "policy.engine_lockstep",
    "policy.engine_max_batch",
    "policy.engine_fast_cpu",
    "policy.engine_speculate_max_batch",
    "policy.engine_speculate_tokens",
    "rollout.max_concurrent_episodes",
)


def batching_changes(saved: dict, cfg: configs.TrainConfig) -> list[str]:
    """'knob (saved -> current)' for each of BATCHING_KNOBS that differs between the checkpoint's
    config (`saved`: config.json as read back) and `cfg`."""
    out = []
    for knob in BATCHING_KNOBS:
        section, name = knob.split(".")
        before = saved.get(section, {}).get(name)
        now = getattr(getattr(cfg, section), name)
        if before != now:
            out.append(f"{knob} ({before!r} -> {now!r})")
    return out


def resume(run: Run) -> None:
    """Start the run planned by plan_start: restore run.start (policy, optimizer, schedule,
    sampler, RNG) and keep its run id, or give a new run a new id (and with cfg.overwrite delete
    the checkpoints of the run before). Partial checkpoints (a write cut off by a kill) are
    removed; metrics.jsonl keeps only the steps up to the start. Collective; one line either way.
    Raises configs.ConfigError if the task set changed."""
    ckpt = run.start
    root = run.out_dir / "checkpoints"
    ids = [read_meta(ckpt)["run_id"] if ckpt else uuid.uuid4().hex[:8]]
    # a new run's id is rank 0's
    dist.broadcast_object_list(ids, src=0)
    run.run_id = ids[0]
    if run.rank == 0:
        if ckpt is None and run.cfg.overwrite and root.exists():
            shutil.rmtree(root)
            print(f"[train] --overwrite: deleted the checkpoints of the run before ({root})")
        for p in partial_checkpoints(run.out_dir):
            shutil.rmtree(p, ignore_errors=True)
            print(f"[train] removed {p}: a partial checkpoint (no completion marker)", flush=True)
    dist.barrier()
    if ckpt is not None and not run.trains:
        # a rollout rank: the trainers send the policy
        run.step = read_meta(ckpt)["step"]
    elif ckpt is not None:
        run.step = load_checkpoint(
            ckpt, run.policy, run.optimizer, run.scheduler, run.sampler, run.learner_group
        )
        run.say(f"[train] resuming run {run.run_id} from step {run.step} ({ckpt})")
        changed = batching_changes(json.loads((ckpt / "config.json").read_text()), run.cfg)
        if changed:
            run.say(
                f"[train] warning: {', '.join(changed)} changed since the checkpoint: the engine "
                f"batches otherwise, so the resumed steps are not exactly those of the run that never "
                f"stopped (DESIGN.md, 'Resume is exact')"
            )
    elif run.cfg.resume:
        run.say(f"[train] --resume: no complete checkpoint under {root}; new run {run.run_id}")
    else:
        run.say(f"[train] new run {run.run_id} in {run.out_dir}")
    run.saved_step = run.step
    # the engine will hold the weights from disk; a resumed policy differs
    run.stale = run.step > 0
    if run.rank == 0:
        truncate_metrics(run.out_dir / "metrics.jsonl", run.step)


def teardown(run: Run) -> None:
    """Close engine and judge; reap every container of this run (sandbox.reap_run), leave the
    process group."""
    for closer in (run.engine, run.judge):
        if closer is not None:
            run.loop.run_until_complete(closer.aclose())
    run.loop.close()
    if run.memory is not None:
        run.memory.close()
    # nothing of this run may outlive it
    sandbox.reap_run(sandbox.RUN_ID)
    if dist.is_initialized():
        dist.destroy_process_group()
