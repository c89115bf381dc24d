#!/bin/bash
set -e
cat > /app/spline.py <<'PY'
"""Natural cubic spline interpolation."""
import numpy as np


class NaturalCubicSpline:
    def __init__(self, x, y):
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        n = len(x)
        h = np.diff(x)
        m = np.zeros(n)   # second derivatives
        if n > 2:
            k = n - 2
            diag = 2 * (h[:-1] + h[1:])
            off = h[1:-1]
            rhs = 6 * (np.diff(y[1:]) / h[1:] - np.diff(y[:-1]) / h[:-1])
            # Thomas algorithm (sequential, but O(n))
            c = np.empty(k)
            d = np.empty(k)
            diag = diag.tolist(); off = off.tolist(); rhs = rhs.tolist()
            cp, dp = [0.0] * k, [0.0] * k
            cp[0] = (off[0] / diag[0]) if k > 1 else 0.0
            dp[0] = rhs[0] / diag[0]
            for i in range(1, k):
                den = diag[i] - off[i - 1] * cp[i - 1]
                cp[i] = (off[i] / den) if i < k - 1 else 0.0
                dp[i] = (rhs[i] - off[i - 1] * dp[i - 1]) / den
            sol = [0.0] * k
            sol[-1] = dp[-1]
            for i in range(k - 2, -1, -1):
                sol[i] = dp[i] - cp[i] * sol[i + 1]
            m[1:-1] = sol
        self.x, self.y, self.h, self.m = x, y, h, m
        # per-interval polynomial in t = xq - x_i: a + b t + c t^2 + d t^3
        self.a = y[:-1]
        self.b = np.diff(y) / h - h * (2 * m[:-1] + m[1:]) / 6
        self.c = m[:-1] / 2
        self.d = np.diff(m) / (6 * h)

    def _idx(self, xq):
        return np.clip(np.searchsorted(self.x, xq, side="right") - 1, 0, len(self.x) - 2)

    def __call__(self, xq):
        xq_arr = np.asarray(xq, dtype=float)
        i = self._idx(xq_arr)
        t = xq_arr - self.x[i]
        v = self.a[i] + t * (self.b[i] + t * (self.c[i] + t * self.d[i]))
        return float(v) if np.ndim(xq) == 0 else v

    def derivative(self, xq):
        xq_arr = np.asarray(xq, dtype=float)
        i = self._idx(xq_arr)
        t = xq_arr - self.x[i]
        v = self.b[i] + t * (2 * self.c[i] + 3 * t * self.d[i])
        return float(v) if np.ndim(xq) == 0 else v

    def _antider(self, xq):
        # integral from x_0 to xq
        i = int(self._idx(xq))
        h = self.h
        full = self.a * h + self.b * h ** 2 / 2 + self.c * h ** 3 / 3 + self.d * h ** 4 / 4
        t = xq - self.x[i]
        part = self.a[i] * t + self.b[i] * t ** 2 / 2 + self.c[i] * t ** 3 / 3 + self.d[i] * t ** 4 / 4
        return float(np.sum(full[:i]) + part)

    def integral(self, a, b):
        return self._antider(float(b)) - self._antider(float(a))
PY
