"""``textDocument/didChange`` is handed to its handler without pygls' dispatch (server.BpropProtocol._did_change):
what the client sees stays what pygls' dispatch gave, including when the handler fails."""
import sys
from pathlib import Path

import pytest

from lsp_helpers import SEED, SEED_DEF_LINE
from raw_client import RawServer

HERE = Path(__file__).resolve().parent
URI = "file:///tmp/bprop-lsp-dispatch/seed.py"


def _change(version: int, text: str) -> dict:
    return {"textDocument": {"uri": URI, "version": version}, "contentChanges": [{"text": text}]}


@pytest.fixture
def server(tmp_path):
    s = RawServer([sys.executable, str(HERE / "failing_server.py")],
                  env={"BPROP_TEST_ANALYSES": str(tmp_path / "analyses")})
    yield s
    s.close()


def _codes(s: RawServer) -> list:
    return [(d["code"], d["range"]["start"]["line"]) for d in s.pull(URI)["result"]["items"]]


def test_did_change_before_initialize_is_dropped(server):
    server.notify("textDocument/didChange", _change(2, "x = 1\n"))
    server.initialize()
    server.open(URI, SEED)
    assert _codes(server) == [("BP001", SEED_DEF_LINE)]


def test_a_failing_did_change_is_reported_as_pygls_reports_a_failing_notification(server):
    server.initialize()
    server.open(URI, SEED)
    assert _codes(server) == [("BP001", SEED_DEF_LINE)]
    server.notify("textDocument/didChange", _change(2, "x = 1\n"))
    assert _codes(server) == []
    server.notify("textDocument/didChange", _change(3, "RAISE_IN_DID_CHANGE = 1\n"))
    message = server.wait_notification(lambda m: m["method"] == "window/logMessage"
                                       and "planted in didChange" in m["params"]["message"])
    assert message["params"]["type"] == 1  # an error
    assert message["params"]["message"].startswith(
        "bprop-lsp: FeatureNotificationError: JsonRpcInternalError: RuntimeError: planted in didChange"), message
    # The server goes on with the text it had.
    server.notify("textDocument/didChange", _change(4, SEED))
    assert _codes(server) == [("BP001", SEED_DEF_LINE)]
