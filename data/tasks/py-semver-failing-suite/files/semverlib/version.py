"""Version parsing, ordering and bumping (semver 2.0.0, without build metadata)."""
import re
from dataclasses import dataclass

_RE = re.compile(r"v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?")


@dataclass(frozen=True)
class Version:
    major: int
    minor: int
    patch: int
    pre: tuple = ()   # pre-release identifiers, ints for numeric ones

    def __str__(self):
        s = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            s += "-" + ".".join(str(p) for p in self.pre)
        return s

    def _key(self):
        # A version without pre-release ranks above any pre-release of the same core.
        # Pre-release identifiers compare left to right: numeric ones numerically and below
        # alphanumeric ones, alphanumeric ones in ASCII order; a shorter list ranks lower
        # when all its identifiers equal the start of the longer one.
        pre = tuple((0, str(p)) if isinstance(p, int) else (1, p) for p in self.pre)
        return (self.major, self.minor, self.patch, not self.pre, pre)

    def __lt__(self, other):
        return self._key() < other._key()

    def __le__(self, other):
        return self._key() <= other._key()

    def __gt__(self, other):
        return other < self

    def __ge__(self, other):
        return other <= self

    def bump(self, part):
        """Next release: part is "major", "minor" or "patch"; lower parts reset, pre-release dropped."""
        if part == "major":
            return Version(self.major + 1, 0, 0)
        if part == "minor":
            return Version(self.major, self.minor + 1, self.patch)
        if part == "patch":
            return Version(self.major, self.minor, self.patch + 1)
        raise ValueError(f"unknown part {part!r}")


def parse(text):
    """Parse "1.2.3", "v1.2.3" or "1.2.3-rc.1"; ValueError on anything else."""
    m = _RE.match(text.strip())
    if not m:
        raise ValueError(f"invalid version {text!r}")
    pre = tuple(int(p) if p.isdigit() else p for p in m.group(4).split(".")) if m.group(4) else ()
    return Version(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre)
