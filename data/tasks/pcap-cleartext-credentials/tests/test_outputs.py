import json


def load():
    return [(d["protocol"], d["client"], d["server"], d["username"], d["password"]) for d in json.load(open("/app/credentials.json"))]


HTTP = [("http", "10.0.0.11:33333", "10.0.1.20:8080", "bob", "hunter2"),
        ("http", "10.0.0.7:52001", "10.0.1.20:8080", "alice", "Spring2024!"),
        ("http", "10.0.0.9:40123", "10.0.1.21:80", "svc-backup", "p@ss:w0rd")]
FTP = [("ftp", "10.0.0.12:50600", "10.0.1.30:2121", "anonymous", "guest@example.com"),
       ("ftp", "10.0.0.7:50500", "10.0.1.30:21", "alice", "ftp-S3cret")]


def test_http_credentials():
    got = load()
    assert [g for g in got if g[0] == "http"] == HTTP


def test_ftp_credentials():
    got = load()
    assert [g for g in got if g[0] == "ftp"] == FTP


def test_no_extra_entries():
    assert load() == FTP + HTTP
