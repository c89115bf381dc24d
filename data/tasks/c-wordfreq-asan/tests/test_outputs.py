import random
import re
import subprocess
from collections import Counter


def build():
    for target in ("wordfreq", "asan"):
        r = subprocess.run(["make", "-B", "-C", "/app", target], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr


def expected(text, n):
    c = Counter(w.lower() for w in re.findall(r"[A-Za-z]+", text))
    items = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    return "".join(f"{v} {k}\n" for k, v in items)


def run(binary, text, n):
    r = subprocess.run([f"/app/{binary}", str(n)], input=text.encode(), capture_output=True, timeout=120,
                       env={"ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0"})
    err = r.stderr.decode(errors="replace")
    assert "Sanitizer" not in err and "runtime error" not in err, err[:2000]
    assert r.returncode == 0, err[:2000]
    return r.stdout.decode()


def test_small_text():
    build()
    text = "The cat and the hat. THE end; a cat!\nzebra Zebra zebra"
    for b in ("wordfreq", "wordfreq-asan"):
        assert run(b, text, 3) == expected(text, 3) == "3 the\n3 zebra\n2 cat\n"
        assert run(b, text, 0) == ""
        assert run(b, text, 100) == expected(text, 100)


def test_long_words_asan():
    build()
    text = "a" * 5000 + " short " + "B" * 40 + "," + "b" * 40 + " x" + "Q" * 100000
    for b in ("wordfreq-asan", "wordfreq"):
        assert run(b, text, 10) == expected(text, 10)


def test_many_words():
    build()
    rng = random.Random(3)
    vocab = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 12))) for _ in range(3000)]
    text = " ".join(rng.choice(vocab) if rng.random() < 0.7 else vocab[rng.randrange(20)] for _ in range(60000))
    for b in ("wordfreq-asan", "wordfreq"):
        assert run(b, text, 25) == expected(text, 25)
