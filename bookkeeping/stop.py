"""One stop mechanism for SIGINT/SIGTERM, shared by train.py and evaluate.py.

The first signal is a request, not an exception: `requested` turns True, `signum` remembers which,
one line goes to stderr (from one process only: under torchrun every rank gets the signal, rank 0
says so), and `on_signal` (if set) runs inside the handler; the entry points cancel
the running episodes there (`cancel_on_signal`), so their sandboxes close at once. Training then
cuts the step in flight short (all ranks agree) and keeps the last completed step; evaluation
exits 130 without a summary.

A repeat within `grace_s` seconds counts as the same request (a terminal's Ctrl-C and a launcher's
copy of it). A later repeat raises KeyboardInterrupt (hard stop). Either way the entry point's
`finally` removes this run's containers (sandbox.reap).

Under torchrun the signal comes from bookkeeping/launch.py, which owns Ctrl-C for the whole job:
it creates the file named by $TERMRL_STOP_FILE before signalling, and `install` treats an existing
file as a request already made (a signal that came before the handler was installed is not lost).
"""

import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable

STOP_FILE_ENV = "TERMRL_STOP_FILE"


class StopFlag:
    """SIGINT/SIGTERM -> a stop request (see the module docstring). `what` ends the stderr line,
    e.g. "stopping at the end of this step"; `prefix` starts it, e.g. "[train]"; `announce`
    False: no line (the ranks but rank 0, so a run prints one notice).
    `requested_at` is the request's time.monotonic() (seconds)."""

    def __init__(self, prefix: str, what: str, grace_s: float = 2.0, announce: bool = True):
        self.prefix = prefix
        self.what = what
        self.grace_s = grace_s
        self.announce = announce
        self.requested = False
        self.signum: int | None = None
        self.on_signal: Callable[[], None] | None = None
        self.requested_at = 0.0

    def install(self) -> "StopFlag":
        """Handle SIGINT and SIGTERM in this process (call from the main thread); a stop file the
        launcher already created ($TERMRL_STOP_FILE) is a SIGINT received. Returns self."""
        signal.signal(signal.SIGINT, self._handle)
        signal.signal(signal.SIGTERM, self._handle)
        stop_file = os.environ.get(STOP_FILE_ENV)
        if stop_file and os.path.exists(stop_file) and not self.requested:
            self._handle(signal.SIGINT, None)
        return self

    def cancel_on_signal(
        self, loop: asyncio.AbstractEventLoop, task: asyncio.Future | None
    ) -> None:
        """While `task` runs on `loop`, a signal cancels it (thread-safe); None: nothing to cancel."""
        self.on_signal = None if task is None else (lambda: loop.call_soon_threadsafe(task.cancel))

    def _handle(self, signum, frame):
        name = signal.Signals(signum).name
        if self.requested:
            if time.monotonic() - self.requested_at < self.grace_s:
                return
            raise KeyboardInterrupt(f"second {name}")
        self.requested = True
        self.signum = signum
        self.requested_at = time.monotonic()
        if self.announce:
            print(
                f"{self.prefix} {name}: {self.what} (again to stop at once)",
                file=sys.stderr,
                flush=True,
            )
        if self.on_signal is not None:
            self.on_signal()
