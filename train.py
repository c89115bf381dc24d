"""GRPO training of terminal agents: the torchrun entry point, and the recipe in one story (`main`).

    torchrun --standalone --nproc_per_node=2 train.py --preset cpu-smollm2     # CPU, gloo
    python -m bookkeeping.launch --nproc 2 train.py --preset cpu-smollm2   # Ctrl-C: a clean stop
    torchrun --nnodes=2 --nproc_per_node=8 --rdzv_endpoint=$MASTER_ADDR:29500 \\
        train.py --preset qwen3-32b-16xh100
    python train.py --help                                                     # every knob
    python train.py --check-config [flags]    # validate config and task set only (make train)

One step on each rank (DESIGN.md):
  1. take this rank's slice of the step's tasks (TaskSampler), each run group_size times;
  2. push the policy's weights into this rank's engine if they changed (learner/sync.py);
  3. run the agents in their containers (rollout.run_episodes): tests verify, the judge scores,
     each group's rewards by one rule (rollout.Group, reward.group_rewards);
  4. engine to sleep; group advantages (grpo.compute_advantages); drop zero-variance groups
     (learner/packing.py);
  5. GRPO update (learner/update.py): micro-batches packed to a token budget, loss divided by the
     number of loss tokens (or sequences) summed over all micro-batches of all ranks, gradients
     summed over ranks (FSDP2 divide factor 1), AdamW, warmup + cosine/constant lr, grad clipping;
  6. log one line, metrics.jsonl, trajectories; checkpoint every save_every steps.
With max_off_policy_steps >= 1, steps 4-5 on one rollout run in a worker thread from the end of
the next rollout's generation, beside its verifications and judge calls (learner/pipeline.py:
samples one optimizer step old, TIS on them).

The learner is FSDP2-sharded over all ranks (one mesh dimension, learner/distributed.py); each
rank also owns one generation engine with a full copy of the weights.
"""

import asyncio
import concurrent.futures
import dataclasses
import json
import os
import random
import shutil
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh

import configs
import engines
import rollout
import sandbox
from bookkeeping.checkpoints import (
    checkpoint_dir,
    load_checkpoint,
    partial_checkpoints,
    plan_start,
    read_meta,
    save_checkpoint,
)
from bookkeeping.launch import RESUME_CMD_ENV
from bookkeeping.logs import (
    append_jsonl,
    format_step_line,
    gather_episodes,
    open_logger,
    plot_reward_curve,
    step_record,
    truncate_metrics,
)
from bookkeeping.memory import (
    RssRecorder,
    fix_mmap_threshold,
    gather_peak_rss,
    peak_rss_bytes,
    release_free_memory,
)
from bookkeeping.stop import StopFlag, stop_line
from hf import weights
from judging import judge as judge_lib
from learner import layout
from learner.distributed import agreed_stop, init_distributed, load_policy, resolve_model_dir
from learner.packing import samples_from_groups
from learner.pipeline import Rollout, loss_config, staleness
from learner.sync import iter_full_weights, sync_weights
from learner.update import build_optimizer, update
from sandboxing import admission, hosts
from tasks import TaskError, select_tasks
from tasks.sampler import TaskSampler

# -----------------------------------------------------------------------------
# set-up: what one rank holds


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
    tp: int = 1  # ranks per generation engine (vLLM tensor parallel); rank % tp == 0 leads
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
    extra_log: object = None
    memory: RssRecorder | None = None  # <out_dir>/memory/rank<R>.json, for the launcher
    step: int = 0  # optimizer steps done (the resumed one included): the policy's version
    rollouts: int = 0  # rollouts started (the resumed steps' included)
    t_logged: float = 0.0  # perf_counter() when the previous step was logged (or the loop began)
    saved_step: int = 0  # step of the newest checkpoint of this run
    start: Path | None = None  # the checkpoint this start continues (checkpoints.plan_start)
    run_id: str = ""  # kept by every resume (meta.json of its checkpoints)
    cfg_dict: dict = dataclasses.field(default_factory=dict)  # cfg as given, before setup's changes
    stale: bool = False  # the engine's weights differ from the policy's
    layout: "layout.Layout | None" = None  # rollout_ranks >= 1: this rank's role (learner/layout)
    sync_s: float = 0.0  # a rollout rank: seconds of the policy load before its next rollout

    @property
    def engine_dtype(self) -> torch.dtype:
        return weights.DTYPES[self.cfg.policy.dtype]

    def say(self, msg: str) -> None:
        if self.rank == 0:
            print(msg, flush=True)


