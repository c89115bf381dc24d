python3 - <<'PY'
import random
random.seed(11)
paths = ["/", "/index.html", "/api/items", "/static/app.js", "/login", "/img/logo.png"]
with open("/app/access.log", "w") as f:
    for i in range(2000):
        ip = f"10.0.{random.randint(0,9)}.{random.randint(1,254)}"
        st = random.choice([200, 200, 200, 304, 404, 500, 200, 301])
        size = "-" if st in (304,) or random.random() < 0.03 else str(random.randint(0, 50000))
        ua = random.choice(["curl/8.0", "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0", "bot 200 crawler"])
        f.write(f'{ip} - - [01/Mar/2024:10:{i%60:02d}:{i%60:02d} +0000] "GET {random.choice(paths)} HTTP/1.1" {st} {size} "-" "{ua}"\n')
PY
