#!/bin/bash
set -e
cat > /app/aiobounded.py <<'PY'
import asyncio


async def gather_bounded(factories, limit, return_exceptions=False):
    if limit < 1:
        raise ValueError("limit must be >= 1")
    results = [None] * len(factories)
    running = {}
    it = iter(enumerate(factories))

    def start_next():
        try:
            i, f = next(it)
        except StopIteration:
            return False
        running[asyncio.ensure_future(f())] = i
        return True

    while len(running) < limit and start_next():
        pass
    while running:
        done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
        for t in done:
            i = running.pop(t)
            if t.exception() is not None:
                if not return_exceptions:
                    for r in running:
                        r.cancel()
                    await asyncio.gather(*running, return_exceptions=True)
                    raise t.exception()
                results[i] = t.exception()
            else:
                results[i] = t.result()
        while len(running) < limit and start_next():
            pass
    return results
PY
