"""Settings mistakes the user must see: a select/ignore entry that names no rule, or an unknown key, from any
source gives one window/showMessage warning naming it and the nearest valid names; the valid entries still apply
(a typo in ``select`` no longer turns every check off); the same problem is not shown again on re-analysis."""
import asyncio

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from lsp_helpers import SEED, Session, file_uri, wait_until

FLAGGED = lambda d: [x.code for x in d] == ["BP001"]  # noqa: E731
CLEAN = lambda d: d == []  # noqa: E731


async def _start(client, tmp_path, options=None) -> tuple[Session, str]:
    caps = client_capabilities("neovim")
    result = await client.initialize_session(types.InitializeParams(
        capabilities=caps, initialization_options=options,
        workspace_folders=[types.WorkspaceFolder(uri=file_uri(tmp_path), name="ws")]))
    enc = result.capabilities.position_encoding
    return Session(client, caps, str(getattr(enc, "value", enc) or "utf-16")), file_uri(tmp_path / "mod.py")


def _warnings(client) -> list[str]:
    assert all(m.type == types.MessageType.Warning for m in client.messages)
    return [m.message for m in client.messages]


@pytest.mark.parametrize("source", ["initializationOptions", "workspace-configuration", "pyproject"])
async def test_select_typo_warns_and_keeps_checking(client, tmp_path, source):
    bad = {"select": ["BP00l"]}
    options = None
    if source == "initializationOptions":
        options = bad
    elif source == "workspace-configuration":
        client.set_configuration(bad, section="bprop-lsp")
    else:
        (tmp_path / "pyproject.toml").write_text('[tool.bprop-lsp]\nselect = ["BP00l"]\n')
    s, uri = await _start(client, tmp_path, options)
    s.open(uri, SEED)
    await s.diagnostics(uri, expect=FLAGGED)  # before: select = () checked nothing at all
    (message,) = await wait_until(lambda: _warnings(client) or None)
    assert "'select'" in message and "'BP00l'" in message and "did you mean BP001" in message
    label = {"initializationOptions": "initializationOptions", "workspace-configuration": "workspace configuration",
             "pyproject": "pyproject.toml"}[source]
    assert label in message


async def test_valid_entries_still_apply(client, tmp_path):
    s, uri = await _start(client, tmp_path, {"ignore": ["BP001", "BP0X1", "missing-params"]})
    s.open(uri, SEED)
    assert await s.diagnostics(uri, expect=CLEAN) == []  # BP001 is still ignored
    (message,) = await wait_until(lambda: _warnings(client) or None)
    assert "'BP0X1'" in message and "'missing-params' (did you mean BP001" in message
    assert "BP001 still applies" in message


async def test_unknown_key_warns_with_the_nearest_key(client, tmp_path):
    s, uri = await _start(client, tmp_path, {"selcet": ["BP002"], "inlayHint": True})
    s.open(uri, SEED)
    await s.diagnostics(uri, expect=FLAGGED)
    messages = await wait_until(lambda: len(_warnings(client)) == 2 and _warnings(client))
    assert any("unknown setting 'selcet'" in m and "did you mean 'select'" in m for m in messages)
    assert any("unknown setting 'inlayHint'" in m and "did you mean 'inlayHints'" in m for m in messages)
    # still logged as before (window/logMessage)
    assert any("selcet" in m.message for m in client.log_messages if m.type == types.MessageType.Warning)


async def test_shown_once_per_distinct_problem(client, tmp_path):
    client.set_configuration({"select": ["BP00l"]}, section="bprop-lsp")
    s, uri = await _start(client, tmp_path)
    s.open(uri, SEED)
    await s.diagnostics(uri, expect=FLAGGED)
    await wait_until(lambda: _warnings(client) or None)
    # Re-analyses (edits, a settings change re-sending the same mistake, another file) show nothing new.
    for i in range(3):
        s.change(uri, [types.TextEdit(range=types.Range(start=types.Position(line=0, character=0),
                                                        end=types.Position(line=0, character=0)), new_text="#\n")])
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    other = file_uri(tmp_path / "other.py")
    s.open(other, SEED)
    await s.diagnostics(other, expect=FLAGGED)
    await s.diagnostics(uri, expect=lambda d: FLAGGED(d) and d[0].range.start.line == 7)
    await asyncio.sleep(0.3)
    assert len(_warnings(client)) == 1
    # A different mistake is a new problem: shown.
    client.set_configuration({"select": ["BP00l"], "ignore": ["BP8"]}, section="bprop-lsp")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    messages = await wait_until(lambda: len(_warnings(client)) == 2 and _warnings(client))
    assert "'BP8'" in messages[1] and "'ignore'" in messages[1]
