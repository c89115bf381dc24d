#!/bin/bash
set -e
cat > /app/trie.py <<'PY'
import heapq


class _Node:
    __slots__ = ("kids", "weight", "count")

    def __init__(self):
        self.kids, self.weight, self.count = {}, None, 0


class Autocomplete:
    def __init__(self):
        self.root, self.n = _Node(), 0

    def _find(self, s):
        node = self.root
        for ch in s:
            node = node.kids.get(ch)
            if node is None:
                return None
        return node

    def add(self, word, weight=1):
        if not word:
            raise ValueError("empty word")
        node = self._find(word)
        new = node is None or node.weight is None
        path = [self.root]
        node = self.root
        for ch in word:
            node = node.kids.setdefault(ch, _Node())
            path.append(node)
        if new:
            for p in path:
                p.count += 1
            self.n += 1
            node.weight = weight
        else:
            node.weight += weight

    def remove(self, word):
        if word not in self:
            return False
        node, path = self.root, [self.root]
        for ch in word:
            node = node.kids[ch]
            path.append(node)
        node.weight = None
        for p in path:
            p.count -= 1
        for i in range(len(word), 0, -1):
            if path[i].count == 0:
                del path[i - 1].kids[word[i - 1]]
        self.n -= 1
        return True

    def __contains__(self, word):
        node = self._find(word) if word else None
        return node is not None and node.weight is not None

    def __len__(self):
        return self.n

    def weight(self, word):
        if word not in self:
            raise KeyError(word)
        return self._find(word).weight

    def count_prefix(self, prefix):
        node = self._find(prefix)
        return node.count if node else 0

    def complete(self, prefix, limit=10):
        node = self._find(prefix)
        if node is None:
            return []
        out, stack = [], [(prefix, node)]
        while stack:
            s, n = stack.pop()
            if n.weight is not None:
                out.append((-n.weight, s))
            for ch, k in n.kids.items():
                stack.append((s + ch, k))
        return [w for _, w in heapq.nsmallest(limit, out)]
PY
