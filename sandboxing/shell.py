"""The shell inside a sandbox: the server script (the container's main process), the worker script (one
long-lived bash per sandbox that runs every command), the attach-socket reader and the output capture.

sandbox.py starts the container with SERVER_SCRIPT and WORKER_SCRIPT in its environment and talks to the
server through `Shell`; this file holds everything about the in-container protocol (see the comment below).
"""

from __future__ import annotations

import contextlib
import re
import socket
import time

import docker

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
        self.head_limit, self.tail_limit = limit // 2, limit - limit // 2
        self.head, self.tail, self.total = bytearray(), bytearray(), 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self.tail_limit:  # trim in batches, not on every chunk
                del self.tail[: len(self.tail) - self.tail_limit]

    def result(self) -> tuple[str, bool]:
        tail = bytes(self.tail[-self.tail_limit :]) if self.tail_limit else b""
        cut = self.total - len(self.head) - len(tail)
        if cut <= 0:
            return clean_output(bytes(self.head) + tail), False
        return clean_output(
            bytes(self.head)
        ) + f"\n[... {cut} bytes of output cut ...]\n" + clean_output(tail), True


class Shell:
    """The shell server of one sandbox (the container's main process), reached through one attach socket:
    commands go to its stdin, output comes back as Docker's multiplexed frames. Closing the socket (or the
    owner dying) closes the container's stdin: the server's `read` fails, it exits, the container stops."""

    def __init__(self, api: docker.APIClient, container_id: str):
        sock = api.attach_socket(
            container_id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
        )
        self._io = sock  # keep the SocketIO (and the response it holds) alive
        self.sock: socket.socket = getattr(sock, "_sock", sock)
        self.raw = b""  # bytes not yet split into multiplexed frames
        self.carry = b""  # stdout bytes held back because a marker may straddle two reads
        self.leftover = b""  # output that arrived after the last command ended (background jobs)
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
        raw, pos, out = self.raw + data, 0, []
        while (
            len(raw) - pos >= 8
        ):  # frame: stream (1 byte), 3 zero bytes, payload size (4 bytes, big endian)
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
    buf, found = shell.carry + data, []
    while True:
        i = buf.find(prefix)
        if i < 0:
            keep = min(len(buf), len(prefix) - 1)
            emit(buf[: len(buf) - keep])
            shell.carry = buf[len(buf) - keep :]
            return found
        emit(buf[:i])
        j = buf.find(b"\x00", i + len(prefix))
        if j < 0 and len(buf) - i < 128:  # a marker split across reads: wait for the rest
            shell.carry = buf[i:]
            return found
        if j < 0:  # not a marker after all (too long): plain output
            emit(buf[i : i + 1])
            buf = buf[i + 1 :]
            continue
        fields = buf[i + len(prefix) : j].split(b":")
        found.append(fields)
        buf = buf[j + 1 :]
        if fields[0] == b"E":  # what follows belongs to whatever runs after this command
            shell.leftover, shell.carry = buf, b""
            return found
