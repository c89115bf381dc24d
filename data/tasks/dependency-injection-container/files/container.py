"""A small dependency-injection container. TODO: implement (see the task description)."""
