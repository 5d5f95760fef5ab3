"""The cyclic garbage collector held off while a keystroke is analysed and its diagnostics go out.

An analysis of a 10,000-line file allocates enough to start one or two young collections, and each walks the
large containers the analysis has just built (line lists, token and statement tables): 1-3 ms of a ~15 ms
keystroke. Held off, those collections become one, run a few milliseconds after the diagnostics went out
(``RESUME_AFTER_S``), when the server is idle. Only keystrokes are held (a document's first analysis has its
own rule, scheduler.py); holds overlap (several documents), and the collector is never held off for longer
than ``MAX_HOLD_S`` at a stretch: an analysis that starts later than that runs with the collector on.

Used from the event loop's thread only.
"""
from __future__ import annotations

import asyncio
import gc
import time

RESUME_AFTER_S = 0.005  # after the diagnostics: the response to a pull waiting for them goes out first
MAX_HOLD_S = 0.5


class GcHold:
    def __init__(self):
        self.depth = 0
        self.since = 0.0  # when the collector was held off (monotonic)

    def acquire(self) -> bool:
        """Hold the collector off; False (nothing held) when it has been held for ``MAX_HOLD_S`` already."""
        now = time.monotonic()
        if self.depth == 0:
            self.since = now
            gc.disable()
        elif now - self.since > MAX_HOLD_S:
            return False
        self.depth += 1
        return True

    def release(self) -> None:
        self.depth -= 1
        if self.depth == 0:
            gc.enable()
            # The collection held off, now (idle) instead of at the next allocation, which may be the next
            # keystroke's: the generation the collector would pick (the oldest of the young two due).
            counts, thresholds = gc.get_count(), gc.get_threshold()
            if thresholds[0] and counts[0] > thresholds[0]:
                gc.collect(1 if counts[1] >= thresholds[1] else 0)

    def release_soon(self) -> None:
        """Release once the loop has sent what is ready to go (``RESUME_AFTER_S``)."""
        try:
            asyncio.get_running_loop().call_later(RESUME_AFTER_S, self.release)
        except RuntimeError:  # no loop any more: now
            self.release()
