import asyncio
import importlib.util
import random

import pytest


def load():
    spec = importlib.util.spec_from_file_location("aiobounded", "/app/aiobounded.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.gather_bounded


class Probe:
    """Tasks controlled by events, so nothing depends on wall-clock timing."""

    def __init__(self, n):
        self.events = [asyncio.Event() for _ in range(n)]
        self.started, self.active, self.max_active, self.cancelled = [], 0, 0, []

    def factory(self, i, fail=False):
        async def run():
            self.started.append(i)
            self.active += 1
            self.max_active = max(self.max_active, self.active)
            try:
                await self.events[i].wait()
                if fail:
                    raise KeyError(i)
                return i * 10
            except asyncio.CancelledError:
                self.cancelled.append(i)
                raise
            finally:
                self.active -= 1
        return run


async def settle():
    for _ in range(20):
        await asyncio.sleep(0)


def test_order_and_limit():
    gb = load()

    async def main():
        rng = random.Random(3)
        n, limit = 12, 3
        p = Probe(n)
        task = asyncio.ensure_future(gb([p.factory(i) for i in range(n)], limit))
        order = list(range(n))
        rng.shuffle(order)
        for i in order:
            await settle()
            assert p.active <= limit
            p.events[i].set()
        res = await task
        assert res == [i * 10 for i in range(n)]
        assert p.max_active == limit
        assert sorted(p.started) == list(range(n))
        assert await gb([], 2) == []
        with pytest.raises(ValueError):
            await gb([p.factory(0)], 0)
    asyncio.run(main())


def test_sliding_window_not_batches():
    gb = load()

    async def main():
        p = Probe(6)
        task = asyncio.ensure_future(gb([p.factory(i) for i in range(6)], 3))
        await settle()
        assert p.started == [0, 1, 2]
        p.events[1].set()
        await settle()
        assert p.started == [0, 1, 2, 3]
        for e in p.events:
            e.set()
        assert await task == [0, 10, 20, 30, 40, 50]
    asyncio.run(main())


def test_exceptions():
    gb = load()

    async def main():
        p = Probe(5)
        task = asyncio.ensure_future(gb([p.factory(i, fail=(i == 2)) for i in range(5)], 2, return_exceptions=True))
        for i in [1, 0, 2, 4, 3]:
            await settle()
            p.events[i].set()
        res = await task
        assert res[:2] == [0, 10] and isinstance(res[2], KeyError) and res[3:] == [30, 40]

        p = Probe(6)
        task = asyncio.ensure_future(gb([p.factory(i, fail=(i == 1)) for i in range(6)], 3))
        await settle()
        p.events[1].set()
        with pytest.raises(KeyError):
            await task
        await settle()
        assert sorted(p.cancelled) == [0, 2] and p.active == 0
        assert p.started == [0, 1, 2]
    asyncio.run(main())
