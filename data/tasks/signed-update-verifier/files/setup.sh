set -e
mkdir -p /app/keys /app/sample_update/bin /app/sample_update/share
cd /app/sample_update
printf '#!/bin/sh\necho app 2.4.1\n' > bin/app
printf 'data v2.4.1\n' > share/data.db
python3 - <<'PY'
import hashlib, json
files = {p: hashlib.sha256(open(p, "rb").read()).hexdigest() for p in ["bin/app", "share/data.db"]}
open("manifest.json", "w").write(json.dumps({"version": "2.4.1", "files": files}, indent=2))
PY
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out /tmp/vendor.key 2>/dev/null
openssl pkey -in /tmp/vendor.key -pubout -out /app/keys/vendor_pub.pem
openssl dgst -sha256 -sign /tmp/vendor.key -out manifest.json.sig manifest.json
rm /tmp/vendor.key
