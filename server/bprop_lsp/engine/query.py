"""Recorded reads: a computation's result kept between revisions for as long as everything it read reads the same.

The bottom of the engine's incremental machinery, in the manner of build systems' *verifying traces* (Shake,
salsa's red-green with early cut-off): while a memoised computation runs, every read it makes of the revision's
inputs is recorded (``record``) with a *fingerprint* of what it got; on the next revision the memo is used again
when re-reading each recorded path gives the same fingerprints (``Replay.holds``), else the computation runs anew.

* Reads are paths from a root (``("program", ("attr", "assignments"), ("get", "FLAG"))``), recorded by the
  tracking views (``tracked.py``) the computation is handed instead of the real objects: nothing a computation
  reads through them escapes the record, whatever it reads.
* A read is re-done at most once per revision, however many memos recorded it (``Replay`` keeps its answer), and
  the memos are checked in the order their reads were made: the first that differs ends the check.
* Early cut-off: a read that now gives an equal fingerprint keeps its readers valid even when what produced it
  changed (a keystroke that re-binds ``y0`` in one method leaves ``assignments.get("FLAG")`` as it was).
* A read that cannot be fingerprinted (``Untracked``) makes its memo *volatile*: never used again. A failing
  read fingerprints as the exception's type, so a memo that read a failure is valid while it still fails.

This module knows nothing of parso, MindSpore or rules: ``fingerprint`` and the path walker are handed in.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable, Hashable, Iterator

from contextlib import contextmanager


class Untracked(Exception):
    """A value no fingerprint can stand for (an object the tracking views do not know)."""


@dataclass
class Reads:
    """What one computation read: (path, fingerprint) in the order of reading; volatile when something it read
    could not be fingerprinted."""

    items: list[tuple[tuple, Hashable]] = field(default_factory=list)
    seen: set = field(default_factory=set)
    volatile: bool = False

    def __post_init__(self) -> None:
        if self.items and not self.seen:
            self.seen = {path for path, _ in self.items}

    def add(self, path: tuple, print_: Hashable) -> None:
        if path not in self.seen:  # (the first read of a path is what the computation saw)
            self.seen.add(path)
            self.items.append((path, print_))


_active = threading.local()


def active() -> Reads | None:
    """The reads of the computation running on this thread (None: none is recorded)."""
    stack = getattr(_active, "stack", None)
    return stack[-1] if stack else None


@contextmanager
def recording() -> Iterator[Reads]:
    """Record the reads made inside the block (nested blocks record their own: a memo inside a memo)."""
    reads = Reads()
    stack = getattr(_active, "stack", None)
    if stack is None:
        stack = _active.stack = []
    stack.append(reads)
    try:
        yield reads
    finally:
        stack.pop()


def record(path: tuple, print_: Hashable) -> None:
    reads = active()
    if reads is not None:
        reads.add(path, print_)


def mark_volatile() -> None:
    reads = active()
    if reads is not None:
        reads.volatile = True


@dataclass(frozen=True)
class Failed:
    """The fingerprint of a read that raised."""

    error: str


class Replay:
    """One revision's answers to recorded paths: ``walk(path)`` re-reads a path on this revision's inputs,
    ``fingerprint(value)`` prints what it gives; each path is re-read once per revision."""

    def __init__(self, walk: Callable[[tuple], object], fingerprint: Callable[[object], Hashable]):
        self._walk = walk
        self._fingerprint = fingerprint
        self._answers: dict[tuple, Hashable] = {}
        self.reads = 0  # paths re-read (for tests and benchmarks)

    def current(self, path: tuple) -> Hashable:
        found = self._answers.get(path, _MISSING)
        if found is _MISSING:
            self.reads += 1
            try:
                found = self._fingerprint(self._walk(path))
            except Untracked:
                found = _CHANGED
            except (Exception, RecursionError) as exc:  # noqa: BLE001 - a failing read is an answer too
                found = Failed(type(exc).__name__)
            self._answers[path] = found
        return found

    def holds(self, reads: Reads) -> bool:
        """Whether every read of ``reads`` gives the same answer on this revision."""
        if reads.volatile:
            return False
        current = self.current
        for path, print_ in reads.items:
            now = current(path)
            if now is _CHANGED or now != print_:
                return False
        return True


class _Changed:
    """An answer equal to nothing (a read that can no longer be fingerprinted)."""

    def __eq__(self, other) -> bool:
        return False

    def __hash__(self) -> int:
        return 0


_CHANGED = _Changed()
_MISSING = object()
