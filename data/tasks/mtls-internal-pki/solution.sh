#!/bin/bash
set -e
mkdir -p /app/pki && cd /app/pki
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out root.key
openssl req -x509 -new -key root.key -subj "/CN=Internal Root CA" -days 3650 -sha256 \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -out root.pem
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out intermediate.key
openssl req -new -key intermediate.key -subj "/CN=Internal Issuing CA" -out int.csr
printf 'basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n' > int.ext
openssl x509 -req -in int.csr -CA root.pem -CAkey root.key -CAcreateserial -days 1825 -sha256 -extfile int.ext -out intermediate.pem
leaf() {
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out $1.key
  openssl req -new -key $1.key -subj "/CN=$2" -out $1.csr
  printf "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=$3\n$4" > $1.ext
  openssl x509 -req -in $1.csr -CA intermediate.pem -CAkey intermediate.key -CAcreateserial -days 365 -sha256 -extfile $1.ext -out $1.crt
  cat $1.crt intermediate.pem > $1.pem
}
leaf server localhost serverAuth "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
leaf client billing-service clientAuth ""
rm -f *.csr *.ext *.srl server.crt client.crt
chmod 600 *.key
cat > /app/mtls_server.py <<'PY'
import ssl, sys
from http.server import BaseHTTPRequestHandler, HTTPServer


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        cert = self.connection.getpeercert()
        cn = next(v for rdn in cert["subject"] for k, v in rdn if k == "commonName")
        body = f"hello {cn}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class S(HTTPServer):
    def get_request(self):
        sock, addr = super().get_request()
        return sock, addr

    def handle_error(self, request, client_address):
        pass


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.minimum_version = ssl.TLSVersion.TLSv1_2
ctx.load_cert_chain("/app/pki/server.pem", "/app/pki/server.key")
ctx.load_verify_locations("/app/pki/root.pem")
ctx.verify_mode = ssl.CERT_REQUIRED
srv = S(("127.0.0.1", int(sys.argv[1])), H)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True, do_handshake_on_connect=False)


def handshake_then_handle(self, request, client_address):
    try:
        request.settimeout(10)
        request.do_handshake()
    except (ssl.SSLError, OSError):
        self.shutdown_request(request)
        return
    self.finish_request(request, client_address)
    self.shutdown_request(request)


S.process_request = handshake_then_handle
srv.serve_forever()
PY
