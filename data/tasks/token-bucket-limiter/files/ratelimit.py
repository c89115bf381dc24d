"""Per-key token bucket rate limiter (implement TokenBucketLimiter)."""
import time


class TokenBucketLimiter:
    pass
