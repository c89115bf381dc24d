set -e
mkdir -p /app/tls && cd /app/tls
openssl req -x509 -newkey rsa:2048 -nodes -keyout server.key -out server.crt -days 365 -subj "/CN=shop.example.internal/O=Example" 2>/dev/null
# decoy: an older certificate
openssl req -x509 -newkey rsa:2048 -nodes -keyout old.key -out old-server.crt -days 30 -subj "/CN=shop.example.internal/O=Example" 2>/dev/null
rm old.key
