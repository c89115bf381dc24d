set -e
mkdir -p /app/downloads && cd /app/downloads
python3 - <<'PY'
import hashlib
names = ["app-1.4.2.tar.gz", "app-1.4.2.tar.gz.asc", "installer.sh", "libfoo-2.0.so", "README.md",
         "checksums-helper.py", "firmware v3.bin", "docs.zip", "LICENSE"]
lines = []
for i, n in enumerate(names):
    data = hashlib.sha512(n.encode()).digest() * (10 + i)
    lines.append(hashlib.sha256(data).hexdigest() + "  " + n)
    if n in ("installer.sh", "firmware v3.bin", "LICENSE"):
        data = data[:-1] + b"X"
    open(n, "wb").write(data)
open("SHA256SUMS", "w").write("\n".join(lines) + "\n")
PY
