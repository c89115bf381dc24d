set -e
mkdir -p /app/parts
python3 - <<'PY'
import hashlib
data = b"".join(hashlib.sha256(b"block%d" % i).digest() for i in range(12 * 1000 + 17))
open("/tmp/full.bin", "wb").write(data)
size = -(-len(data) // 12)
for k in range(12):
    open(f"/app/parts/backup.bin.part-{k + 1}", "wb").write(data[k * size:(k + 1) * size])
open("/app/parts/backup.bin.sha256", "w").write(hashlib.sha256(data).hexdigest() + "  backup.bin\n")
PY
rm /tmp/full.bin
