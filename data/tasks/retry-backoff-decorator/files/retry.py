"""Retry decorator for flaky calls. Implement `retry` (see the task description)."""
import time


def retry(attempts=3, base_delay=0.1, factor=2.0, max_delay=None, exceptions=(Exception,), sleep=time.sleep):
    raise NotImplementedError
