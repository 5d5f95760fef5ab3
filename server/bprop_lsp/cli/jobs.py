"""Checking files one at a time or over a process pool, with results that do not depend on which.

``check_file`` is the whole per-file step (read, analyse, fix, write) and never raises for a file's content: a
bug in the analysis of one file becomes an error message for that file and the run goes on.
"""
from __future__ import annotations

import difflib
import os
import signal
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Callable, TextIO

from ..engine import Settings, analyze, fix_all
from ..engine.model import Finding
from ..sources import SourceError, display_path, read_source, write_source

# Below this many files a pool's start-up (a fork per worker, pickling) costs more than it saves.
POOL_MIN_FILES = 9


@dataclass(frozen=True)
class Options:
    fix: bool = False
    diff: bool = False
    unsafe_fixes: bool = False


@dataclass(frozen=True)
class Job:
    path: str  # what to read ("-" for stdin)
    settings: Settings
    options: Options
    display: str | None = None  # the name to report, when not the path (stdin)


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


def check_file(job: Job) -> FileResult:
    result = FileResult(job.display or display_path(job.path))
    try:
        source = read_source(job.path, display=job.display)
    except SourceError as exc:
        result.messages.append(f"bprop-lsp: error: {exc}")
        result.error = True
        return result
    result.path = source.path
    try:
        _check_source(source, job, result)
    except Exception as exc:  # noqa: BLE001 - one file's analysis bug must not end the run
        result.findings, result.text, result.error = [], "", True
        result.messages.append(f"bprop-lsp: error: {source.path}: internal error in bprop-lsp (please report): "
                               f"{exc.__class__.__name__}: {exc}")
        if os.environ.get("BPROP_LSP_DEBUG"):
            result.messages.append(traceback.format_exc().rstrip("\n"))
    return result


def _compiles(text: str) -> bool:
    """Whether CPython parses the text (only parsed, never run)."""
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


def _check_source(source, job: Job, result: FileResult) -> None:
    settings, opts = job.settings, job.options
    text = source.text
    analysis = analyze(text, settings)
    result.checked = True
    if analysis.syntax_errors and not _compiles(text):
        # parso's grammar lags CPython's (``match``, ``except*``): warn only about what Python itself rejects.
        span, message = analysis.syntax_errors[0]
        result.messages.append(f"bprop-lsp: warning: {source.path}:{span.start.line + 1}:{span.start.column + 1}: "
                               f"syntax error ({message}); findings may be incomplete")
    if opts.fix or opts.diff:
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
                analysis = analyze(text, settings)
        elif job.path == "-" and opts.fix:
            result.stdout = text
    result.findings = analysis.findings
    result.text = text if analysis.findings else ""


def unified_diff(name: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))


def default_workers() -> int:
    """One worker per CPU this process may use that other work is not already keeping busy.

    On a saturated machine a pool only adds its own cost (measured: 10-15% slower than one process when the
    load average is above the CPU count), so the idle CPUs, by the one-minute load average, bound it.
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0]
    except (AttributeError, OSError):
        return cpus
    return max(1, min(cpus, int(cpus - busy + 0.5)))


def run_jobs(jobs: list[Job], workers: int, on_result: Callable[[int, FileResult], None]) -> list[FileResult]:
    """Every job's result, in the jobs' order; ``on_result(index, result)`` is called in that order as well.

    With ``workers > 1`` and at least ``POOL_MIN_FILES`` files the files go to a process pool; stdin is always
    read here. If the pool breaks (a worker killed), the files it did not finish are checked here.
    """
    results: list[FileResult | None] = [None] * len(jobs)
    delivered = 0

    def deliver(i: int, result: FileResult) -> None:
        nonlocal delivered
        results[i] = result
        while delivered < len(results) and results[delivered] is not None:
            on_result(delivered, results[delivered])
            delivered += 1

    remote = [i for i, job in enumerate(jobs) if job.path != "-"]
    for i, job in enumerate(jobs):
        if job.path == "-":
            deliver(i, check_file(job))
    if workers > 1 and len(remote) >= POOL_MIN_FILES:
        _run_pool(jobs, remote, min(workers, len(remote)), deliver)
    for i in remote:
        if results[i] is None:
            deliver(i, check_file(jobs[i]))
    return results  # type: ignore[return-value]


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: no worker tracebacks


WARM_UP = "class C:\n    def bprop(self, x, out, dout):\n        return (dout,)\n"


def _run_pool(jobs, indices, workers, deliver) -> None:
    # Import the rules and load parso's grammar once here (~0.25 s): forked workers inherit them instead of
    # each paying for them.
    try:
        analyze(WARM_UP, Settings())
    except Exception:  # noqa: BLE001 - only a head start; the workers report real failures per file
        pass
    # Small chunks: the files with a custom bprop (the costly ones) often sit together in one folder, and a big
    # chunk would hand them all to one worker.
    chunksize = max(1, min(8, len(indices) // (workers * 32)))
    try:
        pool = ProcessPoolExecutor(max_workers=workers, initializer=_ignore_sigint)
    except (OSError, ValueError, NotImplementedError) as exc:
        print(f"bprop-lsp: warning: no process pool ({exc}); checking files one at a time", file=sys.stderr)
        return
    try:
        for i, result in zip(indices, pool.map(check_file, [jobs[i] for i in indices], chunksize=chunksize)):
            deliver(i, result)
    except BrokenProcessPool as exc:
        print(f"bprop-lsp: warning: a worker process died ({exc}); checking the remaining files in this process",
              file=sys.stderr)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


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
