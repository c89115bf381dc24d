"""Range checks in the npm style: "^1.2.3", "~1.2.3", ">=1.2.3", "<2.0.0", "=1.2.3", "1.2.3",
and space-separated conjunctions such as ">=1.2.0 <1.5.0"."""
from .version import Version, parse


def _upper_caret(v):
    # ^1.2.3 := <2.0.0 ; ^0.2.3 := <0.3.0 ; ^0.0.3 := <0.0.4
    return Version(v.major + 1, 0, 0)


def _upper_tilde(v):
    # ~1.2.3 := <1.3.0
    return Version(v.major, v.minor + 1, 0)


def _check(version, clause):
    for op in (">=", "<=", ">", "<", "=", "^", "~"):
        if clause.startswith(op):
            target = parse(clause[len(op):])
            break
    else:
        op, target = "=", parse(clause)
    if op == ">=":
        return version >= target
    if op == "<=":
        return version <= target
    if op == ">":
        return version > target
    if op == "<":
        return version < target
    if op == "=":
        return version == target
    if op == "^":
        return target <= version < _upper_caret(target)
    return target <= version < _upper_tilde(target)


def satisfies(version, spec):
    """True when `version` (str or Version) satisfies every clause of `spec`."""
    if isinstance(version, str):
        version = parse(version)
    return any(_check(version, clause) for clause in spec.split())
