"""Priority queue of named tasks with updatable priorities.

TODO: implement (see the task description)."""
