"""The collector is held off while a keystroke is analysed and its diagnostics go out, and on again soon after
(gc_hold.py, scheduler.py); a document's first analysis and a hold that has lasted too long are not held."""
from __future__ import annotations

import asyncio
import gc
import io
import json
from pathlib import Path

import pytest
from pygls.io_ import StdoutWriter

from bprop_lsp.checker import DocumentSession
from bprop_lsp.lsp import gc_hold, scheduler, transport
from bprop_lsp.lsp.gc_hold import GcHold
from bprop_lsp.lsp.server import create_server

SEED = (Path(__file__).resolve().parent / "fixtures" / "seed_muladd.py").read_text(encoding="utf-8")
URI = "file:///tmp/bprop-lsp-gc/seed.py"


@pytest.fixture(autouse=True)
def collector_on():
    assert gc.isenabled()
    yield
    gc.enable()


def _send(ls, payload: dict) -> None:
    transport.handle_body(ls, json.dumps({"jsonrpc": "2.0", **payload}).encode())


async def _until(predicate, timeout: float = 20.0) -> None:
    for _ in range(int(timeout / 0.01)):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("timed out")


def test_a_keystroke_runs_and_publishes_with_the_collector_held_off(monkeypatch):
    seen: list[tuple[str, bool]] = []
    analyse, publish = DocumentSession.analyse, scheduler.publish

    def recording_analyse(self, *args, **kwargs):
        seen.append(("analyse", gc.isenabled()))
        return analyse(self, *args, **kwargs)

    def recording_publish(ls, uri, version, diagnostics):
        seen.append((f"publish {version}", gc.isenabled()))
        return publish(ls, uri, version, diagnostics)

    monkeypatch.setattr(DocumentSession, "analyse", recording_analyse)
    monkeypatch.setattr(scheduler, "publish", recording_publish)
    ls = create_server()
    ls.protocol.set_writer(StdoutWriter(io.BytesIO()))

    async def session():
        _send(ls, {"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}})
        _send(ls, {"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": URI, "languageId": "python", "version": 1, "text": SEED}}})
        await _until(lambda: ("publish 1", True) in seen)
        _send(ls, {"method": "textDocument/didChange", "params": {"textDocument": {"uri": URI, "version": 2},
                                                                  "contentChanges": [{"text": SEED + "\n"}]}})
        await _until(lambda: any(label == "publish 2" for label, _ in seen))
        await asyncio.sleep(gc_hold.RESUME_AFTER_S * 4)
        return gc.isenabled()

    on_again = asyncio.run(session())
    # The first analysis with the collector on (its own rule); the keystroke's analysis and publish held off.
    assert seen[0] == ("analyse", True) and ("publish 1", True) in seen, seen
    keystroke = seen[seen.index(("publish 1", True)) + 1:]
    assert keystroke == [("analyse", False), ("publish 2", False)], seen
    assert on_again


def test_holds_nest_and_a_long_hold_is_not_extended(monkeypatch):
    hold = GcHold()
    assert hold.acquire() and not gc.isenabled()
    assert hold.acquire()
    hold.release()
    assert not gc.isenabled()
    hold.release()
    assert gc.isenabled()
    clock = [100.0]
    monkeypatch.setattr(gc_hold.time, "monotonic", lambda: clock[0])
    assert hold.acquire()
    clock[0] += gc_hold.MAX_HOLD_S + 0.1
    assert not hold.acquire()  # held for too long already: this one runs with the collector on when it ends
    hold.release()
    assert gc.isenabled()


def test_the_collection_held_off_runs_when_the_hold_ends():
    hold = GcHold()
    assert hold.acquire()
    kept = [[] for _ in range(3 * gc.get_threshold()[0])]  # tracked allocations: a collection is due
    assert gc.get_count()[0] > gc.get_threshold()[0]
    hold.release()
    # At once, not at some later allocation (the next keystroke's).
    assert gc.get_count()[0] < gc.get_threshold()[0]
    assert len(kept) == 3 * gc.get_threshold()[0]
