"""A finding's client form is kept from one analysis to the next (diagnostics.Conversions): edits that leave the
finding as it was but change a line its conversion read must still move what the client sees."""
import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from lsp_helpers import Session, lines_of, units

URI = "file:///tmp/bprop-lsp-tests/conversions.py"
DEF = '\tdef bprop(self, 输入: "😀中文", y, out):  # 注释 😀'
TEXT = "\n".join([
    "from mindspore import nn",
    "class 网络(nn.Cell):",
    "\tdef construct(self, 输入, y):",
    "\t\treturn 输入 + y",
    DEF,
    "\t\treturn dout, dout",
    "",
])
DEF_LINE = 4


def _edit(line: int, start: int, end: int, new_text: str) -> types.TextEdit:
    return types.TextEdit(range=types.Range(start=types.Position(line=line, character=start),
                                            end=types.Position(line=line, character=end)), new_text=new_text)


def _client_view(d: types.Diagnostic) -> tuple:
    """All a client sees of a diagnostic but the server's revision number of the text."""
    data = {k: v for k, v in d.data.items() if k != "rev"}
    return (d.range, d.message, d.severity, d.code, d.code_description, d.source, d.related_information, data)


async def _current(s: Session) -> list[types.Diagnostic]:
    version = s.versions[URI]
    return await s.diagnostics(URI, expect=lambda d: bool(d) and d[0].data["v"] == version)


async def _fresh(s: Session, client) -> list[types.Diagnostic]:
    """The diagnostics of the same text and version converted from nothing: closed and opened again."""
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=URI)))
    s.open(URI, s.texts[URI], version=s.versions[URI])
    return await _current(s)


@pytest.mark.parametrize("pull", [False, True], ids=["push", "pull"])
@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
async def test_kept_conversions_follow_the_lines_they_read(client, encoding, pull):
    caps = client_capabilities("neovim")
    caps.general = types.GeneralClientCapabilities(position_encodings=[encoding])
    if pull:
        caps.text_document.diagnostic = types.DiagnosticClientCapabilities(related_document_support=False)
    result = await client.initialize_session(types.InitializeParams(capabilities=caps))
    assert result.capabilities.position_encoding == encoding
    s = Session(client, caps, encoding)
    s.open(URI, TEXT)
    (first,) = await _current(s)

    edits = [
        # The same number of code points, fewer UTF-8 bytes before the fix's insertion point and the line end.
        _edit(DEF_LINE, units(DEF[:DEF.index("中")], encoding), units(DEF[:DEF.index("中") + 1], encoding), "x"),
        # A longer line: the noqa edit goes to its new end.
        _edit(DEF_LINE, units(DEF, encoding) - 2, units(DEF, encoding) - 2, "!!"),
        # A line the finding does not read.
        _edit(0, 0, 0, "# 注\n"),
    ]
    seen = [first]
    for edit in edits:
        s.change(URI, [edit])
        (diag,) = await _current(s)
        seen.append(diag)
        def_line = lines_of(s.texts[URI])[diag.range.start.line]
        assert def_line.startswith("\tdef bprop(")
        end = units(def_line, encoding)
        assert diag.data["noqa"] == [diag.range.start.line, end, diag.range.start.line, end, "  # noqa: BP001"]
        (fix_edit,) = diag.data["fix"]["edits"]
        insert_at = units(def_line[:def_line.index("out)") + 3], encoding)
        assert fix_edit[:4] == [diag.range.start.line, insert_at, diag.range.start.line, insert_at]
        assert _client_view(diag) == _client_view((await _fresh(s, client))[0])
    # The finding itself stayed the same through the first two edits (what is kept was used) and moved a line
    # down with the third (converted again).
    assert [d.range.start.line for d in seen] == [DEF_LINE, DEF_LINE, DEF_LINE, DEF_LINE + 1]
    noqa_at = [d.data["noqa"][1] for d in seen[:3]]
    assert noqa_at[2] == noqa_at[1] + 2 and (noqa_at[1] == noqa_at[0] - 2) == (encoding == "utf-8")
