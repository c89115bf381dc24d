import random
import subprocess


def filt(rng, versions):
    r = subprocess.run(["/app/semver-filter", rng], input="\n".join(versions) + "\n", capture_output=True, text=True, timeout=30)
    return r.returncode, r.stdout.split("\n")[:-1]


SPEC_ORDER = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
              "1.0.0-rc.1", "1.0.0"]


def test_sorting_by_precedence():
    vs = SPEC_ORDER[:]
    random.Random(4).shuffle(vs)
    assert filt(">=1.0.0-0 <=1.0.0", vs + ["1.0.0-alpha"]) == (0, SPEC_ORDER)
    plain = ["10.0.0", "2.0.0", "2.10.0", "2.9.0", "0.0.1", "1.0.0+b2", "1.0.0+b1", "1.0.0", "01.0.0", "1.0", "v1.2.3",
             "1.2.3.4", "", "2.9.0"]
    assert filt(">=0.0.0", plain) == (0, ["0.0.1", "1.0.0", "1.0.0+b1", "1.0.0+b2", "2.0.0", "2.9.0", "2.10.0", "10.0.0"])
    mixed = ["1.0.0-2", "1.0.0-10", "1.0.0-a", "1.0.0-1a", "1.0.0-A", "1.0.0-a.0", "1.0.0-a.-"]
    assert filt(">=1.0.0-0", mixed)[1] == ["1.0.0-2", "1.0.0-10", "1.0.0-1a", "1.0.0-A", "1.0.0-a", "1.0.0-a.0", "1.0.0-a.-"]


POOL = ["0.0.3", "0.0.4", "0.1.0", "0.2.3", "0.2.9", "0.3.0", "1.2.2", "1.2.3", "1.2.9", "1.3.0", "1.9.9", "2.0.0",
        "2.0.1", "3.4.5", "1.2.3+meta"]


def test_ranges():
    assert filt(">=1.0.0 <2.0.0", open("/app/versions.txt").read().split("\n"))[1] == ["1.0.0", "1.2.3", "1.10.0"]
    cases = {
        "^1.2.3": ["1.2.3", "1.2.3+meta", "1.2.9", "1.3.0", "1.9.9"],
        "^0.2.3": ["0.2.3", "0.2.9"],
        "^0.0.3": ["0.0.3"],
        "~1.2.3": ["1.2.3", "1.2.3+meta", "1.2.9"],
        ">2.0.0": ["2.0.1", "3.4.5"],
        "<=0.1.0": ["0.0.3", "0.0.4", "0.1.0"],
        "1.2.3": ["1.2.3", "1.2.3+meta"],
        "=2.0.0 || =0.3.0": ["0.3.0", "2.0.0"],
        "<0.1.0 || >=3.0.0": ["0.0.3", "0.0.4", "3.4.5"],
        ">1.2.2  <1.3.0 || ^0.2.4": ["0.2.9", "1.2.3", "1.2.3+meta", "1.2.9"],
        ">=1.2.3 <1.2.3": [],
    }
    for rng, want in cases.items():
        assert filt(rng, POOL) == (0, want), rng


def test_prerelease_rule_and_errors():
    vs = ["1.2.3-alpha.3", "1.2.3-alpha.7", "1.2.4-beta", "3.4.5-alpha.9", "1.2.3", "2.0.0-rc.1", "1.2.4"]
    assert filt(">1.2.3-alpha.3", vs)[1] == ["1.2.3-alpha.7", "1.2.3", "1.2.4"]
    assert filt("^1.2.3", vs)[1] == ["1.2.3", "1.2.4"]
    assert filt("^1.2.3-alpha.5", vs)[1] == ["1.2.3-alpha.7", "1.2.3", "1.2.4"]
    assert filt(">=1.0.0 <2.0.0-rc.2", vs)[1] == ["1.2.3", "1.2.4", "2.0.0-rc.1"]
    assert filt("<1.0.0 || ~1.2.4-beta", vs)[1] == ["1.2.4-beta", "1.2.4"]
    for bad in ["", ">=1.2", "^v1.2.3", "1.2.3 ||", "=>1.2.3", ">= 1.2.3", "abc"]:
        r = subprocess.run(["/app/semver-filter", bad], input="1.2.3\n", capture_output=True, text=True, timeout=30)
        assert r.returncode == 2 and r.stdout == "", bad
