"""Background work that gives way: points inside a fix check or a workspace file's analysis where a callback is
asked whether to go on.

A fix check (a fork's parse and its rules run again) or a workspace file's analysis is one job on the server's
worker, seconds long for a large file; a keystroke that arrives meanwhile waited for the whole of it (issue 25,
item 9). ``poll()`` is called between the steps of a check, before each rule, after each draft a rule yields (a
rule's generator suspended at a ``yield`` is a safe place to stop: no function it called is half done) and before
each Cell a rule's loop over ``ctx.cell_sites`` visits, and, through ``ParsedDocument.pause``, every
``PAUSE_TOKENS`` tokens of a full parse. It either returns (go on),
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
    """``rule`` with ``poll()`` asked before it starts, after each draft it yields and before each Cell it visits
    (a rule that finds nothing in a file of 1,500 Cells ran 50-270 ms without yielding); every other attribute
    is the rule's own."""

    def __init__(self, rule, poll: Callable[[], None]):
        self._rule = rule
        self._poll = poll

    def __getattr__(self, name):
        return getattr(self._rule, name)

    def check(self, ctx) -> Iterator:
        poll = self._poll
        poll()
        view = _view(ctx, poll)
        try:
            for draft in self._rule.check(view):
                yield draft
                poll()
        finally:
            for name, value in view.__dict__.items():  # what the rule cached on the view, for the next rules
                if name not in ctx.__dict__:
                    ctx.__dict__[name] = value


class _PolledSites(list):
    """``ctx.cell_sites``, asking ``poll()`` before each site an iteration hands out (the rule's loop is then
    between two sites: a place to wait at, or to stop at in a fix check, whose Context is thrown away)."""

    __slots__ = ("_poll",)

    def __init__(self, sites, poll: Callable[[], None]):
        super().__init__(sites)
        self._poll = poll

    def __iter__(self):
        poll = self._poll
        for site in list.__iter__(self):
            poll()
            yield site


def _view(ctx, poll: Callable[[], None]):
    """``ctx`` for one rule, its ``cell_sites`` polled (the rule memo's per-Cell views are made the same way)."""
    sites = ctx.cell_sites
    view = object.__new__(type(ctx))
    view.__dict__.update(ctx.__dict__)
    view.__dict__["cell_sites"] = _PolledSites(sites, poll)
    return view


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
