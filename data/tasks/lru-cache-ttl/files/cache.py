"""In-process cache for the pricing service.

TODO: implement LRUCache as described in /app/SPEC.md.
"""
import time


class LRUCache:
    def __init__(self, capacity, ttl=None, clock=time.monotonic):
        raise NotImplementedError
