"""Shared by the training tests (test_train.py, test_pipeline.py, test_memory.py, test_stop.py): real
gloo ranks in fresh processes with the tiny random Qwen3 under FSDP2, a fixed set of samples, and the
end-to-end run of train.py under torchrun with the containers its ranks leave."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import learner.distributed
import learner.packing
from hf import weights

# -----------------------------------------------------------------------------
# distributed: real FSDP2 over gloo on a tiny random Qwen3


def spawn(fn, world_size: int, *args):
    """Run fn(rank, world_size, store_file, *args) in world_size fresh processes (gloo on 127.0.0.1).
    The rendezvous goes through a fresh file, not a TCP port another test could take in between."""
    store = tempfile.mktemp(prefix="termrl-rdzv-")
    try:
        mp.start_processes(
            fn, args=(world_size, store, *args), nprocs=world_size, join=True, start_method="spawn"
        )
    finally:
        if os.path.exists(store):
            os.remove(store)


def init_gloo(rank, world_size, store):
    """Join a world_size gloo group through the file `store` as `rank` (one thread); return its
    1-D CPU device mesh."""
    os.environ.update(
        RANK=str(rank), WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank), GLOO_SOCKET_IFNAME="lo"
    )
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world_size)
    return torch.distributed.device_mesh.init_device_mesh("cpu", (world_size,))


def fsdp_policy(model_dir, mesh):
    """The HF checkpoint in model_dir loaded and FSDP2-sharded over mesh, gradients summed over ranks."""
    import model

    policy = weights.load_hf(model_dir)
    model.apply_fsdp2(policy, mesh)
    learner.distributed.set_gradient_sum(policy)
    return policy


# lengths 12, 9, 7, 4 (model lengths 11, 8, 6, 3) twice: budget 14 packs all eight into 4 micro-batches
# (11+3, 11+3, 8+6, 8+6) and each rank's half into 2.
LENGTHS = [12, 9, 7, 4, 12, 9, 7, 4]


def fixed_samples(vocab: int) -> list:
    """Eight seeded samples of LENGTHS tokens below vocab: prompts of 1 or 2 tokens, one masked
    observation token, engine log-probs near the tiny model's uniform one, seeded advantages."""
    g = torch.Generator().manual_seed(0)
    out = []
    for k, L in enumerate(LENGTHS):
        ids = torch.randint(0, vocab, (L,), generator=g).tolist()
        prompt = 1 + k % 2
        mask = [0] * prompt + [1] * (L - prompt)
        mask[prompt + 1] = 0  # an observation token between two turns
        # near the tiny model's uniform log-prob log(1/49152) = -10.80, so the TIS weights
        # exp(trainer - engine) spread over about [0.5, 2.5] and some hit the cap of 2
        lp = [(-10.8 + 0.9 * (float(torch.rand((), generator=g)) - 0.5) * 2) * m for m in mask]
        out.append(learner.packing.Sample(ids, mask, lp, float(torch.randn((), generator=g))))
    return out


# -----------------------------------------------------------------------------
# end to end: torchrun, 2 gloo ranks, tiny random Qwen3, easy tasks in real Docker containers

ROOT = Path(__file__).resolve().parent.parent
E2E_ARGS = [
    "--tasks-per-step",
    "2",
    "--grpo.group-size",
    "2",
    "--rollout.max-turns",
    "2",
    "--rollout.max-tokens-per-turn",
    "16",
    "--task-ids",
    "write-hello-file",
    "append-line",
    "--grpo.no-drop-zero-variance-groups",
]  # a random policy scores every episode alike


def torchrun(out_dir: Path, model_dir: Path, *args: str, launcher: str = "torch.distributed.run"):
    """Start train.py on 2 ranks under `launcher` (torch.distributed.run, bookkeeping.launch, or the
    launcher's torchrun alone: "bookkeeping.launch --torchrun") with the tiny policy in model_dir,
    E2E_ARGS and args, writing to out_dir; returns the process and its log (stdout and stderr),
    `<out_dir>.log`."""
    ranks = (
        ["--nproc", "2"]
        if launcher == "bookkeeping.launch"
        else ["--standalone", "--nproc_per_node=2"]
    )
    cmd = [
        sys.executable,
        "-m",
        *launcher.split(),
        *ranks,
        "train.py",
        "--preset",
        "cpu-smollm2",
        "--policy.path",
        str(model_dir),
        "--out-dir",
        str(out_dir),
        *E2E_ARGS,
        *args,
    ]
    env = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")
    log = open(out_dir.parent / f"{out_dir.name}.log", "w")
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT), Path(
        log.name
    )


def run_ids_of(log_text: str) -> list[str]:
    """The ranks' sandbox run ids, from train.py's `sandbox run ids a,b` line."""
    line = next(x for x in log_text.splitlines() if "sandbox run ids" in x)
    return line.rsplit("sandbox run ids ", 1)[1].strip().split(",")


def containers_of(run_ids: list[str]) -> list[str]:
    """Ids of the containers, running or not, labelled with one of run_ids."""
    out = []
    for r in run_ids:
        out += subprocess.run(
            ["docker", "ps", "-aq", "--filter", f"label=termrl.run_id={r}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    return out
