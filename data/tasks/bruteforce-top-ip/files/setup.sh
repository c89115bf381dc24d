set -e
mkdir -p /app/logs
python3 - <<'PY'
import random
r = random.Random(11)
ips = {"203.0.113.77": 140, "198.51.100.23": 131, "192.0.2.200": 90, "45.33.12.9": 20}
events = []
for ip, n in ips.items():
    for _ in range(n):
        user = r.choice(["root", "admin", "oracle", "test", "invalid user guest"])
        events.append(f"sshd[{r.randint(1000, 9999)}]: Failed password for {user} from {ip} port {r.randint(1024, 65535)} ssh2")
for _ in range(400):  # noisy lines where the busiest IP is not the top brute-forcer
    events.append(f"sshd[{r.randint(1000, 9999)}]: Connection closed by 198.51.100.50 port {r.randint(1024, 65535)} [preauth]")
for _ in range(30):
    events.append(f"sshd[{r.randint(1000, 9999)}]: Accepted publickey for deploy from 10.0.0.5 port {r.randint(1024, 65535)} ssh2")
r.shuffle(events)
with open("/app/logs/auth.log", "w") as f:
    for i, e in enumerate(events):
        f.write(f"Mar {1 + i // 300:2d} {i % 24:02d}:{i % 60:02d}:{(i * 7) % 60:02d} web01 {e}\n")
PY