def setup(cfg: configs.TrainConfig, tasks: list, start: Path | None) -> Run:
    """Process group, seeds, signal handling, then out_dir, sampler, policy, optimizer,
    checkpoint `start` (plan_start; None: a new run), engine and judge for `tasks`
    (load_task_set); torn down again if any of them fails. Collective."""
    fix_mmap_threshold()  # before the model loads: freed tensors go back to the OS
    rank, world, local_rank, device = init_distributed()
    torch.manual_seed(cfg.seed + rank)
    random.seed(cfg.seed + rank)
    np.random.seed(cfg.seed + rank)
    stop = StopFlag("[train]", "cutting this step short, keeping the last completed one").install()
    run = Run(cfg, rank, world, device, Path(cfg.out_dir), stop, asyncio.new_event_loop(), tasks)
    run.start, run.cfg_dict = start, dataclasses.asdict(cfg)
    try:
        (_build_disaggregated if cfg.rollout_ranks else _build)(run, local_rank)
    except BaseException:
        teardown(run)
        raise
    return run


def _build(run: Run, local_rank: int) -> None:
    """setup's part that teardown must undo on failure: policy, optimizer, sampler, engine,
    judge."""
    cfg, rank, world, device = run.cfg, run.rank, run.world, run.device
    if rank == 0:
        run.out_dir.mkdir(parents=True, exist_ok=True)
        (run.out_dir / "config.json").write_text(json.dumps(dataclasses.asdict(cfg), indent=2))
    dist.barrier()
    (run.out_dir / "trajectories").mkdir(exist_ok=True)
    run.memory = RssRecorder(run.out_dir, rank)  # its budget once the host admission ran
    engines.engine_kind(cfg.policy, device)  # a wrong engine stops here, before any model loads
    episode = admission.episode_bytes(cfg.sandbox.memory_mb, cfg.sandbox.storage_mb)
    for line in hosts.configure(cfg.sandbox.docker_hosts, *episode):
        if (
            rank == 0
        ):  # one line per listed engine: what it reports, the episodes it takes (per rank)
            print(line, file=sys.stderr)
    if local_rank == 0:
        sandbox.reap()  # containers of dead runs only
    if cfg.sandbox.max_concurrent:
        sandbox.set_max_concurrent(cfg.sandbox.max_concurrent)
    run.model_dir = resolve_model_dir(cfg.policy.path, rank)  # before any read of its config.json
    if engines.engine_kind(cfg.policy, device) == "vllm":
        run.tp = cfg.policy.vllm_tensor_parallel_size
        if device.type == "cuda":  # the GPU memory plan (vLLM on CPU has its own KV size)
            total = torch.cuda.get_device_properties(device).total_memory
            run.say(admission.engine_memory_report(cfg, run.model_dir, world, total))
    local_ranks = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    fits, line, run.memory.budget_bytes = admission.admit_rank(
        cfg, world // run.tp, local_ranks, *sandbox.host_resources()
    )
    run.say(line)
    cfg.rollout.max_concurrent_episodes = fits  # per rank; no collective depends on it
    # a torch engine's KV cache slots beyond the episodes in flight would only hold stale prefixes
    cfg.policy.engine_max_batch = min(cfg.policy.engine_max_batch, fits)
    run.tp_group = engines.tp_groups(
        world, run.tp
    )  # ranks of one vLLM engine share its leader's tasks
    run.sampler = TaskSampler(
        [t.id for t in run.tasks],
        cfg.tasks_per_step,
        rank // run.tp,
        world // run.tp,
        cfg.seed,
        cfg.epochs_shuffle,
        cfg.curriculum,
        cfg.curriculum_window,
    )
    run.tokenizer = weights.load_tokenizer(run.model_dir)
    mesh = init_device_mesh(device.type, (world,))
    run.policy = load_policy(run.model_dir, cfg, mesh, device)
    if cfg.grpo.kl_coef > 0:
        run.ref_model = load_policy(run.model_dir, cfg, mesh, device, trainable=False)
    run.optimizer, run.scheduler = build_optimizer(run.policy, cfg)
    resume(run)
    run.engine = engines.build_engine(
        cfg.policy, run.model_dir, run.tokenizer, device, cfg.seed + rank // run.tp, run.tp_group
    )
    run.judge = judge_lib.build_judge(cfg.reward, run.out_dir)
    run.extra_log = open_logger(cfg, run.out_dir) if rank == 0 else None
    announce(run, f"{world} rank(s)")


