"""1-D heat equation u_t = alpha * u_xx on a uniform grid with fixed (Dirichlet) boundary values.

The current implementation is the explicit FTCS scheme; it blows up for the time steps we need.
"""
import numpy as np


def crank_nicolson(u0, alpha, dx, dt, steps):
    u = np.array(u0, dtype=float)
    r = alpha * dt / dx ** 2
    for _ in range(steps):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u
