"""Bounded-concurrency gather for asyncio.

TODO: implement (see the task description)."""