def announce(run: Run, ranks: str, first: int = 0) -> None:
    """The line that ends set-up (collective: every rank's sandbox run id gathered; those of ranks
    `first`.. are named, the ones with sandboxes): tasks, `ranks`, device, model, the step's shape,
    the steps to run. Tests find the run's containers by these ids; bench_overlap times from it."""
    cfg, run_ids = run.cfg, [None] * run.world
    dist.all_gather_object(run_ids, sandbox.RUN_ID)
    run.say(
        f"[train] {len(run.tasks)} tasks, {ranks} on {run.device.type}, model {run.model_dir}, "
        f"{cfg.tasks_per_step} tasks x {cfg.grpo.group_size} per step, steps {run.step}.."
        f"{cfg.steps}, sandbox run ids {','.join(run_ids[first:])}"
    )


def resume(run: Run) -> None:
    """Start the run planned by plan_start: restore run.start (policy, optimizer, schedule,
    sampler, RNG) and keep its run id, or give a new run a new id (and with cfg.overwrite delete
    the checkpoints of the run before). Partial checkpoints (a write cut off by a kill) are
    removed; metrics.jsonl keeps only the steps up to the start. Collective; one line either way.
    Raises configs.ConfigError if the task set changed."""
    ckpt, root = run.start, run.out_dir / "checkpoints"
    ids = [read_meta(ckpt)["run_id"] if ckpt else uuid.uuid4().hex[:8]]
    dist.broadcast_object_list(ids, src=0)  # a new run's id is rank 0's
    run.run_id = ids[0]
    if run.rank == 0:
        if ckpt is None and run.cfg.overwrite and root.exists():
            shutil.rmtree(root)
            print(f"[train] --overwrite: deleted the checkpoints of the run before ({root})")
        for p in partial_checkpoints(run.out_dir):
            shutil.rmtree(p, ignore_errors=True)
            print(f"[train] removed {p}: a partial checkpoint (no completion marker)", flush=True)
    dist.barrier()
    if ckpt is not None and run.policy is None:  # a rollout rank: the trainers send the policy
        run.step = read_meta(ckpt)["step"]
    elif ckpt is not None:
        group = run.layout.trainer_group if run.layout else None
        run.step = load_checkpoint(
            ckpt, run.policy, run.optimizer, run.scheduler, run.sampler, group
        )
        run.say(f"[train] resuming run {run.run_id} from step {run.step} ({ckpt})")
    elif run.cfg.resume:
        run.say(f"[train] --resume: no complete checkpoint under {root}; new run {run.run_id}")
    else:
        run.say(f"[train] new run {run.run_id} in {run.out_dir}")
    run.saved_step = run.rollouts = run.step
    run.stale = run.step > 0  # the engine will hold the weights from disk; a resumed policy differs
    if run.rank == 0:
        truncate_metrics(run.out_dir / "metrics.jsonl", run.step)


# -----------------------------------------------------------------------------
# the parts of one step


