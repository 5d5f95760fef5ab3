"""Analysis per document: once per (version, settings), off the event loop, debounced, stale results dropped.

Two phases: the findings go to the client as soon as the engine has them; the fixes they carry are
re-parsed and re-checked (the engine's fix verification, as costly again as the analysis) once the document
has been quiet for a moment, or at once when a code action asks — never in front of the next edit's
analysis. A fix that fails the check is dropped from the diagnostics, which are sent again.

The fix checks run in chunks of a few checks on the one worker thread: a chunk stops as soon as a more urgent
job (an analysis of any document) is waiting for the worker, and the next chunk is queued behind it; a check
that has started asks the same as it runs (between its steps, before each rule, after each finding a rule
yields: ``engine/preempt.py``) and is abandoned, to run again behind that job, so a keystroke waits for a few
milliseconds of a check, not for a whole one. Checks of a version that is no longer current are abandoned. The worker
runs its jobs by priority (worker.py): an edit's analysis first, then what a request waits for, first analyses
of opened documents, fix checks, and the workspace scan (in a child process, scan_process.py; without one, on a
thread of its own, a file at a time when the worker is free, and paused inside a file whenever the worker has
work: workspace_scan.py).

A document over the size limit (``documents.oversize``) is not analysed: one warning names it. An analysis
that raises is recorded for its (text revision, settings) like a result: no retry until either changes.

Pacing (pacing.py) is leading- and trailing-edge: an edit after a quiet spell is analysed at once (a single edit
reaches the client as fast as the engine allows); edits arriving while an analysis runs or close behind one another
(a burst) are coalesced into one trailing analysis of the newest text, which starts once the document has been quiet
for a wait that follows the document's own analysis time (a few ms to ``debounce`` at most), and at least every
``pacing.MAX_STALL_S`` in a burst that does not end. A request waiting for the result (a pull, a code action, a
hover) cuts the wait short. An analysis a newer version superseded is dropped before it starts or right after its
parse (the tree is then up to date for the next one), unless diagnostics have waited ``MAX_STALL_S`` already: such
an analysis runs to its end and, pushed, its diagnostics go out for the version it analysed.
"""
from __future__ import annotations

import asyncio
import functools
import gc
import itertools
import logging
import os
import sys
import time
import weakref
from dataclasses import replace
from typing import TYPE_CHECKING

from ..sources import MAX_BYTES
from .diagnostics import publish
from .documents import DocState, Result, oversize
from .gc_hold import GcHold
from .pacing import Pace
from .scan_process import ChildDied, ScanProcess, Unavailable
from . import worker as prio
from .worker import PriorityWorker

if TYPE_CHECKING:
    from .server import BpropServer

log = logging.getLogger(__name__)
DEFAULT_DEBOUNCE_MS = 80
VERIFY_IDLE_S = 0.4
VERIFY_GROUP = 32  # at most this many fixes checked together in one job
VERIFY_FIRST_GROUP = 4  # the first group's size; the next ones are sized to take about VERIFY_CHUNK_S
SWITCH_INTERVAL_S = 0.0005  # sys.setswitchinterval in the server's process (see Scheduler.__init__)
VERIFY_CHUNK_S = 0.05  # the longest a chunk of fix checks keeps the worker when nothing else waits


def debounce_seconds() -> float:
    try:
        return max(0.0, float(os.environ.get("BPROP_LSP_DEBOUNCE_MS", DEFAULT_DEBOUNCE_MS)) / 1000)
    except ValueError:
        return DEFAULT_DEBOUNCE_MS / 1000


