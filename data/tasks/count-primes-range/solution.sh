#!/bin/bash
set -e
python3 - <<'PY'
N = 2_000_000
s = bytearray([1]) * (N + 1)
s[0] = s[1] = 0
for i in range(2, int(N ** 0.5) + 1):
    if s[i]:
        s[i * i::i] = bytearray(len(s[i * i::i]))
open("/app/prime_count.txt", "w").write(f"{sum(s[1_000_000:])}\n")
PY