def roll_out(
    run: Run, indices: list[int], on_generation_end=None, ahead=None
) -> tuple[list[rollout.Group] | None, float, float]:
    """Run group_size episodes of each task in `indices` on this rank (rollout.run_episodes),
    engine awake, trajectories streamed to trajectories/step_N_rankR.jsonl as their groups are
    scored. A stop signal cancels the episodes (their sandboxes close; this run's leftovers are
    reaped): then None. Returns (this rank's groups, seconds, seconds until the last episode
    stopped acting), the leader's groups shared out under tensor parallelism (split_for_tp).
    Each trajectory records the policy version the engine holds (run.step).
    on_generation_end: called (in the event loop) once every episode stopped acting, the engine
    asleep: the overlapped update starts there, beside the verifications and judge calls. ahead:
    the sandboxes `start_ahead` started for these indices while the learner trained; those no
    episode took (a stop before or during the rollout) are closed here (rollout.close_ahead)."""
    cfg, step, version = run.cfg, run.rollouts, run.step  # the engine holds policy `version`
    t0 = time.perf_counter()
    run.engine.wake_up()
    generated = []  # seconds until the last episode stopped acting

    def generation_end() -> None:
        generated.append(time.perf_counter() - t0)
        if on_generation_end is not None:
            run.engine.sleep()
            release_free_memory()  # the KV cache and packed weights the engine freed
            on_generation_end()

    path = run.out_dir / "trajectories" / f"step_{step + 1:06d}_rank{run.rank}.jsonl"
    with open(path, "w") as traj_file:

        def write(t: rollout.Trajectory) -> None:
            t.policy_version = version
            traj_file.write(json.dumps(t.to_json(), default=str) + "\n")

        seed = (cfg.seed * 1_000_003 + step) * 1_009 + run.rank // run.tp
        if run.rank % run.tp:  # a tensor-parallel follower replays its leader's generate calls
            job = engines.follow_async(run.engine)
        else:
            job = rollout.run_episodes(
                [run.tasks[i] for i in indices],
                run.engine,
                run.tokenizer,
                cfg.grpo.group_size,
                cfg.rollout,
                run.judge,
                action_format=cfg.policy.action_format,
                sandbox_cfg=cfg.sandbox,
                reward_cfg=cfg.reward,
                run_id=sandbox.RUN_ID,
                seed=seed,
                progress=run.rank == 0,
                on_trajectory=write,
                on_generation_end=generation_end,
                ahead=ahead,
            )
        episodes = run.loop.create_task(job)
        run.stop.cancel_on_signal(run.loop, episodes)
        if run.stop.requested:  # the signal came before the rollout (e.g. during the sync)
            episodes.cancel()
        try:
            groups = run.loop.run_until_complete(episodes)
        except asyncio.CancelledError:
            groups = None
            sandbox.reap(run_id=sandbox.RUN_ID)  # sandboxes still closing in the background
        finally:
            run.stop.cancel_on_signal(run.loop, None)
            if ahead is not None:  # a rollout cancelled before its episodes took their sandboxes
                run.loop.run_until_complete(rollout.close_ahead(ahead))
    if not generated or on_generation_end is None:
        run.engine.sleep()  # a tensor-parallel leader's sleep ends its followers' follow()
        release_free_memory()
    seconds = time.perf_counter() - t0
    groups = engines.split_for_tp(groups, run.tp, run.tp_group)
    return groups, seconds, generated[0] if generated else seconds


def start_ahead(run: Run, training: concurrent.futures.Future) -> tuple[list[int], asyncio.Task]:
    """Overlapped: draw the next rollout's tasks and start their sandboxes (rollout.start_ahead)
    in the event loop while the learner thread trains, until it is done. Returns the indices
    and the task of their sandboxes, for roll_out; the update's errors surface at
    training.result()."""
    indices = run.sampler.next_batch()
    tasks, cfg = [run.tasks[i] for i in indices], run.cfg
    job = rollout.start_ahead(tasks, cfg.grpo.group_size, cfg.rollout, cfg.sandbox, sandbox.RUN_ID)
    ahead = run.loop.create_task(job)
    done = asyncio.wrap_future(training, loop=run.loop)
    run.loop.run_until_complete(asyncio.wait([done]))  # the sandboxes start meanwhile
    return indices, ahead


def train_on(run: Run, ro: Rollout) -> tuple[dict, dict, float] | None:
    """Steps 4-5 on one rollout: advantages -> samples -> the GRPO update over every rank's, TIS
    on when the rollout's policy is older than the learner's. Touches only policy, optimizer and
    scheduler: it may run in the learner thread beside the next rollout. Collective. Returns
    (group counts, update metrics with staleness_mean/max, seconds of the update), or None when a
    stop signal cut the synchronous update short (no optimizer step taken)."""
    samples, counts = samples_from_groups(ro.groups, run.cfg.grpo)
    ages = staleness(samples, run.step, run.cfg.max_off_policy_steps, run.device)
    t0 = time.perf_counter()
    cfg = loss_config(run.cfg, stale=run.step > ro.version)  # alike on every rank
    # Synchronous: a stop cuts the update short (a collective check per micro-batch); overlapped,
    # the update in the learner thread finishes and is checkpointed (the main thread is rolling out).
    stop = (
        (lambda: agreed_stop(run.stop, run.device)) if run.cfg.max_off_policy_steps == 0 else None
    )
    metrics = update(
        run.policy, run.optimizer, run.scheduler, samples, cfg, run.device, run.ref_model, stop=stop
    )
    if metrics is None:
        return None
    return counts, {**metrics, **ages}, time.perf_counter() - t0


