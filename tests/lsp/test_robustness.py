"""Malformed requests get JSON-RPC errors; the server keeps serving; cancellation; unparsable documents."""
import asyncio
import json
from concurrent.futures import Future

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import client_capabilities

from lsp_helpers import SEED, SEED_DEF_LINE, TIMEOUT, Session

URI = "file:///tmp/bprop-lsp-tests/robust.py"


async def _alive(s: Session) -> None:
    s.open(URI, SEED)
    (diag,) = await s.diagnostics(URI, expect=bool)
    assert diag.range.start.line == SEED_DEF_LINE


def _raw(proto, payload: dict | bytes) -> None:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    proto.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)


def _raw_request(proto, msg_id: str, method: str, params) -> "asyncio.Future":
    fut: Future = Future()
    proto._request_futures[msg_id] = fut
    _raw(proto, {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    return asyncio.wait_for(asyncio.wrap_future(fut), TIMEOUT)


async def test_malformed_requests_get_errors_and_server_survives(client):
    caps = client_capabilities("visual-studio-code")
    await client.initialize_session(types.InitializeParams(capabilities=caps))
    s = Session(client, caps)
    proto = client.protocol
    # params of the wrong shape
    with pytest.raises(JsonRpcException) as bad_params:
        await _raw_request(proto, "bad-1", types.TEXT_DOCUMENT_HOVER, {"textDocument": 42})
    assert bad_params.value.code == -32602
    # unknown method
    with pytest.raises(JsonRpcException) as unknown:
        await _raw_request(proto, "bad-2", "bprop/doesNotExist", {})
    assert unknown.value.code == -32601
    # a notification with garbage params and a body that is not JSON at all
    _raw(proto, {"jsonrpc": "2.0", "method": types.TEXT_DOCUMENT_DID_CHANGE, "params": {"textDocument": None}})
    _raw(proto, b"{not json")
    # requests about documents the server does not know
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri="file:///nowhere.py"),
        position=types.Position(line=99, character=99))), TIMEOUT)
    assert hover is None
    await _alive(s)


async def test_cancelled_request_does_not_stop_the_server(client):
    caps = client_capabilities("neovim")
    await client.initialize_session(types.InitializeParams(capabilities=caps))
    s = Session(client, caps, "utf-8")
    s.open(URI, SEED)
    proto = client.protocol
    proto.send_request(types.TEXT_DOCUMENT_DIAGNOSTIC, types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=URI)), msg_id="to-cancel")
    # pygls' client sends no $/cancelRequest for a cancelled future (and fails on the late answer): forget the
    # request as a client that cancels does, and send the notification ourselves.
    proto._request_futures.pop("to-cancel").cancel()
    proto._result_types.pop("to-cancel", None)
    proto.notify(types.CANCEL_REQUEST, types.CancelParams(id="to-cancel"))
    await _alive(s)


async def test_document_that_does_not_parse_still_gets_findings(client):
    caps = client_capabilities("neovim")
    await client.initialize_session(types.InitializeParams(capabilities=caps))
    s = Session(client, caps, "utf-8")
    broken = SEED + "def oops(:\n    pass\n"
    s.open(URI, broken)
    diags = await s.diagnostics(URI, expect=bool)
    assert [d.range.start.line for d in diags if d.code == "BP001"] == [SEED_DEF_LINE]
