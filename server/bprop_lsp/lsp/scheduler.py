"""Analysis per document: once per (version, settings), off the event loop, debounced, stale results dropped.

Two phases: the findings go to the client as soon as the engine has them; the fixes they carry are
re-parsed and re-checked (the engine's fix verification, as costly again as the analysis) once the document
has been quiet for a moment, or at once when a code action asks — never in front of the next edit's
analysis. A fix that fails the check is dropped from the diagnostics, which are sent again.

Debounce is leading- and trailing-edge: an edit after a quiet spell is analysed at once (a single edit reaches
the client as fast as the engine allows); edits arriving while an analysis runs or within ``debounce``
seconds of the last one are coalesced into one trailing analysis of the newest text.
"""
from __future__ import annotations

import asyncio
import gc
import itertools
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING

from .diagnostics import publish, to_diagnostic
from .documents import DocState, Result

if TYPE_CHECKING:
    from .server import BpropServer

log = logging.getLogger(__name__)
DEFAULT_DEBOUNCE_MS = 80
VERIFY_IDLE_S = 0.4


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
        # Bumped by every edit, open, close or settings change (workspace diagnostics long-poll on it).
        self.generation = 0
        self._change_waiters: list = []

    # ------------------------------------------------------------------ scheduling
    def bump(self) -> None:
        self.generation += 1
        waiters, self._change_waiters = self._change_waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    async def wait_for_change(self, timeout: float) -> None:
        fut = asyncio.get_running_loop().create_future()
        self._change_waiters.append(fut)
        try:
            await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            pass

    def schedule(self, state: DocState) -> None:
        self.bump()
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
        return r is not None and r.version == state.doc.version and r.settings == self.ls.settings.for_uri(state.doc.settings_uri)

    async def _analyse(self, state: DocState) -> None:
        doc = state.doc
        settings = self.ls.settings.for_uri(doc.settings_uri)
        if self.is_fresh(state):
            return
        version, text = doc.version, doc.text
        loop = asyncio.get_running_loop()
        t0 = time.perf_counter()
        analysis = await loop.run_in_executor(self.executor, self._analyse_text, text, settings, doc.uri)
        log.info("analysed %s v%s in %.1f ms", doc.uri, version, (time.perf_counter() - t0) * 1e3)
        if not state.analysed_once:
            state.analysed_once = True
            # A new tree lives as long as the document: keep the collector from re-walking it on every pass
            # (a full collection over a 10k-line tree costs ~100 ms; frozen, it costs nothing).
            from .did_close import collection_pending

            if not collection_pending():
                gc.freeze()
        if state.closed or doc.version != version or doc.text is not text:
            return  # stale: a newer version is (or will be) analysed
        needs_check = any(f.fix is not None for f in analysis.findings)
        self._store(state, version, settings, analysis, verified=not needs_check)
        if needs_check:
            self._start_verify(state, state.result, text, delay=VERIFY_IDLE_S)

    def _start_verify(self, state: DocState, result: Result, text: str, delay: float) -> None:
        if state.verify_task is not None and not state.verify_task.done():
            # A waiting check is dropped; a running one stops at its next finding (its result is stale).
            state.verify_task.cancel()
        state.verify_task = asyncio.get_running_loop().create_task(self._verify(state, result, text, delay))
        state.verify_task.add_done_callback(self._log_failure)

    def _store(self, state: DocState, version, settings, analysis, *, verified: bool) -> None:
        doc = state.doc
        lines = doc.lines()
        diagnostics = [to_diagnostic(self.ls, doc.uri, version, f, lines, doc.line_text) for f in analysis.findings]
        state.result = Result(version, settings, analysis, diagnostics, f"{version}.{next(self._ids)}", verified)
        if not self.ls.caps.pull_diagnostics:
            publish(self.ls, doc.uri, version, diagnostics)

    async def _verify(self, state: DocState, result: Result, text: str, delay: float = 0.0) -> None:
        loop = asyncio.get_running_loop()
        doc = state.doc

        def stale() -> bool:
            # An edit makes the check moot at once (``doc.version`` moves on didChange, before the new analysis
            # is stored): a check of a superseded version must not hold up the next keystroke's analysis.
            return state.closed or state.result is not result or doc.version != result.version

        if delay:
            await asyncio.sleep(delay)
        if stale():
            return
        result.checking = True  # running now: waiters just wait
        try:
            t0 = time.perf_counter()
            findings = await loop.run_in_executor(self.executor, _verify_fixes, text, result, doc.uri, stale)
            log.info("checked the fixes of %s v%s in %.1f ms", doc.uri, result.version, (time.perf_counter() - t0) * 1e3)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - an unchecked fix is never offered
            log.exception("fix verification failed for %s", doc.uri)
            findings = [replace(f, fix=None) for f in result.analysis.findings]
        if findings is None or stale():
            return
        if all(a is b for a, b in zip(findings, result.analysis.findings)):
            result.verified = True
        else:
            result.analysis.findings = findings
            self._store(state, result.version, result.settings, result.analysis, verified=True)
        self._wake(state)

    @staticmethod
    def _analyse_text(text: str, settings, uri: str):
        from ..engine import analyze

        # Neither syntax errors nor fix checks on the keystroke path: syntax errors are not published, and the
        # fixes are checked after the diagnostics are out (``_verify``), which counts the errors itself.
        return analyze(text, settings, cache_key=uri, verify_fixes=False, with_syntax_errors=False)

    def warm_up(self) -> None:
        """Import the engine and load parso's grammar off the event loop, before the first document arrives."""

        def load():
            from ..engine import analysis  # noqa: F401 - imports the rules too
            from ..engine.parsing import grammar

            grammar()

        self.executor.submit(load)

    # ------------------------------------------------------------------ waiting
    async def verified_result(self, state: DocState) -> Result | None:
        """The current result once its fixes have been checked (what code actions offer)."""
        for _ in range(100):
            result = await self.current_result(state)
            if result is None or result.verified:
                return result
            fut = asyncio.get_running_loop().create_future()
            state.waiters.append(fut)
            if not result.checking:
                self._start_verify(state, result, state.doc.text, delay=0)  # someone waits: check now
            await fut
        return None

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


def _verify_fixes(text: str, result: Result, uri: str, stale) -> list | None:
    """The findings with every fix that does not re-parse and re-check removed; None if the result went stale."""
    from ..engine.analysis import verified_findings

    if stale():  # checked again on the worker: an edit may have come while this waited in the queue
        return None
    analysis = result.analysis
    base_errors = len(analysis.syntax_errors) if analysis.syntax_errors is not None else None
    return verified_findings(analysis.findings, text, result.settings, uri, base_errors=base_errors, stale=stale)
