"""Checking files one at a time or over a process pool, with results that do not depend on which.

The parent reads every file (cheap) and keeps only those whose text contains ``bprop``: every rule is about a
custom bprop, so the others have nothing to report and never reach the engine, nor a worker. The files that do
go to a process pool when there are enough of them, largest first (they cost roughly in proportion to their
size, so the workers end together); the pool starts as soon as that is known, and its workers import the engine
while the parent is still reading. The parent never imports the engine unless it checks a file itself.

``check_file``/``check_source`` are the whole per-file step (read, analyse, fix, write) and never raise for a
file's content: a bug in the analysis of one file becomes an error message for that file and the run goes on.
"""
from __future__ import annotations

import contextlib

import heapq
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, TextIO

from ..sources import SourceError, SourceFile, display_path, read_source, read_source_if, write_source
from .. import ISSUES_URL, checker  # the engine with the built-in rules, loaded on first use: a tree without bprop never
# loads parso or the rules
from ..engine.settings import Settings

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

    from .cache import ResultCache

    from ..engine.model import Finding

# Every rule is about a custom bprop, bprop_getters or bprop_debug (the engine's own early return says the same):
# a file whose text lacks this word has nothing to report.
NEEDLE = "bprop"
# In a project (``Job.roots``), a file without it is checked too when it says this and a class of it has a base
# imported from a module of the project: a Cell overriding construct may inherit a bprop from there.
INHERITS_NEEDLE = "construct"
# A pool pays off from a few files with a custom bprop: its workers import the engine in parallel with the
# parent's reading (the serial run imports it too), and parso costs milliseconds per hundred lines.
POOL_MIN_FILES = 2
POOL_MIN_BYTES = 2048


def analyze(text, settings, **kw):
    """``checker.analyze`` (imported on first use; a module attribute, so tests can replace it)."""
    return checker.analyze(text, settings, **kw)


def fix_all(text, settings, **kw):
    """``checker.fix_all`` (imported on first use)."""
    return checker.fix_all(text, settings, **kw)


@dataclass(frozen=True)
class Options:
    fix: bool = False
    diff: bool = False
    unsafe_fixes: bool = False
    # Whether the output shows which findings have a fix (every format but github: "help:", "[*]", the JSON and
    # SARIF fix objects, the summary's fixable count). Only then must the fixes be checked (re-parsed and
    # re-analysed with the fix applied), which costs about a third of a file's analysis.
    shows_fixes: bool = True
    add_noqa: bool = False  # --add-noqa: a ``# noqa`` comment for every finding, written back


@dataclass(frozen=True)
class Job:
    path: str  # what to read ("-" for stdin)
    settings: Settings
    options: Options
    display: str | None = None  # the name to report, when not the path (stdin)
    # The project folders the workspace names modules from (``engine.Workspace``): a base class imported from
    # another module of the project is read there. None: each file alone.
    roots: tuple[str, ...] | None = None


@dataclass
class FileResult:
    path: str  # as reported
    findings: list[Finding] = field(default_factory=list)
    text: str = ""  # the text the findings point into (only kept when there are findings)
    messages: list[str] = field(default_factory=list)  # lines for stderr, in order
    error: bool = False  # exit 2
    checked: bool = False
    fixes: int = 0
    changed: bool = False
    diff: str = ""
    stdout: str | None = None  # ``--fix -``: the fixed source
    fixed_codes: dict[str, int] = field(default_factory=dict)  # --fix: fixes applied per rule (--show-fixes)
    noqa_added: int = 0  # --add-noqa: directives added
    # The other files its findings depend on (the workspace's): (absolute path, content hash, or "-" when it was
    # looked for and is absent), for the cache.
    depends: list[tuple[str, str]] = field(default_factory=list)
    # When its mode was searched for in the modules importing it: (the roots, the words searched for, the files
    # whose import statements spelt one: ``engine.files_importing``) — a file that comes to spell one, created
    # or edited, is a change it depends on.
    listing: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None = None


