"""Minimal semantic versioning (https://semver.org) helpers."""
from .version import Version, parse
from .ranges import satisfies

__all__ = ["Version", "parse", "satisfies"]
