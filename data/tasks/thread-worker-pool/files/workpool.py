"""A thread pool with futures.

TODO: implement (see the task description)."""
