"""The server's side of the workspace scan's process (``scan_child.py``): started on the first file to analyse,
fed one file at a time from the scan thread, replaced when it ends.

* **Start.** ``sys.executable -I`` (no PYTHON* variables, no user site, no current folder on ``sys.path``) runs
  ``scan_child.main`` with the server's ``sys.path`` (absolute entries only), in the package's own folder (never
  the workspace's), with a pipe for requests and one for answers; stderr is the server's. It says it is ready once
  the engine is imported (~0.3-0.6 s of a core, at a lower priority). A child that cannot be started or dies
  before it is ready (an interpreter that will not run, no processes left) is a :class:`Unavailable`: the caller
  analyses in process, as before, and no child is tried again for ``RETRY_S``.
* **A file.** The text and the settings go down, the findings (without fixes) come back. A child that ends while
  it has a file (killed by the OOM killer, a crash in C) is a :class:`ChildDied`: that file is not analysed (never
  again in the server's process: what killed the child could kill the server) and the next file starts a new
  child. A child that says it is leaving (idle for ``scan_child.IDLE_EXIT_S``) is replaced and the file sent again.
* **End.** The child reads its requests on a thread of its own and exits as soon as that pipe ends: when the
  server closes it (:meth:`ScanProcess.close`, at ``shutdown`` and when the server leaves) and when the server dies
  in any way, even in the middle of a file.
"""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time

from . import scan_child

log = logging.getLogger(__name__)
RETRY_S = 60.0  # after a child could not be started, files are analysed in process this long before trying again

BOOT = ("import sys, json; sys.path[:] = json.loads(sys.argv[1]); "
        "from bprop_lsp.lsp.scan_child import main; main(float(sys.argv[2]))")


class Unavailable(Exception):
    """No child could be started: analyse the file in process."""


class ChildDied(Exception):
    """The child ended while it had the file."""


def _child_path() -> list[str]:
    """The server's ``sys.path`` for the child: absolute entries only (no ``''``, no folder relative to wherever
    the child runs), the folder holding this package first."""
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    entries = [package_parent] + [p for p in sys.path if p and os.path.isabs(p)]
    return list(dict.fromkeys(entries))


def _describe(returncode: int | None) -> str:
    if returncode is None:
        return "ended"
    if returncode < 0:
        import signal

        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name}"
    return f"exited with status {returncode}"


class ScanProcess:
    """One child at a time, used from one thread (the scan thread); :meth:`close` from any thread."""

    def __init__(self, enabled: bool | None = None, idle_exit_s: float = scan_child.IDLE_EXIT_S):
        self.idle_exit_s = idle_exit_s
        if enabled is None:
            enabled = os.environ.get("BPROP_LSP_SCAN_PROCESS", "1") != "0"
        self.enabled = enabled
        self.proc: subprocess.Popen | None = None
        self.pid: int | None = None  # the current child's, once it is ready
        self.started = 0  # children started (for the log and the tests)
        self._no_child_until = 0.0
        self._closed = False
        self._lock = threading.Lock()  # close() against a start in the scan thread

    # ------------------------------------------------------------------ the child's life
    @property
    def closed(self) -> bool:
        return self._closed

    def usable(self) -> bool:
        return self.enabled and not self._closed and time.monotonic() >= self._no_child_until

    def _start(self) -> subprocess.Popen:
        package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        import json

        with self._lock:
            if self._closed:
                raise Unavailable("the server is shutting down")
            if not os.path.isabs(sys.executable or ""):
                # (A bare name would be looked up on PATH, which may hold the workspace's own programs.)
                self._no_child_until = time.monotonic() + RETRY_S
                raise Unavailable(f"no interpreter path to start the workspace check's process with "
                                  f"({sys.executable!r})")
            try:
                proc = subprocess.Popen([sys.executable, "-I", "-c", BOOT, json.dumps(_child_path()),
                                         repr(self.idle_exit_s)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=package_dir,
                                        close_fds=True)
            except (OSError, ValueError, subprocess.SubprocessError) as exc:
                self._no_child_until = time.monotonic() + RETRY_S
                raise Unavailable(f"cannot start the workspace check's process: {exc}") from exc
            self.proc = proc
        self.started += 1
        try:
            ready = scan_child.receive(proc.stdout)
        except Exception as exc:  # noqa: BLE001 - what the child said cannot be read: as if it said nothing
            ready = exc
        if not (isinstance(ready, tuple) and ready and ready[0] == "ready"):
            code = self._reap(proc)
            self._no_child_until = time.monotonic() + RETRY_S
            raise Unavailable(f"the workspace check's process {_describe(code)} before it was ready")
        self.pid = ready[1]
        log.info("started the workspace check's process (pid %d)", self.pid)
        return proc

    def _reap(self, proc: subprocess.Popen) -> int | None:
        """Make sure ``proc`` is gone and waited for; its return code."""
        with self._lock:
            if self.proc is proc:
                self.proc = None
                self.pid = None
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            return proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            try:
                return proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                return None

    def close(self) -> None:
        """End the child (at ``shutdown``, when the server leaves); no child is started after this."""
        with self._lock:
            self._closed = True
            proc, self.proc, self.pid = self.proc, None, None
        if proc is None:
            return
        # Killed, not asked: it has nothing to save. (Its pipes are left to the scan thread, which may be reading
        # one: it sees their end; closing them here could wait for that read.)
        try:
            proc.kill()
            proc.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            pass

    # ------------------------------------------------------------------ a file
    def analyse(self, text: str, settings, label: str = "a file") -> list:
        """The findings of ``text`` (``scan_child.analyse_file``), computed in the child. Raises
        :class:`Unavailable` (analyse in process instead), :class:`ChildDied` (the file is not analysed) or
        ``RuntimeError`` (the engine failed on the file: the child's traceback is in the log)."""
        for _ in range(3):  # a child that left meanwhile (idle) or had died before the file reached it: another
            proc = self.proc
            if proc is None or proc.poll() is not None:
                if proc is not None:
                    code = self._reap(proc)
                    (log.info if code == 0 else log.warning)(
                        "the workspace check's process %s between two files; starting another", _describe(code))
                if not self.usable():
                    raise Unavailable("no workspace check process")
                proc = self._start()
            log.info("workspace check: %s sent to process %d", label, self.pid or -1)
            try:
                scan_child.send(proc.stdin, ("analyse", text, settings))
            except (BrokenPipeError, OSError, ValueError):
                pass  # gone before the file reached it: its answer (a goodbye) or its end tells which
            try:
                reply = scan_child.receive(proc.stdout)
            except Exception as exc:  # noqa: BLE001 - an unreadable answer: the child is not trusted further
                log.error("unreadable answer from the workspace check's process: %s", exc)
                reply = None
            if isinstance(reply, tuple) and reply and reply[0] == "bye":
                self._reap(proc)
                continue
            if isinstance(reply, tuple) and reply and reply[0] == "ok":
                return reply[1]
            if isinstance(reply, tuple) and reply and reply[0] == "error":
                log.error("the workspace check of %s failed in its process:\n%s", label, reply[2])
                raise RuntimeError(reply[1])
            code = self._reap(proc)
            if self._closed:
                raise ChildDied("the server is shutting down")
            raise ChildDied(f"the workspace check's process {_describe(code)} while checking it")
        raise Unavailable("the workspace check's process keeps leaving")
