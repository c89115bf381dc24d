"""An episode's sandbox before the agent loop: the task images built on every Docker engine, a sandbox
started on one (`start.py`), and the sandboxes of a rollout started ahead of it (`ahead.py`)."""
