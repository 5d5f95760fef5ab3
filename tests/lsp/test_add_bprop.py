"""The "Add a custom bprop to <Cell>" refactoring: offered on the construct of a Cell without a bprop, inserts a
bprop returning zeros_like per input (with the file's own ops alias, or a new ``from mindspore import ops``) that
the server then finds nothing wrong with; a snippet with tab stops for clients that take LSP 3.18 snippet edits."""
import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from lsp_helpers import SEED, Session, edits_for, lines_of

URI = "file:///tmp/bprop-lsp-tests/add_bprop.py"
PLAIN = (
    "class Plain(nn.Cell):\n"
    "    def construct(self, a, b):  # 中文 😀\n"
    "        return a * b\n"
)
# SEED's MulAdd (bprop without dout: BP001) after the Cell without a bprop: it shows the server re-analysed.
BODY = PLAIN + "\n" + SEED.split("\n", 1)[1]
CONSTRUCT_LINE = 2  # with one import line above


async def _session(client, caps) -> Session:
    result = await client.initialize_session(types.InitializeParams(capabilities=caps))
    enc = result.capabilities.position_encoding
    return Session(client, caps, str(getattr(enc, "value", enc) or "utf-16"))


def _line_range(line: int) -> types.Range:
    return types.Range(start=types.Position(line=line, character=6), end=types.Position(line=line, character=6))


async def _add_bprop_actions(s: Session, uri: str, line: int, only=None) -> list[types.CodeAction]:
    actions = await s.code_actions(uri, [], only=only, rng=_line_range(line))
    return [a for a in actions if a.title.startswith("Add a custom bprop")]


@pytest.mark.parametrize("imports, zeros", [
    ("from mindspore import nn\n", "ops.zeros_like"),
    ("import mindspore.nn as nn\nimport mindspore.ops as P\n", "P.zeros_like"),
], ids=["adds-import", "existing-alias"])
async def test_plain_edit_checks_clean(client, imports, zeros):
    text = imports + BODY
    construct = CONSTRUCT_LINE + imports.count("\n") - 1
    s = await _session(client, client_capabilities("visual-studio-code"))
    s.open(URI, text)
    (bp001,) = await s.diagnostics(URI, expect=lambda d: [x.code for x in d] == ["BP001"])
    (action,) = await _add_bprop_actions(s, URI, construct)
    assert action.title == "Add a custom bprop to Plain"
    assert action.kind == types.CodeActionKind.RefactorRewrite
    edits = edits_for(action.edit, URI, versioned=True, version=1)
    assert all(isinstance(e, types.TextEdit) for e in edits)
    s.change(URI, edits)
    new = s.texts[URI]
    bprop = (f"    def bprop(self, a, b, out, dout):\n"
             f"        return {zeros}(a), {zeros}(b)\n")
    assert PLAIN + "\n" + bprop in new
    if zeros == "ops.zeros_like":
        assert new.startswith("from mindspore import ops\nfrom mindspore import nn\n")
    else:
        assert new.startswith(imports)
    added = new.count("\n") - text.count("\n")
    # Only MulAdd's own mistake remains, moved down by the inserted lines: nothing on the new bprop.
    (after,) = await s.diagnostics(URI, expect=lambda d: len(d) == 1 and d[0].range.start.line == bp001.range.start.line + added)
    assert after.code == "BP001"
    # The Cell has a bprop now: the action is gone.
    assert await _add_bprop_actions(s, URI, construct + (1 if zeros == "ops.zeros_like" else 0)) == []


async def test_snippet_for_clients_with_snippet_edits(client):
    caps = client_capabilities("visual-studio-code")
    caps.workspace.workspace_edit.snippet_edit_support = True
    s = await _session(client, caps)
    s.open(URI, "from mindspore import nn\n" + BODY)
    await s.diagnostics(URI, expect=bool)
    (action,) = await _add_bprop_actions(s, URI, CONSTRUCT_LINE)
    imports, snippet = edits_for(action.edit, URI, versioned=True, version=1)
    assert imports.new_text == "from mindspore import ops\n"
    assert isinstance(snippet, types.SnippetTextEdit)
    assert snippet.snippet.value == ("\n    def bprop(self, a, b, out, dout):\n"
                                     "        return ${1:ops.zeros_like(a)}, ${2:ops.zeros_like(b)}\n")
    assert snippet.range.start == snippet.range.end == types.Position(line=CONSTRUCT_LINE + 2, character=0)


async def test_offered_only_where_it_applies(client):
    s = await _session(client, client_capabilities("neovim"))
    text = "from mindspore import nn\n" + BODY
    s.open(URI, text)
    await s.diagnostics(URI, expect=bool)
    lines = lines_of(text)
    muladd_construct = next(i for i, line in enumerate(lines) if "def construct" in line and i > CONSTRUCT_LINE)
    assert await _add_bprop_actions(s, URI, muladd_construct) == []  # MulAdd has a bprop
    assert await _add_bprop_actions(s, URI, 0) == []  # not on construct
    assert await _add_bprop_actions(s, URI, CONSTRUCT_LINE, only=[types.CodeActionKind.QuickFix]) == []
    (action,) = await _add_bprop_actions(s, URI, CONSTRUCT_LINE, only=[types.CodeActionKind.Refactor])
    # Neovim: no documentChanges, plain text edits keyed by uri
    edits = edits_for(action.edit, URI, versioned=False)
    assert [type(e) for e in edits] == [types.TextEdit, types.TextEdit]


async def test_a_cell_with_no_bprop_in_the_file_at_all(client):
    """A file without the word bprop is never analysed by the rules; the action still finds its Cells."""
    s = await _session(client, client_capabilities("neovim"))
    text = "import mindspore.ops as ops\nfrom mindspore import nn\n" + PLAIN
    s.open(URI, text)
    (action,) = await _add_bprop_actions(s, URI, CONSTRUCT_LINE + 1)
    (edit,) = edits_for(action.edit, URI, versioned=False)
    s.change(URI, [edit])
    assert s.texts[URI].endswith(PLAIN + "\n    def bprop(self, a, b, out, dout):\n"
                                 "        return ops.zeros_like(a), ops.zeros_like(b)\n")
    from bprop_lsp.checker import analyze

    assert analyze(s.texts[URI]).findings == []
