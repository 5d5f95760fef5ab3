"""The analysis worker: one thread running jobs by priority, first come first served within one priority.

A keystroke's analysis must not queue behind background work (fix checks, the first analyses of documents just
opened, the workspace scan): those were 230-370 ms of a keystroke with 400 findings and 0.9-2.1 s after opening
60-150 documents. Jobs are short (the fix checks run in chunks of about ``scheduler.VERIFY_CHUNK_S``), and a job
that has started is never interrupted from outside: a fix check asks ``more_urgent`` as it runs and gives up
(``engine/preempt.py``), to be queued again behind the job that came. The next job is always the most urgent one
waiting.

``submit`` returns a ``concurrent.futures.Future`` (the interface ``loop.run_in_executor`` takes).
"""
from __future__ import annotations

import heapq
import itertools
import threading
from concurrent.futures import Future

KEYSTROKE = 0  # an edit of a document analysed before
REQUEST = 1  # a client waits for it (code actions, fix-all's edit, closing a session)
OPEN = 2  # a document's first analysis
VERIFY = 3  # fix checks
SCAN = 4  # the workspace's files on disk


class PriorityWorker:
    def __init__(self, name: str = "bprop-analysis"):
        self._heap: list = []
        self._seq = itertools.count()
        self._cv = threading.Condition()
        self._stopped = False
        self.running = False  # a job is running now
        self._counts: dict[int, int] = {}  # priority -> how many jobs of it wait
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)
        self._thread.start()

    def submit(self, fn, *args, priority: int = REQUEST) -> Future:
        fut: Future = Future()
        with self._cv:
            if self._stopped:
                raise RuntimeError("cannot schedule new futures after shutdown")
            heapq.heappush(self._heap, (priority, next(self._seq), fn, args, fut))
            self._counts[priority] = self._counts.get(priority, 0) + 1
            self._cv.notify()
        return fut

    def waiting(self, below: int | None = None) -> int:
        """How many jobs wait (with ``below``: of a priority more urgent than that)."""
        with self._cv:
            if below is None:
                return len(self._heap)
            return sum(1 for item in self._heap if item[0] < below)

    def more_urgent(self, priority: int) -> bool:
        """Whether a job more urgent than ``priority`` waits (cheap: asked over and over by a running fix check)."""
        with self._cv:
            return any(n for p, n in self._counts.items() if p < priority)

    def idle(self) -> bool:
        with self._cv:
            return not self.running and not self._heap

    def _work(self) -> None:
        while True:
            with self._cv:
                while not self._heap and not self._stopped:
                    self._cv.wait()
                if not self._heap:
                    return
                priority, _, fn, args, fut = heapq.heappop(self._heap)
                self._counts[priority] -= 1
                self.running = True
            try:
                if fut.set_running_or_notify_cancel():
                    try:
                        result = fn(*args)
                    except BaseException as exc:  # noqa: BLE001 - handed to the waiter
                        fut.set_exception(exc)
                    else:
                        fut.set_result(result)
            finally:
                with self._cv:
                    self.running = False
                    self._cv.notify_all()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._cv:
            self._stopped = True
            if cancel_futures:
                for item in self._heap:
                    item[4].cancel()
                self._heap.clear()
                self._counts.clear()
            self._cv.notify_all()
        if wait:
            self._thread.join()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until nothing runs or waits (another thread; for a job that must only run when the worker is free)."""
        with self._cv:
            return self._cv.wait_for(lambda: not self.running and not self._heap, timeout)
