#!/bin/bash
set -e
cat > /app/heat.py <<'PY'
"""1-D heat equation u_t = alpha * u_xx on a uniform grid with fixed (Dirichlet) boundary values,
Crank-Nicolson in time.

The CN step matrices A = I + r/2 T and B = I - r/2 T (T = tridiag(-1, 2, -1) on the interior) share the
orthonormal sine eigenvectors S[j, k] = sqrt(2/(n+1)) sin(pi (j+1)(k+1)/(n+1)). Splitting u into the linear
steady state u* (which satisfies the scheme exactly) plus v, v after m steps is S diag(lambda^m) S v0 with
lambda_k = (1 - r/2 mu_k) / (1 + r/2 mu_k), mu_k = 2 - 2 cos(pi (k+1)/(n+1)).
"""
import numpy as np


def crank_nicolson(u0, alpha, dx, dt, steps):
    u = np.array(u0, dtype=float)
    N = len(u)
    n = N - 2
    if n <= 0 or steps <= 0:
        return u
    r = alpha * dt / dx ** 2
    steady = u[0] + (u[-1] - u[0]) * np.arange(N) / (N - 1)
    v0 = u[1:-1] - steady[1:-1]
    k = np.arange(1, n + 1)
    S = np.sqrt(2.0 / (n + 1)) * np.sin(np.pi * np.outer(k, k) / (n + 1))
    mu = 2 - 2 * np.cos(np.pi * k / (n + 1))
    lam = (1 - r / 2 * mu) / (1 + r / 2 * mu)
    v = S @ (lam ** steps * (S @ v0))
    u[1:-1] = steady[1:-1] + v
    return u
PY
