"""Typed JSON codec for dataclasses. TODO: implement to_json / from_json (see the task description)."""
