import importlib.util
import random
import threading

import pytest


def load():
    spec = importlib.util.spec_from_file_location("workpool", "/app/workpool.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_results_and_exceptions():
    m = load()
    with m.WorkerPool(4) as p:
        rng = random.Random(1)
        xs = [rng.randint(-50, 50) for _ in range(200)]
        assert p.map(lambda x: x * x - 3, xs) == [x * x - 3 for x in xs]
        f = p.submit(lambda a, b=0: a + b, 2, b=40)
        assert f.result(timeout=30) == 42 and f.done() and f.exception() is None
        err = ValueError("bad")

        def boom():
            raise err
        g = p.submit(boom)
        with pytest.raises(ValueError) as ei:
            g.result(timeout=30)
        assert ei.value is err and g.exception() is err
        with pytest.raises(ZeroDivisionError):
            p.map(lambda x: 1 // x, [1, 2, 0, 3])
        assert p.submit(lambda: "still alive").result(timeout=30) == "still alive"
    with pytest.raises(ValueError):
        m.WorkerPool(0)


def test_concurrency_and_fifo():
    m = load()
    p = m.WorkerPool(3)
    barrier = threading.Barrier(3, timeout=30)
    futs = [p.submit(barrier.wait) for _ in range(3)]
    assert sorted(f.result(timeout=30) for f in futs) == [0, 1, 2]  # needs 3 tasks running at once
    one = m.WorkerPool(1)
    order = []
    gate = threading.Event()
    one.submit(gate.wait, 30)
    fs = [one.submit(order.append, i) for i in range(50)]
    gate.set()
    for f in fs:
        f.result(timeout=30)
    assert order == list(range(50))
    block = threading.Event()
    f = one.submit(block.wait, 30)
    with pytest.raises(TimeoutError):
        f.result(timeout=0.05)
    block.set()
    assert f.result(timeout=30) is True
    p.shutdown()
    one.shutdown()


def test_cancel_and_callbacks():
    m = load()
    p = m.WorkerPool(1)
    gate, started = threading.Event(), threading.Event()

    def first():
        started.set()
        return gate.wait(30)
    running = p.submit(first)
    started.wait(30)
    queued = p.submit(lambda: "never")
    seen = []
    queued.add_done_callback(lambda f: seen.append(("q", f.cancelled())))
    assert running.cancel() is False and queued.cancel() is True and queued.cancelled()
    with pytest.raises(m.CancelledError):
        queued.result(timeout=5)
    assert seen == [("q", True)]
    running.add_done_callback(lambda f: seen.append(("r", f.result())))
    gate.set()
    assert running.result(timeout=30) is True
    after = p.submit(lambda: 7)
    assert after.result(timeout=30) == 7
    after.add_done_callback(lambda f: seen.append(("a", f.result())))
    assert seen == [("q", True), ("r", True), ("a", 7)]
    assert not after.cancel()
    p.shutdown()


def test_shutdown():
    m = load()
    p = m.WorkerPool(2)
    done = []
    gate = threading.Event()
    fs = [p.submit(lambda i=i: (gate.wait(30), done.append(i))) for i in range(6)]
    gate.set()
    p.shutdown(wait=True)
    assert sorted(done) == list(range(6)) and all(f.done() for f in fs)
    with pytest.raises(RuntimeError):
        p.submit(lambda: 1)
    p.shutdown()
    q = m.WorkerPool(1)
    hold = threading.Event()
    started = threading.Event()
    first = q.submit(lambda: (started.set(), hold.wait(30))[1])
    started.wait(30)
    rest = [q.submit(lambda: 1) for _ in range(5)]
    threading.Timer(0.2, hold.set).start()
    q.shutdown(wait=True, cancel_pending=True)
    assert first.result(timeout=1) is True
    assert all(f.cancelled() for f in rest)
    assert threading.active_count() < 20
