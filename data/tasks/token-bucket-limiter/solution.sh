#!/bin/bash
set -e
cat > /app/ratelimit.py <<'PY'
"""Per-key token bucket rate limiter."""
import time


class TokenBucketLimiter:
    def __init__(self, rate, capacity, clock=time.monotonic):
        if not rate > 0 or capacity < 1:
            raise ValueError("rate must be > 0 and capacity >= 1")
        self.rate, self.capacity, self.clock = float(rate), capacity, clock
        self._b = {}

    def _refill(self, key):
        now = self.clock()
        tok, last = self._b.get(key, (float(self.capacity), now))
        tok = min(float(self.capacity), tok + (now - last) * self.rate)
        self._b[key] = (tok, now)
        return tok

    def allow(self, key, cost=1):
        if cost > self.capacity:
            raise ValueError("cost exceeds capacity")
        tok = self._refill(key)
        if tok >= cost:
            self._b[key] = (tok - cost, self._b[key][1])
            return True
        return False

    def tokens(self, key):
        return self._refill(key)

    def retry_after(self, key, cost=1):
        tok = self._refill(key)
        return 0.0 if tok >= cost else (cost - tok) / self.rate
PY
