"""The workspace scan's process: a workspace file's findings, computed in a child of the server (issue 25, item 9).

In the server's own process a large workspace file's analysis, even paused whenever the analysis worker has work
(``engine/preempt.py``), still stalled keystrokes for 150-720 ms (a 1,500-Cell file): the collector's full
collections over the growing tree and the freeing of the tree at the end hold the GIL, and neither can pause. In a
process of its own (``scan_process.py`` starts it, at a lower priority) none of that shares an interpreter with a
keystroke.

The child runs :func:`analyse_file`, what the server ran in process, and nothing else: no user code is imported or
run (the file is only parsed), ``sys.path`` is the server's (no current folder: the child runs with ``-I`` in the
package's own folder). It reads requests on fd 0 and answers on fd 1 (what else is printed goes to stderr),
each message an 8-byte big-endian length and a pickle; it exits as soon as fd 0 reaches its end (the server closed
it or died, even in the middle of a file: a thread of its own reads fd 0), and after ``IDLE_EXIT_S`` without a
request (saying so first, so the server does not take it for a crash).

This module imports neither pygls nor the engine at the top: the child's start-up is the engine's import.
"""
from __future__ import annotations

import struct
from dataclasses import replace

HEADER = struct.Struct(">Q")
IDLE_EXIT_S = 60.0  # a child with nothing to do exits (its memory goes back); the next file starts another
NICE = 10  # added to the child's nice value: a core shared with the server goes to the server first


def analyse_file(text: str, settings):
    """A workspace file's findings, without fixes (no fix checks: a closed file's fixes are offered, and checked,
    once it is opened): the engine's public ``analyze``, a full parse. The same findings as the server's
    in-process analysis (``workspace_scan._analyse``, which pauses inside for the analysis worker)."""
    from ..checker import analyze

    analysis = analyze(text, settings, verify_fixes=False, with_syntax_errors=False)
    analysis.findings = [replace(f, fix=None) for f in analysis.findings]
    return analysis


def send(stream, message) -> None:
    import pickle

    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(HEADER.pack(len(payload)))
    stream.write(payload)
    stream.flush()


def receive(stream):
    """The next message, or None at the end of the stream (also in the middle of a message)."""
    import pickle

    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    payload = stream.read(size)
    if len(payload) < size:
        return None
    return pickle.loads(payload)


def _trim_heap() -> None:
    """glibc's ``malloc_trim(0)``, looked up in the process's own symbols (never ``ctypes.util.find_library``,
    which can run programs found on PATH: ``did_close.py``); nothing elsewhere."""
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 - glibc only
        libc.malloc_trim(ctypes.c_size_t(0))
    except (OSError, AttributeError):
        pass


def main(idle_exit_s: float = IDLE_EXIT_S) -> None:
    """The child's life (started by ``scan_process.py``)."""
    import gc
    import os
    import queue
    import signal
    import sys
    import threading
    import traceback

    # Answers go to the pipe the server reads; fd 1 and sys.stdout become stderr, so nothing else printed
    # (a warning, a library's print) can corrupt them.
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    requests_in = os.fdopen(0, "rb")
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the server's terminal is the server's
    except (ValueError, OSError):
        pass
    try:
        os.nice(NICE)
    except (AttributeError, OSError):
        pass
    requests: queue.Queue = queue.Queue()

    def read() -> None:
        try:
            while (message := receive(requests_in)) is not None:
                requests.put(message)
        except BaseException:  # noqa: BLE001 - a broken pipe is the end too
            pass
        os._exit(0)  # the server closed the pipe or is gone: now, even in the middle of a file

    threading.Thread(target=read, name="bprop-scan-requests", daemon=True).start()
    from ..checker import warm_up

    warm_up()
    gc.freeze()  # the engine, the rules and the grammar live as long as the child: out of the collector's way
    send(answers, ("ready", os.getpid()))
    while True:
        try:
            message = requests.get(timeout=idle_exit_s)
        except queue.Empty:
            send(answers, ("bye",))
            os._exit(0)
        kind = message[0]
        if kind == "analyse":
            _, text, settings = message
            try:
                reply = ("ok", analyse_file(text, settings).findings)
            except Exception as exc:  # noqa: BLE001 - the server logs it and goes on
                reply = ("error", f"{exc.__class__.__name__}: {exc}", traceback.format_exc())
            del text, message
            send(answers, reply)
            del reply
            # After the answer (the server does not wait for it): the analysis leaves cycles behind (80 MB of a
            # 3,000-Cell file's 100), and glibc keeps freed pages unless asked.
            gc.collect()
            _trim_heap()
        else:
            send(answers, ("error", f"unknown request {kind!r}", ""))
