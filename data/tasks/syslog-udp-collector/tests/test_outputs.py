import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def collector():
    d = tempfile.mkdtemp()
    port = free_udp_port()
    p = subprocess.Popen([sys.executable, "/app/syslogd.py", "--port", str(port), "--dir", d],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        # wait until the collector files a probe message
        for _ in range(400):
            if p.poll() is not None:
                raise AssertionError("collector exited: " + p.stderr.read().decode()[-1500:])
            sock.sendto(b"<14>Jan  1 00:00:00 probe probe: up", ("127.0.0.1", port))
            if os.path.exists(f"{d}/probe/user.log"):
                break
            time.sleep(0.1)
        else:
            raise AssertionError("collector never wrote the probe message")
        yield d, (lambda m: sock.sendto(m.encode() if isinstance(m, str) else m, ("127.0.0.1", port)))
    finally:
        sock.close()
        p.kill()
        p.wait()


def wait_lines(path, n):
    for _ in range(400):
        if os.path.exists(path):
            lines = open(path).read().splitlines()
            if len(lines) >= n:
                return lines
        time.sleep(0.1)
    return open(path).read().splitlines() if os.path.exists(path) else []


def test_rfc3164_routing():
    with collector() as (d, send):
        send("<34>Oct 11 22:14:15 mymachine su[230]: 'su root' failed for lonvick on /dev/pts/8")
        send("<13>Feb  5 17:32:18 web01 nginx: worker process started\n")
        send("<78>Feb  5 17:32:19 web01 CRON[991]: (root) CMD (run-parts /etc/cron.hourly)")
        send("<15>Feb  5 17:32:20 web01 nginx: debug: x: y")
        assert wait_lines(f"{d}/mymachine/auth.log", 1) == ["crit su: 'su root' failed for lonvick on /dev/pts/8"]
        assert wait_lines(f"{d}/web01/user.log", 2) == ["notice nginx: worker process started", "debug nginx: debug: x: y"]
        assert wait_lines(f"{d}/web01/cron.log", 1) == ["info CRON: (root) CMD (run-parts /etc/cron.hourly)"]


def test_rfc5424_structured_data():
    with collector() as (d, send):
        send('<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 '
             '[exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] An application event log entry')
        send("<86>1 2024-03-04T10:00:00+01:00 db1 sshd 4242 - - Accepted publickey for deploy")
        send('<190>1 2024-03-04T10:00:02Z db1 - - - [a x="1 ] 2"][b y="q\\"]\\\\"] two [brackets] in msg')
        send("<134>1 2024-03-04T10:00:03Z db1 app 7 M1 -")
        assert wait_lines(f"{d}/mymachine.example.com/local4.log", 1) == ["notice evntslog: An application event log entry"]
        assert wait_lines(f"{d}/db1/authpriv.log", 1) == ["info sshd: Accepted publickey for deploy"]
        assert wait_lines(f"{d}/db1/local7.log", 1) == ["info unknown: two [brackets] in msg"]
        assert wait_lines(f"{d}/db1/local0.log", 1) == ["info app: "] or \
            wait_lines(f"{d}/db1/local0.log", 1) == ["info app:"]


def test_alerts_and_invalid():
    with collector() as (d, send):
        send('<11>1 2024-03-04T10:00:01Z - app - - [meta a="x \\] y"] disk almost full')
        send("hello without priority")
        send("<999>Jan  1 00:00:00 h t: bad pri")
        send("<0>Jan  1 00:00:00 core kernel: panic")
        send("<30>Jan  1 00:00:01 core systemd[1]: Started thing.")
        assert wait_lines(f"{d}/unknown/user.log", 1) == ["err app: disk almost full"]
        assert wait_lines(f"{d}/invalid.log", 2) == ["hello without priority", "<999>Jan  1 00:00:00 h t: bad pri"]
        assert wait_lines(f"{d}/core/daemon.log", 1) == ["info systemd: Started thing."]
        assert wait_lines(f"{d}/alerts.log", 2) == ["unknown user.err app: disk almost full", "core kern.emerg kernel: panic"]


def test_rename_reopens():
    with collector() as (d, send):
        send("<14>Mar  1 10:00:00 h1 job: first")
        assert wait_lines(f"{d}/h1/user.log", 1) == ["info job: first"]
        os.rename(f"{d}/h1/user.log", f"{d}/h1/user.log.1")
        send("<14>Mar  1 10:00:01 h1 job: second")
        assert wait_lines(f"{d}/h1/user.log", 1) == ["info job: second"]
        assert open(f"{d}/h1/user.log.1").read().splitlines() == ["info job: first"]
