"""Disk usage per directory from a flat listing.

    python3 du_tree.py LISTING

LISTING lines: `<path id> <parent id> <own size in bytes>`; the root has parent `-`.
Ids are arbitrary words. Every id appears exactly once as a path; parents appear somewhere in the file
(not necessarily before their children).
Prints `<id> <total size>` for every id (own size plus the totals of all its children),
sorted by total size descending, ties by id ascending.
"""
import sys
from collections import defaultdict


def total(node, children, own):
    return own[node] + sum(total(c, children, own) for c in children[node])


def main(path):
    children = defaultdict(list)
    own = {}
    for line in open(path):
        if not line.strip():
            continue
        node, parent, size = line.split()
        own[node] = int(size)
        if parent != "-":
            children[parent].append(node)
    totals = {node: total(node, children, own) for node in own}
    for node in sorted(totals, key=lambda n: (-totals[n], n)):
        print(node, totals[node])


if __name__ == "__main__":
    main(sys.argv[1])
