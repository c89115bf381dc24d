#!/bin/bash
set -e
cat > /app/workpool.py <<'PY'
import queue
import threading


class CancelledError(Exception):
    pass


class Future:
    def __init__(self):
        self._cond = threading.Condition()
        self._state = "pending"  # pending, running, done, cancelled
        self._value = self._exc = None
        self._callbacks = []

    def _finish(self, value=None, exc=None, state="done"):
        with self._cond:
            self._value, self._exc, self._state = value, exc, state
            cbs, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in cbs:
            cb(self)

    def _start(self):
        with self._cond:
            if self._state != "pending":
                return False
            self._state = "running"
            return True

    def cancel(self):
        with self._cond:
            if self._state == "cancelled":
                return True
            if self._state != "pending":
                return False
        self._finish(exc=CancelledError(), state="cancelled")
        return True

    def cancelled(self):
        return self._state == "cancelled"

    def done(self):
        return self._state in ("done", "cancelled")

    def _wait(self, timeout):
        with self._cond:
            if not self._cond.wait_for(self.done, timeout):
                raise TimeoutError()

    def result(self, timeout=None):
        self._wait(timeout)
        if self._exc is not None:
            raise self._exc
        return self._value

    def exception(self, timeout=None):
        self._wait(timeout)
        if self._state == "cancelled":
            raise self._exc
        return self._exc

    def add_done_callback(self, cb):
        with self._cond:
            if not self.done():
                self._callbacks.append(cb)
                return
        cb(self)


class WorkerPool:
    def __init__(self, num_workers):
        if num_workers < 1:
            raise ValueError("num_workers must be >= 1")
        self._q = queue.Queue()
        self._closed = False
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._work, daemon=True) for _ in range(num_workers)]
        for t in self._threads:
            t.start()

    def _work(self):
        while True:
            item = self._q.get()
            if item is None:
                return
            fut, fn, args, kwargs = item
            if not fut._start():
                continue
            try:
                v = fn(*args, **kwargs)
            except BaseException as e:
                fut._finish(exc=e)
            else:
                fut._finish(value=v)

    def submit(self, fn, *args, **kwargs):
        with self._lock:
            if self._closed:
                raise RuntimeError("pool is shut down")
            f = Future()
            self._q.put((f, fn, args, kwargs))
            return f

    def map(self, fn, iterable):
        futs = [self.submit(fn, x) for x in iterable]
        return [f.result() for f in futs]

    def shutdown(self, wait=True, cancel_pending=False):
        with self._lock:
            first = not self._closed
            self._closed = True
        if first:
            if cancel_pending:
                pending = []
                while True:
                    try:
                        pending.append(self._q.get_nowait())
                    except queue.Empty:
                        break
                for item in pending:
                    if item is not None:
                        item[0].cancel()
            for _ in self._threads:
                self._q.put(None)
        if wait:
            for t in self._threads:
                t.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown(wait=True)
PY
