"""Inlay hints: off by default, turned on by the ``inlayHints`` setting from every source; ``← x`` after each bprop
parameter and ``→ x`` after each returned gradient, at exact positions in every encoding (Chinese identifiers
and emoji before them on the line), only inside the requested range; ``workspace/inlayHint/refresh`` when a
settings change turns them on."""
import asyncio

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from lsp_helpers import TIMEOUT, Session, file_uri, lines_of, offset_of, wait_until

DEF = '\tdef bprop(self, 输入: "😀中文", y, out, dout):  # 注释 😀'
RETURN = '\t\treturn dout * len("😀"), dout  # 梯度 😀'
TEXT = "\n".join([
    "from mindspore import nn",
    "# 中文注释 😀 注释",
    "class 网络(nn.Cell):",
    "\tdef construct(self, 输入, y):",
    "\t\treturn 输入 + y",
    DEF,
    RETURN,
    "",
])
DEF_LINE, RETURN_LINE = 5, 6
# label -> the text the hint follows on its line
EXPECTED = [
    ("← 输入", DEF_LINE, '\tdef bprop(self, 输入'),
    ("← y", DEF_LINE, '\tdef bprop(self, 输入: "😀中文", y'),
    ("← out", DEF_LINE, '\tdef bprop(self, 输入: "😀中文", y, out'),
    ("← dout", DEF_LINE, '\tdef bprop(self, 输入: "😀中文", y, out, dout'),
    ("→ 输入", RETURN_LINE, '\t\treturn dout * len("😀")'),
    ("→ y", RETURN_LINE, '\t\treturn dout * len("😀"), dout'),
]
WHOLE = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=len(lines_of(TEXT)), character=0))


async def _start(client, caps, options=None, folder=None) -> Session:
    params = types.InitializeParams(capabilities=caps, initialization_options=options)
    if folder is not None:
        params.workspace_folders = [types.WorkspaceFolder(uri=file_uri(folder), name="ws")]
    result = await client.initialize_session(params)
    assert result.capabilities.inlay_hint_provider == types.InlayHintOptions(resolve_provider=False)
    enc = result.capabilities.position_encoding
    return Session(client, caps, str(getattr(enc, "value", enc) or "utf-16"))


async def _hints(client, uri, rng=WHOLE) -> list[types.InlayHint]:
    return await asyncio.wait_for(client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=rng)), TIMEOUT) or []


def _count_refreshes(client) -> list:
    refreshes = []

    @client.feature(types.WORKSPACE_INLAY_HINT_REFRESH)
    def on_refresh(params):
        refreshes.append(params)

    return refreshes


async def _hints_once_on(client, uri) -> list[types.InlayHint]:
    """The hints once the settings pulled after ``initialized`` are in force (the server asks for a refresh)."""
    async def poll():
        while not (hints := await _hints(client, uri)):
            await asyncio.sleep(0.05)
        return hints
    return await asyncio.wait_for(poll(), TIMEOUT)


def _check_positions(text: str, hints, encoding: str, expected=EXPECTED) -> None:
    lines = lines_of(text)
    assert [h.label for h in hints] == [label for label, _, _ in expected]
    for hint, (label, line, before) in zip(hints, expected):
        assert hint.position.line == line, label
        # offset_of asserts the position falls on a character boundary of the negotiated encoding
        start_of_line = offset_of(text, types.Position(line=line, character=0), encoding)
        column = offset_of(text, hint.position, encoding) - start_of_line
        assert lines[line][:column] == before, label


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
async def test_hints_at_exact_positions(client, encoding):
    caps = client_capabilities("neovim")
    caps.general = types.GeneralClientCapabilities(position_encodings=[encoding])
    s = await _start(client, caps, options={"inlayHints": {"enable": True}})
    assert s.encoding == encoding
    uri = "file:///tmp/bprop-lsp-tests/提示.py"
    s.open(uri, TEXT)
    hints = await _hints(client, uri)
    _check_positions(TEXT, hints, encoding)
    assert hints[0].kind == types.InlayHintKind.Parameter and hints[0].padding_left
    assert "输入" in hints[4].tooltip


