"""Parse and format byte sizes.

TODO: implement (see the task description)."""
