"""The LSP base protocol (``Content-Length`` framing) read from a byte stream that may be broken.

pygls' reader trusts the header: a wrong ``Content-Length`` desynchronises the stream for good (the rest of a
body is read as headers, swallowing the next message's header) and ``Content-Length: 10**12`` makes it try to
read (and allocate) a terabyte. This reader resynchronises instead:

* a header line ``Content-Length: <digits>`` followed by a line break never occurs inside a JSON text (a JSON
  string cannot hold a raw line break, and the words are no JSON token outside one), so after any error the
  reader skips to the next such line, and a body that contains one was declared too long: it ends there;
* a body declared too long whose bytes stop arriving is taken as it is when it already parses on its own;
* a declared length over ``max_bytes`` is not read: its bytes are skipped like garbage;
* every error is reported (``on_error``) with the id of the request it broke when one can be read, so the
  client can be answered instead of waiting for ever.
"""
from __future__ import annotations

import asyncio
import json
import re
from typing import Awaitable, Callable

HEADER_LINE = re.compile(rb"Content-Length[ \t]*:[ \t]*(\d+)[ \t]*\r?\n", re.IGNORECASE)
HEADER_START = re.compile(rb"Content-Length[ \t]*:", re.IGNORECASE)
HEADERS_END = re.compile(rb"\r?\n\r?\n")
OTHER_HEADER = re.compile(rb"Content-Type[ \t]*:[^\r\n]*", re.IGNORECASE)
# The id of a request, read from the start of a body that cannot be parsed (as clients write it: first key,
# or second after "jsonrpc").
REQUEST_ID = re.compile(rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\\r\n]|\\.){0,200}")')
MAX_HEADERS = 8 * 1024
KEEP_TAIL = 64  # bytes kept while skipping garbage: a header may be split between two reads


class FrameError:
    """One framing problem: what happened and, when it could be read, the id of the request it broke."""

    def __init__(self, message: str, request_id=None):
        self.message = message
        self.request_id = request_id

    def __repr__(self) -> str:
        return f"FrameError({self.message!r}, {self.request_id!r})"


def sniff_request_id(blob: bytes):
    """The id of the request that starts ``blob`` (None for a notification or a response, or when unreadable)."""
    head = bytes(blob[:4096])
    match = REQUEST_ID.match(head)
    if match is None or not re.search(rb'"method"\s*:', head):
        return None
    try:
        return json.loads(match.group(1))
    except ValueError:
        return None


def _describe(n: int) -> str:
    return f"{n} bytes" if n < 10_000 else f"{n / 1e6:.1f} MB"


