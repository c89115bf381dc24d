import json

EXPECTED = [
    (".ci-token", 1, "github_token"),
    (".env.production", 1, "url_password"),
    (".env.production", 3, "private_key"),
    ("deploy/docker-compose.yml", 4, "github_token"),
    ("deploy/id_deploy", 1, "private_key"),
    ("src/app/notify.py", 1, "slack_webhook"),
    ("src/app/settings.py", 3, "aws_access_key"),
    ("src/app/settings.py", 5, "url_password"),
    ("tests/fixtures.py", 2, "private_key"),
]


def load():
    return [(d["file"], int(d["line"]), d["type"]) for d in json.load(open("/app/secrets_report.json"))]


def test_true_positives():
    got = load()
    for e in EXPECTED:
        assert e in got, e
    assert got == sorted(got)


def test_no_false_positives():
    assert sorted(load()) == sorted(EXPECTED)
