"""Weighted prefix-tree autocomplete.

TODO: implement (see the task description)."""
