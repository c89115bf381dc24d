import random


def generated_total():
    """Total of SIZE over STATUS 200 in the log setup.sh wrote (same seed and calls), independent of /app."""
    random.seed(11)
    paths = ["/", "/index.html", "/api/items", "/static/app.js", "/login", "/img/logo.png"]
    total = 0
    for i in range(2000):
        random.randint(0, 9), random.randint(1, 254)
        st = random.choice([200, 200, 200, 304, 404, 500, 200, 301])
        size = "-" if st in (304,) or random.random() < 0.03 else str(random.randint(0, 50000))
        random.choice(["curl/8.0", "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0", "bot 200 crawler"])
        random.choice(paths)
        if st == 200 and size != "-":
            total += int(size)
    return total


def test_total():
    want = generated_total()
    assert want > 1000000
    assert open("/app/total.txt").read().strip() == str(want)
