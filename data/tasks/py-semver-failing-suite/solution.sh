#!/bin/bash
set -e
cd /app
python3 - <<'PY'
p = "/app/semverlib/version.py"
s = open(p).read()
s = s.replace('_RE = re.compile(r"v?(\\d+)\\.(\\d+)\\.(\\d+)(?:-([0-9A-Za-z.-]+))?")',
              '_RE = re.compile(r"v?(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-([0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*))?")')
s = s.replace("m = _RE.match(text.strip())", "m = _RE.fullmatch(text.strip())")
s = s.replace('pre = tuple((0, str(p)) if isinstance(p, int) else (1, p) for p in self.pre)',
              'pre = tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in self.pre)')
s = s.replace("return Version(self.major, self.minor + 1, self.patch)", "return Version(self.major, self.minor + 1, 0)")
s = s.replace('''        if part == "patch":
            return Version(self.major, self.minor, self.patch + 1)''', '''        if part == "patch":
            return Version(self.major, self.minor, self.patch + 1)''')
open(p, "w").write(s)
p = "/app/semverlib/ranges.py"
s = open(p).read()
s = s.replace('''    return Version(v.major + 1, 0, 0)


def _upper_tilde''', '''    if v.major:
        return Version(v.major + 1, 0, 0)
    if v.minor:
        return Version(0, v.minor + 1, 0)
    return Version(0, 0, v.patch + 1)


def _upper_tilde''')
s = s.replace("return any(_check(version, clause) for clause in spec.split())",
              "return all(_check(version, clause) for clause in spec.split())")
open(p, "w").write(s)
PY
python3 -m pytest -q tests
