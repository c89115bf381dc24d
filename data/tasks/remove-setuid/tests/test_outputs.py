import os
import stat
from pathlib import Path

R = "/app/rootfs"
FLAGGED = ["/opt/tools/bin/runner", "/usr/bin/passwd", "/usr/bin/vim.tiny", "/usr/bin/wall",
           "/usr/local/bin/backup-helper", "/usr/local/bin/netdiag"]


def mode(p):
    return stat.S_IMODE(os.stat(R + p).st_mode)


def test_report():
    got = [l.strip() for l in Path("/app/suid_report.txt").read_text().splitlines() if l.strip()]
    assert got == FLAGGED


def test_bits_removed():
    for p in FLAGGED:
        if p != "/usr/bin/passwd":
            assert not mode(p) & (stat.S_ISUID | stat.S_ISGID), (p, oct(mode(p)))


def test_other_bits_preserved():
    assert mode("/usr/bin/passwd") == 0o4755
    expected = {"/opt/tools/bin/runner": 0o750, "/usr/bin/vim.tiny": 0o711, "/usr/bin/wall": 0o755,
                "/usr/local/bin/backup-helper": 0o755, "/usr/local/bin/netdiag": 0o755,
                "/usr/bin/ls": 0o755, "/etc/passwd": 0o644}
    assert {p: oct(mode(p)) for p in expected} == {p: oct(m) for p, m in expected.items()}
    # directories keep their sticky/setgid bits
    assert mode("/tmp") == 0o1777 and mode("/srv/shared") == 0o2775
