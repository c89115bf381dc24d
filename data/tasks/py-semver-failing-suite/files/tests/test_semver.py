import pytest

from semverlib import Version, parse, satisfies


def test_parse():
    assert parse("1.2.3") == Version(1, 2, 3)
    assert parse("v10.0.7") == Version(10, 0, 7)
    assert parse("1.0.0-rc.1").pre == ("rc", 1)
    assert str(parse("2.0.0-alpha.beta.3")) == "2.0.0-alpha.beta.3"


@pytest.mark.parametrize("bad", ["1.2", "1.2.3.4", "a.b.c", "1.2.3-", "01.2.3x", ""])
def test_parse_rejects(bad):
    with pytest.raises(ValueError):
        parse(bad)


def test_ordering():
    chain = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
             "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "2.0.0"]
    vs = [parse(s) for s in chain]
    assert sorted(reversed(vs)) == vs
    for a, b in zip(vs, vs[1:]):
        assert a < b and b > a and not b < a


def test_bump():
    assert parse("1.2.3").bump("minor") == Version(1, 3, 0)
    assert parse("1.2.3").bump("major") == Version(2, 0, 0)
    assert parse("1.2.3-rc.1").bump("patch") == Version(1, 2, 4)


def test_ranges():
    assert satisfies("1.4.0", ">=1.2.0 <1.5.0")
    assert not satisfies("1.5.0", ">=1.2.0 <1.5.0")
    assert satisfies("1.9.9", "^1.2.3") and not satisfies("2.0.0", "^1.2.3")
    assert satisfies("0.2.9", "^0.2.3") and not satisfies("0.3.0", "^0.2.3")
    assert satisfies("1.2.9", "~1.2.3") and not satisfies("1.3.0", "~1.2.3")
