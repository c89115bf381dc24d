"""Memory per rank (issue 28): peak RSS in the step line and metrics.jsonl, the records a killed
rank leaves, and the launcher's line naming it."""

import os
import signal
import time

import pytest
from torch.distributed.elastic.multiprocessing.errors import ProcessFailure
from train_helpers import containers_of, run_ids_of, torchrun

from bookkeeping import memory
from bookkeeping.logs import format_step_line
from learner import launch


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


def test_the_launcher_names_only_ranks_killed_by_a_signal(tmp_path):
    memory.write_record(tmp_path, 1, 3072 << 20)
    peak = memory.read_record(tmp_path, 1)["peak_rss_bytes"]
    failures = {  # as torchrun's ChildFailedError holds them: global rank -> ProcessFailure
        0: ProcessFailure(local_rank=0, pid=10, exitcode=1, error_file="<N/A>"),
        1: ProcessFailure(local_rank=1, pid=11, exitcode=-9, error_file="<N/A>"),
    }
    lines, code = launch.failure_lines(failures, tmp_path)
    assert code == 137 and lines == [
        f"[launch] rank 1 was killed (SIGKILL, likely out of memory): last peak RSS "
        f"{peak / 1e9:.2f} GB, budget 3.22 GB"
    ]
    assert launch.failure_lines({0: failures[0]}, tmp_path) == ([], 1)


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
