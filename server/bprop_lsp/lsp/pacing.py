"""When a document's next analysis starts: a wait that follows the document's own analysis time.

A fixed trailing debounce (80 ms) made every burst of edits (key repeat, a macro, edits sent back to back) wait
80 ms after its last edit even where the analysis itself takes 7 ms: the last edit's diagnostics came 0.6-1.1x
``ast.parse`` of a 10,000-line file after it (issue 21). ``Pace`` keeps, per document:

* the smoothed time of its analyses (an exponentially weighted moving average of the worker's time for each one
  that ran to its end) and the gap between its last two edits: the **wait** is ``WAIT_FACTOR`` times the analysis
  time, or ``GAP_FACTOR`` times the gap when that is less, at least ``FLOOR_S`` and at most ``cap`` (the
  ``BPROP_LSP_DEBOUNCE_MS`` setting, 80 ms by default). Waiting saves an analysis the next edit would make stale:
  worth the more the more the analysis costs, and only as long as the next edit may still come (edits sent back to
  back arrive well under a millisecond apart: a burst of them waits ``FLOOR_S`` after its last one, not 80 ms);
* the **leading edge**: an edit that comes more than the wait after the one before it is not part of a burst:
  its analysis starts at once (after ``LEAD_S``, in which edits sent together with it arrive) or, when one is under
  way, as soon as that one is done. A typist's keystroke, or key repeat on a document analysed faster than the keys
  repeat, waits for nothing;
* in a **burst** (an edit less than the wait behind the one before it) the next analysis starts once the document
  has been quiet for the wait, but never later than ``MAX_STALL_S`` after the oldest edit whose diagnostics are
  not out yet: a constant stream of edits still gets diagnostics that often (such an analysis is not dropped when
  it goes stale, see ``may_drop``);
* **hurry**: a request that waits for the document's result (a pull, a code action, a hover) cuts the wait short.

Analyses a newer version has superseded are dropped by the scheduler before they start or right after their parse
(the tree stays up to date for the next one): ``may_drop`` says whether one may be.

No clock of its own: ``clock`` is handed in (``time.monotonic`` in the server, a fake one in the tests), and
nothing here sleeps or touches asyncio: the scheduler asks ``delay()`` and sleeps that long (or until the next
edit or request, when it asks again).
"""
from __future__ import annotations

import time
from typing import Callable

FLOOR_S = 0.002  # the shortest wait in a burst (edits sent back to back reach the server a few hundred µs apart)
LEAD_S = 0.001  # an edit after a quiet spell: what edits sent together with it have to arrive in
MAX_STALL_S = 0.25  # in a constant burst, an analysis starts at least this long after the oldest unpublished edit
WAIT_FACTOR = 0.5  # the wait in a burst, as a share of the smoothed analysis time
GAP_FACTOR = 4.0  # ... or as a multiple of the gap between the last two edits, when that is less
SMOOTHING = 0.3  # the weight of the newest analysis time in the average


class Pace:
    """One document's pacing (see the module's docstring). Read and written on the event loop, except
    ``may_drop`` (also asked from the worker thread: attribute reads)."""

    def __init__(self, cap: float, clock: Callable[[], float] = time.monotonic):
        self.cap = cap
        self.clock = clock
        self.average: float | None = None  # smoothed seconds an analysis of the document takes
        self.last_edit = float("-inf")
        self.gap = float("inf")  # seconds between the last two edits
        self.in_burst = False  # the last edit came less than the wait behind the one before it
        self.hurried = False
        # When the oldest edit whose diagnostics are not out yet came (None: none such), and the first edit since the
        # last analysis started (what stays unpublished when that analysis's result goes out).
        self.unpublished_since: float | None = None
        self._since_start: float | None = None

    # ------------------------------------------------------------------ what happened
    def edited(self) -> None:
        """The document changed."""
        now = self.clock()
        self.gap = now - self.last_edit
        self.in_burst = self.gap < self.wait()
        self.last_edit = now
        if self.unpublished_since is None:
            self.unpublished_since = now
        if self._since_start is None:
            self._since_start = now

    def hurry(self) -> None:
        """Someone waits for the result: the next analysis starts now."""
        self.hurried = True

    def started(self) -> None:
        """An analysis of the document's current text starts."""
        self.hurried = False
        self._since_start = None

    def finished(self, seconds: float) -> None:
        """An analysis ran to its end on the worker in ``seconds`` (not counting time queued)."""
        if self.average is None:
            self.average = seconds
        else:
            self.average += SMOOTHING * (seconds - self.average)

    def published(self) -> None:
        """The result of the analysis started last is out: only the edits since it started are unpublished."""
        self.unpublished_since = self._since_start

    # ------------------------------------------------------------------ what to do
    def wait(self) -> float:
        """How long a burst's edits must pause before its analysis starts."""
        wait = GAP_FACTOR * self.gap
        if self.average is not None:
            wait = min(wait, WAIT_FACTOR * self.average)
        elif wait == float("inf"):
            wait = FLOOR_S
        return min(self.cap, max(FLOOR_S, wait))

    def delay(self) -> float:
        """Seconds until the next analysis should start (0: now)."""
        if self.hurried:
            return 0.0
        now = self.clock()
        if not self.in_burst:
            return max(0.0, self.last_edit + min(self.cap, LEAD_S) - now)
        due = self.last_edit + self.wait()
        if self.unpublished_since is not None:
            due = min(due, self.unpublished_since + MAX_STALL_S)
        return max(0.0, due - now)

    def may_drop(self) -> bool:
        """Whether an analysis that a newer version made stale may be dropped (not when diagnostics have waited
        ``MAX_STALL_S`` already: a constant burst would otherwise never get any)."""
        since = self.unpublished_since
        return since is None or self.clock() - since < MAX_STALL_S
