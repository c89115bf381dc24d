"""torchrun for train.py that says which rank the kernel killed, with its memory (make train, make learn).

    python -m learner.launch --standalone --nproc_per_node=2 train.py --preset cpu-smollm2

Takes torchrun's arguments and runs torchrun's own `torch.distributed.run.run` in this process.
When a rank dies, torchrun raises ChildFailedError with each failed rank's exit code; a rank that
died of a signal (SIGKILL is what the kernel's out-of-memory killer sends) then gets one line from
its last record in `<out_dir>/memory/rank<R>.json` (bookkeeping/memory.py, rewritten every 2 s):

    [launch] rank 1 was killed (SIGKILL, likely out of memory): last peak RSS 5.80 GB, budget 3.00 GB

instead of only the other rank's gloo `Connection reset` and exit -9. The budget is what the host
admission left the rank for itself (sandboxing/admission.rank_budget_bytes).
Exit code: 0; 128 + the signal's number when a rank was killed by one; else 1.
"""

import sys
from pathlib import Path

from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
from torch.distributed.run import parse_args, run

import configs
from bookkeeping.memory import killed_line, read_record


def out_dir_of(train_args: list[str]) -> Path | None:
    """out_dir of the train.py flags (configs.parse_cli, paths unchecked), None if they do not
    parse (train.py itself reported why)."""
    try:
        return Path(configs.parse_cli(list(train_args), check_paths=False).out_dir)
    except (configs.ConfigError, SystemExit):
        return None


def failure_lines(failures: dict, out_dir: Path | None) -> tuple[list[str], int]:
    """One line per rank killed by a signal, in rank order, and the exit code (128 + the first
    such signal's number; 1 when every failed rank exited by itself). failures: ChildFailedError's
    {global rank: ProcessFailure}."""
    lines = []
    code = 1
    for rank, f in sorted(failures.items()):
        if f.exitcode >= 0:
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
    try:
        run(args)
    except ChildFailedError as e:
        # torchrun's own table of the failed ranks
        print(e.format_msg(), file=sys.stderr)
        lines, code = failure_lines(e.failures, out_dir_of(args.training_script_args))
        for line in lines:
            print(line, file=sys.stderr, flush=True)
        return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
