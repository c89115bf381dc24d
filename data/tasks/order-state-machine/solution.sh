#!/bin/bash
set -e
cat > /app/orderflow.py <<'PY'
import copy
import json


class InvalidTransition(Exception):
    pass


class GuardFailed(InvalidTransition):
    pass


class Machine:
    def __init__(self, definition, guards=None):
        self.guards = dict(guards or {})
        self.initial = definition["initial"]
        self.final = set(definition.get("final", []))
        self.table = {}
        states = set()
        for t in definition["transitions"]:
            g = t.get("guard")
            if g is not None and g not in self.guards:
                raise ValueError("unknown guard %s" % g)
            for src in t["from"]:
                if (t["event"], src) in self.table:
                    raise ValueError("duplicate transition %s from %s" % (t["event"], src))
                if src in self.final:
                    raise ValueError("final state %s has outgoing transitions" % src)
                self.table[(t["event"], src)] = (t["to"], g)
                states.add(src)
            states.add(t["to"])
        if self.initial not in states:
            raise ValueError("initial state unused")

    @classmethod
    def load(cls, path, guards=None):
        with open(path) as f:
            return cls(json.load(f), guards)

    def start(self, context=None):
        return Instance(self, self.initial, {} if context is None else context, [])

    def restore(self, text):
        d = json.loads(text)
        return Instance(self, d["state"], d["context"], d["history"])


class Instance:
    def __init__(self, machine, state, context, history):
        self.machine, self.state, self.context, self.history = machine, state, context, history

    @property
    def is_final(self):
        return self.state in self.machine.final

    def available(self):
        return sorted({e for (e, s) in self.machine.table if s == self.state})

    def fire(self, event, payload=None):
        t = self.machine.table.get((event, self.state))
        if t is None or self.is_final:
            raise InvalidTransition("%s not allowed in %s" % (event, self.state))
        to, g = t
        if g is not None and not self.machine.guards[g](self.context, payload):
            raise GuardFailed("guard %s failed" % g)
        self.history.append({"event": event, "from": self.state, "to": to, "payload": copy.deepcopy(payload)})
        self.state = to
        return to

    def to_json(self):
        return json.dumps({"state": self.state, "context": self.context, "history": self.history})
PY
