"""The core flow against pytest-lsp's VS Code and Neovim capability snapshots: diagnostics at the def line,
the quick fix applied by the client, then no diagnostics."""
import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from lsp_helpers import FIXED_DEF, SEED, SEED_DEF_LINE, Session, edits_for, lines_of

CLIENTS = ["visual-studio-code", "neovim"]
URI = "file:///tmp/bprop-lsp-tests/seed.py"


async def start(client, name: str, **init) -> Session:
    caps = client_capabilities(name)
    result = await client.initialize_session(types.InitializeParams(capabilities=caps, **init))
    encoding = result.capabilities.position_encoding or "utf-16"
    return Session(client, caps, encoding=str(getattr(encoding, "value", encoding)))


@pytest.mark.parametrize("name", CLIENTS)
async def test_seed_diagnostic_fix_and_clear(client, name):
    s = await start(client, name)
    s.open(URI, SEED)
    (diag,) = await s.diagnostics(URI, expect=bool)
    assert diag.code == "BP001" and diag.source == "bprop-lsp"
    assert diag.severity == types.DiagnosticSeverity.Error
    assert diag.range.start.line == SEED_DEF_LINE == diag.range.end.line
    line = lines_of(SEED)[SEED_DEF_LINE]
    assert line[diag.range.start.character:diag.range.end.character] == "bprop"
    # a valid URI of the rule's page: the one bundled in the package until a website exists (rules/base.py)
    assert diag.code_description.href.startswith(("https://", "file:///"))
    assert diag.code_description.href.endswith("/BP001.md")
    (related,) = diag.related_information
    assert related.location.uri == URI and related.location.range.start.line == 2  # construct

    actions = await s.code_actions(URI, [diag])
    quick = [a for a in actions if a.kind == types.CodeActionKind.QuickFix and a.is_preferred]
    assert len(quick) == 1 and list(quick[0].diagnostics) == [diag]
    edits = edits_for(quick[0].edit, URI, versioned=s.versioned, version=1)
    s.change(URI, edits)
    assert lines_of(s.texts[URI])[SEED_DEF_LINE] == FIXED_DEF
    assert s.texts[URI].replace(", dout", "", 1) == SEED  # nothing else touched
    assert await s.diagnostics(URI, expect=lambda d: d == []) == []


async def test_faq_seed_whose_body_reads_out(client):
    """The MindSpore FAQ's version (examples/muladd_missing_dout.py) returns `2 * out, out`: once the fix adds
    `dout`, MindSpore runs it, but the gradients ignore the loss, and BP028 says `out` is used where `dout` belongs."""
    s = await start(client, "visual-studio-code")
    text = SEED.replace("return 2 * dout, dout", "return 2 * out, out")
    assert text != SEED
    s.open(URI, text)
    (diag,) = await s.diagnostics(URI, expect=bool)
    assert diag.code == "BP001"
    (quick,) = [a for a in await s.code_actions(URI, [diag]) if a.is_preferred]
    s.change(URI, quick.edit.document_changes[0].edits)
    assert lines_of(s.texts[URI])[SEED_DEF_LINE] == FIXED_DEF
    (after,) = await s.diagnostics(URI, expect=lambda d: [x.code for x in d] == ["BP028"])
    assert after.severity == types.DiagnosticSeverity.Warning and after.range.start.line == SEED_DEF_LINE
    assert "did you mean `dout`?" in after.message
