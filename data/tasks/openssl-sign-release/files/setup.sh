set -e
mkdir -p /app/keys /app/release
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out /app/keys/release.key 2>/dev/null
openssl pkey -in /app/keys/release.key -pubout -out /app/keys/release.pub
chmod 600 /app/keys/release.key
python3 -c "import hashlib; open('/app/release/app-2.1.0.tar.gz','wb').write(b''.join(hashlib.sha256(b'%d' % i).digest() for i in range(3000)))"
sha256sum /app/release/app-2.1.0.tar.gz | cut -d' ' -f1 > /app/release/.orig_sha256
