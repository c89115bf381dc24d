import json
import subprocess


def run(log_text, jail):
    open("/tmp/t.log", "w").write(log_text)
    json.dump(jail, open("/tmp/jail.json", "w"))
    return replay("/tmp/t.log", "/tmp/jail.json")


def replay(log, jail):
    r = subprocess.run(["python3", "/app/banlog.py", log, jail], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def L(ts, msg, pid=1):
    return f"{ts} srv sshd[{pid}]: {msg}\n"


def F(ts, ip, user="root"):
    return L(ts, f"Failed password for {user} from {ip} port 5000 ssh2")


def test_sample_log():
    assert replay("/app/sample/auth.log", "/app/sample/jail.json") == [
        {"ip": "203.0.113.5", "ban": "2024-03-03T10:05:00", "unban": "2024-03-03T11:05:00"}]


def test_window_and_ignoreip():
    log = (F("Feb  1 00:00:00", "2.2.2.2") + F("Feb  1 00:05:00", "2.2.2.2") + F("Feb  1 00:10:00", "2.2.2.2")
           + F("Feb  1 00:10:01", "2.2.2.3") + F("Feb  1 00:10:02", "2.2.2.3") + F("Feb  1 00:20:00", "2.2.2.3")
           + F("Feb  2 09:00:00", "172.16.5.5") * 5 + F("Feb  2 09:00:00", "172.17.0.1") * 2 + F("Feb  2 09:00:01", "172.17.0.1")
           + L("Feb  2 09:01:00", "Invalid user bob from 3.3.3.3 port 22") + L("Feb  2 09:01:01", "Invalid user bob from 3.3.3.3 port 22")
           + L("Feb  2 09:01:02", "Connection closed by 3.3.3.3 port 22 [preauth]")
           + F("Feb  2 09:01:03", "3.3.3.3", "invalid user eve")
           + F("Dec 31 23:50:00", "1.1.1.1") + F("Dec 31 23:55:00", "1.1.1.1") + F("Dec 31 23:59:59", "1.1.1.1"))
    jail = {"maxretry": 3, "findtime": 600, "bantime": 120, "ignoreip": ["172.16.0.0/16"]}
    assert run(log, jail) == [
        {"ip": "2.2.2.3", "ban": "2024-02-01T00:20:00", "unban": "2024-02-01T00:22:00"},
        {"ip": "172.17.0.1", "ban": "2024-02-02T09:00:01", "unban": "2024-02-02T09:02:01"},
        {"ip": "3.3.3.3", "ban": "2024-02-02T09:01:03", "unban": "2024-02-02T09:03:03"},
        {"ip": "1.1.1.1", "ban": "2024-12-31T23:59:59", "unban": "2025-01-01T00:01:59"},
    ]


def test_rebans_after_unban():
    ip = "9.9.9.9"
    log = (F("Jul  4 12:00:00", ip) + F("Jul  4 12:00:10", ip)             # banned at 12:00:10 until 12:01:10
           + F("Jul  4 12:00:20", ip) + F("Jul  4 12:01:00", ip)           # ignored while banned
           + F("Jul  4 12:01:10", ip)                                      # counts (ban over), 1st new failure
           + F("Jul  4 12:05:00", ip)                                      # 2nd -> banned again at 12:05:00
           + F("Jul  4 12:06:00", "8.8.8.8") + F("Jul  4 12:20:00", "8.8.8.8") + F("Jul  4 12:50:00", "8.8.8.8"))
    jail = {"maxretry": 2, "findtime": 300, "bantime": 60, "ignoreip": []}
    assert run(log, jail) == [
        {"ip": ip, "ban": "2024-07-04T12:00:10", "unban": "2024-07-04T12:01:10"},
        {"ip": ip, "ban": "2024-07-04T12:05:00", "unban": "2024-07-04T12:06:00"},
    ]
