"""Semantic Versioning 2.0.0 helpers."""


class Version:
    raise NotImplementedError
