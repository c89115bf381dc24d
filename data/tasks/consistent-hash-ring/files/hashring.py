"""Consistent-hash ring with virtual nodes.

TODO: implement (see the task description)."""