def record(run: Run, ro: Rollout, counts: dict, metrics: dict, train_s: float) -> None:
    """Steps 6-7 after the update on `ro`: the step counted, every rank's episodes gathered, one
    line and metrics.jsonl record (step_s: seconds since the previous step was logged), a
    checkpoint every save_every steps. Collective."""
    run.step, run.stale = run.step + 1, True
    judge = run.judge.metrics if run.judge is not None else {}
    episodes, counts, judge_metrics = gather_episodes(
        ro.indices, ro.groups, counts, judge, run.sampler, run.world
    )
    now = time.perf_counter()
    times = dict(
        rollout_s=ro.rollout_s, generate_s=ro.generate_s, train_s=train_s, sync_s=ro.sync_s
    )
    times["step_s"], run.t_logged = now - run.t_logged, now
    log_step(run, episodes, counts, judge_metrics, metrics, times)
    checkpoint(run, due=run.step % run.cfg.save_every == 0 or run.step == run.cfg.steps)


def log_step(
    run: Run,
    episodes: list[dict],
    counts: dict,
    judge_metrics: dict,
    metrics: dict,
    times: dict,
    rss: dict | None = None,
) -> None:
    """Rank 0: the step's record to metrics.jsonl (and wandb/tensorboard), its line to stdout;
    every rank's peak RSS gathered first (collective) unless given (gather_peak_rss's fields)."""
    rss = rss or gather_peak_rss(run.world)
    if run.rank != 0:
        return
    record = step_record(run.step, episodes, counts, metrics, times, run.cfg.grpo.kl_coef)
    record.update(judge_metrics)
    record.update(rss)
    append_jsonl(run.out_dir / "metrics.jsonl", record)
    run.say(format_step_line(run.step, run.cfg.steps, record))
    if run.extra_log is not None:
        run.extra_log(record, run.step)


def checkpoint(run: Run, due: bool = True) -> bool:
    """save_checkpoint of the current step when `due` and not saved yet (collective; every rank
    decides alike from shared state); one line with its path and seconds. Returns whether it
    wrote one."""
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
        run.layout.trainer_group if run.layout else None,
    )
    run.saved_step = run.step
    run.say(f"[train] checkpoint {path} written ({time.perf_counter() - t0:.1f}s)")
    return True


# -----------------------------------------------------------------------------
# teardown


def finish(run: Run) -> int:
    """After the loop: a checkpoint when stopped by a signal (cfg.checkpoint_on_signal), the HF
    export, the reward curve; after a stop, one line saying what was kept and how to resume.
    Returns the exit code: 0 (all steps, or a clean stop)."""
    cfg = run.cfg
    stopped = run.step < cfg.steps
    if stopped and run.policy is not None:  # a rollout rank of learner/layout.py has none
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
        resume_cmd = os.environ.get(RESUME_CMD_ENV)
        run.say(stop_line(run.stop, run.run_id, run.out_dir, run.saved_step, run.step, resume_cmd))
    if dist.is_initialized():
        dist.barrier()  # no rank tears gloo down while rank 0 still writes (an abort at exit)
    return 0


def teardown(run: Run, ahead: asyncio.Task | None = None) -> None:
    """Close the sandboxes started ahead for a rollout that will not run (rollout.close_ahead:
    starts still in flight would escape the reap), engine and judge; reap every container of
    this run, leave the process group."""
    try:
        if ahead is not None:
            run.loop.run_until_complete(rollout.close_ahead(ahead))
    except Exception as e:  # the reap below still removes what it finds
        print(f"[train] closing the sandboxes started ahead: {type(e).__name__}: {e}", flush=True)
    for closer in (run.engine, run.judge):
        if closer is not None:
            run.loop.run_until_complete(closer.aclose())
    run.loop.close()
    if run.memory is not None:
        run.memory.close()
    sandbox.reap_run(sandbox.RUN_ID)  # nothing of this run may outlive it
    if dist.is_initialized():
        dist.destroy_process_group()


# -----------------------------------------------------------------------------
# the disaggregated layout (cfg.rollout_ranks >= 1): learner/layout.py


