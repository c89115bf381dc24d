#!/bin/bash
# Algorithm recovered from `objdump -d /app/checker`: FNV-1a over the username bytes, three
# 20-bit slices of the hash and a base-31 checksum, each as 4 Crockford base32 characters.
cat > /app/keygen.py <<'PY'
import sys

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def enc(v):
    return "".join(ALPHABET[(v >> s) & 31] for s in (15, 10, 5, 0))


def key(user: bytes) -> str:
    h = 0x811C9DC5
    for b in user:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    rot = ((h << 7) | (h >> 25)) & 0xFFFFFFFF
    k = [enc(h & 0xFFFFF), enc(((h >> 12) ^ 0x5A5A5) & 0xFFFFF), enc(rot & 0xFFFFF)]
    s = 0
    for ch in "".join(k):
        s = (s * 31 + ord(ch)) & 0xFFFFFFFF
    return "-".join(k + [enc(s & 0xFFFFF)])


if __name__ == "__main__":
    print(key(sys.argv[1].encode("utf-8", "surrogateescape")))
PY
python3 /app/keygen.py acme-corp > /app/key.txt
