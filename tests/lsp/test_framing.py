"""The base protocol over the server's real stdio, written byte by byte: a wrong or huge ``Content-Length``, garbage
between messages; and the lifecycle (requests before ``initialize`` and after ``shutdown``, ``exit`` codes)."""
import json

import pytest

from lsp_helpers import SEED, SEED_DEF_LINE
from raw_client import RawServer

URI = "file:///tmp/bprop-lsp-framing/seed.py"
HOVER = {"textDocument": {"uri": "file:///nowhere.py"}, "position": {"line": 0, "character": 0}}


def body(payload: dict) -> bytes:
    return json.dumps(payload).encode()


def frame(payload: dict, length: int | None = None) -> bytes:
    data = body(payload)
    return b"Content-Length: %d\r\n\r\n" % (len(data) if length is None else length) + data


def request(msg_id: str, method: str, params) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


@pytest.fixture
def server():
    s = RawServer()
    yield s
    s.close()


def assert_serves(s: RawServer) -> None:
    """The stream is in step again: a document is analysed and its diagnostics pulled."""
    s.open(URI, SEED)
    items = s.pull(URI)["result"]["items"]
    assert [(d["code"], d["range"]["start"]["line"]) for d in items] == [("BP001", SEED_DEF_LINE)], items
    assert s.proc.poll() is None


def test_content_length_too_small_is_reported_and_the_stream_resynchronised(server):
    server.initialize()
    short = request("short", "textDocument/hover", HOVER)
    server.write(frame(short, length=len(body(short)) - 10))
    answer = server.response("short")  # the id is read from the truncated body: the client is not left waiting
    assert answer["error"]["code"] == -32700, answer
    assert any("broken message" in m for m in server.messages()), server.messages()
    assert_serves(server)


def test_content_length_too_large_is_reported_and_the_stream_resynchronised(server):
    server.initialize()
    # The declared length runs into the next message: the first ends where the next header starts.
    server.write(frame(request("long", "textDocument/hover", HOVER), length=400)
                 + frame(request("next", "textDocument/hover", HOVER)))
    assert server.response("long")["result"] is None
    assert server.response("next")["result"] is None
    # Declared too long and nothing follows: taken as it is once the bytes stop coming.
    server.write(frame(request("alone", "textDocument/hover", HOVER), length=5000))
    assert server.response("alone")["result"] is None
    assert sum("larger than the message" in m for m in server.messages()) == 2, server.messages()
    assert_serves(server)


def test_huge_content_length_does_not_kill_the_server(server):
    server.initialize()
    server.write(frame(request("huge", "textDocument/hover", HOVER), length=10**12))
    answer = server.response("huge")
    assert answer["error"]["code"] == -32700 and "limit" in answer["error"]["message"], answer
    server.write(b"Content-Length: 99999999999999999999999\r\n\r\n" + b"x" * 1000)
    server.write(b"Content-Length: abc\r\n\r\n{}")
    assert_serves(server)
    messages = server.messages()
    assert any("exceeds" in m for m in messages) and any("invalid header" in m for m in messages), messages


def test_garbage_between_messages_is_skipped(server):
    server.initialize()
    server.write(b"hello\r\n\r\nnot a header at all\r\n" + frame(request("after", "textDocument/hover", HOVER))
                 + b"\x00\xff garbage Content-Length: 12" + frame(request("again", "textDocument/hover", HOVER)))
    assert server.response("after")["result"] is None
    assert server.response("again")["result"] is None
    assert any("not part of a message" in m for m in server.messages()), server.messages()
    assert_serves(server)


def test_requests_before_initialize_get_server_not_initialized(server):
    answer = server.request("textDocument/hover", HOVER)
    assert answer["error"]["code"] == -32002, answer
    server.notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "python", "version": 1,
                                                            "text": SEED}})  # dropped
    server.initialize()
    assert server.pull(URI)["result"]["items"] == []  # the early didOpen was dropped, as the spec asks
    assert_serves(server)


def test_shutdown_right_after_initialized_then_requests_are_invalid(server):
    caps = {"workspace": {"configuration": True, "didChangeConfiguration": {"dynamicRegistration": True},
                          "didChangeWatchedFiles": {"dynamicRegistration": True}},
            "textDocument": {"diagnostic": {"dynamicRegistration": False}}}
    assert "result" in server.request("initialize", {"processId": None, "rootUri": None, "capabilities": caps})
    # initialized is still waiting on its own requests to the client when shutdown arrives
    server.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
                 + frame(request("down", "shutdown", None)))
    answer = server.response("down")
    assert answer == {"jsonrpc": "2.0", "id": "down", "result": None}, answer
    after = server.request("textDocument/hover", HOVER)
    assert after["error"]["code"] == -32600, after
    server.notify("exit")
    assert server.wait_exit() == 0


