import random
import subprocess


def matching(lines):
    first = open("/app/ipv4.ere").read().split("\n")[0]
    assert first.strip(), "empty pattern"
    r = subprocess.run(["grep", "-E", "-x", "-f", "/app/ipv4.ere"], input="\n".join(lines) + "\n",
                       capture_output=True, text=True, timeout=20)
    assert r.returncode in (0, 1), r.stderr
    return r.stdout.split("\n")[:-1]


def valid_cases():
    rnd = random.Random(3)
    fixed = ["0.0.0.0", "255.255.255.255", "1.2.3.4", "10.0.0.1", "199.249.250.251", "100.200.249.9",
             "249.250.99.0", "172.16.254.1"]
    return fixed + [".".join(str(rnd.randint(0, 255)) for _ in range(4)) for _ in range(300)]


def test_regex_accepts_valid():
    cases = valid_cases()
    assert matching(cases) == cases
    assert matching(["abc"]) == []


def test_regex_rejects_invalid():
    bad = ["256.0.0.1", "1.2.3", "1.2.3.4.5", "01.2.3.4", "1.2.3.04", "00.0.0.0", "1.2.3.400", "300.1.1.1",
           "260.1.1.1", "1..2.3", ".1.2.3.4", "1.2.3.4.", "1.2.3.-4", "+1.2.3.4", "1.2.3.4 ", " 1.2.3.4",
           "a.b.c.d", "1.2.3.4a", "1,2,3,4", "999.999.999.999", "1.2.3.255x", "192.168.1.1/24", "",
           "1.2.3.4\t", "010.1.1.1", "255.255.255.256", "1.2.3.2555"]
    assert matching(bad) == []
    assert matching(["8.8.4.4"]) == ["8.8.4.4"]


def test_valid_examples_file():
    assert open("/app/valid.txt").read() == "192.168.1.1\n10.0.0.255\n"
