#!/bin/bash
set -e
cat > /app/buffer.py <<'PY'
"""Text buffer with undo/redo."""
import contextlib


class TextBuffer:
    def __init__(self, text="", history_limit=None):
        self._text = text
        self._undo, self._redo = [], []
        self._limit = history_limit
        self._group = None
        self._depth = 0
        self._typing = None  # position after the last coalescable char insert

    @property
    def text(self):
        return self._text

    # primitive ops: ("ins", pos, s) / ("del", pos, s)
    def _do(self, op):
        kind, pos, s = op
        if kind == "ins":
            self._text = self._text[:pos] + s + self._text[pos:]
        else:
            self._text = self._text[:pos] + self._text[pos + len(s):]

    @staticmethod
    def _inv(op):
        return ("del" if op[0] == "ins" else "ins", op[1], op[2])

    def _record(self, ops, coalesce_pos=None):
        if self._group is not None:
            self._group.extend(ops)
            return
        self._redo.clear()
        if coalesce_pos is not None and self._typing is not None and self._undo and coalesce_pos == self._typing:
            self._undo[-1].extend(ops)
        else:
            self._undo.append(list(ops))
            if self._limit is not None and len(self._undo) > self._limit:
                del self._undo[0]
        self._typing = coalesce_pos + 1 if coalesce_pos is not None else None

    def insert(self, pos, s):
        if not 0 <= pos <= len(self._text):
            raise IndexError("bad position")
        if not s:
            return
        op = ("ins", pos, s)
        self._do(op)
        co = pos if len(s) == 1 and not s.isspace() and self._group is None else None
        self._record([op], co)

    def delete(self, pos, n):
        if n < 0 or pos < 0 or pos + n > len(self._text):
            raise IndexError("bad range")
        if n == 0:
            return
        op = ("del", pos, self._text[pos:pos + n])
        self._do(op)
        self._record([op])

    def replace(self, old, new):
        if not old:
            raise ValueError("old must be non-empty")
        ops, pos = [], 0
        while True:
            i = self._text.find(old, pos)
            if i < 0:
                break
            for op in (("del", i, old), ("ins", i, new)):
                if op[2]:
                    self._do(op)
                    ops.append(op)
            pos = i + len(new)
        if ops or self._text.count(old) != 0:
            pass
        count = sum(1 for o in ops if o[0] == "del")
        if count:
            self._record(ops)
        return count

    def undo(self):
        self._typing = None
        if not self._undo:
            return False
        ops = self._undo.pop()
        for op in reversed(ops):
            self._do(self._inv(op))
        self._redo.append(ops)
        return True

    def redo(self):
        self._typing = None
        if not self._redo:
            return False
        ops = self._redo.pop()
        for op in ops:
            self._do(op)
        self._undo.append(ops)
        return True

    def can_undo(self):
        return bool(self._undo)

    def can_redo(self):
        return bool(self._redo)

    @contextlib.contextmanager
    def group(self):
        outer = self._group is None
        if outer:
            self._group = []
            self._typing = None
        start = len(self._group)
        try:
            yield self
        except BaseException:
            for op in reversed(self._group[start:]):
                self._do(self._inv(op))
            del self._group[start:]
            if outer:
                self._group = None
            raise
        if outer:
            ops, self._group = self._group, None
            if ops:
                self._record(ops)
            self._typing = None
PY
