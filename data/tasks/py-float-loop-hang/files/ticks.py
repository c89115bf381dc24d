"""Tick schedule for the simulation clock.

    python3 ticks.py START STOP STEP    # prints one tick time per line
"""
import sys


def schedule(start, stop, step):
    """Tick times start, start+step, start+2*step, ... up to but excluding stop.

    `stop` is start plus a whole number of steps (up to rounding in the
    decimal inputs, e.g. 0, 1, 0.1 gives 10 ticks).
    """
    ticks = []
    t = start
    while t != stop:
        ticks.append(t)
        t += step
    return ticks


if __name__ == "__main__":
    a, b, s = (float(x) for x in sys.argv[1:4])
    for t in schedule(a, b, s):
        print(f"{t:.6f}")
