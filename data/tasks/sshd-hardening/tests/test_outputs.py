from pathlib import Path


def active():
    """Active directives as (lowercased keyword, value) pairs, in order."""
    out = []
    for line in Path("/app/etc/ssh/sshd_config").read_text().splitlines():
        s = line.strip()
        if s and not s.startswith("#"):
            key, _, value = s.partition(" ")
            out.append((key.lower(), value.strip()))
    return out


def single(key):
    vals = [v for k, v in active() if k == key.lower()]
    assert len(vals) == 1, (key, vals)
    return vals[0]


def test_root_login_disabled():
    assert single("PermitRootLogin").lower() == "no"


def test_password_auth_disabled():
    assert single("PasswordAuthentication").lower() == "no"
    assert single("PermitEmptyPasswords").lower() == "no"
    assert single("PubkeyAuthentication").lower() == "yes"
    assert single("KbdInteractiveAuthentication").lower() == "no"


def test_limits_and_forwarding():
    assert single("MaxAuthTries") == "3"
    assert single("X11Forwarding").lower() == "no"
    assert single("Port") == "2222"


def test_port_moved_rest_unchanged():
    a = active()
    for pair in [("include", "/etc/ssh/sshd_config.d/*.conf"), ("listenaddress", "0.0.0.0"), ("usepam", "yes"),
                 ("printmotd", "no"), ("acceptenv", "LANG LC_*"), ("subsystem", "sftp /usr/lib/openssh/sftp-server")]:
        assert a.count(pair) == 1, pair
    assert single("Port") == "2222"