def _build_disaggregated(run: Run, local_rank: int) -> None:
    """setup's _build when some ranks only generate: the layout's process groups first; every
    rank holds the task sampler; a trainer the FSDP2 policy over the trainers, optimizer and
    reference model; a rollout rank the engine, sandboxes and judge (_build_generator)."""
    cfg, rank, world, device = run.cfg, run.rank, run.world, run.device
    run.layout = lay = layout.build_layout(rank, world, cfg.rollout_ranks)
    if rank == 0:
        run.out_dir.mkdir(parents=True, exist_ok=True)
        (run.out_dir / "config.json").write_text(json.dumps(dataclasses.asdict(cfg), indent=2))
    dist.barrier()
    (run.out_dir / "trajectories").mkdir(exist_ok=True)
    run.memory = RssRecorder(run.out_dir, rank)
    engines.engine_kind(cfg.policy, device)  # a wrong engine stops here, before any model loads
    run.model_dir = resolve_model_dir(cfg.policy.path, rank)
    run.tokenizer = weights.load_tokenizer(run.model_dir)
    run.sampler = TaskSampler(
        [t.id for t in run.tasks],
        cfg.tasks_per_step,
        lay.rollout_index,
        lay.rollout_ranks,
        cfg.seed,
        cfg.epochs_shuffle,
        cfg.curriculum,
        cfg.curriculum_window,
    )
    if lay.is_trainer:
        mesh = layout.trainer_mesh(lay, device)
        run.policy = load_policy(run.model_dir, cfg, mesh, device)
        if cfg.grpo.kl_coef > 0:
            run.ref_model = load_policy(run.model_dir, cfg, mesh, device, trainable=False)
        run.optimizer, run.scheduler = build_optimizer(run.policy, cfg)
    resume(run)
    if run.start is not None and (rank == 0 or not lay.is_trainer):
        box = [run.sampler.state_dict()]  # the rollout ranks draw on from the checkpoint's
        dist.broadcast_object_list(box, src=0, group=lay.weights_group)
        run.sampler.load_state_dict(box[0])
    if not lay.is_trainer:
        _build_generator(run)
    elif engines.engine_kind(cfg.policy, device) == "vllm":  # as the rollout ranks start theirs
        engines.vllm_engine.join_engine_groups(local_rank)
    run.extra_log = open_logger(cfg, run.out_dir) if rank == 0 else None
    ranks = f"{lay.trainers} trainer rank(s) and {lay.rollout_ranks} rollout rank(s)"
    announce(run, ranks, first=lay.trainers)


def _build_generator(run: Run) -> None:
    """A rollout rank's Docker engines and host admission (first rollout rank's lines), engine
    and judge."""
    cfg, lay, first = run.cfg, run.layout, run.layout.rollout_index == 0
    episode = admission.episode_bytes(cfg.sandbox.memory_mb, cfg.sandbox.storage_mb)
    lines = hosts.configure(cfg.sandbox.docker_hosts, *episode)
    if first:
        print("\n".join(lines), file=sys.stderr) if lines else None
        sandbox.reap()  # containers of dead runs only
    if cfg.sandbox.max_concurrent:
        sandbox.set_max_concurrent(cfg.sandbox.max_concurrent)
    local_ranks = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    fits, line, run.memory.budget_bytes = admission.admit_rank(
        cfg, lay.rollout_ranks, local_ranks, *sandbox.host_resources()
    )
    if first:
        print(line, flush=True)
    cfg.rollout.max_concurrent_episodes = fits
    cfg.policy.engine_max_batch = min(cfg.policy.engine_max_batch, fits)
    run.engine = engines.build_engine(
        cfg.policy, run.model_dir, run.tokenizer, run.device, cfg.seed + run.rank
    )
    if cfg.max_off_policy_steps and hasattr(run.engine, "drop_weights_on_sleep"):
        run.engine.drop_weights_on_sleep = False  # the next rollout runs before the next load
    run.judge = judge_lib.build_judge(cfg.reward, run.out_dir)


def train_disaggregated(run: Run) -> int:
    """The steps of the disaggregated layout (learner/layout.py's two loops, this rank's role),
    then finish (trainers: checkpoint and export) and teardown. Returns the exit code."""
    cfg, lay = run.cfg, run.layout
    try:
        run.t_logged = time.perf_counter()
        if lay.is_trainer:
            why = layout.trainer_loop(
                lay,
                run.step,
                cfg.steps,
                run.sampler.next_batch,  # the same draws as the rollout ranks'
                lambda items: _train_share(run, items),
                run.stop,
                run.device,
                lambda version, stop: _send_policy(run, version, stop),
            )
        else:
            why = layout.rollout_loop(
                lay,
                run.step,
                cfg.steps,
                cfg.max_off_policy_steps,
                run.device,
                lambda n, version: _roll_out_item(run, n, version),
                lambda received, version: _load_policy(run, received, version),
                lambda: run.stop.requested,
                lambda items: run.sampler.record_groups(layout.record_order(items, lay.trainers)),
            )
        if why != "done":
            run.say(f"[train] {why}; not trained on")
        return finish(run)
    finally:
        teardown(run)


