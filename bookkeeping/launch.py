"""`make train`'s launcher: torchrun under a process that owns Ctrl-C and the exit status, and
torchrun itself run so that it says which rank failed first and why, once (`make train`,
experiments/learn.py, experiments/learn_single.py).

    python -m bookkeeping.launch --nproc 2 train.py --preset cpu-smollm2 [train.py flags]

Two processes of this module: the launcher (`run`), and in a session of its own the torchrun it
starts (`torchrun_cmd`: this module again, `--torchrun` and torchrun's arguments; `run_torchrun`
runs torchrun's own `torch.distributed.run.run` in that process).

What the launcher works around (measured, torch 2.13, GNU make 4.3):
- torchrun (elastic/agent/server/api.py) answers SIGINT/SIGTERM with SignalException: it sends the
  signal on to the workers, SIGKILLs them after its shutdown timeout (30 s), prints the exception's
  traceback and exits 1, however cleanly the workers were stopping;
- a terminal's Ctrl-C reaches the whole foreground process group; GNU make waits for its recipe
  and then kills itself with the same signal, so `make train` ends by SIGINT (130) whatever the
  recipe returned.
So here:
- torchrun runs in a session of its own with SIGINT ignored and left out of its signals to
  handle: nothing reaches it from the terminal, its shutdown never starts (the workers install
  their own handler, bookkeeping/stop.py; they inherit the ignored SIGINT until then);
- on a terminal, this process's group becomes the terminal's foreground group while torchrun
  runs (restored after): Ctrl-C reaches this launcher only, not make, so make exits with this
  launcher's status;
- SIGINT, SIGTERM or SIGHUP here: the stop file ($TERMRL_STOP_FILE) is created and SIGINT sent
  to torchrun's workers (each in a session of its own, torchrun's SubprocessHandler): the step
  in flight is cut short, the last completed step checkpointed, exit 0; a second signal is sent
  on likewise (a hard stop in the workers); a third SIGKILLs the workers and torchrun.
- when torchrun fails, every rank has ended (torchrun stops the others first), but a rank killed by
  a signal ran no teardown: what the ranks' processes left (containers, verifier volumes, snapshot
  images) is removed here. The ranks get a session ($TERMRL_SESSION, the label termrl.session of
  all they start; a fresh one unless inherited, as the test suite's is) and the reap takes what of
  that session a gone owner process on this host left: never a live run's things.

What torchrun says when a rank dies: torchrun raises ChildFailedError with each failed rank's exit
code; a rank that died of a signal (SIGKILL is what the kernel's out-of-memory killer sends) then
gets one line from its last record in `<out_dir>/memory/rank<R>.json` (bookkeeping/memory.py,
rewritten every 2 s):

    [launch] rank 1 was killed (SIGKILL, likely out of memory): last peak RSS 5.80 GB, budget 3.00 GB

instead of only the other rank's gloo `Connection reset` and exit -9. The budget is what the host
admission left the rank for itself (sandboxing/admission.rank_budget_bytes). A rank that exited
with an error printed it itself; it gets one line naming its exit status. What only follows from
the first failure is not reported: the ranks whose collective failed because a rank left
(learner.distributed.leave_after_peer: no traceback, they wait for torchrun's SIGTERM) and those
torchrun stopped with SIGTERM (never a memory kill); nor is torchrun's own table of the failed ranks.

Exit status: torchrun's: 0 after all steps and after a clean stop; 128 + the signal's number when a
rank was killed by one; else 1.
"""

import argparse
import contextlib
import logging
import os
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
from torch.distributed import run as torch_run
from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

import configs
from bookkeeping.memory import killed_line, read_record
from bookkeeping.stop import STOP_FILE_ENV
from sandboxing import reaping

# train.py prints it after a clean stop
RESUME_CMD_ENV = "TERMRL_RESUME_CMD"
# sandbox.SESSION: the label termrl.session of all a rank starts
SESSION_ENV = "TERMRL_SESSION"
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# Only when torchrun itself is signalled (by someone else: its session has no terminal): time the
# workers get to write their checkpoint before torchrun SIGKILLs them (its default is 30 s).
SHUTDOWN_TIMEOUT_S = 300
# The first argument that makes this module torchrun (run_torchrun) instead of the launcher.
TORCHRUN_FLAG = "--torchrun"
# A rank's exit status when a collective failed because another rank left the process group (gloo:
# "Connection closed by peer") and torchrun did not stop it within learner.distributed's
# PEER_GONE_WAIT_S: that rank says why; failure_lines names only the rank that failed first.
PEER_GONE_EXIT = 75


# ----------------------------------------------------------------------------- the launcher


def torchrun_cmd(nproc: int, script_args: list[str]) -> list[str]:
    """The torchrun command line: --standalone, nproc ranks, SIGINT left to the workers. torchrun
    runs as this module with TORCHRUN_FLAG (run_torchrun: torchrun's own `run` in-process), which
    names a rank killed by a signal with its last peak RSS and budget."""
    return [
        sys.executable,
        "-m",
        "bookkeeping.launch",
        TORCHRUN_FLAG,
        "--standalone",
        f"--nproc_per_node={nproc}",
        "--signals-to-handle=SIGTERM,SIGHUP,SIGQUIT",
        f"--shutdown-timeout={SHUTDOWN_TIMEOUT_S}",
        *script_args,
    ]


