import base64
import hashlib
import re


def test_fingerprint():
    pem = open("/app/tls/server.crt").read()
    b64 = re.search(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", pem, re.S).group(1)
    der = base64.b64decode("".join(b64.split()))
    digest = hashlib.sha256(der).hexdigest().upper()
    expected = ":".join(digest[i:i + 2] for i in range(0, 64, 2))
    assert open("/app/fingerprint.txt").read().strip() == expected
