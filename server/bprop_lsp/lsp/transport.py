"""The stdio transport: pygls' message loop replaced by one that survives broken framing (framing.py).

Stdin is read by a daemon thread one chunk at a time, when the loop asks for it (so a client that floods the
pipe is not buffered without bound, and a blocked read never keeps the process from exiting).
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import queue
import sys
import threading
import time
from typing import TYPE_CHECKING, BinaryIO

from pygls.exceptions import JsonRpcException, JsonRpcParseError
from pygls.io_ import StdoutWriter

from .framing import FrameError, MessageReader

if TYPE_CHECKING:
    from .server import BpropServer

log = logging.getLogger(__name__)
# The largest message read: a document over the analysis limit (sources.MAX_BYTES) still arrives, so that the
# user is told why it is not checked; beyond this the message is skipped unread.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
CHUNK = 1 << 16


class _ChunkReader:
    """``await read()`` -> the next chunk of ``stream`` (b"" at its end), read by a daemon thread on demand."""

    def __init__(self, stream: BinaryIO, loop: asyncio.AbstractEventLoop):
        self.stream = stream
        self.loop = loop
        self.requests: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._work, name="bprop-stdin", daemon=True).start()

    def _work(self) -> None:
        try:
            # The file descriptor, not the buffered object: a daemon thread blocked inside a buffered read holds
            # its lock, and the interpreter aborts at exit when it cannot take that lock.
            fd = self.stream.fileno()

            def read(n: int) -> bytes:
                return os.read(fd, n)
        except (AttributeError, OSError, ValueError):
            read = getattr(self.stream, "read1", self.stream.read)
        while True:
            fut = self.requests.get()
            try:
                chunk = read(CHUNK)
            except (OSError, ValueError) as exc:  # closed or broken stdin: the end of the stream
                log.info("stdin: %s", exc)
                chunk = b""
            self.loop.call_soon_threadsafe(_resolve, fut, chunk)
            if not chunk:
                return

    def read(self) -> asyncio.Future:
        fut = self.loop.create_future()
        self.requests.put(fut)
        return fut


def _resolve(fut: asyncio.Future, chunk: bytes) -> None:
    if not fut.done():
        fut.set_result(chunk)


def serve_stdio(ls: "BpropServer", stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    ls._stop_event = threading.Event()
    ls.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    try:
        asyncio.run(_serve(ls, stdin or sys.stdin.buffer))
    except BrokenPipeError:
        log.error("the connection to the client is lost; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        ls.shutdown()


async def _serve(ls: "BpropServer", stdin: BinaryIO) -> None:
    chunks = _ChunkReader(stdin, asyncio.get_running_loop())
    digest = FrameErrorDigest(ls)
    reader = MessageReader(chunks.read, lambda body: handle_body(ls, body), digest.report,
                           max_bytes=MAX_MESSAGE_BYTES)
    task = asyncio.ensure_future(reader.run())

    def stop_reading() -> None:
        reader.stopped = True  # no further message of a chunk already read is handled
        task.cancel()

    ls.stop_reading = stop_reading
    try:
        await task
    except asyncio.CancelledError:
        pass


def handle_body(ls: "BpropServer", body: bytes) -> bool:
    """Read and handle one message; False when the body is no JSON at all."""
    protocol = ls.protocol
    try:
        message = json.loads(body, object_hook=protocol.structure_message)
    except (ValueError, UnicodeDecodeError) as exc:
        log.info("a message that is not valid JSON: %s", exc)
        return False  # the reader resynchronises or reports it
    except Exception as exc:  # noqa: BLE001 - as pygls' loop: report, keep reading
        log.exception("unable to read a message")
        ls.report_server_error(exc, JsonRpcException)
        return True
    try:
        protocol.handle_message(message)
    except Exception as exc:  # noqa: BLE001
        log.exception("unable to handle a message")
        ls.report_server_error(exc, JsonRpcException)
    return True


def report_frame_error(ls: "BpropServer", error: FrameError) -> None:
    """Tell the client (log message; an error response when the broken message was a request with a readable id)."""
    _log_frame_error(ls, error.message)
    _answer(ls, error)


def _log_frame_error(ls: "BpropServer", message: str) -> None:
    log.warning("broken message: %s", message)
    ls.log_error(f"bprop-lsp: broken message from the client: {message}")


def _answer(ls: "BpropServer", error: FrameError) -> None:
    if error.request_id is not None:
        ls.protocol._send_response(error.request_id, error=JsonRpcParseError(
            f"bprop-lsp could not read this request: {error.message}").to_response_error())


class FrameErrorDigest:
    """Framing errors told to the client a burst at a time: the first ``SHOWN`` of a burst one by one, the rest
    as one log message with their count once the stream has been free of errors for ``QUIET_S`` (880 KB of
    1-byte bogus bodies were 40,000 ``window/logMessage``s). A broken request with a readable id is still
    answered, each one: the client waits for that answer."""

    SHOWN = 10
    QUIET_S = 1.0
    MAX_HELD_S = 5.0

    def __init__(self, ls: "BpropServer"):
        self.ls = ls
        self.in_burst = 0  # errors in the current burst
        self.held = 0  # of which not shown yet
        self.last = ""
        self.held_since = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def report(self, error: FrameError) -> None:
        self.in_burst += 1
        if self.in_burst <= self.SHOWN:
            _log_frame_error(self.ls, error.message)
        else:
            if not self.held:
                self.held_since = time.monotonic()
            self.held += 1
            self.last = error.message
            if time.monotonic() - self.held_since >= self.MAX_HELD_S:
                self._tell_held()  # a burst that does not end is still told, every MAX_HELD_S
        _answer(self.ls, error)
        self._restart_timer()

    def _restart_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        try:
            self._timer = asyncio.get_running_loop().call_later(self.QUIET_S, self.flush)
        except RuntimeError:  # no loop: now
            self.flush()

    def flush(self) -> None:
        """End the burst: one message for the errors held back."""
        self._timer = None
        self._tell_held()
        self.in_burst = 0

    def _tell_held(self) -> None:
        if self.held:
            _log_frame_error(self.ls, f"{self.held} more in the same burst (not shown one by one); the last: "
                                      f"{self.last}")
        self.held = 0
        self.last = ""