class Scheduler:
    def __init__(self, ls: "BpropServer"):
        self.ls = ls
        # One worker: parses sharing a document's cache key must not interleave, and the GIL gives no more. Its
        # jobs run by priority (worker.py): a keystroke's analysis before fix checks, first analyses, the scan.
        self.executor = PriorityWorker("bprop-analysis")
        # The workspace scan's files (no document's parse state) on a thread of their own, which hands each to the
        # scan's child process (scan_process.py) or, without one, analyses it when the analysis worker is free: a
        # large file's analysis (seconds) never holds a keystroke up in the queue.
        self.scan_executor = PriorityWorker("bprop-scan")
        self.scan_process = ScanProcess()
        self.debounce = debounce_seconds()  # the longest wait before a burst's analysis (pacing.py)
        self._paces: dict[int, Pace] = {}  # id(DocState) -> its pacing (dropped with the state)
        self._nudges: dict[int, asyncio.Future] = {}  # id(DocState) -> what its waiting analysis sleeps on
        self._ids = itertools.count(1)
        # Bumped by every edit, open, close or settings change (workspace diagnostics long-poll on it).
        self.generation = 0
        self._change_waiters: list = []
        self._jobs_running = 0
        self.gc_hold = GcHold()
        # The event loop takes the GIL from a running analysis after at most this long (CPython's default, 5 ms,
        # made each message of a burst that arrives while an analysis runs wait up to 5 ms, two or three times: the
        # burst's last edit reached the scheduler tens of ms late, and an analysis superseded meanwhile ran on).
        sys.setswitchinterval(SWITCH_INTERVAL_S)

    # ------------------------------------------------------------------ the worker
    def run(self, fn, *args, priority: int = prio.REQUEST) -> asyncio.Future:
        """``fn(*args)`` on the analysis worker, after the jobs waiting there with a more urgent ``priority``."""
        return asyncio.wrap_future(self.executor.submit(self._counted, fn, args, priority=priority))

    def scan_file(self, text: str, settings, label: str, in_process) -> asyncio.Future:
        """A workspace file's findings (without fixes): computed in the scan's child process, where neither its
        parse, its collections nor the freeing of its tree share the interpreter with a keystroke; in process
        (paused whenever the analysis worker has work) when no child can be started. Raises
        ``scan_process.ChildDied`` when the child ended while it had the file (which is then not analysed).
        ``in_process(text, settings, pause)``: the analysis in this process."""

        def job():
            if self.scan_process.usable():
                try:
                    return self._counted(self.scan_process.analyse, (text, settings, label))
                except Unavailable as exc:
                    if self.scan_process.closed:
                        raise ChildDied("the server is shutting down") from exc
                    log.warning("%s: checking %s in the server's process", exc, label)
            self.executor.wait_idle()
            return self._counted(in_process, (text, settings, self.scan_pause)).findings

        return asyncio.wrap_future(self.scan_executor.submit(job, priority=prio.SCAN))

    def close(self) -> None:
        """Stop the workers (their waiting jobs cancelled) and end the scan's child (``shutdown``, exit)."""
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.scan_executor.shutdown(wait=False, cancel_futures=True)
        self.scan_process.close()

    def scan_pause(self) -> None:
        """Asked inside a workspace file's analysis (scan thread, ``engine/preempt.py``): waits while the analysis
        worker has a job running or waiting."""
        self.executor.wait_idle()

    def _counted(self, fn, args):
        self._jobs_running += 1
        try:
            return fn(*args)
        finally:
            self._jobs_running -= 1

    def busy(self) -> bool:
        """Whether the worker is running a job now (the process must not wait for it at exit)."""
        return self._jobs_running > 0

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

    def pace(self, state: DocState) -> Pace:
        """The document's pacing (pacing.py), made on first use."""
        pace = self._paces.get(id(state))
        if pace is None:
            pace = self._paces[id(state)] = Pace(self.debounce)
            weakref.finalize(state, self._paces.pop, id(state), None)
        return pace

    def schedule(self, state: DocState, *, edited: bool = True) -> None:
        """Analyse the document's current text (``edited``: it changed; else someone waits for its result)."""
        self.bump()
        if state.closed:
            return
        if self._skip_oversized(state):
            return
        pace = self.pace(state)
        running = state.task is not None and not state.task.done()
        if edited:
            pace.edited()
        else:
            pace.hurry()
        if running:
            state.dirty = True  # the running loop picks the newest text up
            self._nudge(state)  # a waiting one works its delay out again
            return
        state.task = asyncio.get_running_loop().create_task(self._run(state))
        state.task.add_done_callback(self._log_failure)

    def _nudge(self, state: DocState) -> None:
        fut = self._nudges.get(id(state))
        if fut is not None and not fut.done():
            fut.set_result(None)

    async def _pause(self, state: DocState, pace: Pace) -> None:
        """Sleep until ``pace`` says the next analysis starts, working the delay out again after each edit or
        request (``_nudge``)."""
        loop = asyncio.get_running_loop()
        while not state.closed:
            delay = pace.delay()
            if delay <= 0:
                return
            fut = self._nudges[id(state)] = loop.create_future()
            timer = loop.call_later(delay, lambda: fut.done() or fut.set_result(None))
            try:
                await fut
            finally:
                timer.cancel()
                if self._nudges.get(id(state)) is fut:
                    del self._nudges[id(state)]

    def schedule_all(self) -> None:
        for state in list(self.ls.store.states.values()):
            self.schedule(state)

    def _skip_oversized(self, state: DocState) -> bool:
        """A document over the size limit gets an empty result and one warning, and no analysis."""
        doc = state.doc
        size = oversize(doc.text)
        if size is None:
            state.too_large = False
            return False
        for task in (state.task, state.verify_task):
            if task is not None and not task.done():
                task.cancel()
        state.task = state.verify_task = None
        if not state.too_large:
            state.too_large = True
            self.ls.show_warning(
                f"bprop-lsp: {_display(doc.uri)} is {size / (1024 * 1024):.1f} MiB, over the "
                f"{MAX_BYTES // (1024 * 1024)} MiB limit for checked files: it is not checked")
        settings = self.ls.settings.for_uri(doc.settings_uri)
        self._store_empty(state, settings, skipped="too large")
        return True

    def _store_empty(self, state: DocState, settings, *, skipped: str) -> None:
        from ..engine import Analysis

        doc = state.doc
        state.result = Result(doc.version, settings, Analysis(), [], f"{doc.version}.{next(self._ids)}", True,
                              revision=doc.revision, skipped=skipped)
        if not self.ls.caps.pull_diagnostics:
            publish(self.ls, doc.uri, doc.version, [])
        self._wake(state)

    @staticmethod
    def _log_failure(task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("analysis failed", exc_info=task.exception())

    async def _run(self, state: DocState) -> None:
        pace = self.pace(state)
        while not state.closed:
            await self._pause(state, pace)
            if state.closed:
                break
            state.dirty = False
            state.last_start = time.monotonic()
            pace.started()
            doc = state.doc
            revision = doc.revision
            settings = self.ls.settings.for_uri(doc.settings_uri)
            # A keystroke: no collections until its diagnostics are out (gc_hold.py).
            held = state.analysed_once and self.gc_hold.acquire()
            try:
                try:
                    await self._analyse(state, pace)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - one bad document must not stop the others
                    log.exception("analysis of %s failed", doc.uri)
                    if state.doc is doc and doc.revision == revision:
                        # Recorded like a result for this text and these settings: pulls get an empty answer
                        # instead of re-running (and re-failing) the analysis in a loop.
                        self.ls.log_error(f"bprop-lsp: analysing {doc.uri} (version {doc.version}) failed: "
                                          f"{exc.__class__.__name__}: {exc}; no findings until it changes")
                        self._store_empty(state, settings, skipped="analysis failed")
                        pace.published()
                self._wake(state)
            finally:
                if held:
                    self.gc_hold.release_soon()
            if not state.dirty:
                break

    def _wake(self, state: DocState) -> None:
        waiters, state.waiters = state.waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    def is_fresh(self, state: DocState) -> bool:
        r = state.result
        return r is not None and r.revision == state.doc.revision and \
            r.settings == self.ls.settings.for_uri(state.doc.settings_uri)

    async def _analyse(self, state: DocState, pace: Pace) -> None:
        doc = state.doc
        settings = self.ls.settings.for_uri(doc.settings_uri)
        if self.is_fresh(state):
            pace.published()
            return
        version, revision, text = doc.version, doc.revision, doc.text
        t0 = time.perf_counter()
        freeze = None
        if not state.analysed_once:
            # A new tree lives as long as the document: keep the collector from re-walking it on every pass
            # (a full collection over a 10k-line tree costs ~100 ms; frozen, it costs nothing).
            from .did_close import collection_pending

            freeze = not collection_pending()

        def superseded() -> bool:
            # Asked on the worker thread (attribute reads), before the parse and after it.
            return (state.closed or state.doc is not doc or doc.revision != revision) and pace.may_drop()

        done = await self.run(self._analyse_text, state, text, settings, freeze, superseded,
                              self.ls.projects.scope(state),
                              priority=prio.KEYSTROKE if state.analysed_once else prio.OPEN)
        if done is None:
            log.info("dropped the analysis of %s v%s (superseded after %.1f ms)", doc.uri, version,
                     (time.perf_counter() - t0) * 1e3)
            return
        analysis, seconds = done
        log.info("analysed %s v%s in %.1f ms (%.1f on the worker)", doc.uri, version,
                 (time.perf_counter() - t0) * 1e3, seconds * 1e3)
        if state.analysed_once:
            pace.finished(seconds)  # (a first analysis, a full parse, says nothing of a keystroke's)
        state.analysed_once = True
        if state.closed or state.doc is not doc or doc.revision != revision:
            # Stale: a newer version is (or will be) analysed. Unless diagnostics have waited too long already (a
            # burst that does not end), they go out for the version analysed, in that text's positions.
            if state.doc is doc and not state.closed and not pace.may_drop() and not self.ls.caps.pull_diagnostics:
                self._publish_stale(state, version, revision, text, analysis)
                pace.published()
            return
        needs_check = any(f.fix is not None for f in analysis.findings)
        self._store(state, version, settings, analysis, verified=not needs_check)
        pace.published()
        if needs_check:
            self._start_verify(state, state.result, text, delay=VERIFY_IDLE_S)

    def _publish_stale(self, state: DocState, version, revision: int, text: str, analysis) -> None:
        """Push the findings of ``text`` (version ``version``, no longer the document's) without keeping them as
        the document's result: positions converted in that text's lines, fixes left out (unchecked, and of
        another text; the data names that text's revision, so a code action knows them outdated)."""
        from .documents import Document

        old = Document(state.doc.uri, text, version)
        findings = [replace(f, fix=None) if f.fix is not None else f for f in analysis.findings]
        diagnostics = state.conversions.convert(self.ls, old.uri, version, findings, old.line_text, revision,
                                                checked=False)
        publish(self.ls, old.uri, version, diagnostics)
        log.info("pushed the diagnostics of %s v%s while the document is at v%s (a burst with no pause)", old.uri,
                 version, state.doc.version)

    def _start_verify(self, state: DocState, result: Result, text: str, delay: float) -> None:
        if state.verify_task is not None and not state.verify_task.done():
            # A waiting check is dropped; a running one stops at its next chunk (its result is stale).
            state.verify_task.cancel()
        # Checks someone waits for (a code action: no delay) come before other background work.
        priority = prio.REQUEST if delay == 0 else prio.VERIFY
        state.verify_task = asyncio.get_running_loop().create_task(self._verify(state, result, text, delay, priority))
        state.verify_task.add_done_callback(self._log_failure)

    def _store(self, state: DocState, version, settings, analysis, *, verified: bool) -> None:
        doc = state.doc
        diagnostics = state.conversions.convert(self.ls, doc.uri, version, analysis.findings, doc.line_text,
                                                doc.revision, checked=verified)
        state.result = Result(version, settings, analysis, diagnostics, f"{version}.{next(self._ids)}", verified,
                              revision=doc.revision)
        if not self.ls.caps.pull_diagnostics:
            publish(self.ls, doc.uri, version, diagnostics)

    async def _verify(self, state: DocState, result: Result, text: str, delay: float = 0.0,
                      priority: int = prio.VERIFY) -> None:
        doc = state.doc

        def stale() -> bool:
            # Read from the worker thread too (attribute reads: safe under the GIL).
            return state.closed or state.result is not result or state.doc.revision != result.revision

        def give_way() -> bool:
            # Asked inside a check (worker thread): stop it when it is outdated or a more urgent job waits (that job
            # runs next; the check is queued again behind it). Only more urgent jobs: a check queued again runs
            # before jobs of its own priority or less, so asking for those would stop it for ever.
            return stale() or more_urgent(priority)

        more_urgent = self.executor.more_urgent

        if delay:
            await asyncio.sleep(delay)
        if stale():
            return
        result.checking = True  # running now: waiters just wait
        findings = result.analysis.findings
        checked: list = []
        progress = _VerifyProgress(text, result.settings, state.engine_session())
        try:
            t0 = time.perf_counter()
            chunks = abandoned = 0
            # (size, seconds) of each group checked together, for the log: the time each next size was computed
            # from, unrounded (a rounded time can give another size at a boundary)
            groups: list = []
            fixable = [f for f in findings if f.fix is not None]
            if len(fixable) >= 2:
                # Fixes applied a group at a time, each group re-parsed and re-checked in one job: those a group
                # clears need no check of their own (400 findings: 13 re-checks instead of 400). A group costs
                # about what one fix costs (the re-check of the file dominates), so the worker is not held longer.
                # Each group is sized from the last one's time to take about VERIFY_CHUNK_S (a group is one job: a
                # keystroke waits for at most one); when even a few fixes take longer, the rest are checked one by
                # one, in chunks that stop as soon as an analysis waits.
                start, size = 0, VERIFY_FIRST_GROUP
                together = functools.partial(progress.session.cleared_together, stale=give_way)
                while start < len(fixable) and size >= 2:
                    group = fixable[start:start + size]
                    cleared, elapsed = await self.run(_timed, together, group, text, result.settings,
                                                      priority=priority)
                    if cleared is None:  # given up for a more urgent job (queued again behind it), or outdated
                        if stale():
                            log.info("dropped the fix checks of %s v%s (outdated)", doc.uri, result.version)
                            return
                        abandoned += 1
                        continue
                    progress.cleared |= cleared
                    groups.append((len(group), elapsed))
                    start += len(group)
                    per_fix = elapsed / len(group)
                    size = min(VERIFY_GROUP, int(VERIFY_CHUNK_S / per_fix) if per_fix > 0 else VERIFY_GROUP)
                    if stale():
                        log.info("dropped the fix checks of %s v%s (outdated)", doc.uri, result.version)
                        return
            while progress.next < len(findings):
                # One chunk per worker job: analyses submitted meanwhile run before the next chunk.
                chunk = await self.run(self._verify_chunk, findings, progress, stale, give_way, priority,
                                       priority=priority)
                chunks += 1
                if chunk is None or stale():
                    log.info("dropped the fix checks of %s v%s (outdated)", doc.uri, result.version)
                    return
                checked.extend(chunk)
            abandoned += progress.abandoned
            log.info("checked the fixes of %s v%s in %.1f ms (%d chunks; %d checks given up for other work; "
                     "groups checked together, size and seconds: %s)",
                     doc.uri, result.version, (time.perf_counter() - t0) * 1e3, chunks, abandoned, groups)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - an unchecked fix is never offered
            log.exception("fix verification failed for %s", doc.uri)
            checked = [replace(f, fix=None) for f in findings]
        finally:
            result.checking = False  # a waiter may start the checks again if these stopped short
        if stale():
            return
        if all(a is b for a, b in zip(checked, findings)):
            result.verified = True
        else:
            result.analysis.findings = checked
            self._store(state, result.version, result.settings, result.analysis, verified=True)
        self._wake(state)

    def _verify_chunk(self, findings: list, progress: "_VerifyProgress", stale, give_way, priority: int) -> list | None:
        """Check fixes from ``progress.next`` on (worker thread) until a more urgent job waits for the worker or
        the chunk's time is up; the checked findings, or None if the result went stale. A check that ``give_way()``
        stops midway is left for the next chunk."""
        session = progress.session
        deadline = time.perf_counter() + VERIFY_CHUNK_S
        out: list = []
        checks = 0
        while progress.next < len(findings):
            finding = findings[progress.next]
            if finding.fix is not None and id(finding) not in progress.cleared:
                if stale():
                    return None
                if checks and (self.executor.more_urgent(priority) or time.perf_counter() > deadline):
                    break
                checks += 1
                # (No count of the document's own syntax errors up front: a forked fix compares only the
                # statements it changes; the engine counts the whole file only when a fix cannot be forked.)
                done = session.check_fixes([finding], progress.text, progress.settings, stale=give_way)
                if done is None:
                    if stale():
                        return None
                    progress.abandoned += 1
                    break  # a more urgent job waits: it runs before the next chunk, which checks this fix again
                finding = done[0]
            out.append(finding)
            progress.next += 1
        return out

    def _analyse_text(self, state: DocState, text: str, settings, freeze: bool | None = None, superseded=None,
                      scope=None):
        """(the analysis of ``text``, the seconds it took here), or None when ``superseded()`` says a newer version
        made it stale before it started or once its parse is done (the rules, most of the time, are not run; the
        tree is up to date for the next version's parse, which then re-parses only what changed since).
        ``scope``: the document's module of the project (projects.py).

        ``freeze`` (a document's first analysis, None otherwise): the collector is off while its tree is built
        (each full collection would walk the growing tree: pauses of hundreds of ms in a 10k-line file), and with
        ``freeze`` the tree is frozen out of the collector's way before the rules run (their temporaries stay
        collectable)."""
        if superseded is not None and superseded():
            return None
        t0 = time.perf_counter()
        session = state.engine_session()
        if freeze is not None:
            gc.disable()
            try:
                session.parse(text)
                if freeze:
                    gc.freeze()
            finally:
                gc.enable()
        elif superseded is not None:
            session.parse(text)
        if superseded is not None and superseded():
            return None
        # Neither syntax errors nor fix checks on the keystroke path: syntax errors are not published, and the
        # fixes are checked after the diagnostics are out (``_verify``), which counts the errors itself.
        # (What hover and inlay hints show is computed here too: left for later, ``with_bprops=False``, the
        # session would keep this analysis's Program alive until the next parse, ~4 MiB per 10,000 lines and per
        # open document, for 6-8 ms of a newline near the top: not worth it.)
        return session.analyse(text, settings, **(scope or {})), time.perf_counter() - t0

    def warm_up(self) -> None:
        """Import the engine and the rules and load parso's grammar off the event loop, before the first document
        arrives."""

        def load():
            from ..checker import warm_up

            warm_up()

        self.executor.submit(self._counted, load, ())

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
            # Someone is waiting: no wait before the analysis (pacing.py).
            if state.task is None or state.task.done():
                self.schedule(state, edited=False)
            else:
                self.pace(state).hurry()
                self._nudge(state)
            await fut  # a cancelled request ($/cancelRequest) raises CancelledError here
        return state.result

    async def bprops_of(self, state: DocState) -> list:
        """What hover and inlay hints show for the document's current version (``Analysis.bprops``)."""
        result = await self.current_result(state)
        return list(result.analysis.bprops) if result is not None else []


class _VerifyProgress:
    """Where the fix checks of one result stand, carried from one chunk to the next."""

    def __init__(self, text: str, settings, session):
        self.text, self.settings, self.session = text, settings, session
        self.next = 0
        self.cleared: set[int] = set()  # ids of the findings whose fixes were checked together
        self.abandoned = 0  # checks stopped midway for a more urgent job (and done again later)


def _timed(fn, *args):
    """``fn(*args)`` and the seconds it took (on the worker: the time it held the worker, not the time queued)."""
    t0 = time.perf_counter()
    value = fn(*args)
    return value, time.perf_counter() - t0


def _display(uri: str) -> str:
    from pygls import uris

    return uris.to_fs_path(uri) or uri
