import datetime as dt
import json
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, "/tests")
import cron_ref  # noqa: E402


def run(text, ref, n):
    with tempfile.NamedTemporaryFile("w", suffix=".cron", delete=False) as f:
        f.write(text)
    r = subprocess.run([sys.executable, "/app/cron_next.py", f.name, ref, str(n)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr[-1500:]
    return json.loads(r.stdout)


def expected(lines, ref, n):
    out = []
    for no, (expr, cmd) in lines:
        out.append({"line": no, "command": cmd, "next": cron_ref.next_runs(expr, dt.datetime.strptime(ref, "%Y-%m-%d %H:%M"), n)})
    return out


def test_sample_crontab():
    got = run(open("/app/crontab.sample").read(), "2025-02-27 23:50", 4)
    exp = expected([(5, ("*/15 * * * *", "/usr/local/bin/poll-queue --fast")),
                    (6, ("30 2 * * 1-5", "/opt/backup/run.sh >> /var/log/backup.log 2>&1")),
                    (7, ("0 9 1,15 * fri", "/usr/bin/report --biweekly")),
                    (8, ("@daily", "/usr/sbin/logrotate /etc/logrotate.conf")),
                    (9, ("0 0 29 feb *", "echo leap")),
                    (11, ("5 4 * JAN-MAR SUN", "/bin/echo winter sundays"))], "2025-02-27 23:50", 4)
    assert got == exp


def test_random_schedules():
    for seed in [3, 14, 159]:
        rnd = random.Random(seed)
        lines, text, jobs = [], ["MAILTO=root", "# generated"], []
        for i in range(12):
            expr = cron_ref.random_expr(rnd)
            cmd = f"/usr/bin/job{i} --arg {i}"
            text.append(f"{expr}\t{cmd}")
            jobs.append((len(text), (expr, cmd)))
            if rnd.random() < 0.3:
                text.append("")
        ref = f"2025-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d} {rnd.randint(0, 23):02d}:{rnd.randint(0, 59):02d}"
        assert run("\n".join(text) + "\n", ref, 5) == expected(jobs, ref, 5)


def test_macros_and_or_rule():
    text = "@hourly /bin/h\n@weekly   /bin/w\n@monthly /bin/m\n@yearly /bin/y\n@annually /bin/a\n@midnight /bin/mid\n" \
           "0 6 13 * 5 /bin/friday13-or\n15 3 */10 * 1 /bin/star-dom\n0 0 31 * 7 /bin/sun7\n"
    got = run(text, "2024-12-31 23:59", 3)
    specs = ["@hourly", "@weekly", "@monthly", "@yearly", "@annually", "@midnight", "0 6 13 * 5", "15 3 */10 * 1", "0 0 31 * 7"]
    cmds = ["/bin/h", "/bin/w", "/bin/m", "/bin/y", "/bin/a", "/bin/mid", "/bin/friday13-or", "/bin/star-dom", "/bin/sun7"]
    assert got == expected([(i + 1, (s, c)) for i, (s, c) in enumerate(zip(specs, cmds))], "2024-12-31 23:59", 3)
