"""Background work that gives way: points inside a fix check or a workspace file's analysis where a callback is
asked whether to go on.

A fix check (a fork's parse and its rules run again) or a workspace file's analysis is one job on the server's
worker, seconds long for a large file; a keystroke that arrives meanwhile waited for the whole of it (issue 25,
item 9). ``poll()`` is called between the steps of a check, before each rule and after each draft a rule yields
(a rule's generator suspended at a ``yield`` is a safe place to stop: no function it called is half done), and,
through ``ParsedDocument.pause``, every ``PAUSE_TOKENS`` tokens of a full parse. It either returns (go on),
blocks (the workspace scan waits while the worker has work) or raises :class:`Abandoned` (a fix check stops: its
result is recomputed later anyway).
"""
from __future__ import annotations

from typing import Callable, Iterator, Sequence

PAUSE_TOKENS = 2000  # a full parse asks ``pause()`` this often (about 1-2 ms of parso's work)


class Abandoned(BaseException):
    """A fix check stopped by its ``poll()`` (a ``BaseException``: the engine's ``except Exception`` around one
    rule or one batch must not take it for that rule's failure)."""


def stop_when(stale: Callable[[], bool] | None) -> Callable[[], None] | None:
    """A ``poll`` that raises :class:`Abandoned` once ``stale()`` is true (None for None)."""
    if stale is None:
        return None

    def poll() -> None:
        if stale():
            raise Abandoned

    return poll


class _Polled:
    """``rule`` with ``poll()`` asked before it starts and after each draft it yields; every other attribute is
    the rule's own."""

    def __init__(self, rule, poll: Callable[[], None]):
        self._rule = rule
        self._poll = poll

    def __getattr__(self, name):
        return getattr(self._rule, name)

    def check(self, ctx) -> Iterator:
        poll = self._poll
        poll()
        for draft in self._rule.check(ctx):
            yield draft
            poll()


def polled(rules: Sequence, poll: Callable[[], None] | None) -> Sequence:
    """``rules``, each asking ``poll()`` as it runs (``rules`` itself when ``poll`` is None)."""
    if poll is None:
        return rules
    return [_Polled(rule, poll) for rule in rules]


def paused_tokens(tokens, pause: Callable[[], None]):
    """``tokens`` (parso's tokenizer), with ``pause()`` asked every ``PAUSE_TOKENS`` tokens."""
    n = 0
    for token in tokens:
        n += 1
        if n == PAUSE_TOKENS:
            n = 0
            pause()
        yield token
