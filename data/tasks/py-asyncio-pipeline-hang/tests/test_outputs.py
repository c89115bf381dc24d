import random
import subprocess


def digit_sum(n):
    return sum(int(d) for d in str(n ** n))


def run(tmp_path, jobs, workers):
    p = tmp_path / "jobs.txt"
    p.write_text("".join(f"{i} {n}\n" for i, n in jobs))
    r = subprocess.run(["python3", "/app/pipeline.py", str(p), str(workers)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.splitlines()


def expected(jobs):
    out, ok, bad = [], 0, 0
    for i, n in sorted(jobs):
        if n < 0:
            out.append(f"{i} error")
            bad += 1
        else:
            out.append(f"{i} {digit_sum(n)}")
            ok += 1
    return out + [f"done {ok} ok {bad} failed"]


def test_many_workers_terminate(tmp_path):
    jobs = [(i, (i * 37) % 300) for i in range(1, 10)]
    assert run(tmp_path, jobs, 4) == expected(jobs)
    assert run(tmp_path, jobs, 20) == expected(jobs)
    assert run(tmp_path, [], 3) == ["done 0 ok 0 failed"]


def test_failures_and_order(tmp_path):
    rng = random.Random(9)
    ids = rng.sample(range(1, 5000), 400)
    jobs = [(i, rng.randrange(-50, 400)) for i in ids]
    assert run(tmp_path, jobs, 7) == expected(jobs)
    jobs = [(3, -1), (1, 2), (2, -5)]
    assert run(tmp_path, jobs, 1) == ["1 4", "2 error", "3 error", "done 1 ok 2 failed"]
