"""The sandboxes of a rollout started ahead of it (`ahead.py`)."""
