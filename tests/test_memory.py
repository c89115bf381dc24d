"""Memory per rank: peak RSS in the step line and metrics.jsonl, the records a killed
rank leaves, and the launcher's line naming it."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from torch.distributed.elastic.multiprocessing.errors import ProcessFailure
from train_helpers import containers_of, run_ids_of, torchrun

from bookkeeping import launch, memory
from bookkeeping.launch import PEER_GONE_EXIT
from bookkeeping.logs import format_step_line
from learner import distributed


def test_peak_rss_is_the_kernels_high_water_mark_in_bytes():
    slack = 16 << 20  # the kernel's RSS counters are per-CPU and synced lazily (pages in batches)
    block = bytearray(256 << 20)  # 256 MiB, touched: resident
    for i in range(0, len(block), 4096):
        block[i] = 1
    now = memory.rss_bytes()
    assert now >= 256 << 20 and memory.peak_rss_bytes() >= now - slack
    del block
    assert memory.rss_bytes() < now - (128 << 20)  # freed (mmapped, given back), yet the peak stays
    assert memory.peak_rss_bytes() >= now - slack


# Tensors freed in the middle of the heap: 12 MiB ones (above our fixed threshold), each followed by
# a small one that is kept (as a step's activations and the small tensors around them). A 28 MiB
# tensor freed first raises glibc's dynamic mmap threshold above 12 MiB, as the learner's first
# freed tensors do.
_HOLES = """
import sys, torch
sys.path.insert(0, {root!r})
from bookkeeping import memory
if {fixed}:
    assert memory.fix_mmap_threshold()
x = torch.ones(7 << 20)  # 28 MiB, freed
del x
before = memory.rss_bytes()
big, small = [], []
for _ in range(20):
    big.append(torch.ones(3 << 20))  # 12 MiB
    small.append(torch.ones(1024))
