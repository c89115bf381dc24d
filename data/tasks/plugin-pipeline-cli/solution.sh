#!/bin/bash
set -e
cat > /app/textpipe.py <<'PY'
import argparse
import importlib.util
import os
import sys


class PluginError(Exception):
    pass


def _load_file(path, idx):
    spec = importlib.util.spec_from_file_location("textpipe_plugin_%d" % idx, path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as e:
        raise PluginError("%s: import failed: %r" % (path, e))
    return mod


def load_plugins(dirs):
    out, idx = {}, 0
    for d in dirs:
        for fn in sorted(os.listdir(d)):
            if not fn.endswith(".py") or fn.startswith("_"):
                continue
            path = os.path.join(d, fn)
            idx += 1
            mod = _load_file(path, idx)
            name = getattr(mod, "NAME", None)
            if not isinstance(name, str) or not name:
                raise PluginError("%s: missing NAME" % path)
            if not callable(getattr(mod, "transform", None)):
                raise PluginError("%s: missing transform" % path)
            if name in out:
                raise PluginError("%s: duplicate plugin name %s" % (path, name))
            out[name] = mod
    return out


def _prio(p):
    return getattr(p, "PRIORITY", 100)


def plan(plugins, selected=None):
    need, stack = set(), list(plugins if selected is None else selected)
    while stack:
        n = stack.pop()
        if n not in plugins:
            raise PluginError("unknown plugin %s" % n)
        if n not in need:
            need.add(n)
            stack.extend(getattr(plugins[n], "REQUIRES", []))
    order, done = [], set()
    while len(order) < len(need):
        ready = [n for n in need - done if set(getattr(plugins[n], "REQUIRES", [])) <= done]
        if not ready:
            raise PluginError("requirement cycle among %s" % ", ".join(sorted(need - done)))
        n = min(ready, key=lambda n: (_prio(plugins[n]), n))
        order.append(n)
        done.add(n)
    return order


def run(text, plugins, order, options=None):
    for n in order:
        text = plugins[n].transform(text, dict(options or {}))
    return text


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--plugin-dir", action="append")
    p.add_argument("--only")
    p.add_argument("--opt", action="append", default=[])
    p.add_argument("--list", action="store_true")
    a = p.parse_args()
    try:
        plugins = load_plugins(a.plugin_dir or ["/app/plugins"])
        order = plan(plugins, a.only.split(",") if a.only else None)
        if a.list:
            for n in order:
                print(n, _prio(plugins[n]))
            return
        opts = dict(o.split("=", 1) for o in a.opt)
        sys.stdout.write(run(sys.stdin.read(), plugins, order, opts))
    except PluginError as e:
        print("error: %s" % e, file=sys.stderr)
        sys.exit(3)


if __name__ == "__main__":
    main()
PY
