set -e
python3 - <<'PY'
import random
r = random.Random(7)
paths = ["/api/users", "/api/orders", "/login", "/static/app.js", "/health"]
with open("/app/server.log", "w") as f:
    for i in range(4321):
        f.write(f"2024-03-{1 + i // 200:02d}T{(i // 60) % 24:02d}:{i % 60:02d}:00Z 10.0.{r.randint(0, 9)}.{r.randint(1, 254)} "
                f"GET {r.choice(paths)} {r.choice([200, 200, 200, 404, 500])} {r.randint(80, 9000)}\n")
PY
