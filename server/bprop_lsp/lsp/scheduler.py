"""Analysis per document: once per (version, settings), off the event loop, debounced, stale results dropped.

Debounce is leading- and trailing-edge: an edit after a quiet spell is analysed at once (a single edit reaches
the client as fast as the engine allows); edits arriving while an analysis runs or within ``debounce``
seconds of the last one are coalesced into one trailing analysis of the newest text.
"""
from __future__ import annotations

import asyncio
import itertools
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from ..engine import analyze
from .diagnostics import publish, to_diagnostic
from .documents import DocState, Result

if TYPE_CHECKING:
    from .server import BpropServer

log = logging.getLogger(__name__)
DEFAULT_DEBOUNCE_MS = 80


def debounce_seconds() -> float:
    try:
        return max(0.0, float(os.environ.get("BPROP_LSP_DEBOUNCE_MS", DEFAULT_DEBOUNCE_MS)) / 1000)
    except ValueError:
        return DEFAULT_DEBOUNCE_MS / 1000


class Scheduler:
    def __init__(self, ls: "BpropServer"):
        self.ls = ls
        # One worker: parses sharing a document's cache key must not interleave, and the GIL gives no more.
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bprop-analysis")
        self.debounce = debounce_seconds()
        self._ids = itertools.count(1)

    # ------------------------------------------------------------------ scheduling
    def schedule(self, state: DocState) -> None:
        if state.closed:
            return
        if state.task is not None and not state.task.done():
            state.dirty = True  # the running loop picks the newest text up
            return
        delay = max(0.0, state.last_start + self.debounce - time.monotonic())
        state.task = asyncio.get_running_loop().create_task(self._run(state, delay))
        state.task.add_done_callback(self._log_failure)

    def schedule_all(self) -> None:
        for state in list(self.ls.store.states.values()):
            self.schedule(state)

    @staticmethod
    def _log_failure(task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("analysis failed", exc_info=task.exception())

    async def _run(self, state: DocState, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        while not state.closed:
            state.dirty = False
            state.last_start = time.monotonic()
            try:
                await self._analyse(state)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - one bad document must not stop the others
                log.exception("analysis of %s failed", state.doc.uri)
                self.ls.log_error(f"bprop-lsp: analysing {state.doc.uri} failed: {exc.__class__.__name__}: {exc}")
            self._wake(state)
            if not state.dirty:
                break
            await asyncio.sleep(self.debounce)

    def _wake(self, state: DocState) -> None:
        waiters, state.waiters = state.waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    def is_fresh(self, state: DocState) -> bool:
        r = state.result
        return r is not None and r.version == state.doc.version and r.settings == self.ls.settings.for_uri(state.doc.uri)

    async def _analyse(self, state: DocState) -> None:
        doc = state.doc
        settings = self.ls.settings.for_uri(doc.uri)
        if self.is_fresh(state):
            return
        version, text = doc.version, doc.text
        loop = asyncio.get_running_loop()
        analysis = await loop.run_in_executor(self.executor, self._analyse_text, text, settings, doc.uri)
        if state.closed or doc.version != version or doc.text is not text:
            return  # stale: a newer version is (or will be) analysed
        lines = doc.lines()
        diagnostics = [to_diagnostic(self.ls, doc.uri, version, f, lines, doc.line_text) for f in analysis.findings]
        state.result = Result(version, settings, analysis, diagnostics, f"{version}.{next(self._ids)}")
        if not self.ls.caps.pull_diagnostics:
            publish(self.ls, doc.uri, version, diagnostics)

    @staticmethod
    def _analyse_text(text: str, settings, uri: str):
        return analyze(text, settings, cache_key=uri)

    # ------------------------------------------------------------------ waiting
    async def current_result(self, state: DocState) -> Result | None:
        """The result for the document's current version and settings, analysing now if need be."""
        for _ in range(100):
            if state.closed:
                return None
            if self.is_fresh(state):
                return state.result
            fut = asyncio.get_running_loop().create_future()
            state.waiters.append(fut)
            if state.task is None or state.task.done():
                state.last_start = -1e9  # someone is waiting: no debounce
                self.schedule(state)
            await fut  # a cancelled request ($/cancelRequest) raises CancelledError here
        return state.result
