"""The worker threads that run dispatches, kept from one dispatch to the next.

Starting threads took 0.3 ms of a 0.4 ms one-workgroup dispatch (Thread.start waits until the
new thread runs). A task goes to an idle worker; a new worker starts only when none is idle, so
dispatches from several threads at once never wait on each other. Workers are daemon threads, as
a dispatch's own threads were: a process can exit while one still runs a kernel. A forked child
has none of its parent's threads, and starts its own.
"""
from __future__ import annotations

import os
import queue
import threading


class Task:
    """One call on a worker: `wait(timeout)` says whether it has ended; `result()` raises what the
    call raised (a bug: kernel failures are reported through the dispatch's arrays). Its end is a
    lock held until then (made in 0.1 us, where an Event took 3.7)."""

    def __init__(self, fn, args, keep=None):
        self.fn, self.args, self.keep = fn, args, keep
        self.running = threading.Lock()
        self.running.acquire()
        self.error: BaseException | None = None
        self.released = False       # its worker counted idle before it ended (Workers.release)
        self.ended = False

    def run(self):
        try:
            self.fn(*self.args)
        except BaseException as e:          # noqa: BLE001 (given to the caller by result())
            self.error = e
        finally:
            self.running.release()

    def wait(self, timeout: float | None = None) -> bool:
        if self.running.acquire(timeout=-1 if timeout is None else timeout):
            self.running.release()
            return True
        return False

    def result(self):
        """Raise what the call raised, if it has ended with an exception."""
        if self.error is not None:
            raise self.error


class Workers:
    def __init__(self):
        self._tasks: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0

    def submit(self, fn, *args, keep=None) -> Task:
        task = Task(fn, args, keep)
        with self._lock:
            start = self._idle == 0
            if not start:
                self._idle -= 1             # that idle worker takes this task
        if start:
            threading.Thread(target=self._serve, name="jitcoop-dispatch", daemon=True).start()
        self._tasks.put(task)
        return task

    def _serve(self):
        while True:
            task = self._tasks.get()
            task.run()
            with self._lock:
                task.ended = True
                if not task.released:
                    self._idle += 1

    def release(self, task: Task):
        """Count `task`'s worker idle now: the caller knows its work is over (the thread is on its
        way back to the pool, in Python it needs the GIL for), and will not wait for it."""
        with self._lock:
            if not task.ended:
                task.released = True
                self._idle += 1


_workers = Workers()


def submit(fn, *args, keep=None) -> Task:
    """Run fn(*args) on a worker thread (`keep`: what must live as long as the task may run)."""
    return _workers.submit(fn, *args, keep=keep)


def release(task: Task):
    """See Workers.release."""
    _workers.release(task)


def _forget():
    global _workers
    _workers = Workers()


os.register_at_fork(after_in_child=_forget)
