import re

LINE = re.compile(r'^\S+ \S+ \S+ \[[^\]]*\] "[^"]*" (\d{3}) (\d+|-) "[^"]*" "[^"]*"$')


def test_total():
    total = 0
    n = 0
    for line in open("/app/access.log"):
        m = LINE.match(line.rstrip("\n"))
        assert m, line
        n += 1
        if m.group(1) == "200" and m.group(2) != "-":
            total += int(m.group(2))
    assert n == 2000
    assert open("/app/total.txt").read().strip() == str(total)