def _roll_out_item(run: Run, n: int, version: int) -> dict:
    """A rollout rank: rollout n (roll_out) on the engine's policy `version`, as G's item."""
    run.rollouts, run.step = n, version  # roll_out numbers its files by the one, versions by other
    indices = run.sampler.next_batch()
    groups, rollout_s, generate_s = roll_out(run, indices)
    judge = run.judge.metrics if run.judge is not None else {}
    item = dict(indices=indices, groups=layout.lean_groups(groups or []), stop=groups is None)
    item.update(rollout_s=rollout_s, sync_s=run.sync_s, version=version, judge=dict(judge))
    item["generate_s"] = generate_s
    item["rss"], run.sync_s = peak_rss_bytes(), 0.0
    return item


def _load_policy(run: Run, received, version: int) -> None:
    """A rollout rank: M's policy into the engine; one line with the sums of what arrived and of
    what the engine's model holds after the load (layout.parameters_checksum)."""
    t0 = time.perf_counter()
    run.engine.load_weights(received)
    layout.drain(received)
    run.sync_s = time.perf_counter() - t0
    model = run.engine.model if hasattr(run.engine, "model") else run.engine._model()
    (total, squares), (held, held_sq) = received.checksum, layout.parameters_checksum(model)
    print(
        f"[layout] rank {run.rank} loaded policy version {version} (sum {total:.12e}, sum of "
        f"squares {squares:.12e}); engine holds (sum {held:.12e}, sum of squares {held_sq:.12e})"
        f" in {run.sync_s:.2f}s",
        flush=True,
    )


def _send_policy(run: Run, version: int, stop: bool) -> None:
    """A trainer: M, the policy after `version` steps (engine dtype), unless stop."""
    t0 = time.perf_counter()
    named = None if stop else iter_full_weights(run.policy, run.engine_dtype)
    total, squares = layout.send_update(run.layout, version, stop, named)
    if not stop:
        run.say(
            f"[layout] policy version {version} sent to {run.layout.rollout_ranks} rollout "
            f"rank(s) (sum {total:.12e}, sum of squares {squares:.12e}) in "
            f"{time.perf_counter() - t0:.2f}s"
        )


def _train_share(run: Run, items: list[dict]) -> bool:
    """A trainer: the update on its share of G's groups (train_on), then the step's record and
    checkpoint over the trainers. False when a stop cut the update short."""
    lay = run.layout
    indices, groups = layout.trainer_share(items, run.rank, lay.trainers)
    rollout_s, sync_s = max(x["rollout_s"] for x in items), max(x["sync_s"] for x in items)
    generate_s = max(x["generate_s"] for x in items)
    ro = Rollout(indices, groups, rollout_s, sync_s, min(x["version"] for x in items), generate_s)
    trained = train_on(run, ro)
    if trained is None:
        return False
    counts, metrics, train_s = trained
    run.step += 1
    judge: dict = {}
    for x in items if run.rank == 0 else []:  # cumulative per rollout rank: summed once
        judge = {k: judge.get(k, 0) + v for k, v in x["judge"].items()}
    episodes, counts, judge_metrics = gather_episodes(
        indices, groups, counts, judge, run.sampler, lay.trainers, lay.trainer_group
    )
    rss = gather_peak_rss(lay.trainers, lay.trainer_group, [x["rss"] for x in items])
    now = time.perf_counter()
    times = dict(rollout_s=rollout_s, train_s=train_s, sync_s=sync_s, step_s=now - run.t_logged)
    times["generate_s"] = ro.generate_s
    run.t_logged = now
    log_step(run, episodes, counts, judge_metrics, metrics, times, rss)
    checkpoint(run, due=run.step % run.cfg.save_every == 0 or run.step == run.cfg.steps)
    return True


# -----------------------------------------------------------------------------
# the recipe


