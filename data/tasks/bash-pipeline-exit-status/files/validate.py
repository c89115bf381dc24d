"""Validate a key=value config file: every non-blank, non-comment line must be KEY=VALUE."""
import re
import sys

bad = 0
for no, line in enumerate(open(sys.argv[1]), 1):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    if not re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", line):
        print(f"line {no}: invalid: {line}")
        bad += 1
print(f"{bad} problem(s)")
sys.exit(1 if bad else 0)
