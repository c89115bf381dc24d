import os
import socket
import ssl
import stat
import subprocess
import time

import pytest

P = "/app/pki"
W = "/tmp/mtls_test"


def ossl(*args):
    return subprocess.run(["openssl", *args], capture_output=True, text=True)


def text(cert):
    r = ossl("x509", "-in", cert, "-noout", "-text")
    assert r.returncode == 0, r.stderr
    return r.stdout


def subject(cert):
    return ossl("x509", "-in", cert, "-noout", "-subject", "-nameopt", "RFC2253").stdout


def test_pki_structure():
    assert "CN=Internal Root CA" in subject(f"{P}/root.pem")
    assert "CN=Internal Issuing CA" in subject(f"{P}/intermediate.pem")
    rt, it = text(f"{P}/root.pem"), text(f"{P}/intermediate.pem")
    assert "CA:TRUE" in rt and "Certificate Sign" in rt
    assert "CA:TRUE, pathlen:0" in it and "Certificate Sign" in it
    os.makedirs(W, exist_ok=True)
    for leaf, cn, eku in [("server", "localhost", "TLS Web Server Authentication"), ("client", "billing-service", "TLS Web Client Authentication")]:
        pem = open(f"{P}/{leaf}.pem").read()
        certs = pem.count("BEGIN CERTIFICATE")
        assert certs == 2, leaf
        first = pem[:pem.index("-----END CERTIFICATE-----") + 25] + "\n"
        open(f"{W}/{leaf}-leaf.pem", "w").write(first)
        t = text(f"{W}/{leaf}-leaf.pem")
        assert f"CN={cn}" in subject(f"{W}/{leaf}-leaf.pem")
        assert eku in t and "CA:TRUE" not in t
        r = ossl("verify", "-CAfile", f"{P}/root.pem", "-untrusted", f"{P}/intermediate.pem", "-purpose",
                 "sslserver" if leaf == "server" else "sslclient", f"{W}/{leaf}-leaf.pem")
        assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr
        assert ossl("x509", "-in", f"{W}/{leaf}-leaf.pem", "-noout", "-checkend", str(30 * 86400)).returncode == 0
        second = pem[pem.index("-----END CERTIFICATE-----") + 25:].strip() + "\n"
        open(f"{W}/{leaf}-chain2.pem", "w").write(second)
        assert ossl("x509", "-in", f"{W}/{leaf}-chain2.pem", "-noout", "-fingerprint").stdout == \
            ossl("x509", "-in", f"{P}/intermediate.pem", "-noout", "-fingerprint").stdout
    st = text(f"{W}/server-leaf.pem")
    assert "DNS:localhost" in st and "IP Address:127.0.0.1" in st
    assert ossl("verify", "-CAfile", f"{P}/root.pem", f"{P}/intermediate.pem").returncode == 0


def test_key_files():
    for name in ["root", "intermediate", "server", "client"]:
        k = f"{P}/{name}.key"
        assert stat.S_IMODE(os.stat(k).st_mode) == 0o600, k
        pub_k = ossl("pkey", "-in", k, "-pubout").stdout
        pub_c = ossl("x509", "-in", f"{P}/{name}.pem", "-noout", "-pubkey").stdout
        assert pub_k and pub_k == pub_c, name


@pytest.fixture(scope="module")
def server():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen(["python3", "/app/mtls_server.py", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("server did not start")
        yield port
    finally:
        proc.kill()
        proc.wait()


def request(port, cert=None, key=None, host="localhost"):
    ctx = ssl.create_default_context(cafile=f"{P}/root.pem")
    if cert:
        ctx.load_cert_chain(cert, key)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname=host) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
    return data


def test_mtls_handshake_and_response(server):
    data = request(server, f"{P}/client.pem", f"{P}/client.key")
    assert data.startswith(b"HTTP/1.") and b" 200 " in data.split(b"\r\n")[0]
    assert data.endswith(b"\r\n\r\nhello billing-service\n") or data.split(b"\r\n\r\n", 1)[1] == b"hello billing-service\n"
    data2 = request(server, f"{P}/client.pem", f"{P}/client.key", host="127.0.0.1")
    assert b"hello billing-service" in data2
    # a second client issued by the same intermediate: the greeting must use the presented certificate's CN
    os.makedirs(W, exist_ok=True)
    subprocess.run(["openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                    f"{W}/rep.key", "-out", f"{W}/rep.csr", "-subj", "/CN=reports-service"], check=True, capture_output=True)
    open(f"{W}/rep.ext", "w").write("basicConstraints=critical,CA:FALSE\nextendedKeyUsage=clientAuth\n")
    subprocess.run(["openssl", "x509", "-req", "-in", f"{W}/rep.csr", "-CA", f"{P}/intermediate.pem", "-CAkey",
                    f"{P}/intermediate.key", "-CAcreateserial", "-CAserial", f"{W}/rep.srl", "-days", "30",
                    "-extfile", f"{W}/rep.ext", "-out", f"{W}/rep.crt"], check=True, capture_output=True)
    open(f"{W}/rep.pem", "w").write(open(f"{W}/rep.crt").read() + open(f"{P}/intermediate.pem").read())
    data3 = request(server, f"{W}/rep.pem", f"{W}/rep.key")
    assert data3.split(b"\r\n\r\n", 1)[1] == b"hello reports-service\n"


def rejected(port, cert=None, key=None):
    try:
        data = request(port, cert, key)
    except (ssl.SSLError, OSError):
        return True
    return b" 200 " not in data.split(b"\r\n")[0] and b"hello" not in data


def test_untrusted_clients_rejected(server):
    assert request(server, f"{P}/client.pem", f"{P}/client.key").endswith(b"hello billing-service\n")
    os.makedirs(W, exist_ok=True)
    assert rejected(server)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                    f"{W}/rogue.key", "-out", f"{W}/rogue.pem", "-days", "30", "-subj", "/CN=billing-service"], check=True, capture_output=True)
    assert rejected(server, f"{W}/rogue.pem", f"{W}/rogue.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                    f"{W}/fake-ca.key", "-out", f"{W}/fake-ca.pem", "-days", "30", "-subj", "/CN=Internal Root CA",
                    "-addext", "basicConstraints=critical,CA:TRUE"], check=True, capture_output=True)
    subprocess.run(["openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                    f"{W}/fc.key", "-out", f"{W}/fc.csr", "-subj", "/CN=billing-service"], check=True, capture_output=True)
    subprocess.run(["openssl", "x509", "-req", "-in", f"{W}/fc.csr", "-CA", f"{W}/fake-ca.pem", "-CAkey", f"{W}/fake-ca.key",
                    "-CAcreateserial", "-days", "30", "-out", f"{W}/fc.pem"], check=True, capture_output=True)
    assert rejected(server, f"{W}/fc.pem", f"{W}/fc.key")
    assert request(server, f"{P}/client.pem", f"{P}/client.key").endswith(b"hello billing-service\n")