async def test_only_hints_inside_the_requested_range(client):
    s = await _start(client, client_capabilities("visual-studio-code"), options={"inlayHints": True})
    uri = "file:///tmp/bprop-lsp-tests/range.py"
    s.open(uri, TEXT)
    ret = types.Range(start=types.Position(line=RETURN_LINE, character=0),
                      end=types.Position(line=RETURN_LINE + 1, character=0))
    _check_positions(TEXT, await _hints(client, uri, ret), s.encoding, EXPECTED[4:])
    # a range ending inside the def line: the hints up to its end only
    end = len('\tdef bprop(self, 输入: "😀中文", y'.encode("utf-16-le")) // 2
    head = types.Range(start=types.Position(line=DEF_LINE, character=0), end=types.Position(line=DEF_LINE, character=end))
    _check_positions(TEXT, await _hints(client, uri, head), s.encoding, EXPECTED[:2])
    nothing = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=2, character=0))
    assert await _hints(client, uri, nothing) == []


async def test_off_by_default(client):
    s = await _start(client, client_capabilities("neovim"))
    uri = "file:///tmp/bprop-lsp-tests/off.py"
    s.open(uri, TEXT)
    await s.diagnostics(uri, expect=lambda d: True)
    assert await _hints(client, uri) == []


@pytest.mark.parametrize("source", ["workspace-configuration", "pyproject"])
async def test_turned_on_by_configuration_and_pyproject(client, tmp_path, source):
    if source == "pyproject":
        (tmp_path / "pyproject.toml").write_text("[tool.bprop-lsp]\ninlay-hints = true\n")
    else:
        client.set_configuration({"inlayHints": {"enable": True}}, section="bprop-lsp")
    _count_refreshes(client)
    s = await _start(client, client_capabilities("neovim"), folder=tmp_path)
    uri = file_uri(tmp_path / "mod.py")
    s.open(uri, TEXT)
    _check_positions(TEXT, await _hints_once_on(client, uri), s.encoding)
    assert not [m for m in client.log_messages if m.type == types.MessageType.Warning]
    assert client.messages == []


async def test_editor_setting_overrides_pyproject(client, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.bprop-lsp]\ninlay-hints = true\n")
    s = await _start(client, client_capabilities("neovim"), options={"inlayHints": False}, folder=tmp_path)
    uri = file_uri(tmp_path / "mod.py")
    s.open(uri, TEXT)
    assert await _hints(client, uri) == []


async def test_refresh_when_settings_turn_hints_on(client, tmp_path):
    refreshes = _count_refreshes(client)
    s = await _start(client, client_capabilities("neovim"), folder=tmp_path)
    assert s.capabilities.workspace.inlay_hint.refresh_support
    uri = file_uri(tmp_path / "mod.py")
    s.open(uri, TEXT)
    assert await _hints(client, uri) == []
    # a change that leaves the hints off asks for nothing
    client.set_configuration({"mode": "graph"}, section="bprop-lsp")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await s.diagnostics(uri, expect=lambda d: True)
    await asyncio.sleep(0.3)
    assert refreshes == []
    client.set_configuration({"inlayHints": True}, section="bprop-lsp")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await wait_until(lambda: len(refreshes) == 1)
    _check_positions(TEXT, await _hints(client, uri), s.encoding)


async def test_bad_value_warns_and_keeps_hints_off(client):
    s = await _start(client, client_capabilities("neovim"), options={"inlayHints": "yes"})
    uri = "file:///tmp/bprop-lsp-tests/bad.py"
    s.open(uri, TEXT)
    assert await _hints(client, uri) == []
    (shown,) = await wait_until(lambda: client.messages or None)
    assert shown.type == types.MessageType.Warning and "'inlayHints'" in shown.message and "'yes'" in shown.message
