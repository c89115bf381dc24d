import subprocess
import sys

sys.path.insert(0, "/app")

VISIBLE = 'import pytest\n\nfrom semverlib import Version, parse, satisfies\n\n\ndef test_parse():\n    assert parse("1.2.3") == Version(1, 2, 3)\n    assert parse("v10.0.7") == Version(10, 0, 7)\n    assert parse("1.0.0-rc.1").pre == ("rc", 1)\n    assert str(parse("2.0.0-alpha.beta.3")) == "2.0.0-alpha.beta.3"\n\n\n@pytest.mark.parametrize("bad", ["1.2", "1.2.3.4", "a.b.c", "1.2.3-", "01.2.3x", ""])\ndef test_parse_rejects(bad):\n    with pytest.raises(ValueError):\n        parse(bad)\n\n\ndef test_ordering():\n    chain = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",\n             "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "2.0.0"]\n    vs = [parse(s) for s in chain]\n    assert sorted(reversed(vs)) == vs\n    for a, b in zip(vs, vs[1:]):\n        assert a < b and b > a and not b < a\n\n\ndef test_bump():\n    assert parse("1.2.3").bump("minor") == Version(1, 3, 0)\n    assert parse("1.2.3").bump("major") == Version(2, 0, 0)\n    assert parse("1.2.3-rc.1").bump("patch") == Version(1, 2, 4)\n\n\ndef test_ranges():\n    assert satisfies("1.4.0", ">=1.2.0 <1.5.0")\n    assert not satisfies("1.5.0", ">=1.2.0 <1.5.0")\n    assert satisfies("1.9.9", "^1.2.3") and not satisfies("2.0.0", "^1.2.3")\n    assert satisfies("0.2.9", "^0.2.3") and not satisfies("0.3.0", "^0.2.3")\n    assert satisfies("1.2.9", "~1.2.3") and not satisfies("1.3.0", "~1.2.3")\n'


def test_visible_suite_passes(tmp_path):
    (tmp_path / "test_semver.py").write_text(VISIBLE)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                       capture_output=True, text=True, timeout=60, cwd="/app", env={"PYTHONPATH": "/app"})
    assert r.returncode == 0, r.stdout[-3000:]
    assert "10 passed" in r.stdout


def test_hidden_parsing_and_order():
    import pytest
    from semverlib import Version, parse
    assert parse("0.0.0") == Version(0, 0, 0)
    assert parse("3.10.2-x-y.7.z") == Version(3, 10, 2, ("x-y", 7, "z"))
    for bad in ["1.2.3-a..b", "1.02.3", "1.2.3 junk", "v1.2", "1.2.3-beta.", "-1.2.3"]:
        with pytest.raises(ValueError):
            parse(bad)
    chain = ["0.9.9", "1.0.0-0", "1.0.0-2", "1.0.0-10", "1.0.0-10.a", "1.0.0-A", "1.0.0-a", "1.0.0-a.0",
             "1.0.0", "1.0.10", "1.2.0", "1.10.0", "10.0.0-rc.9", "10.0.0-rc.10", "10.0.0"]
    vs = [parse(s) for s in chain]
    assert sorted(vs[::-1]) == vs
    assert sorted(vs[::2] + vs[1::2]) == vs
    assert parse("1.0.0-rc.1") <= parse("1.0.0-rc.1") and parse("2.0.0") >= parse("2.0.0-rc.99")


def test_hidden_ranges_and_bump():
    from semverlib import Version, parse, satisfies
    assert parse("0.4.7-beta.2").bump("minor") == Version(0, 5, 0)
    assert parse("9.9.9").bump("patch") == Version(9, 9, 10)
    assert parse("1.2.3-rc.1").bump("major") == Version(2, 0, 0)
    cases = [("0.0.3", "^0.0.3", True), ("0.0.4", "^0.0.3", False), ("0.5.1", "^0.5.0", True),
             ("0.6.0", "^0.5.0", False), ("3.0.0", "^2.9.0", False), ("2.10.1", "^2.9.0", True),
             ("1.4.9", "~1.4.2", True), ("1.4.1", "~1.4.2", False), ("1.5.0", "~1.4.2", False),
             ("2.0.0", ">1.0.0 <2.0.0", False), ("1.5.0", ">1.0.0 <2.0.0", True), ("1.0.0", ">1.0.0 <2.0.0", False),
             ("1.2.3", "1.2.3", True), ("1.2.4", "=1.2.3", False), ("1.2.3", "<=1.2.3 >=1.2.3", True),
             ("5.0.0", ">=1.0.0 <=4.0.0", False), ("0.1.0", ">=1.0.0 <=4.0.0", False)]
    for v, spec, want in cases:
        assert satisfies(v, spec) is want, (v, spec)
        assert satisfies(parse(v), spec) is want, (v, spec)
