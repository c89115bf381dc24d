"""torchrun for train.py that says which rank failed first and why, once (make train, make learn).

    python -m learner.launch --standalone --nproc_per_node=2 train.py --preset cpu-smollm2

Takes torchrun's arguments and runs torchrun's own `torch.distributed.run.run` in this process.
When a rank dies, torchrun raises ChildFailedError with each failed rank's exit code; a rank that
died of a signal (SIGKILL is what the kernel's out-of-memory killer sends) then gets one line from
its last record in `<out_dir>/memory/rank<R>.json` (bookkeeping/memory.py, rewritten every 2 s):

    [launch] rank 1 was killed (SIGKILL, likely out of memory): last peak RSS 5.80 GB, budget 3.00 GB

instead of only the other rank's gloo `Connection reset` and exit -9. The budget is what the host
admission left the rank for itself (sandboxing/admission.rank_budget_bytes). A rank that exited
with an error printed it itself; it gets one line naming its exit status. What only follows from
the first failure is not reported: the ranks whose collective failed because a rank left
(learner.distributed.leave_after_peer: no traceback, they wait for torchrun's SIGTERM) and those
torchrun stopped with SIGTERM (never a memory kill); nor is torchrun's own table of the failed ranks.
Exit code: 0; 128 + the signal's number when a rank was killed by one; else 1.
"""

import logging
import sys
from pathlib import Path

from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
from torch.distributed.run import parse_args, run

import configs
from bookkeeping.memory import killed_line, read_record
from learner.distributed import PEER_GONE_EXIT


def out_dir_of(train_args: list[str]) -> Path | None:
    """out_dir of the train.py flags (configs.parse_cli, paths unchecked), None if they do not
    parse (train.py itself reported why)."""
    try:
        return Path(configs.parse_cli(list(train_args), check_paths=False).out_dir)
    except (configs.ConfigError, SystemExit):
        return None


def _sigterm(failure) -> bool:
    """A rank killed by SIGTERM (what torchrun sends the other ranks when one failed)."""
    return failure.exitcode < 0 and failure.signal_name() == "SIGTERM"


def failure_lines(failures: dict, out_dir: Path | None) -> tuple[list[str], int]:
    """One line per rank that failed by itself, in rank order: killed by a signal (killed_line),
    or exited with an error status; and the exit code (128 + the first such signal's number; 1
    when no rank was killed). Left out (module docstring): ranks that exited with PEER_GONE_EXIT,
    and ranks that died of SIGTERM when another rank failed otherwise (torchrun stopping the
    survivors); when the others only lost it, a rank torchrun stopped as it exited is the one that
    failed first (never a memory kill). failures: ChildFailedError's {global rank: ProcessFailure}."""
    # a rank whose collective lost the rank that failed (learner.distributed.leave_after_peer)
    lost = [rank for rank, f in failures.items() if f.exitcode == PEER_GONE_EXIT]
    stopped = {rank: f for rank, f in failures.items() if _sigterm(f)}
    # the ranks that failed by themselves: not by another's departure, not by torchrun's SIGTERM
    own = {rank: f for rank, f in failures.items() if rank not in lost and rank not in stopped}
    if not own and lost:
        # the rank that failed first was still exiting when torchrun stopped it
        lines = [
            f"[launch] rank {rank} failed first (the other ranks lost it in a collective); "
            "torchrun stopped it with SIGTERM as it exited: its error, if any, is above"
            for rank in sorted(stopped)
        ]
        return lines, 1
    if not own:
        # SIGTERM alone, from someone else than torchrun: the ranks it killed
        own = stopped
    lines = []
    code = 1
    for rank, f in sorted(own.items()):
        if f.exitcode > 0:
            lines.append(
                f"[launch] rank {rank} failed with exit status {f.exitcode} (its error is above)"
            )
            continue
        record = read_record(out_dir, rank) if out_dir is not None else None
        lines.append("[launch] " + killed_line(rank, f.signal_name(), record))
        if code == 1:
            # exitcode -N: killed by signal N
            code = 128 - f.exitcode
    return lines, code


def main(argv: list[str] | None = None) -> int:
    """torchrun with argv; returns the exit code (see the module docstring)."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    # torchrun logs each failed rank and each SIGTERM it sends; failure_lines says what matters
    logging.getLogger("torch.distributed.elastic.multiprocessing.api").setLevel(logging.CRITICAL)
    try:
        run(args)
    except ChildFailedError as e:
        lines, code = failure_lines(e.failures, out_dir_of(args.training_script_args))
        for line in lines:
            print(line, file=sys.stderr, flush=True)
        return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
