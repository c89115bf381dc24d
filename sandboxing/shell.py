"""The shell inside a sandbox: the server script (the container's main process), the worker script (one
long-lived bash per sandbox that runs every command), the attach-socket reader, the output capture, and
the sandbox's end of the protocol (`ShellSession`: a command sent and its output streamed, the server
restarted with its container when it died, a stuck one killed from outside).

sandbox.py starts the container with SERVER_SCRIPT and WORKER_SCRIPT in its environment and runs its
commands through a `ShellSession`; this file holds everything about the in-container protocol (see the
comment below).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import os
import re
import secrets
import socket
import threading
import time
from dataclasses import dataclass

import docker
import docker.errors

import configs
from sandboxing.calls import SandboxError

log = logging.getLogger("termrl.sandbox")

# ---------------------------------------------------------------------------------------------------------
# In-container shell. The server (the container's main process, bash) reads one command at a time from the
# attach socket and hands it to the worker: ONE long-lived bash that runs every stateful command in itself,
# so what a terminal keeps persists (variables, functions, aliases, options, cwd, directory stack, jobs).
# The scripts travel in environment variables (TERMRL_SERVER/INNER) that the server unsets at once.

# Protocol, one message per command on the server's stdin: "<nonce> <timeout_s> <stateful>\n<command>\0".
# Output markers are NUL-delimited and carry the per-command nonce, so command output cannot end a command:
# S:<pid> when the command is handed over (the worker, or the fresh bash of a stateless command),
# E:<rc>:<timed_out> when it is over. The worker reads its script from a pipe (fd 5 of the server) and the
# server writes `eval -- <%q-quoted command> </dev/null` then a call of __termrl_done, which snapshots the
# state (declare -p/-f, alias -p, shopt -p, set +o, trap -p, umask, cwd, dirstack) into one of two slot
# files and writes "<nonce> <rc> <slot>" to the server's done pipe (fd 7, reached by the worker as
# /proc/<server>/fd/7 so no job inherits it). The server waits with `read -t` in growing slices, checking
# that the worker is alive (`exit 3` ends it: rc from `wait`). On timeout it stops (SIGSTOP, so nothing forks
# any more), then kills, the worker and every process started since the command began (start time from
# /proc/<pid>/stat, and within the command's first clock tick the PIDs alive before it, so jobs of earlier
# commands keep running) with builtins only: a fork bomb may hold every
# pid. A dead worker is replaced on the next command and restored from the last slot, also after a
# container restart (the slot name is kept in $d/slot).
SERVER_SCRIPT = r"""
exec 2>/dev/null  # the server's own stderr only carries job notices such as "Killed"
inner=$TERMRL_INNER; unset TERMRL_SERVER TERMRL_INNER
d=/tmp/.termrl w= slot=
read -r slot < $d/slot; [[ $slot == [01] ]] || slot=
exec 7<> <(:)  # the done pipe, opened read-write: it never reads EOF, and writes never fail
done_line() {  # $1: seconds to wait; sets m r sn from a line "xxxx<nonce> <rc> <slot>" (one write each).
  local c l      # A `read -t` that times out may still have taken a byte: wait for one, then read the rest,
  read -r -t $1 -n 1 c <&7 && read -r l <&7 || return 1  # and drop the x's
  l=${l##*x} m=${l%% *} l=${l#* } r=${l%% *} sn=${l#* }
}
start_worker() {
  exec 5<> <(:)
  bash --norc --noprofile -s <&5 5>&- 7>&- 2>&1 & w=$!
  printf '__termrl_sup=%s __termrl_d=%s __termrl_slot=%s\n%s\n' $$ $d "${slot:-0}" "$inner" >&5
  [ -n "$slot" ] && printf 'builtin . %s/state.%s >/dev/null 2>&1\n' $d "$slot" >&5
}
ours() {  # $1: clock tick the command started at; $f: a /proc/<pid>/stat. Sets p (pid) and r (fields after
  # the name); true for a live process started since the command began (and not alive before it)
  read -r l < $f || return 1
  p=${l%% *} r=(${l##*) })
  (( p == $$ || p == 1 || r[19] < $1 )) && return 1
  (( r[19] == $1 )) && [[ $pre == *" $p "* ]] && return 1  # same clock tick: alive before the command
  [ "${r[0]}" != Z ]
}
sweep() {  # $1: clock tick the command started at; stop, then kill, every process started since, and $2
  local f l r p pids=() n more
  [ -n "$2" ] && kill -STOP $2 && pids+=($2)
  for n in {1..50}; do
    more=0
    for f in /proc/[0-9]*/stat; do
      ours $1 || continue
      pids+=($p)
      [ "${r[0]}" = T ] || { kill -STOP $p; more=1; }
    done
    (( more )) || break
  done
  kill -KILL "${pids[@]}"
  for n in {1..20}; do  # a fork in flight when its parent stopped surfaces only now: kill it too
    more=0
    for f in /proc/[0-9]*/stat; do
      ours $1 && [[ " ${pids[*]} " != *" $p "* ]] || continue
      pids+=($p); kill -KILL $p; more=1
    done
    (( more )) || break
  done
}
while IFS=' ' read -r n t st && IFS= read -r -d '' c; do
  [ -d $d ] || { mkdir -p $d && chmod 700 $d; }
  read -r up _ < /proc/uptime; t0=$(( 10#${up/./} ))
  pre=" "; for f in /proc/[0-9]*; do pre+="${f#/proc/} "; done  # tells apart the jobs started in t0's tick
  dl=$(( ${EPOCHREALTIME/./} + 10#${t/./} * 1000 ))
  if [ "$st" = 1 ]; then
    [ -n "$w" ] && kill -0 $w || start_worker
    p=$w
    printf '\0TERMRL:%s:S:%s\0' "$n" "$p"
    printf -v q %q "$c"
    printf 'builtin eval -- %s </dev/null\n{ __termrl_done "$?" %s; } 2>/dev/null\n' "$q" "$n" >&5
  else
    { bash --norc --noprofile -c "$c" </dev/null 2>&1 7>&-; printf 'xxxx%s %s -\n' "$n" "$?" >&7; } 5>&- & p=$!
    printf '\0TERMRL:%s:S:%s\0' "$n" "$p"
  fi
  rc=1 to=0 sl=2000
  while :; do
    now=${EPOCHREALTIME/./}
    (( now >= dl )) && { to=1; break; }
    (( sl > dl - now )) && sl=$(( dl - now ))
    printf -v s '%d.%06d' $(( sl / 1000000 )) $(( sl % 1000000 ))
    if done_line $s; then
      [ "$m" = "$n" ] || continue
      rc=$r
      [ "$sn" != - ] && [ "$st" = 1 ] && slot=$sn && printf '%s\n' $slot >| $d/slot
      break
    fi
    kill -0 $p || { done_line 0.01 && [ "$m" = "$n" ] && rc=$r || { wait $p; rc=$?; }; [ "$st" = 1 ] && w=; break; }
    (( sl < 100000 )) && sl=$(( sl * 2 ))
  done
  if [ $to = 1 ]; then
    if [ "$st" = 1 ]; then sweep $t0 $w; w=; else sweep $t0; fi
    wait $p  # reap it now: no zombie left for `ps` to show
    while done_line 0.01; do :; done
  fi
  printf '\0TERMRL:%s:E:%s:%s\0' "$n" "$rc" "$to"
done
"""

# The worker's own code, run at its top level before anything else (then the last snapshot, if any, is
# sourced at top level too, so `declare` makes globals). __termrl_done runs after each command: snapshot
# into the other slot (write, then report: a worker killed mid-write leaves the previous slot intact), then
# report, then return the command's status so `$?` is right in the next command. Builtins only.
WORKER_SCRIPT = r"""
BASH_ARGV0=bash
shopt -s expand_aliases  # a terminal expands aliases; a non-interactive bash does not by default
__termrl_done() {
  __termrl_slot=$(( 1 - __termrl_slot ))
  {
    builtin declare -p; builtin declare -f; builtin declare -F; builtin alias -p; builtin shopt -p
    builtin set +o; builtin trap -p; builtin umask -p; builtin printf 'builtin cd -- %q\n' "$PWD"
    for (( __termrl_i = ${#DIRSTACK[@]} - 1; __termrl_i > 0; __termrl_i-- )); do
      builtin printf 'builtin pushd -n -- %q\n' "${DIRSTACK[__termrl_i]}"
    done
  } >| "$__termrl_d/state.$__termrl_slot" && __termrl_r=$__termrl_slot || __termrl_r=-
  builtin printf 'xxxx%s %s %s\n' "$2" "$1" "$__termrl_r" >| /proc/$__termrl_sup/fd/7
  builtin return "$1"
}
"""

_ANSI = re.compile(
    rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b]*(?:\x1b\\)?|\x1b[@-Z\\-_]"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_output(data: bytes) -> str:
    """Bytes a terminal command wrote -> text for the model: ANSI escape sequences removed, UTF-8 decoded
    with U+FFFD for invalid bytes, CR LF and lone CR turned into LF, other control bytes (NUL, BEL, ...) removed."""
    text = _ANSI.sub(b"", data).decode("utf-8", errors="replace")
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


class Capture:
    """Keeps the first `limit // 2` and the last `limit - limit // 2` bytes of a stream: memory O(limit)."""

    def __init__(self, limit: int):
        self.head_limit = limit // 2
        self.tail_limit = limit - limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            # trim in batches, not on every chunk
            if len(self.tail) > 2 * self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

    def result(self) -> tuple[str, bool]:
        tail = bytes(self.tail[-self.tail_limit :]) if self.tail_limit else b""
        cut = self.total - len(self.head) - len(tail)
        if cut <= 0:
            return clean_output(bytes(self.head) + tail), False
        marker = f"\n[... {cut} bytes of output cut ...]\n"
        return clean_output(bytes(self.head)) + marker + clean_output(tail), True


class Shell:
    """The shell server of one sandbox (the container's main process), reached through one attach socket:
    commands go to its stdin, output comes back as Docker's multiplexed frames. Closing the socket (or the
    owner dying) closes the container's stdin: the server's `read` fails, it exits, the container stops."""

    def __init__(self, api: docker.APIClient, container_id: str):
        sock = api.attach_socket(
            container_id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
        )
        # keep the SocketIO (and the response it holds) alive
        self._io = sock
        self.sock: socket.socket = getattr(sock, "_sock", sock)
        # bytes not yet split into multiplexed frames
        self.raw = b""
        # stdout bytes held back because a marker may straddle two reads
        self.carry = b""
        # output that arrived after the last command ended (background jobs)
        self.leftover = b""
        self.alive = True

    def frames(self, deadline: float) -> list[tuple[int, bytes]] | None:
        """Read once; return the complete (stream, payload) frames ([] on EOF-less timeout, None on EOF)."""
        self.sock.settimeout(max(0.01, min(1.0, deadline - time.monotonic())))
        try:
            data = self.sock.recv(262144)
        except TimeoutError:
            return []
        except OSError:
            data = b""
        if not data:
            self.alive = False
            return None
        raw = self.raw + data
        pos = 0
        out = []
        # a frame: stream (1 byte), 3 zero bytes, payload size (4 bytes, big endian), payload
        while len(raw) - pos >= 8:
            size = int.from_bytes(raw[pos + 4 : pos + 8], "big")
            if len(raw) - pos < 8 + size:
                break
            out.append((raw[pos], raw[pos + 8 : pos + 8 + size]))
            pos += 8 + size
        self.raw = raw[pos:]
        return out

    def close(self) -> None:
        self.alive = False
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(Exception):
            self._io.close()


def split_markers(shell: Shell, nonce: bytes, data: bytes, emit) -> list[list[bytes]]:
    """Split stdout data into output (passed to emit) and this command's markers (returned, as fields)."""
    prefix = b"\x00TERMRL:" + nonce + b":"
    buf = shell.carry + data
    found = []
    while True:
        i = buf.find(prefix)
        if i < 0:
            keep = min(len(buf), len(prefix) - 1)
            emit(buf[: len(buf) - keep])
            shell.carry = buf[len(buf) - keep :]
            return found
        emit(buf[:i])
        j = buf.find(b"\x00", i + len(prefix))
        # a marker split across reads: wait for the rest
        if j < 0 and len(buf) - i < 128:
            shell.carry = buf[i:]
            return found
        # not a marker after all (too long): plain output
        if j < 0:
            emit(buf[i : i + 1])
            buf = buf[i + 1 :]
            continue
        fields = buf[i + len(prefix) : j].split(b":")
        found.append(fields)
        buf = buf[j + 1 :]
        # what follows belongs to whatever runs after this command
        if fields[0] == b"E":
            shell.leftover = buf
            shell.carry = b""
            return found


# ---------------------------------------------------------------------------------------------------------
# The sandbox's end of the protocol


@dataclass
class ExecResult:
    """One command's outcome. exit_code is None when the command timed out or its shell was killed."""

    exit_code: int | None
    # stdout and stderr interleaved, UTF-8 (errors replaced), ANSI stripped, head + tail capped
    output: str
    timed_out: bool
    # True when bytes were cut from the middle (the output says how many)
    truncated: bool
    # wall clock seconds, host side
    duration_s: float


# the machine's secret behind the command nonces (`command_nonce`), in configs.cache_dir()
NONCE_KEY_FILE = "shell_nonce_key"
_nonce_key: bytes | None = None


def nonce_key() -> bytes:
    """32 random bytes kept in configs.cache_dir()/shell_nonce_key (mode 0600; made once, by the
    first process that needs it: written to a temporary file and linked into place, so concurrent
    first callers agree). Never enters a container."""
    global _nonce_key
    if _nonce_key is None:
        path = configs.cache_dir() / NONCE_KEY_FILE
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{NONCE_KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
            fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(secrets.token_bytes(32))
            # the first link wins; a loser reads the winner's key
            with contextlib.suppress(FileExistsError):
                os.link(tmp, path)
            tmp.unlink()
        _nonce_key = path.read_bytes()
    return _nonce_key


def command_nonce(index: int, cmd: str, stateful: bool) -> str:
    """The nonce of a sandbox's `index`-th command (16 hex digits): HMAC-SHA256 of (index, stateful,
    command) under the machine's secret (`nonce_key`). An agent cannot guess it (the key never enters
    a container; one nonce it sees tells nothing of another), and the same commands in the same order
    get the same nonces, so what an episode sees does not depend on a random draw: a resumed run
    replays the uninterrupted one."""
    msg = f"{index}\0{int(stateful)}\0{cmd}".encode()
    return hmac.new(nonce_key(), msg, hashlib.sha256).hexdigest()[:16]


class ShellSession:
    """The commands of one sandbox, one at a time, through its shell server (`Shell`): a command is sent
    as one message and its output streamed back until its end marker. A server that died (`kill -9 -1`,
    OOM) is restarted with its stopped container (files kept, processes lost); one stuck past a command's
    timeout has the command's shell killed from a fresh `docker exec` (the sweep). Blocking: called from a
    worker thread (sandbox.Sandbox.exec)."""

    def __init__(self, container_id: str, name: str, shell: Shell):
        self.container_id = container_id
        self.name = name
        # also the dead man: closing its socket stops the container
        self.shell: Shell | None = shell
        self._lock = threading.Lock()
        # commands sent so far (retries included): the index of the next one's nonce
        self._sent = 0

    def close(self) -> None:
        """Close the shell's socket: the server reads EOF and exits, the container stops."""
        if self.shell is not None:
            self.shell.close()

    def run(
        self,
        api,
        cmd: str,
        timeout: float,
        stateful: bool,
        output_bytes: int,
        check_open,
        check_disk,
    ) -> ExecResult:
        """Run one command (waiting for the one before it), restarting the shell server first when it
        is gone. stateful: in the worker, whose state persists (else in a fresh bash). output_bytes:
        head + tail kept. check_open / check_disk: the sandbox's checks, called under the lock and
        before a restart (they raise SandboxError / DiskLimitError). Raises SandboxError when the
        container cannot be restarted or the shell keeps dying before the command starts."""
        with self._lock:
            check_open()
            t0 = time.monotonic()
            for _ in range(2):
                if self.shell is None or not self.shell.alive:
                    # a container killed for its disk is never restarted
                    check_disk()
                    self.shell = self._reopen(api)
                res = self._send(api, self.shell, cmd, timeout, stateful, output_bytes, t0)
                if res is not None:
                    return res
                # The command never started: the shell died first (a shell opened while the container was
                # stopping after `kill -9 -1` dies at once): let the container settle, restart it, retry once.
                self.shell.close()
                self.shell = None
                self._settle(api)
            raise SandboxError(
                f"sandbox {self.name}: the shell keeps dying before the command starts"
            )

    def _send(
        self,
        api,
        shell: Shell,
        cmd: str,
        timeout: float,
        stateful: bool,
        output_bytes: int,
        t0: float,
    ) -> ExecResult | None:
        """Send one command and stream its output. None when the shell was gone before the command started."""
        nonce = command_nonce(self._sent, cmd, stateful)
        self._sent += 1
        try:
            shell.sock.sendall(
                f"{nonce} {timeout:.3f} {int(stateful)}\n".encode() + cmd.encode() + b"\0"
            )
        except OSError:
            return None
        cap = Capture(output_bytes)
        cap.feed(shell.leftover)
        shell.leftover = b""
        group = None
        end = None
        swept = False
        # the server itself stops the command at `timeout`, within about a second
        deadline = t0 + timeout + 5.0
        while end is None:
            if time.monotonic() > deadline:
                if swept or group is None:
                    break
                # the server is stuck: kill the command's shell from outside
                with contextlib.suppress(Exception):
                    self._sweep(api, group)
                swept = True
                deadline = time.monotonic() + 2.0
            frames = shell.frames(deadline)
            if frames is None:
                break
            for stream, payload in frames:
                if end is not None:
                    # after this command's end: output of background jobs, for the next one
                    shell.leftover += payload
                elif stream != 1:
                    # the server's own stderr (rare): keep it, never scan it for markers
                    cap.feed(payload)
                else:
                    for fields in split_markers(shell, nonce.encode(), payload, cap.feed):
                        if fields[0] == b"S":
                            group = int(fields[1])
                        elif fields[0] == b"E":
                            end = (int(fields[1]), fields[2] == b"1")
        if group is None and end is None and not shell.alive:
            return None
        output, truncated = cap.result()
        duration = time.monotonic() - t0
        if end is not None:
            rc, timed_out = end
            # the command's shell never started
            if group is None:
                output += (
                    f"\n[termrl: the shell could not start the command (status {rc}); "
                    "timeout or bash may be missing from the sandbox]"
                )
            return ExecResult(None if timed_out else rc, output, timed_out, truncated, duration)
        # No end marker: the shell died (kill -9 -1, OOM) or hung past every deadline.
        hung = shell.alive
        shell.close()
        self.shell = None
        if hung:
            # the server too: the container stops
            with contextlib.suppress(Exception):
                self._sweep(api, group, pattern="[t]ermrl-shell")
            output += "\n[termrl: the command did not stop after its timeout; its shell was killed]"
        else:
            output += (
                "\n[termrl: the shell running this command was killed; "
                "the next command starts a new one]"
            )
        if not self._settle(api):
            output += (
                "\n[termrl: the sandbox container stopped because every process in it was killed; "
                "the next command restarts it: files are kept, processes are not]"
            )
        return ExecResult(None, output, hung, truncated, duration)

    def _settle(self, api, within_s: float = 2.0) -> bool:
        """Wait until a container whose processes were all killed has stopped; return whether it still runs."""
        stop_by = time.monotonic() + within_s
        while self._running(api) and time.monotonic() < stop_by:
            time.sleep(0.1)
        return self._running(api)

    def _reopen(self, api) -> Shell:
        """Restart the stopped container (its main process, the shell server, was killed, e.g. by
        `kill -9 -1`) with a new attach socket: files are kept, processes are not. A container whose server
        is stuck (e.g. a background fork bomb holds every pid) is killed first."""
        if self._settle(api):
            with contextlib.suppress(docker.errors.APIError):
                api.kill(self.container_id)
            if self._settle(api, 10.0):
                raise SandboxError(
                    f"sandbox {self.name}: its shell is gone and the container does not stop"
                )
        try:
            shell = Shell(api, self.container_id)
            api.start(self.container_id)
        except docker.errors.NotFound:
            raise SandboxError(
                f"sandbox {self.name}: container {self.container_id[:12]} no longer exists (reaped?)"
            ) from None
        except docker.errors.APIError as e:
            raise SandboxError(
                f"sandbox {self.name}: restarting its stopped container failed: {e.explanation or e}"
            ) from e
        log.warning(
            "sandbox %s: its container had stopped; restarted it (files kept, processes lost)",
            self.name,
        )
        return shell

    def _running(self, api) -> bool:
        try:
            return bool(api.inspect_container(self.container_id)["State"]["Running"])
        except docker.errors.NotFound:
            return False

    def _sweep(self, api, pid: int | None, pattern: str | None = None) -> None:
        """Kill a process (and processes whose command line matches pattern) from a fresh exec."""
        cmd = []
        if pid:
            cmd.append(f"kill -KILL {int(pid)}")
        if pattern:
            cmd.append(f"pkill -KILL -f '{pattern}'")
        if cmd:
            argv = ["sh", "-c", "; ".join(cmd) + "; true"]
            eid = api.exec_create(self.container_id, argv, user="root")["Id"]
            api.exec_start(eid)