def check_file(job: Job) -> FileResult:
    """Read and check one file (stdin included)."""
    try:
        source = read_source(job.path, display=job.display)
    except SourceError as exc:
        return _unreadable(job, exc)
    return check_source(job, source)


def _unreadable(job: Job, exc: SourceError) -> FileResult:
    result = FileResult(job.display or display_path(job.path))
    result.messages.append(f"bprop-lsp: error: {exc}")
    result.error = True
    return result


def check_source(job: Job, source: SourceFile) -> FileResult:
    """Check (and fix) a file already read."""
    result = FileResult(source.path)
    try:
        with _one_collection(source.text), _in_workspace(job) as workspace:
            _check_source(source, job, result)
            if workspace is not None:
                deps = workspace.depends_on(os.path.abspath(job.path))
                result.depends = sorted((p, d if d is not None else "-") for p, d in deps.items())
                words = workspace.searched_words(job.path)
                if words:
                    from ..engine import files_importing

                    roots = tuple(str(r) for r in workspace.roots)
                    result.listing = (roots, tuple(sorted(w.decode("ascii", "replace") for w in words)),
                                      tuple(files_importing(roots, words, workspace.words_of)))
    except Exception as exc:  # noqa: BLE001 - one file's analysis bug must not end the run
        result.findings, result.text, result.error = [], "", True
        result.messages.append(f"bprop-lsp: error: {source.path}: internal error in bprop-lsp (please report it at "
                               f"{ISSUES_URL}): {exc.__class__.__name__}: {exc}")
        if os.environ.get("BPROP_LSP_DEBUG"):
            import traceback

            result.messages.append(traceback.format_exc().rstrip("\n"))
    return result


_WORKSPACES: dict = {}  # roots -> the run's Workspace (one per process: each module parsed once there)
# The run's cache's ``import_words`` (a file's import words for its stat, without reading it), or None.
_WORDS_HINT: list = [None]


@contextlib.contextmanager
def _in_workspace(job: Job):
    """The analyses of ``job``'s file in the block resolve bases through the project's workspace (None: alone)."""
    if job.roots is None or job.path == "-":
        yield None
        return
    workspace = _WORKSPACES.get(job.roots)
    if workspace is None:
        from ..engine import Workspace
        from .cache import content_hash

        workspace = _WORKSPACES[job.roots] = Workspace(job.roots, digest_bytes=content_hash,
                                                       words_hint=_WORDS_HINT[0])
    with workspace.scope(os.path.abspath(job.path)):
        yield workspace


def _has_project_bases(job: Job, text: str) -> bool:
    """Whether a class of ``text`` (a file that does not say "bprop") has a base imported from a module of the
    project: it may inherit a bprop from there (``Workspace.may_inherit_bprop``), so it is checked, and cached with
    the files it depends on, rather than done as a file without "bprop"."""
    with _in_workspace(job) as workspace:
        return workspace is not None and workspace.has_project_bases(text, job.path)


LARGE_TEXT = 256 * 1024  # characters: a file this large is checked with the collector off, then collected once


@contextlib.contextmanager
def _one_collection(text: str):
    """For a large file: the cyclic collector's automatic runs off while it is checked (and fixed), one collection
    after. Its analyses (four with ``--fix``) build trees that the automatic runs walk again and again as they
    grow: about half of ``check --fix``'s time on a 5,000-finding file, growing faster than the file. A small file
    is left to the collector (a collection per file would cost more than it saves)."""
    import gc

    if len(text) < LARGE_TEXT or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()


def _compiles(text: str) -> bool:
    """Whether CPython accepts the text: its parser and its symbol table (only read, never compiled or run).

    The symbol table costs a third of ``ast.parse`` (no Python AST objects are built) and rejects what the
    parser rejects plus what Python's compiler finds there (a duplicate parameter name, a misplaced ``global`` or
    ``nonlocal``): errors a file has for CPython, which its import would raise."""
    import symtable
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            symtable.symtable(text, "<file>", "exec")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