del big
print((memory.rss_bytes() - before) / (1 << 20))
"""


@pytest.mark.parametrize("fixed", [False, True])
def test_a_fixed_mmap_threshold_gives_freed_tensors_back_to_the_os(fixed):
    root = str(Path(__file__).resolve().parent.parent)
    out = subprocess.run(
        [sys.executable, "-c", _HOLES.format(root=root, fixed=fixed)],
        capture_output=True,
        text=True,
        check=True,
    )
    kept_mib = float(out.stdout.split()[-1])
    # 240 MiB were freed: some kept as heap holes under glibc's own threshold (240 MiB in a plain
    # shell, 60 under pytest's environment), all given back with ours
    assert kept_mib < 20 if fixed else kept_mib > 40, kept_mib


def test_the_recorder_keeps_the_ranks_record_current_and_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(memory.RssRecorder, "interval_s", 0.05)
    recorder = memory.RssRecorder(tmp_path, 3, budget_bytes=3 << 30)
    first = memory.read_record(tmp_path, 3)
    time.sleep(0.3)
    recorder.close()
    last = memory.read_record(tmp_path, 3)
    assert first["rank"] == last["rank"] == 3 and last["pid"] == os.getpid()
    assert last["budget_bytes"] == 3 << 30 and last["time"] > first["time"]
    assert last["peak_rss_bytes"] >= first["peak_rss_bytes"] > 0
    assert [p.name for p in (tmp_path / "memory").iterdir()] == ["rank3.json"]  # no temp left
    assert memory.read_record(tmp_path, 4) is None


def test_a_killed_rank_gets_one_line_with_its_peak_and_budget():
    record = dict(peak_rss_bytes=5_804_000_000, budget_bytes=3072 << 20)
    assert memory.killed_line(1, "SIGKILL", record) == (
        "rank 1 was killed (SIGKILL, likely out of memory): last peak RSS 5.80 GB, budget 3.22 GB"
    )
    assert memory.killed_line(0, "SIGSEGV", dict(record, budget_bytes=0)) == (
        "rank 0 was killed (SIGSEGV): last peak RSS 5.80 GB, no budget known"
    )
    assert memory.killed_line(2, "SIGKILL", None) == (
        "rank 2 was killed (SIGKILL, likely out of memory): it wrote no memory record "
        "(peak RSS unknown)"
    )


def test_the_launcher_names_the_rank_that_failed_first_once(tmp_path):
    memory.write_record(tmp_path, 1, 3072 << 20)
    peak = memory.read_record(tmp_path, 1)["peak_rss_bytes"]
    # as torchrun's ChildFailedError holds them: global rank -> ProcessFailure
    error = ProcessFailure(local_rank=0, pid=10, exitcode=2, error_file="<N/A>")
    oom = ProcessFailure(local_rank=1, pid=11, exitcode=-9, error_file="<N/A>")
    # a rank whose collective failed because the other left (no traceback of its own)
    left = ProcessFailure(local_rank=0, pid=10, exitcode=PEER_GONE_EXIT, error_file="<N/A>")
    # what torchrun sends the surviving ranks once one failed
    stopped = ProcessFailure(local_rank=1, pid=11, exitcode=-15, error_file="<N/A>")
    lines, code = launch.failure_lines({0: left, 1: oom}, tmp_path)
    assert code == 137 and lines == [
        f"[launch] rank 1 was killed (SIGKILL, likely out of memory): last peak RSS "
        f"{peak / 1e9:.2f} GB, budget 3.22 GB"
    ]
    # a rank's error: said by that rank; torchrun's SIGTERM to the other is no memory kill
    assert launch.failure_lines({0: error, 1: stopped}, tmp_path) == (
        ["[launch] rank 0 failed with exit status 2 (its error is above)"],
        1,
    )
    # the rank that failed first, stopped by torchrun as it exited after the other lost it
    assert launch.failure_lines({0: stopped, 1: left}, tmp_path) == (
        [
            "[launch] rank 0 failed first (the other ranks lost it in a collective); torchrun "
            "stopped it with SIGTERM as it exited: its error, if any, is above"
        ],
        1,
    )
    # a SIGTERM from someone else, killing every rank, is named (never as out of memory)
    lines, code = launch.failure_lines({1: stopped}, tmp_path)
    assert code == 143 and lines == [
        f"[launch] rank 1 was killed (SIGTERM): last peak RSS {peak / 1e9:.2f} GB, budget 3.22 GB"
    ]


def test_a_collective_that_lost_its_peer_is_told_from_a_ranks_own_error():
    gloo = (
        "[/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer "
        "[127.0.0.1]:17315. This is typically caused by a remote worker crashing."
    )
    assert distributed.peer_gone(RuntimeError(gloo))
    assert not distributed.peer_gone(RuntimeError("CUDA out of memory"))
    assert not distributed.peer_gone(ValueError(gloo))


def test_the_step_line_ends_with_each_ranks_peak_rss():
    m = dict(
        reward_mean=0.5, reward_std=0.1, resolved_rate=0.25, loss=0.01, approx_kl=1e-3, entropy=1.2,
        clip_frac=0.0, tokens=100, rollout_s=1.0, verify_s=0.5, judge_s=0.0, train_s=2.0, sync_s=0.1,
        rss_peak_gb=2.61, rss_peak_gb_per_rank=[2.61, 2.58],
    )  # fmt: skip
    assert format_step_line(1, 8, m).endswith("sync 0.1s | peak rss 2.61 2.58 GB")


@pytest.mark.model_run
@pytest.mark.docker
def test_a_rank_killed_by_sigkill_is_named_with_its_last_peak_rss_and_budget(tiny_dir, tmp_path):
    out = tmp_path / "run"
    proc, log_path = torchrun(out, tiny_dir, "--steps", "3", launcher="bookkeeping.launch")
    deadline = time.monotonic() + 240
    # rank 1 is past the host admission: its record holds its budget
    while not (memory.read_record(out, 1) or {}).get("budget_bytes"):
        assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text()[-4000:]
        time.sleep(0.2)
    record = memory.read_record(out, 1)
    os.kill(record["pid"], signal.SIGKILL)  # what the kernel's out-of-memory killer sends
    assert proc.wait(timeout=180) == 128 + signal.SIGKILL
    last = memory.read_record(out, 1)  # the record as the rank left it (it may have rewritten it)
    log = log_path.read_text()
    assert [x for x in log.splitlines() if x.startswith("[launch] ")] == [
        "[launch] rank 1 was killed (SIGKILL, likely out of memory): last peak RSS "
        f"{last['peak_rss_bytes'] / 1e9:.2f} GB, budget {last['budget_bytes'] / 1e9:.2f} GB"
    ]
    assert last["pid"] == record["pid"] and last["peak_rss_bytes"] > 100e6
    assert last["budget_bytes"] > 0  # the host admission ran before the kill
    # killed after the set-up: the launcher (bookkeeping/launch.py) reaped what the ranks left
    if "sandbox run ids" in log:
        assert containers_of(run_ids_of(log)) == []


@pytest.mark.model_run
def test_a_rank_that_fails_with_an_error_is_reported_once_without_the_others_tracebacks(
    tiny_dir, tmp_path
):
    out = tmp_path / "run"
    # rank 0 alone writes out_dir/config.json: its error, while rank 1 waits at the barrier after
    (out / "config.json").mkdir(parents=True)
    proc, log_path = torchrun(
        out, tiny_dir, "--steps", "1", launcher="bookkeeping.launch --torchrun"
    )
    assert proc.wait(timeout=300) == 1
    log = log_path.read_text()
    assert log.count("IsADirectoryError: [Errno 21] Is a directory:") == 1, log[-4000:]
    assert [x for x in log.splitlines() if x.startswith("[launch] ")] == [
        "[launch] rank 0 failed with exit status 1 (its error is above)"
    ]
    # rank 1's collective lost its peer: no traceback; torchrun's SIGTERM and table not shown
    assert "Connection closed by peer" not in log and "SIGTERM" not in log, log[-4000:]
    assert "Root Cause" not in log and log.count("Traceback") == 1


# Two optimizer steps of the GRPO update on the tiny model in a 1-rank process group, under glibc's
# own threshold or a fixed one so low (4 KiB) that nearly every tensor gets its own mmap.
_UPDATE = """
import hashlib, pathlib, sys, torch
sys.path.insert(0, {root!r})
from bookkeeping import memory
if {threshold}:
    assert memory.fix_mmap_threshold({threshold})
