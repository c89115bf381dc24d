import subprocess


def bump(*args):
    r = subprocess.run(["/app/bump", *args], capture_output=True, text=True, timeout=20)
    return r.returncode, r.stdout


def test_release_levels():
    cases = [("1.4.2", "minor", "1.5.0"), ("1.4.2", "major", "2.0.0"), ("1.4.2", "patch", "1.4.3"),
             ("0.0.0", "patch", "0.0.1"), ("9.99.199", "minor", "9.100.0"), ("2.3.4-rc.1", "patch", "2.3.5"),
             ("2.3.4+build.7", "major", "3.0.0"), ("10.0.9-alpha.beta+exp.sha.5114f85", "minor", "10.1.0"),
             ("1.0.0-0.3.7", "major", "2.0.0")]
    for v, lvl, want in cases:
        assert bump(v, lvl) == (0, want + "\n"), (v, lvl)


def test_prerelease_level():
    cases = [("1.2.0", "1.2.1-rc.1"), ("1.2.0-rc.1", "1.2.0-rc.2"), ("1.2.0-beta", "1.2.0-beta.1"),
             ("1.2.0-rc.9+b.1", "1.2.0-rc.10"), ("3.0.0-alpha.1.x", "3.0.0-alpha.1.x.1"),
             ("0.1.0-0", "0.1.0-1"), ("4.5.6-x-y.99", "4.5.6-x-y.100"), ("4.5.6+meta", "4.5.7-rc.1"),
             ("1.0.0-a1", "1.0.0-a1.1")]
    for v, want in cases:
        assert bump(v, "pre") == (0, want + "\n"), v


def test_invalid_input():
    bad = [("1.2", "patch"), ("01.2.3", "patch"), ("1.02.3", "minor"), ("1.2.3-", "pre"), ("1.2.3-rc..1", "pre"),
           ("1.2.3-01", "pre"), ("1.2.3+", "major"), ("v1.2.3", "patch"), ("1.2.3", "huge"), ("1.2.3 ", "patch"),
           ("1.2.3-rc_1", "pre"), ("a.b.c", "minor")]
    for args in bad:
        r = subprocess.run(["/app/bump", *args], capture_output=True, text=True, timeout=20)
        assert r.returncode == 1 and r.stdout == "" and r.stderr.strip(), args
    r = subprocess.run(["/app/bump", "1.2.3"], capture_output=True, text=True, timeout=20)
    assert r.returncode == 1 and r.stdout == ""
    assert bump("1.2.3-rc.1", "pre") == (0, "1.2.3-rc.2\n")
