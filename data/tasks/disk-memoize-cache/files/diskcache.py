"""Persistent memoization on disk. TODO: implement `disk_memoize` (see the task description)."""
