"""Positions exact in every negotiated encoding, with Chinese identifiers and comments and emoji on the def line
before the edit points, CRLF line ends and tab indentation."""
import asyncio

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from lsp_helpers import TIMEOUT, Session, edits_for, lines_of, units

URI = "file:///tmp/bprop-lsp-tests/编码.py"
DEF = '\tdef bprop(self, 输入: "😀中文", y, out):  # 注释 😀'
TEXT = "\n".join([
    "from mindspore import nn",
    "# 中文注释 😀 注释",
    "class 网络(nn.Cell):",
    "\tdef construct(self, 输入, y):",
    "\t\treturn 输入 + y",
    DEF,
    "\t\treturn dout, dout",
    "",
])


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
async def test_positions_in_negotiated_encoding(client, encoding, newline):
    caps = client_capabilities("neovim")
    caps.general = types.GeneralClientCapabilities(position_encodings=[encoding])
    result = await client.initialize_session(types.InitializeParams(capabilities=caps))
    assert result.capabilities.position_encoding == encoding
    s = Session(client, caps, encoding)
    text = TEXT.replace("\n", newline)
    s.open(URI, text)

    # A first edit after the emoji: the server must apply it in the same units to stay in sync.
    comment_end = units(DEF, encoding)
    s.change(URI, [types.TextEdit(range=types.Range(start=types.Position(line=5, character=comment_end),
                                                    end=types.Position(line=5, character=comment_end)), new_text="!")])
    (diag,) = await s.diagnostics(URI, expect=bool)
    assert (diag.range.start.line, diag.range.start.character, diag.range.end.character) == (5, 5, 10)
    construct = diag.related_information[0].location.range
    assert (construct.start.line, construct.start.character, construct.end.character) == (3, 5, 14)

    actions = await s.code_actions(URI, [diag])
    (noqa,) = [a for a in actions if a.title.startswith("Disable")]
    noqa_text = edits_for(noqa.edit, URI, versioned=False)
    (fix,) = [a for a in actions if a.is_preferred]
    s.change(URI, edits_for(fix.edit, URI, versioned=False))
    assert lines_of(s.texts[URI])[5] == '\tdef bprop(self, 输入: "😀中文", y, out, dout):  # 注释 😀!'
    assert s.texts[URI].count("\r\n") == text.count("\r\n")
    assert await s.diagnostics(URI, expect=lambda d: d == []) == []

    # The noqa edit computed before the fix, applied to the text it was computed for.
    from lsp_helpers import apply_text_edits
    before_fix = TEXT.replace("\n", newline).replace(DEF, DEF + "!")
    assert lines_of(apply_text_edits(before_fix, noqa_text, encoding))[5] == DEF + "!  # noqa: BP001"

    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(line=5, character=7))), TIMEOUT)
    assert "bprop(self, 输入, y, out, dout)" in hover.contents.value
