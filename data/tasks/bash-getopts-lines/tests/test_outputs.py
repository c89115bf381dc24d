import subprocess
import tempfile

TEXT = "".join(f"line {i} {'x' * (i % 3)}\n" for i in range(1, 13))


def run(*args, text=TEXT):
    with tempfile.NamedTemporaryFile("w", delete=False) as f:
        f.write(text)
    args = [f.name if a == "FILE" else a for a in args]
    return subprocess.run(["/app/lines.sh", *args], capture_output=True, text=True, timeout=20)


def lines(a, b):
    return TEXT.splitlines(keepends=True)[a - 1:b]


def test_ranges_and_numbering():
    assert run("FILE").stdout == TEXT
    assert run("-s", "4", "-e", "6", "FILE").stdout == "".join(lines(4, 6))
    assert run("-e", "2", "FILE").stdout == "".join(lines(1, 2))
    assert run("-s", "11", "FILE").stdout == "".join(lines(11, 12))
    assert run("-s", "5", "-e", "99", "FILE").stdout == "".join(lines(5, 12))
    r = run("-n", "-s", "9", "-e", "10", "FILE")
    assert (r.returncode, r.stdout) == (0, "9\tline 9 \n10\tline 10 x\n")
    r = run("-s", "20", "FILE")
    assert (r.returncode, r.stdout) == (0, "")
    r = run("-s", "7", "-e", "3", "FILE")
    assert (r.returncode, r.stdout) == (0, "")
    r = run("-n", "/app/sample.txt")
    assert r.stdout == "1\talpha\n2\tbeta\n3\tgamma\n4\tdelta\n5\tepsilon\n"


def test_reverse_and_combined_flags():
    assert run("-r", "-s", "2", "-e", "4", "FILE").stdout == "".join(reversed(lines(2, 4)))
    assert run("-nr", "-s3", "-e5", "FILE").stdout == "5\tline 5 xx\n4\tline 4 x\n3\tline 3 \n"
    assert run("-e5", "-rn", "-s", "4", "FILE").stdout == "5\tline 5 xx\n4\tline 4 x\n"
    assert run("-r", "FILE", text="a b\n  c\n").stdout == "  c\na b\n"


def test_usage_errors():
    for args in (["-x", "FILE"], ["-s", "FILE"], ["-s", "abc", "FILE"], ["-e", "0", "FILE"],
                 ["-s", "-3", "FILE"], [], ["FILE", "FILE"], ["-n"]):
        r = run(*args)
        assert r.returncode == 2, args
        assert r.stdout == "" and r.stderr.startswith("usage:"), (args, r.stderr)
    r = run("/nonexistent/file.txt")
    assert r.returncode == 1 and r.stdout == "" and r.stderr.strip()
    assert run("-s", "2", "-e", "2", "FILE").stdout == "line 2 xx\n"
