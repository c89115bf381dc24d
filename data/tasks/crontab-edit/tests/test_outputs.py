from pathlib import Path


def lines():
    return Path("/app/etc/crontab").read_text().splitlines()


def active_jobs():
    jobs = []
    for l in lines():
        s = l.strip()
        if not s or s.startswith("#") or "=" in s.split()[0]:
            continue
        f = s.split(None, 6)
        jobs.append((f[:5], f[5], f[6]))
    return jobs


def test_backup_job_added():
    check_other_entries_intact()
    matches = [j for j in active_jobs() if j[2].split()[0] == "/app/scripts/backup.sh"]
    assert len(matches) == 1, matches
    sched, user, _ = matches[0]
    assert [int(sched[0]), int(sched[1])] == [30, 2]
    assert sched[2:] == ["*", "*", "*"]
    assert user == "root"


def test_cleanup_disabled():
    check_other_entries_intact()
    assert not [j for j in active_jobs() if "cleanup.sh" in j[2]]
    commented = [l for l in lines() if l.strip().startswith("#") and "/app/scripts/cleanup.sh --older-than 30d" in l]
    assert len(commented) == 1


def test_report_every_15_minutes():
    check_other_entries_intact()
    matches = [j for j in active_jobs() if j[2].strip() == "/app/scripts/report.sh"]
    assert len(matches) == 1, matches
    sched, user, _ = matches[0]
    assert sched[0] in ("*/15", "0,15,30,45", "0-59/15")
    assert sched[1:] == ["*", "*", "*", "*"]
    assert user == "www"


def check_other_entries_intact():
    # a guard, not a scored test: every scored test calls it, so an empty or destructive attempt scores 0
    text = lines()
    assert "SHELL=/bin/sh" in text
    assert "PATH=/usr/local/sbin:/usr/local/bin:/sbin:/bin:/usr/sbin:/usr/bin" in text
    hourly = [j for j in active_jobs() if "run-parts --report /etc/cron.hourly" in j[2]]
    assert len(hourly) == 1 and hourly[0][0] == ["17", "*", "*", "*", "*"] and hourly[0][1] == "root"