def test_exit_without_shutdown_exits_with_1(server):
    server.initialize()
    server.open(URI, SEED)
    server.notify("exit")
    assert server.wait_exit() == 1


# ------------------------------------------------------------------ the reader alone (framing.py), in process
def read_stream(chunks: list[bytes], quiet: float = 0.05, max_bytes: int = 1 << 20):
    import asyncio

    from bprop_lsp.lsp.framing import MessageReader

    bodies, errors = [], []
    feed = list(chunks)

    async def read():
        await asyncio.sleep(0)
        return feed.pop(0) if feed else b""

    def on_body(data: bytes) -> bool:
        try:
            bodies.append(json.loads(data))
            return True
        except ValueError:
            return False

    asyncio.run(MessageReader(read, on_body, errors.append, max_bytes=max_bytes, quiet_seconds=quiet).run())
    return bodies, errors


def test_reader_splits_messages_across_any_chunking():
    stream = b"".join(frame({"n": i, "text": "Content-Length: 5 inside a string"}) for i in range(5))
    for size in (1, 2, 7, 64, len(stream)):
        bodies, errors = read_stream([stream[i:i + size] for i in range(0, len(stream), size)])
        assert [b["n"] for b in bodies] == list(range(5)) and errors == [], (size, errors)


def test_reader_resynchronises_after_every_kind_of_breakage():
    good = [frame({"n": i}) for i in range(6)]
    stream = (good[0] + frame({"n": "short"}, length=5) + good[1]
              + frame({"n": "long"}, length=60) + good[2]
              + frame({"n": "huge"}, length=10**12) + good[3]
              + b"Content-Length: x\r\n\r\n{}" + good[4]
              + frame({"n": "three more"}, length=len(body({"n": "three more"})) + 3) + good[5])
    bodies, errors = read_stream([stream])
    assert [b["n"] for b in bodies if isinstance(b["n"], int)] == list(range(6)), bodies
    assert {"n": "long"} in bodies  # cut at the next header and read anyway
    assert len(errors) >= 4, errors


class _CountingPattern:
    """A compiled pattern that adds up how many bytes its searches were given to scan."""

    def __init__(self, pattern, counter: list):
        self.pattern, self.counter = pattern, counter

    def search(self, buf, pos=0, endpos=None):
        end = len(buf) if endpos is None else min(endpos, len(buf))
        self.counter[0] += max(0, end - pos)
        return self.pattern.search(buf, pos, end)

    def __getattr__(self, name):
        return getattr(self.pattern, name)


@pytest.mark.parametrize("junk", [
    b"Content-Length: 12\r\n",  # header lines that never end in a blank line
    b"Content-Length:",  # header starts glued together
    b"xx Content-Length: 9\r\nContent-Type: a\r\n",
], ids=["length-lines", "header-starts", "mixed"])
def test_header_like_junk_is_scanned_a_bounded_number_of_times(junk, monkeypatch):
    """~1 MB of junk that looks like headers, then a message: each byte is searched a bounded number of times (the
    reader searched the whole buffer again per header-like line: ~19 s per MB with the event loop blocked)."""
    from bprop_lsp.lsp import framing

    counter = [0]
    for name in ("HEADER_START", "HEADERS_END"):
        monkeypatch.setattr(framing, name, _CountingPattern(getattr(framing, name), counter))
    stream = junk * (1_000_000 // len(junk)) + frame({"n": 1})
    bodies, errors = read_stream([stream[i:i + 65536] for i in range(0, len(stream), 65536)], max_bytes=1 << 20)
    assert bodies == [{"n": 1}]
    assert any("skipped" in e.message for e in errors)
    assert counter[0] <= 8 * len(stream), counter[0] / len(stream)


def test_a_burst_of_broken_messages_is_one_log_message(server):
    """Thousands of 1-byte bogus bodies: a few log messages and one with the count, not one each; the server still
    answers afterwards."""
    server.initialize()
    before = len(server.messages())
    server.write(b"Content-Length: 1\r\n\r\nx" * 5000)
    server.write(frame(request("after", "textDocument/hover", HOVER)))
    assert server.response("after")["result"] is None
    summary = server.wait_notification(
        lambda m: m["method"] == "window/logMessage" and "more in the same burst" in m["params"]["message"])
    assert "4990 more" in summary["params"]["message"], summary
    broken = [m for m in server.messages()[before:] if "broken message" in m]
    assert len(broken) == 11, broken
