#!/bin/bash
set -e
cat > /app/diskcache.py <<'PY'
"""Persistent memoization on disk."""
import functools
import glob
import hashlib
import json
import os
import tempfile


def disk_memoize(cache_dir, version="1", max_entries=None):
    def deco(func):
        stats = {"hits": 0, "misses": 0}

        def key_for(args, kwargs):
            text = json.dumps([func.__module__, func.__qualname__, version, list(args), kwargs],
                              sort_keys=True, separators=(",", ":"))
            return hashlib.sha256(text.encode("utf-8")).hexdigest()

        def entries():
            return glob.glob(os.path.join(cache_dir, "*.json"))

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            path = os.path.join(cache_dir, key_for(args, kwargs) + ".json")
            try:
                with open(path) as f:
                    data = json.load(f)
                if isinstance(data, dict) and "value" in data:
                    stats["hits"] += 1
                    os.utime(path)
                    return data["value"]
            except (OSError, ValueError):
                pass
            stats["misses"] += 1
            value = func(*args, **kwargs)
            text = json.dumps({"value": value})
            os.makedirs(cache_dir, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                f.write(text)
            os.replace(tmp, path)
            if max_entries is not None:
                files = entries()
                if len(files) > max_entries:
                    files.sort(key=lambda p: (os.stat(p).st_mtime_ns, os.path.basename(p)))
                    for p in files[: len(files) - max_entries]:
                        os.remove(p)
            return value

        def cache_info():
            return dict(stats)

        def cache_clear():
            for p in entries():
                os.remove(p)
            stats["hits"] = stats["misses"] = 0

        wrapper.cache_info, wrapper.cache_clear = cache_info, cache_clear
        return wrapper
    return deco
PY
