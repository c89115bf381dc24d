#!/bin/bash
set -e
cat > /app/bpe.py <<'PY'
import sys
from collections import Counter


def merge_word(sym, pair):
    out, i = [], 0
    while i < len(sym):
        if i + 1 < len(sym) and (sym[i], sym[i + 1]) == pair:
            out.append(sym[i] + sym[i + 1]); i += 2
        else:
            out.append(sym[i]); i += 1
    return out


def train(corpus, n, out):
    words = Counter(open(corpus, encoding="utf-8").read().split())
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
        for w in vocab:
            vocab[w] = merge_word(vocab[w], best)
    open(out, "w", encoding="utf-8").write("".join(f"{a} {b}\n" for a, b in merges))


def encode(merges_file):
    ranks = {}
    for line in open(merges_file, encoding="utf-8"):
        if line.strip():
            a, b = line.split()
            ranks.setdefault((a, b), len(ranks))
    for line in sys.stdin:
        toks = []
        for w in line.split():
            s = list(w) + ["</w>"]
            while True:
                cands = [ranks[p] for p in zip(s, s[1:]) if p in ranks]
                if not cands:
                    break
                pair = next(p for p, r in ranks.items() if r == min(cands))
                s = merge_word(s, pair)
            toks.extend(s)
        print(" ".join(toks))


if __name__ == "__main__":
    if sys.argv[1] == "train":
        train(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        encode(sys.argv[2])
PY