class MessageReader:
    """Splits a byte stream into message bodies: ``on_body(bytes)`` for each (False when it is no JSON),
    ``on_error(FrameError)`` for what had to be skipped. ``read()`` returns the next chunk of the stream (b"" at
    its end)."""

    def __init__(self, read: Callable[[], Awaitable[bytes]], on_body: Callable[[bytes], bool],
                 on_error: Callable[[FrameError], None], *, max_bytes: int, quiet_seconds: float = 0.5):
        self._read = read
        self.on_body = on_body
        self.on_error = on_error
        self.max_bytes = max_bytes
        self.quiet = quiet_seconds
        self.buf = bytearray()
        self.eof = False
        self._pending: asyncio.Future | None = None
        self.stopped = False

    async def _fill(self, timeout: float | None = None) -> bool:
        """Read one more chunk into the buffer; False at the end of the stream or after ``timeout`` seconds."""
        if self.eof:
            return False
        if self._pending is None:
            self._pending = asyncio.ensure_future(self._read())
        if timeout is not None:
            done, _ = await asyncio.wait({self._pending}, timeout=timeout)
            if not done:
                return False
        chunk = await self._pending
        self._pending = None
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return True

    async def run(self) -> None:
        while not self.stopped:
            length = await self._next_header()
            if length is None:
                return
            if length > self.max_bytes:
                await self._skip_oversized(length)
                continue
            await self._next_body(length)

    # ------------------------------------------------------------------ headers
    async def _next_header(self) -> int | None:
        """Skip to the next ``Content-Length`` header block and consume it; its length (None at the end).

        Every byte is scanned a bounded number of times (a rescan of the whole buffer per header-like line cost
        ~19 s per MB of such junk, with the event loop blocked)."""
        skipped = 0
        searched_to = 0  # no blank line in buf[:searched_to] (while waiting for more of a header block)
        while True:
            match = HEADER_START.search(self.buf)
            if match is None:
                drop = max(0, len(self.buf) - KEEP_TAIL)
                skipped += self._skip(drop)
                if not await self._fill():
                    self._report_skipped(skipped + len(self.buf.strip()))
                    return None
                continue
            skipped += self._skip(match.start())
            # The block ends at the first blank line, searched for once per buffer: a header start more than
            # MAX_HEADERS before it (or before the buffer's end, when there is none) starts no header block, and
            # neither does any header start between it and that point, so all of them are skipped at once (header-
            # like junk without a blank line: one scan, not one per ``Content-Length`` in it).
            end = HEADERS_END.search(self.buf, searched_to)
            if end is None or end.start() > MAX_HEADERS:
                limit = end.start() if end is not None else len(self.buf)
                if limit > MAX_HEADERS:
                    skipped += self._skip(limit - MAX_HEADERS)  # not a header block after all
                    searched_to = 0
                    continue
                searched_to = max(0, len(self.buf) - 3)  # (a blank line may straddle the next chunk)
                if not await self._fill():
                    self._report_skipped(skipped + len(self.buf.strip()))
                    return None
                continue
            searched_to = 0
            end_at = end.end()
            line = self._last_length_line(end_at)
            if line is None:
                again = HEADER_START.search(self.buf, 1, end_at)
                if again is not None:  # garbage glued to the next header ("...Content-Length: 12Content-Length: 80")
                    skipped += self._skip(again.start())
                    continue
                # "Content-Length: abc", a negative or missing number: skip the header, resynchronise on the next.
                bad = bytes(self.buf[:end.start()]).decode("ascii", "replace").strip()
                self._skip(end_at)
                self._report_skipped(skipped)
                skipped = 0
                self.on_error(FrameError(f"invalid header {bad[:80]!r}: skipped to the next message",
                                         sniff_request_id(self.buf)))
                continue
            length = int(line.group(1))  # (a match reads the buffer: take the value before it changes)
            self._report_skipped(skipped)
            del self.buf[:end_at]
            return length

    def _skip(self, n: int) -> int:
        """Drop ``n`` bytes; how many of them were not whitespace or a Content-Type header (worth reporting)."""
        if n <= 0:
            return 0
        dropped = len(OTHER_HEADER.sub(b"", bytes(self.buf[:n])).strip())
        del self.buf[:n]
        return dropped

    def _report_skipped(self, n: int) -> None:
        if n:
            self.on_error(FrameError(f"skipped {_describe(n)} that were not part of a message"))

    async def _skip_oversized(self, length: int) -> None:
        # The body is not read; whatever of it arrives is skipped while looking for the next header. Its first
        # bytes may tell the id of the request to answer.
        if len(self.buf) < 256:
            await self._fill(timeout=self.quiet)
        self.on_error(FrameError(
            f"a message of {_describe(length)} exceeds the {self.max_bytes // (1024 * 1024)} MiB limit: skipped",
            sniff_request_id(self.buf)))

    # ------------------------------------------------------------------ bodies
    async def _next_body(self, length: int) -> None:
        searched = 0
        while len(self.buf) < length:
            # A header inside the declared body: the length was too large and the next message has begun.
            cut = self._header_inside(searched, len(self.buf))
            if cut is not None:
                self._take(cut, f"the Content-Length {length} is larger than the message ({cut} bytes)")
                return
            searched = max(0, len(self.buf) - KEEP_TAIL)
            if not await self._fill(timeout=self.quiet):
                if self.eof:
                    if self.buf.strip():
                        self._take(len(self.buf), f"the stream ended {length - len(self.buf)} bytes into a message")
                    return
                if self._parses(self.buf):
                    # The bytes stopped coming and what came is a whole message: the length was too large.
                    self._take(len(self.buf), f"the Content-Length {length} is larger than the message "
                                              f"({len(self.buf)} bytes)")
                    return
                await self._fill()  # keep waiting for the rest
        cut = self._header_inside(searched, length)
        if cut is not None:
            self._take(cut, f"the Content-Length {length} is larger than the message ({cut} bytes)")
            return
        body = bytes(self.buf[:length])
        del self.buf[:length]
        if self.stopped:
            return
        if not self.on_body(body) and not self._resync_tail(body):
            self.on_error(FrameError("a message that is not valid JSON: skipped", sniff_request_id(body)))

    def _last_length_line(self, end: int):
        """The last ``Content-Length`` line of a header block (garbage glued before a header may hold another)."""
        last = None
        for last in HEADER_LINE.finditer(self.buf, 0, end):
            pass
        return last

    def _resync_tail(self, body: bytes) -> bool:
        """A body that is no JSON may end inside the next message's header (its declared length was a few bytes
        too long, and the header had not fully arrived): give those bytes back, so that the next message is not
        lost, and read what came before them when it is a message."""
        tail = body[-KEEP_TAIL:]
        ahead = bytes(self.buf[:KEEP_TAIL])
        word = b"content-length"
        for i in range(len(tail)):
            if tail[i:i + 1] not in (b"C", b"c"):
                continue
            joined = (tail[i:] + ahead).lower()
            if joined.startswith(word) or word.startswith(joined):  # a header, or as much of one as has arrived
                self.buf[:0] = tail[i:]
                self._take_bytes(body[:len(body) - len(tail) + i], "the Content-Length is larger than the message")
                return True
        return False

    def _header_inside(self, start: int, end: int) -> int | None:
        """Where a complete header line starts in ``buf[start:end]`` (it may run past ``end``), if anywhere."""
        pos = start
        while True:
            found = HEADER_START.search(self.buf, pos, min(len(self.buf), end + KEEP_TAIL))
            if found is None or found.start() >= end:
                return None
            if HEADER_LINE.match(self.buf, found.start()):
                return found.start()
            pos = found.start() + 1

    def _take(self, n: int, why: str) -> None:
        body = bytes(self.buf[:n])
        del self.buf[:n]
        self._take_bytes(body, why)

    def _take_bytes(self, body: bytes, why: str) -> None:
        """A body whose declared length was wrong: handled when it parses, else reported."""
        if self._parses(body):
            self.on_error(FrameError(f"{why}: read the message anyway"))
            self.on_body(body)
        else:
            self.on_error(FrameError(f"{why}; the message is not valid JSON: skipped", sniff_request_id(body)))

    @staticmethod
    def _parses(body: bytes | bytearray) -> bool:
        stripped = bytes(body).strip()
        if not stripped.startswith(b"{") or not stripped.endswith(b"}"):
            return False
        try:
            return isinstance(json.loads(stripped), dict)
        except ValueError:
            return False
