import random
import subprocess
import tempfile
from collections import Counter
from pathlib import Path


def merge_word(sym, pair):
    out, i = [], 0
    while i < len(sym):
        if i + 1 < len(sym) and (sym[i], sym[i + 1]) == pair:
            out.append(sym[i] + sym[i + 1])
            i += 2
        else:
            out.append(sym[i])
            i += 1
    return out


def ref_train(text, n):
    words = Counter(text.split())
    vocab = {w: list(w) + ["</w>"] for w in words}
    merges = []
    for _ in range(n):
        pairs = Counter()
        for w, f in words.items():
            s = vocab[w]
            for a, b in zip(s, s[1:]):
                pairs[(a, b)] += f
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        if pairs[best] < 2:
            break
        merges.append(best)
        vocab = {w: merge_word(s, best) for w, s in vocab.items()}
    return merges


def ref_encode(merges, line):
    ranks = {p: i for i, p in reversed(list(enumerate(merges)))}
    toks = []
    for w in line.split():
        s = list(w) + ["</w>"]
        while True:
            cands = [p for p in zip(s, s[1:]) if p in ranks]
            if not cands:
                break
            s = merge_word(s, min(cands, key=ranks.get))
        toks.extend(s)
    return " ".join(toks)


def train(text, n):
    with tempfile.TemporaryDirectory() as d:
        Path(d, "c.txt").write_text(text)
        r = subprocess.run(["python3", "/app/bpe.py", "train", f"{d}/c.txt", str(n), f"{d}/m.txt"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return [tuple(l.split(" ")) for l in Path(d, "m.txt").read_text().splitlines() if l.strip()]


def corpus(seed, n_words):
    rng = random.Random(seed)
    stems = ["low", "new", "wid", "play", "read", "walk", "talk", "jump", "aaa", "banana", "Tok"]
    ends = ["", "er", "est", "ing", "ed", "s", "ly", "a"]
    lines = []
    for _ in range(n_words // 8):
        lines.append(" ".join(rng.choice(stems) + rng.choice(ends) for _ in range(8)))
    return "\n".join(lines) + "\n"


def test_train_merges_small():
    text = "low lower lowest newer newest wider widest\nthe lowest newer slow slower slowest\n"
    assert train(text, 3) == [("w", "e"), ("l", "o"), ("lo", "we")]
    assert train("aaaa aaaa b b", 10) == ref_train("aaaa aaaa b b", 10)
    assert train("ab cd", 5) == []


def test_train_merges_hidden_corpus():
    text = corpus(31, 1200)
    assert train(text, 60) == ref_train(text, 60)
    text = corpus(32, 400)
    assert train(text, 500) == ref_train(text, 500)


def test_encode():
    merges = ref_train(corpus(33, 800), 45) + [("x", "y"), ("a", "a")]
    lines = ["walking talked lowest", "aaaa banana Tokens", "xyz unknownword", "", "  jump   jumps  "]
    with tempfile.TemporaryDirectory() as d:
        Path(d, "m.txt").write_text("".join(f"{a} {b}\n" for a, b in merges))
        r = subprocess.run(["python3", "/app/bpe.py", "encode", f"{d}/m.txt"], input="\n".join(lines) + "\n",
                           capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    got = r.stdout.split("\n")
    assert [g.strip() for g in got[:len(lines)]] == [ref_encode(merges, l) for l in lines]