def _check_source(source, job: Job, result: FileResult) -> None:
    settings, opts = job.settings, job.options
    text = source.text
    # Fixes checked only when the output shows them; parso's syntax errors only for a file CPython rejects (parso's
    # grammar lags CPython's, ``match``, ``except*``: warn only about what Python itself rejects).
    compiles = _compiles(text)
    # A file CPython parses is parsed by parso only where it can matter (engine/partial.py).
    analysis = analyze(text, settings, verify_fixes=opts.shows_fixes or opts.fix or opts.diff,
                       with_syntax_errors=not compiles, compiles=compiles, with_bprops=False)
    result.checked = True
    for message in analysis.failures:
        result.messages.append(f"bprop-lsp: warning: {source.path}: {message}")
    if analysis.syntax_errors:
        span, message = analysis.syntax_errors[0]
        result.messages.append(f"bprop-lsp: warning: {source.path}:{span.start.line + 1}:{span.start.column + 1}: "
                               f"syntax error ({message}); findings may be incomplete")
    if opts.add_noqa:
        from .noqa import add_noqa

        new_text, added = add_noqa(text, analysis.findings)
        if added and job.path != "-":
            try:
                write_source(source, new_text)
                result.noqa_added = added
            except SourceError as exc:
                result.messages.append(f"bprop-lsp: error: {exc}")
                result.error = True
        result.findings, result.text = [], ""
        return
    if opts.fix or opts.diff:
        before = [f.code for f in analysis.findings if f.fix is not None and (f.fix.is_safe or opts.unsafe_fixes)]
        new_text, count = fix_all(text, settings, include_unsafe=opts.unsafe_fixes)
        if new_text != text:
            if opts.diff:
                result.diff = unified_diff(source.path, text, new_text)
            elif job.path == "-":
                result.stdout = new_text
            else:
                try:
                    write_source(source, new_text)
                except SourceError as exc:
                    result.messages.append(f"bprop-lsp: error: {exc}")
                    result.error = True
                    count, new_text = 0, text  # nothing written: the findings stand as found
            if count:
                result.fixes, result.changed = count, True
            if not opts.diff and new_text != text:
                text = new_text
                analysis = analyze(text, settings, with_bprops=False)
                if count:
                    from collections import Counter

                    left = Counter(f.code for f in analysis.findings)
                    fixed = Counter(before)
                    fixed.subtract(left)
                    result.fixed_codes = {code: n for code, n in fixed.items() if n > 0}
        elif job.path == "-" and opts.fix:
            result.stdout = text
    result.findings = analysis.findings
    result.text = text if analysis.findings else ""


def unified_diff(name: str, old: str, new: str) -> str:
    import difflib

    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))


