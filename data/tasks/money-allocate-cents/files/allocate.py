"""Split an amount of cents by weights (largest remainder).

TODO: implement (see the task description)."""
