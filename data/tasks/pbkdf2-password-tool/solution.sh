#!/bin/bash
cat > /app/pwtool.py <<'PY'
import hashlib, hmac, os, sys

ITER = 260000


def make(pw, salt, it):
    return hashlib.pbkdf2_hmac("sha256", pw.encode(), salt, it).hex()


def main(argv):
    if len(argv) == 3 and argv[1] == "hash":
        salt = os.urandom(16)
        print(f"pbkdf2_sha256${ITER}${salt.hex()}${make(argv[2], salt, ITER)}")
        return 0
    if len(argv) == 4 and argv[1] == "verify":
        parts = argv[3].split("$")
        try:
            if len(parts) != 4 or parts[0] != "pbkdf2_sha256" or not parts[1].isdigit() or int(parts[1]) < 1:
                raise ValueError
            salt = bytes.fromhex(parts[2]); want = bytes.fromhex(parts[3])
        except ValueError:
            print("malformed stored hash", file=sys.stderr)
            return 2
        got = hashlib.pbkdf2_hmac("sha256", argv[2].encode(), salt, int(parts[1]), dklen=len(want) or 32)
        return 0 if want and hmac.compare_digest(got, want) else 1
    print("usage: pwtool.py hash PW | verify PW STORED", file=sys.stderr)
    return 2


sys.exit(main(sys.argv))
PY
