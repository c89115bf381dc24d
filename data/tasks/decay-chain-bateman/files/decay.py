"""Linear radioactive decay chain 1 -> 2 -> ... -> n.

    python3 decay.py CHAIN.json

CHAIN.json: {"half_lives": [h_1, ..., h_n], "initial": [N_1(0), ..., N_n(0)], "times": [t_1, ...]}
half-lives in the same time unit as `times`; null means stable (only allowed for the last nuclide).
dN_1/dt = -l_1 N_1,  dN_i/dt = l_{i-1} N_{i-1} - l_i N_i,  l_i = ln 2 / h_i.
Prints one line per time: the time and N_1 ... N_n, each formatted %.10e, separated by spaces.

This version uses the classic Bateman formula, which divides by (l_j - l_i).
"""
import json
import math
import sys


def amounts(lams, n0, t):
    n = len(lams)
    out = [0.0] * n
    for start in range(n):          # contribution of the atoms initially in nuclide `start`
        if n0[start] == 0:
            continue
        for i in range(start, n):
            prod = 1.0
            for j in range(start, i):
                prod *= lams[j]
            s = 0.0
            for j in range(start, i + 1):
                den = 1.0
                for k in range(start, i + 1):
                    if k != j:
                        den *= lams[k] - lams[j]
                s += math.exp(-lams[j] * t) / den
            out[i] += n0[start] * prod * s
    return out


def main(path):
    cfg = json.load(open(path))
    lams = [0.0 if h is None else math.log(2) / h for h in cfg["half_lives"]]
    for t in cfg["times"]:
        vals = amounts(lams, cfg["initial"], t)
        print(" ".join(f"{v:.10e}" for v in [t] + vals))


if __name__ == "__main__":
    main(sys.argv[1])