def main(argv: list[str] | None = None) -> int:
    """Validate the config, the task set and what the start continues (checkpoints.plan_start),
    set up, train, export. Returns the exit code: 0 when all steps ran and after a clean stop by
    SIGINT/SIGTERM (the step in flight cut short, the last completed step checkpointed, one line
    saying so; torchrun would report any other status as a failure). `--check-config` only
    validates: exit 0, nothing written or started (the Makefile runs it before torchrun). Raises
    configs.ConfigError naming a bad field, the task folder, or the run and fields a start is
    refused for, before anything is written to out_dir or any model, container or API is used."""
    argv = sys.argv[1:] if argv is None else list(argv)
    cfg = configs.parse_cli([a for a in argv if a != "--check-config"], description=__doc__)
    tasks = load_task_set(cfg)
    world = int(os.environ["WORLD_SIZE"]) if "WORLD_SIZE" in os.environ else None
    start = plan_start(cfg.out_dir, dataclasses.asdict(cfg), cfg.resume, cfg.overwrite, world)
    if world is not None or "--check-config" not in argv:  # make's check runs before torchrun
        configs.check_layout(cfg, world or 1)
    if "--check-config" in argv:
        return 0
    run = setup(cfg, tasks, start)
    if cfg.rollout_ranks:  # some ranks only generate, the others only train (learner/layout.py)
        return train_disaggregated(run)
    learner = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="learner")
    pending = None  # max_off_policy_steps >= 1: the rollout the learner trains on beside the next
    training = None
    ahead = None  # (indices, task of their sandboxes) started while the learner trained

    def start_update() -> None:  # 5 (overlap). the update on the previous rollout, once
        nonlocal training
        if pending is not None and training is None:
            training = learner.submit(train_on, run, pending)

    try:
        run.t_logged = time.perf_counter()
        while run.step < cfg.steps and not agreed_stop(run.stop, run.device):
            training = None
            if more := run.rollouts < cfg.steps:  # the last iteration of an overlap only trains
                # 1. this rank's tasks of the step (overlapped: drawn while the learner trained)
                indices, started = ahead or (run.sampler.next_batch(), None)
                ahead = None
                # 2. the engine gets the policy's weights (after every update; after a sleep
                # that dropped them)
                sync = run.stale or run.engine.weights_dropped
                sync_s = sync_weights(run.policy, run.engine, run.engine_dtype) if sync else 0.0
                run.stale = False
                # 3. group_size episodes per task in containers; tests, judge, group rewards;
                # overlapped, the update on the previous rollout starts once this one's
                # generation ended, beside its verifications and judge calls
                version = run.step
                hook = start_update if cfg.max_off_policy_steps else None
                groups, rollout_s, generate_s = roll_out(run, indices, hook, started)
                run.rollouts += 1
                indices = indices[run.rank % run.tp :: run.tp]  # the groups split_for_tp gave
                ro = Rollout(indices, groups, rollout_s, sync_s, version, generate_s)
            start_update()  # the last iteration only trains; a cancelled rollout never ended
            if training is not None and run.rollouts < cfg.steps:
                ahead = start_ahead(run, training)  # the next rollout's sandboxes, meanwhile
            if training is not None:  # 6. log one line; 7. checkpoint
                record(run, pending, *training.result())
                pending = None
            if agreed_stop(run.stop, run.device):
                run.say(
                    f"[train] stopped during the rollout of step {run.rollouts}; "
                    "it is not trained on"
                )
                break
            if more and cfg.max_off_policy_steps == 0:
                # 4. group advantages -> learner samples; 5. the GRPO update over every rank's
                # samples; 6. log one line; 7. checkpoint
                trained = train_on(run, ro)
                if trained is None:  # a signal during the update: no optimizer step was taken
                    run.say(
                        f"[train] stopped during the update of step {run.step + 1}; not trained on"
                    )
                    break
                record(run, ro, *trained)
            elif more:
                pending = ro  # trained on in the next iteration, beside the next rollout
        return finish(run)
    finally:
        learner.shutdown(wait=True)  # an update in flight ends before the process group does
        teardown(run, ahead[1] if ahead else None)  # and a rollout's sandboxes started ahead


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt as e:  # a second signal (stop.StopFlag): the containers are reaped
        if os.environ.get("RANK", "0") == "0":
            print(
                f"[train] {e}: stopped at once; nothing since the last checkpoint kept",
                file=sys.stderr,
            )
        sys.exit(130)
    except configs.ConfigError as e:  # a bad flag, value or task folder: one line, no traceback
        # under torchrun every rank fails alike: one says why
        if os.environ.get("RANK", "0") == "0":
            print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
