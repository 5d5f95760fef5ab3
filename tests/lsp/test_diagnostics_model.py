"""Pull vs push (decided at initialize), result ids, versions, clearing on close, workspace diagnostics."""
import asyncio

from lsprotocol import types
from pytest_lsp import client_capabilities

from lsp_helpers import SEED, SEED_DEF_LINE, TIMEOUT, Session, file_uri, wait_until

URI = "file:///tmp/bprop-lsp-tests/model.py"


def _pull_caps() -> types.ClientCapabilities:
    caps = client_capabilities("visual-studio-code")
    caps.text_document.diagnostic = types.DiagnosticClientCapabilities(related_document_support=False)
    return caps


def _record_pushes(client) -> list[types.PublishDiagnosticsParams]:
    pushes: list = []
    original = client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params):
        pushes.append(params)
        return original(params)

    client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record
    return pushes


async def test_push_carries_version_and_clears_on_close(client):
    pushes = _record_pushes(client)
    caps = client_capabilities("visual-studio-code")
    await client.initialize_session(types.InitializeParams(capabilities=caps))
    s = Session(client, caps)
    s.open(URI, SEED, version=7)
    await wait_until(lambda: pushes)
    assert pushes[-1].version == 7 and pushes[-1].diagnostics[0].range.start.line == SEED_DEF_LINE
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=URI)))
    await wait_until(lambda: len(pushes[-1].diagnostics) == 0)
    assert pushes[-1].uri == URI


async def test_pull_result_ids_and_no_push(client):
    pushes = _record_pushes(client)
    caps = _pull_caps()
    await client.initialize_session(types.InitializeParams(capabilities=caps))
    s = Session(client, caps)
    s.open(URI, SEED)

    async def pull(previous=None):
        return await asyncio.wait_for(client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=URI), previous_result_id=previous)), TIMEOUT)

    first = await pull()
    assert first.kind == "full" and [d.code for d in first.items] == ["BP001"] and first.result_id
    again = await pull(first.result_id)
    assert again.kind == "unchanged" and again.result_id == first.result_id
    s.change(URI, [types.TextEdit(range=types.Range(start=types.Position(line=5, character=0),
                                                    end=types.Position(line=5, character=0)), new_text="\n")])
    changed = await pull(first.result_id)
    assert changed.kind == "full" and changed.result_id != first.result_id
    await asyncio.sleep(0.2)
    assert pushes == []  # one model per client: a pull client gets no pushes


async def test_workspace_diagnostics_with_progress(client, tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "seed.py").write_text(SEED)
    (tmp_path / "pkg" / "plain.py").write_text("x = 1\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "skip.py").write_text(SEED)
    caps = _pull_caps()
    await client.initialize_session(types.InitializeParams(
        capabilities=caps, workspace_folders=[types.WorkspaceFolder(uri=file_uri(tmp_path), name="ws")]))
    token = "ws-token"
    client.progress_reports[token] = []
    report = await asyncio.wait_for(client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(
        previous_result_ids=[], work_done_token=token)), TIMEOUT)
    by_uri = {item.uri: item for item in report.items}
    seed_uri = file_uri(tmp_path / "pkg" / "seed.py")
    assert list(by_uri) == [seed_uri]
    assert [d.range.start.line for d in by_uri[seed_uri].items] == [SEED_DEF_LINE]
    kinds = [type(p).__name__ for p in client.progress_reports[token]]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"
    # Asked again with nothing changed, the server holds the request (long poll) until something changes.
    waiting = asyncio.ensure_future(client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(
        previous_result_ids=[types.PreviousResultId(uri=seed_uri, value=by_uri[seed_uri].result_id)])))
    await asyncio.sleep(0.5)
    assert not waiting.done()
    Session(client, caps).open(file_uri(tmp_path / "pkg" / "plain.py"), "x = 2\n")
    held = await asyncio.wait_for(waiting, TIMEOUT)
    assert {i.uri: i.kind for i in held.items}[seed_uri] == "unchanged"
    assert {i.uri: list(i.items) for i in held.items if i.kind == "full"} == {file_uri(tmp_path / "pkg" / "plain.py"): []}
