#!/bin/bash
set -e
cat > /app/showconfig.py <<'PY'
import argparse
import json
import os
import sys

TYPES = {"host": str, "port": int, "debug": bool, "workers": int, "log_level": str}
LEVELS = {"debug", "info", "warning", "error"}


def fail(msg):
    print("error: " + msg, file=sys.stderr)
    sys.exit(2)


def conv(name, s):
    t = TYPES[name]
    if t is bool:
        v = s.strip().lower()
        if v in ("1", "true", "yes", "on"):
            return True
        if v in ("0", "false", "no", "off"):
            return False
        fail("bad boolean for %s: %r" % (name, s))
    if t is int:
        try:
            return int(s)
        except ValueError:
            fail("bad integer for %s: %r" % (name, s))
    return s


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config")
    p.add_argument("--host")
    p.add_argument("--port")
    p.add_argument("--workers")
    p.add_argument("--log-level", dest="log_level")
    p.add_argument("--debug", dest="debug", action="store_const", const="true")
    p.add_argument("--no-debug", dest="debug", action="store_const", const="false")
    p.add_argument("--explain", action="store_true")
    a = p.parse_args()
    cfg = json.load(open("/app/defaults.json"))
    src = {k: "default" for k in cfg}
    if a.config:
        try:
            data = json.load(open(a.config))
        except (OSError, ValueError) as e:
            fail("cannot read config: %s" % e)
        if not isinstance(data, dict):
            fail("config must be an object")
        for k, v in data.items():
            if k not in TYPES:
                fail("unknown key %s" % k)
            t = TYPES[k]
            if type(v) is not t:
                fail("wrong type for %s" % k)
            cfg[k], src[k] = v, "file"
    for k in TYPES:
        e = os.environ.get("SVC_" + k.upper())
        if e is not None:
            cfg[k], src[k] = conv(k, e), "env"
    for k in TYPES:
        v = getattr(a, k)
        if v is not None:
            cfg[k], src[k] = conv(k, v), "cli"
    if not 1 <= cfg["port"] <= 65535:
        fail("port out of range")
    if cfg["workers"] < 1:
        fail("workers must be >= 1")
    if cfg["log_level"] not in LEVELS:
        fail("bad log_level")
    if a.explain:
        for k in sorted(cfg):
            print("%s=%s (%s)" % (k, json.dumps(cfg[k]), src[k]))
    else:
        print(json.dumps(cfg, sort_keys=True))


main()
PY
