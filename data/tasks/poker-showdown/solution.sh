#!/bin/bash
set -e
cat > /app/showdown.py <<'PY'
import sys
from collections import Counter

RANKS = "23456789TJQKA"
NAMES = ["high card", "one pair", "two pair", "three of a kind", "straight", "flush", "full house",
         "four of a kind", "straight flush"]


def evaluate(cards):
    ranks = sorted((RANKS.index(c[0]) + 2 for c in cards), reverse=True)
    flush = len({c[1] for c in cards}) == 1
    uniq = sorted(set(ranks), reverse=True)
    top = None
    if len(uniq) == 5:
        if uniq[0] - uniq[4] == 4:
            top = uniq[0]
        elif uniq == [14, 5, 4, 3, 2]:
            top = 5
    groups = sorted(Counter(ranks).items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    counts = [c for _, c in groups]
    order = [r for r, _ in groups]
    if top and flush:
        return (8, [top])
    if counts[0] == 4:
        return (7, order)
    if counts == [3, 2]:
        return (6, order)
    if flush:
        return (5, ranks)
    if top:
        return (4, [top])
    if counts[0] == 3:
        return (3, order)
    if counts == [2, 2, 1]:
        return (2, order)
    if counts[0] == 2:
        return (1, order)
    return (0, ranks)


def main(path):
    players = []
    for line in open(path):
        if line.strip():
            name, cards = line.split(":", 1)
            players.append((evaluate(cards.split()), name.strip()))
    players.sort(key=lambda p: (-p[0][0], [-r for r in p[0][1]], p[1]))
    place = 1
    i = 0
    while i < len(players):
        j = i
        while j < len(players) and players[j][0] == players[i][0]:
            j += 1
        names = sorted(p[1] for p in players[i:j])
        print(f"{place}. {NAMES[players[i][0][0]]}: {', '.join(names)}")
        place += j - i
        i = j


main(sys.argv[1])
PY
