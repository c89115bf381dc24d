"""Brute-force reference for cron schedules and a random crontab generator (tests only)."""
import datetime as dt
import random

MON = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
DOW = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
MACROS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
          "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}


def field(spec, lo, hi, names=None):
    vals = set()
    for part in spec.lower().split(","):
        rng, _, step = part.partition("/")
        step = int(step) if step else 1
        if rng == "*":
            a, b = lo, hi
        else:
            x, _, y = rng.partition("-")
            conv = lambda s: names.index(s) + (lo if names is MON else 0) if names and s in names else int(s)
            a = conv(x)
            b = conv(y) if y else a
        vals.update(range(a, b + 1, step))
    return vals


def schedule(expr):
    f = expr.split()
    mins, hours = field(f[0], 0, 59), field(f[1], 0, 23)
    doms, mons = field(f[2], 1, 31), field(f[3], 1, 12, MON)
    dows = {d % 7 for d in field(f[4], 0, 6, DOW)}
    return mins, hours, doms, mons, dows, f[2] == "*" or f[2].startswith("*"), f[4] == "*" or f[4].startswith("*")


def matches(s, t):
    mins, hours, doms, mons, dows, dom_star, dow_star = s
    if t.minute not in mins or t.hour not in hours or t.month not in mons:
        return False
    dom_ok, dow_ok = t.day in doms, (t.isoweekday() % 7) in dows
    if dom_star or dow_star:
        return dom_ok and dow_ok
    return dom_ok or dow_ok


def next_runs(expr, ref, n):
    s = schedule(MACROS.get(expr, expr))
    start = ref.replace(second=0, microsecond=0) + dt.timedelta(minutes=1)
    day, out = start.replace(hour=0, minute=0), []
    while len(out) < n:
        if matches(s, day.replace(hour=min(s[1]), minute=min(s[0]))):
            for h in sorted(s[1]):
                for m in sorted(s[0]):
                    t = day.replace(hour=h, minute=m)
                    if t >= start and len(out) < n:
                        out.append(t.strftime("%Y-%m-%d %H:%M"))
        day += dt.timedelta(days=1)
    return out


def random_expr(rnd):
    def part(lo, hi, names=None):
        k = rnd.random()
        if k < 0.3:
            return "*"
        if k < 0.45:
            return f"*/{rnd.choice([2, 3, 5, 10, 15, 20])}" if hi > 12 else f"*/{rnd.choice([2, 3])}"
        if k < 0.6:
            a = rnd.randint(lo, hi - 2)
            return f"{a}-{rnd.randint(a + 1, hi)}" + (f"/{rnd.choice([2, 3])}" if rnd.random() < 0.4 else "")
        if k < 0.75:
            return ",".join(str(x) for x in sorted(rnd.sample(range(lo, hi + 1), 3)))
        if names and k < 0.85:
            return names[rnd.randint(0, len(names) - 1)].upper() if rnd.random() < 0.5 else names[rnd.randint(0, len(names) - 1)]
        return str(rnd.randint(lo, hi))
    return " ".join([part(0, 59), part(0, 23), part(1, 28), part(1, 12, MON), part(0, 6, DOW)])