@contextlib.contextmanager
def terminal_foreground() -> Iterator[None]:
    """While inside: this process leads a process group of its own, and that group is the
    controlling terminal's foreground group (a terminal's Ctrl-C reaches it alone); on exit the
    process rejoins its group and that group is the foreground again. Nothing changes without a
    controlling terminal or when this process is not in the foreground (a background job)."""
    try:
        tty = os.open("/dev/tty", os.O_RDWR)
    except OSError:
        # no controlling terminal
        yield
        return
    before = os.getpgrp()
    taken = False
    # a background group may then set it
    ttou = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        taken = os.tcgetpgrp(tty) == before and os.getsid(0) != os.getpid()
        if taken:
            os.setpgid(0, 0)
            os.tcsetpgrp(tty, os.getpgrp())
        yield
    finally:
        if taken:
            with contextlib.suppress(OSError):
                os.tcsetpgrp(tty, before)
                os.setpgid(0, before)
        signal.signal(signal.SIGTTOU, ttou)
        os.close(tty)


def send(torchrun_pid: int, signum: int) -> None:
    """`signum` to torchrun's workers (its children; each leads a session of its own, so nothing
    sent to torchrun's group reaches them); SIGKILL also to torchrun's group."""
    try:
        workers = psutil.Process(torchrun_pid).children()
    except psutil.NoSuchProcess:
        return
    for w in workers:
        with contextlib.suppress(ProcessLookupError):
            os.kill(w.pid, signum)
    if signum == signal.SIGKILL:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(torchrun_pid, signum)


def _ignore_sigint() -> None:
    # inherited by torchrun and, through exec, workers
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def reap_ranks(session: str) -> None:
    """After a failed torchrun: remove from the local engine what gone owner processes of
    `session` left (the ranks' containers, verifier volumes, snapshot images). A Docker error is
    printed, not raised: the exit status stays torchrun's (`make clean-containers` removes them)."""
    try:
        reaping.reap(session=session, owner_gone=True)
    except Exception as e:
        # the run has failed already: say so, keep its status
        print(f"[launch] removing the ranks' containers failed: {e}", file=sys.stderr, flush=True)


def run(nproc: int, script_args: list[str], cwd: str | None = None) -> tuple[int, int | None]:
    """Run torchrun_cmd(nproc, script_args) as described in the module docstring and wait; after a
    non-zero exit, reap_ranks. Returns (torchrun's exit status, the first signal this process got
    or None). The workers' environment gets $TERMRL_STOP_FILE and, unless set, $TERMRL_RESUME_CMD
    (this command with --resume) and $TERMRL_SESSION (a fresh id)."""
    signals: list[int] = []
    procs: list[subprocess.Popen] = []
    stop_file = os.path.join(tempfile.gettempdir(), f"termrl-stop-{os.getpid()}")
    resume = [*script_args, *([] if "--resume" in script_args else ["--resume"])]
    resume_cmd = shlex.join(["python", "-m", "bookkeeping.launch", f"--nproc={nproc}", *resume])
    env = dict(os.environ, **{STOP_FILE_ENV: stop_file})
    env.setdefault(RESUME_CMD_ENV, resume_cmd)
    session = env.setdefault(
        SESSION_ENV, f"launch-{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"
    )
    env.setdefault("PYTHONUNBUFFERED", "1")

    def forward(signum, frame):
        signals.append(signum)
        if len(signals) == 1:
            # before the signal: a worker not yet listening sees it
            open(stop_file, "w").close()
        for proc in procs:
            send(proc.pid, signal.SIGKILL if len(signals) >= 3 else signal.SIGINT)

    previous = {s: signal.signal(s, forward) for s in FORWARDED}
    try:
        with terminal_foreground():
            procs.append(
                subprocess.Popen(
                    torchrun_cmd(nproc, script_args),
                    cwd=cwd,
                    env=env,
                    start_new_session=True,
                    preexec_fn=_ignore_sigint,
                )
            )
            code = procs[0].wait()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(stop_file)
    if code != 0:
        reap_ranks(session)
    return code, (signals[0] if signals else None)


# ----------------------------------------------------------------------------- torchrun, in-process


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


def run_torchrun(argv: list[str]) -> int:
    """torchrun with its arguments `argv`, in this process; returns the exit status (see the module
    docstring)."""
    args = torch_run.parse_args(argv)
    # torchrun logs each failed rank and each SIGTERM it sends; failure_lines says what matters
    logging.getLogger("torch.distributed.elastic.multiprocessing.api").setLevel(logging.CRITICAL)
    try:
        torch_run.run(args)
    except ChildFailedError as e:
        lines, code = failure_lines(e.failures, out_dir_of(args.training_script_args))
        for line in lines:
            print(line, file=sys.stderr, flush=True)
        return code
    return 0


def main(argv: list[str] | None = None) -> int:
    """CLI: --nproc N, then the script and its arguments (the launcher); or TORCHRUN_FLAG, then
    torchrun's arguments (run_torchrun). Returns torchrun's exit status."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [TORCHRUN_FLAG]:
        return run_torchrun(argv[1:])
    parser = argparse.ArgumentParser(
        prog="python -m bookkeeping.launch", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--nproc", type=int, default=1, help="ranks on this node")
    parser.add_argument("script_args", nargs=argparse.REMAINDER, help="train.py and its flags")
    args = parser.parse_args(argv)
    if not args.script_args:
        parser.error("name the script to run under torchrun, e.g. train.py")
    if args.nproc < 1:
        # torchrun itself fails with a bare AssertionError
        parser.error(f"--nproc must be >= 1 (got {args.nproc})")
    return run(args.nproc, args.script_args)[0]


if __name__ == "__main__":
    sys.exit(main())
