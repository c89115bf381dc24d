import csv


def rows():
    with open("/app/inventory.csv", newline="") as f:
        r = list(csv.DictReader(f))
    return {x["file"]: x for x in r}, [x["file"] for x in r]


def test_names_and_issuers():
    d, order = rows()
    assert order == ["acme-ca.pem", "api.pem", "dev-selfsigned.pem", "legacy.pem", "mail.pem", "www.pem"]
    assert {k: (v["common_name"], v["issuer_cn"]) for k, v in d.items()} == {
        "acme-ca.pem": ("Acme Internal CA", "Acme Internal CA"), "api.pem": ("api.acme.test", "Acme Internal CA"),
        "dev-selfsigned.pem": ("dev.local", "dev.local"), "legacy.pem": ("legacy.acme.test", "Acme Internal CA"),
        "mail.pem": ("mail.acme.test", "Acme Internal CA"), "www.pem": ("www.acme.test", "Acme Internal CA")}


def test_key_bits_and_self_signed():
    d, _ = rows()
    assert {k: (int(v["key_bits"]), v["self_signed"]) for k, v in d.items()} == {
        "acme-ca.pem": (2048, "yes"), "api.pem": (2048, "no"), "dev-selfsigned.pem": (4096, "yes"),
        "legacy.pem": (2048, "no"), "mail.pem": (2048, "no"), "www.pem": (3072, "no")}


def test_san_and_expiry():
    d, _ = rows()
    assert {k: (v["san_dns"], v["expired"]) for k, v in d.items()} == {
        "acme-ca.pem": ("", "no"), "api.pem": ("api.acme.test;api-v2.acme.test", "no"),
        "dev-selfsigned.pem": ("dev.local;localhost", "no"), "legacy.pem": ("legacy.acme.test", "yes"),
        "mail.pem": ("", "no"), "www.pem": ("www.acme.test;acme.test", "no")}
