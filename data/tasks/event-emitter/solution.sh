#!/bin/bash
set -e
cat > /app/events.py <<'PY'
"""A small synchronous event emitter."""
import itertools


class _Reg:
    def __init__(self, handler, priority, once, seq):
        self.handler, self.priority, self.once, self.seq = handler, priority, once, seq


class EventEmitter:
    def __init__(self):
        self._regs = {}
        self._seq = itertools.count()

    def _add(self, event, handler, priority, once):
        self._regs.setdefault(event, []).append(_Reg(handler, priority, once, next(self._seq)))
        return handler

    def on(self, event, handler, priority=0):
        return self._add(event, handler, priority, False)

    def once(self, event, handler, priority=0):
        return self._add(event, handler, priority, True)

    def off(self, event, handler):
        regs = self._regs.get(event, [])
        for r in sorted(regs, key=lambda r: r.seq):
            if r.handler == handler:
                regs.remove(r)
                return True
        return False

    def _ordered(self, event):
        return sorted(self._regs.get(event, []), key=lambda r: (-r.priority, r.seq))

    def emit(self, event, *args, **kwargs):
        calls = [(r, False) for r in self._ordered(event)]
        if event != "*":
            calls += [(r, True) for r in self._ordered("*")]
        out = []
        for r, wild in calls:
            if r.once:
                regs = self._regs.get("*" if wild else event, [])
                if r not in regs:
                    continue
                regs.remove(r)
            out.append(r.handler(event, *args, **kwargs) if wild else r.handler(*args, **kwargs))
        return out

    def listener_count(self, event):
        return len(self._regs.get(event, []))
PY
