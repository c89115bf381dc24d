#!/bin/bash
set -e
cat > /app/retry.py <<'PY'
"""Retry decorator for flaky calls."""
import functools
import time


def retry(attempts=3, base_delay=0.1, factor=2.0, max_delay=None, exceptions=(Exception,), sleep=time.sleep):
    if attempts < 1:
        raise ValueError("attempts must be >= 1")

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for k in range(1, attempts + 1):
                try:
                    return fn(*args, **kwargs)
                except exceptions:
                    if k == attempts:
                        raise
                    d = base_delay * factor ** (k - 1)
                    if max_delay is not None:
                        d = min(d, max_delay)
                    sleep(d)
        return wrapper
    return deco
PY
