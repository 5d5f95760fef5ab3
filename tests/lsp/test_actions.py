"""Fix-all (lazy through codeAction/resolve, or eager for clients without resolve), the noqa action, hover."""
import asyncio

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from lsp_helpers import SEED, SEED_DEF_LINE, TIMEOUT, Session, edits_for, lines_of

URI = "file:///tmp/bprop-lsp-tests/actions.py"
TWO = SEED + (
    "class Scale(nn.Cell):\n"
    "    def construct(self, x):\n"
    "        return 3 * x\n"
    "    def bprop(self, x, out):  # keeps this comment\n"
    "        return (3 * dout,)\n"
)


def _without_resolve(caps: types.ClientCapabilities) -> types.ClientCapabilities:
    caps.text_document.code_action.resolve_support = None
    return caps


async def _session(client, caps) -> Session:
    result = await client.initialize_session(types.InitializeParams(capabilities=caps))
    enc = result.capabilities.position_encoding
    return Session(client, caps, str(getattr(enc, "value", enc) or "utf-16"))


@pytest.mark.parametrize("resolve", [True, False], ids=["resolve", "eager"])
async def test_fix_all(client, resolve):
    caps = client_capabilities("visual-studio-code")
    if not resolve:
        caps = _without_resolve(caps)
    s = await _session(client, caps)
    s.open(URI, TWO)
    diags = await s.diagnostics(URI, expect=lambda d: len(d) == 2)
    actions = await s.code_actions(URI, [], only=[f"source.fixAll.bprop-lsp"])
    (action,) = actions
    assert action.kind == "source.fixAll.bprop-lsp"
    if resolve:
        assert action.edit is None  # computed only when picked
        action = await asyncio.wait_for(client.code_action_resolve_async(action), TIMEOUT)
    edits = edits_for(action.edit, URI, versioned=True, version=1)
    # minimal: one insertion per bprop, nothing else rewritten
    assert sorted(e.new_text for e in edits) == [", dout", ", dout"]
    assert all(e.range.start == e.range.end for e in edits)
    s.change(URI, edits)
    lines = lines_of(s.texts[URI])
    assert lines[SEED_DEF_LINE] == "    def bprop(self, x, y, out, dout):"
    assert lines[9] == "    def bprop(self, x, out, dout):  # keeps this comment"
    assert await s.diagnostics(URI, expect=lambda d: d == []) == []
    assert len(diags) == 2


# (another tool's code: an unknown BP code would be a finding of its own, BP900)
@pytest.mark.parametrize("existing", ["", "  # noqa: E501"], ids=["new-comment", "extend-codes"])
async def test_noqa_action(client, existing):
    s = await _session(client, client_capabilities("neovim"))
    text = SEED.replace("out):\n", f"out):{existing}\n", 1)
    s.open(URI, text)
    (diag,) = await s.diagnostics(URI, expect=bool)
    (noqa,) = [a for a in await s.code_actions(URI, [diag]) if a.title == "Disable BP001 for this line"]
    assert noqa.kind == types.CodeActionKind.QuickFix and not noqa.is_preferred
    s.change(URI, edits_for(noqa.edit, URI, versioned=False))
    expected = "    def bprop(self, x, y, out):  # noqa: BP001" if not existing else \
        "    def bprop(self, x, y, out):  # noqa: E501, BP001"
    assert lines_of(s.texts[URI])[SEED_DEF_LINE] == expected
    assert await s.diagnostics(URI, expect=lambda d: d == []) == []


async def test_quick_fix_offered_only_for_current_version(client):
    s = await _session(client, client_capabilities("visual-studio-code"))
    s.open(URI, SEED)
    (diag,) = await s.diagnostics(URI, expect=bool)
    # An unrelated edit makes the diagnostic (and its precomputed edit) stale.
    s.change(URI, [types.TextEdit(range=types.Range(start=types.Position(line=0, character=0),
                                                    end=types.Position(line=0, character=0)), new_text="# hi\n")])
    await s.diagnostics(URI, expect=lambda d: d and d[0].range.start.line == SEED_DEF_LINE + 1)
    assert [a for a in await s.code_actions(URI, [diag]) if a.kind == "quickfix"] == []


@pytest.mark.parametrize("name", ["visual-studio-code", "neovim"])
async def test_hover_on_bprop(client, name):
    s = await _session(client, client_capabilities(name))
    s.open(URI, SEED)
    await s.diagnostics(URI, expect=bool)
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(line=SEED_DEF_LINE, character=10))),
        TIMEOUT)
    text = hover.contents.value
    assert "bprop(self, x, y, out, dout)" in text
    assert "`x` ← forward input `x` of construct" in text
    assert "`out` ← `out`" in text and "(missing) ← `dout`" in text
    # the rule's page: bundled in the package until a website exists (rules/base.py DOCS_BASE)
    assert "BP001" in text and ("https://" in text or "file:///" in text) and "/BP001.md)" in text
    assert hover.range.start == types.Position(line=SEED_DEF_LINE, character=8)
    nothing = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(line=0, character=2))), TIMEOUT)
    assert nothing is None


@pytest.mark.parametrize("context", ["no-source-no-data", "empty"])
async def test_quick_fix_for_clients_that_echo_little(client, context):
    """Vim's ALE sends context diagnostics without source and data; some clients send no context at all."""
    s = await _session(client, client_capabilities("neovim"))
    s.open(URI, SEED)
    (diag,) = await s.diagnostics(URI, expect=bool)
    echoed = [] if context == "empty" else [types.Diagnostic(range=diag.range, message=diag.message, code=diag.code)]
    actions = await s.code_actions(URI, echoed, rng=diag.range)
    (fix,) = [a for a in actions if a.is_preferred]
    s.change(URI, edits_for(fix.edit, URI, versioned=False))
    assert lines_of(s.texts[URI])[SEED_DEF_LINE] == "    def bprop(self, x, y, out, dout):"


async def test_quick_fix_trusts_the_clients_checked_data_and_falls_back_to_the_servers(client):
    """As ruff's server does, a quick fix is built from the data the client sends back when it is of the current
    text and was checked before publishing; unchecked or tampered-with data falls back to the server's copy."""
    s = await _session(client, client_capabilities("visual-studio-code"))
    s.open(URI, SEED)
    (diag,) = await s.diagnostics(URI, expect=bool)

    def fix_of(actions):
        (fix,) = [a for a in actions if a.kind == "quickfix" and a.is_preferred]
        return edits_for(fix.edit, URI, versioned=True, version=1)

    (server_edit,) = fix_of(await s.code_actions(URI, [diag]))
    assert server_edit.new_text == ", dout"
    # The client's own copy, marked checked: used as it is (here its edit text is changed to show which is used).
    data = dict(diag.data, checked=True)
    data["fix"] = dict(data["fix"], edits=[[*data["fix"]["edits"][0][:4], ", dout  "]])
    trusted = types.Diagnostic(range=diag.range, message=diag.message, code=diag.code, source=diag.source, data=data)
    (edit,) = fix_of(await s.code_actions(URI, [trusted]))
    assert edit.new_text == ", dout  "
    # Not marked checked, or malformed: the server's copy.
    for bad in (dict(data, checked=False), dict(data, fix={"title": "x", "edits": "nope"})):
        untrusted = types.Diagnostic(range=diag.range, message=diag.message, code=diag.code, source=diag.source,
                                     data=bad)
        (edit,) = fix_of(await s.code_actions(URI, [untrusted]))
        assert edit.new_text == ", dout"
