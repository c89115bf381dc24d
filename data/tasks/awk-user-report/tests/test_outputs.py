import random
import subprocess
import tempfile


def run(text):
    with tempfile.NamedTemporaryFile("w", delete=False) as f:
        f.write(text)
    r = subprocess.run(["awk", "-f", "/app/report.awk", f.name], capture_output=True, text=True, timeout=20)
    assert r.returncode == 0, r.stderr
    return r.stdout


def expected(lines):
    order, stats, bad = [], {}, 0
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split()
        if len(f) != 4 or not f[3].isdigit():
            bad += 1
            continue
        if f[1] not in stats:
            order.append(f[1])
            stats[f[1]] = []
        stats[f[1]].append(int(f[3]))
    out = [f"{u} {len(stats[u])} {sum(stats[u])} {sum(stats[u]) / len(stats[u]):.1f} {max(stats[u])}" for u in order]
    allv = [v for u in order for v in stats[u]]
    return "\n".join(out + [f"TOTAL {len(allv)} {sum(allv)}", f"INVALID {bad}"]) + "\n"


def test_example_output():
    r = subprocess.run(["awk", "-f", "/app/report.awk", "/app/requests.log"], capture_output=True, text=True, timeout=20)
    assert r.stdout == "alice 3 600 200.0 400\nbob 2 400 200.0 340\nTOTAL 5 1000\nINVALID 2\n"
    # the example with a few more lines: the output must follow the input, not a fixed text
    lines = open("/app/requests.log").read().split("\n")[:-1] + ["1700000020 dave PUT 5", "1700000021 bob GET 1 2"]
    assert run("\n".join(lines) + "\n") == "alice 3 600 200.0 400\nbob 2 400 200.0 340\ndave 1 5 5.0 5\nTOTAL 6 1005\nINVALID 3\n"


def test_hidden_logs():
    rnd = random.Random(9)
    users = ["zed", "amy", "bo_2", "c.d", "eve"]
    lines = ["# header", ""]
    for i in range(400):
        k = rnd.random()
        u = rnd.choice(users)
        if k < 0.05:
            lines.append(f"{1700000000 + i} {u} GET -5")
        elif k < 0.08:
            lines.append(f"{1700000000 + i} {u} GET 12 extra")
        elif k < 0.10:
            lines.append(f"{1700000000 + i} {u} GET 3.5")
        elif k < 0.12:
            lines.append("   ")
        else:
            lines.append(f"{1700000000 + i}\t{u}  {rnd.choice(['GET', 'PUT'])} {rnd.randint(0, 100000)}")
    text = "\n".join(lines) + "\n"
    assert run(text) == expected(lines)
    small = ["1 x A 7", "2 x B 8", "3 y C 0"]
    assert run("\n".join(small) + "\n") == "x 2 15 7.5 8\ny 1 0 0.0 0\nTOTAL 3 15\nINVALID 0\n"