def cpu_count() -> int:
    """The CPUs this process may run on (its affinity mask where there is one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_workers() -> int:
    """One worker per CPU this process may use, fewer once the machine is saturated.

    On a saturated machine a pool only adds its own cost (measured: 10-15% slower than one process when the
    load average is above the CPU count), so each unit of the one-minute load average beyond the CPU count takes
    a worker away. Below that every CPU gets one: the load average lags by a minute and counts the previous run of
    this very command, so bounding by the idle CPUs left a core unused in back-to-back runs.
    """
    cpus = cpu_count()
    try:
        busy = os.getloadavg()[0]
    except (AttributeError, OSError):
        return cpus
    return max(1, min(cpus, int(2 * cpus - busy + 0.5)))


def run_jobs(jobs: list[Job], workers: int, on_result: Callable[[int, FileResult], None],
             cache: ResultCache | None = None) -> list[FileResult]:
    """Every job's result, in the jobs' order; ``on_result(index, result)`` is called in that order as well.

    Files are read here, in order. Those without ``bprop`` are done once read (an unreadable or undecodable
    one is an error, as ever); the others are checked here, or with ``workers > 1`` and at least
    ``POOL_MIN_FILES`` of them (``POOL_MIN_BYTES`` together) over a process pool, largest first. Stdin is
    always checked here. If the pool breaks (a worker killed), the files it did not finish are checked here.
    With a ``cache`` (cli/cache.py), a file whose stat is recorded in its index is not read at all when that says
    "no ``bprop``" or its result is cached without findings; a file with ``bprop`` whose result is cached for
    exactly its bytes is done once read, and every other such file's result is stored once checked (by this
    process: workers never write it). What the run learnt of the files' stats is written at the end.
    """
    results: list[FileResult | None] = [None] * len(jobs)
    _WORKSPACES.clear()  # (a run reads the project afresh: ``--watch`` runs again in this process)
    _WORDS_HINT[0] = cache.import_words if cache is not None else None
    delivered = 0
    to_store: dict[int, SourceFile] = {}

    def deliver(i: int, result: FileResult) -> None:
        nonlocal delivered
        results[i] = result
        source = to_store.pop(i, None)
        if source is not None and cache is not None:
            cache.store(jobs[i], source, result)
        while delivered < len(results) and results[delivered] is not None:
            on_result(delivered, results[delivered])
            delivered += 1

    pending: list[tuple[int, int, SourceFile]] = []  # heap of (-size, index, source): the largest first
    pending_bytes = 0
    count = 0
    pool: _Pool | None = None
    try:
        for i, job in enumerate(jobs):
            if job.path == "-":
                deliver(i, check_file(job))
                continue
            stat_out: list | None = None
            if cache is not None:
                hit = cache.replay(job)  # by its stat alone: not even read
                if hit is not None:
                    deliver(i, hit)
                    continue
                stat_out = []
            raw_out: list | None = [] if stat_out is not None and job.roots is not None else None
            try:
                source = read_source_if(job.path, NEEDLE if job.roots is None else (NEEDLE, INHERITS_NEEDLE),
                                        display=job.display, stat_out=stat_out, raw_out=raw_out)
                if raw_out and stat_out:
                    # (what a later run's search for the modules importing one reads without opening it)
                    from ..engine import import_words

                    cache.remember_words(job.path, stat_out[0], import_words(raw_out[0]))  # type: ignore[union-attr]
                if source is not None and NEEDLE not in source.text and not _has_project_bases(job, source.text):
                    source = None
            except SourceError as exc:
                deliver(i, _unreadable(job, exc))
                continue
            if source is None:
                if stat_out:
                    cache.remember(job.path, stat_out[0], "")  # type: ignore[union-attr]
                deliver(i, FileResult(job.display or display_path(job.path), checked=True))
                continue
            if cache is not None:
                hit = cache.lookup(job, source, stat_out[0] if stat_out else None)
                if hit is not None:
                    deliver(i, hit)
                    continue
                to_store[i] = source
            heapq.heappush(pending, (-len(source.raw), i, source))
            pending_bytes += len(source.raw)
            count += 1
            if pool is None and workers > 1 and count >= POOL_MIN_FILES and pending_bytes >= POOL_MIN_BYTES:
                pool = _Pool.start(workers)
                if pool is None:
                    workers = 1
            if pool is not None:
                pool.feed(jobs, pending, deliver, block=False)
        if pool is not None:
            while pool.alive and (pool.busy() or pending):
                pool.feed(jobs, pending, deliver, block=True)
    except BaseException:
        if pool is not None:
            pool.abandon()
        raise
    if pool is not None:
        pool.close()
        for _, i, source in pool.unfinished():
            heapq.heappush(pending, (-len(source.raw), i, source))
    try:
        for _, i, source in sorted(pending, key=lambda item: item[1]):
            deliver(i, check_source(jobs[i], source))
    finally:
        # The run's modules (their programs: megabytes per 10,000 lines) are not kept past it.
        _WORKSPACES.clear()
        _WORDS_HINT[0] = None
    if cache is not None:
        cache.close()
    return results  # type: ignore[return-value]


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: no worker tracebacks
    try:
        # Import the rules and load parso's grammar now, while the parent is still reading files.
        analyze(WARM_UP, Settings())
    except Exception:  # noqa: BLE001 - only a head start; the files report real failures
        pass


WARM_UP = "class C:\n    def bprop(self, x, out, dout):\n        return (dout,)\n"


class _Pool:
    """A process pool fed one file at a time, the largest pending file first, a few files ahead of the workers.

    (concurrent.futures and multiprocessing are imported here, not at the top: they cost a run without a pool
    ~15 ms of start-up, a tenth of ``check``'s whole start-up.)"""

    def __init__(self, executor: ProcessPoolExecutor, workers: int):
        self.executor = executor
        self.ahead = workers + 1  # one queued beyond the busy workers: none waits for the next file
        self.inflight: dict = {}  # future -> (index, source)
        self.alive = True

    @classmethod
    def start(cls, workers: int) -> _Pool | None:
        from concurrent.futures import ProcessPoolExecutor

        try:
            return cls(ProcessPoolExecutor(max_workers=workers, initializer=_worker_init), workers)
        except (OSError, ValueError, NotImplementedError) as exc:
            print(f"bprop-lsp: warning: no process pool ({exc}); checking files one at a time", file=sys.stderr)
            return None

    def busy(self) -> bool:
        return bool(self.inflight)

    def feed(self, jobs, pending, deliver, *, block: bool) -> None:
        """Deliver what is done (waiting for something when ``block``), then submit the largest pending files."""
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        if self.inflight and self.alive:
            done, _ = wait(list(self.inflight), timeout=None if block else 0, return_when=FIRST_COMPLETED)
            for future in done:
                try:
                    result = future.result()
                except BrokenProcessPool as exc:
                    self._broken(exc)
                    return
                i, _ = self.inflight.pop(future)
                deliver(i, result)
        while self.alive and pending and len(self.inflight) < self.ahead:
            size, i, source = heapq.heappop(pending)
            try:
                future = self.executor.submit(check_source, jobs[i], source)
            except BrokenProcessPool as exc:
                heapq.heappush(pending, (size, i, source))
                self._broken(exc)
                return
            self.inflight[future] = (i, source)

    def _broken(self, exc) -> None:
        print(f"bprop-lsp: warning: a worker process died ({exc}); checking the remaining files in this process",
              file=sys.stderr)
        self.alive = False

    def unfinished(self) -> list[tuple[int, int, SourceFile]]:
        """The files submitted but not delivered (after the pool broke), to check here."""
        left = [(-len(source.raw), i, source) for i, source in self.inflight.values()]
        self.inflight.clear()
        return left

    def close(self) -> None:
        self.executor.shutdown(wait=self.alive, cancel_futures=not self.alive)

    def abandon(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)


class Progress:
    """A one-line bar on a terminal's stderr for long runs; silent in CI, with -q and when not a terminal."""

    DELAY_S = 1.0  # runs shorter than this never show a bar
    INTERVAL_S = 0.1
    WIDTH = 30

    def __init__(self, total: int, stream: TextIO, enabled: bool):
        self.total, self.stream, self.enabled = total, stream, enabled and total > 1
        self.done = 0
        self.start = time.monotonic()
        self.last_draw = 0.0
        self.shown = False

    @staticmethod
    def wanted(stream: TextIO, quiet: bool) -> bool:
        try:
            tty = stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        return tty and not quiet and not os.environ.get("CI")

    def advance(self) -> None:
        self.done += 1
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < self.DELAY_S or (now - self.last_draw < self.INTERVAL_S and self.done < self.total):
            return
        self.last_draw = now
        filled = self.WIDTH * self.done // max(self.total, 1)
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.done}/{self.total} files")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        """Wipe the bar (before other stderr output, and at the end)."""
        if self.shown:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self.shown = False