import configs
from learner import distributed, packing, update
from torch.distributed.device_mesh import init_device_mesh
distributed.init_distributed()
cfg = configs.TrainConfig(policy=configs.PolicyConfig(path={model!r}), lr=1e-3)
cfg.grpo.num_minibatches = 2
policy = distributed.load_policy(pathlib.Path({model!r}), cfg, init_device_mesh("cpu", (1,)), "cpu")
optimizer, scheduler = update.build_optimizer(policy, cfg)
g = torch.Generator().manual_seed(0)
samples = [
    packing.Sample(torch.randint(0, 1000, (40,), generator=g).tolist(), [0] * 8 + [1] * 32,
                   [0.0] * 8 + [-7.0] * 32, (-1.0) ** k)
    for k in range(4)
]
m = update.update(policy, optimizer, scheduler, samples, cfg, torch.device("cpu"))
h = hashlib.sha256()
for _, p in sorted(policy.state_dict().items()):
    h.update(p.full_tensor().numpy().tobytes())
print(repr(m["pg_loss"]), h.hexdigest())
"""


@pytest.mark.model_run
def test_the_mmap_threshold_leaves_the_updates_losses_and_weights_bit_identical(tiny_dir):
    root = str(Path(__file__).resolve().parent.parent)
    outs = [
        subprocess.run(
            [sys.executable, "-c", _UPDATE.format(root=root, threshold=t, model=str(tiny_dir))],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()[-2:]
        for t in (0, 4096)
    ]
    assert outs[0] == outs[1] and float(outs[0][0]) != 0.0


def test_the_launcher_refuses_a_rank_count_below_one_in_one_line(capsys):
    # torchrun itself would fail with a bare AssertionError and a traceback
    with pytest.raises(SystemExit) as e:
        launch.main(["--nproc", "0", "train.py"])
    assert e.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "python -m bookkeeping.launch: error: --nproc must be >= 1 (got 0)"
    )
