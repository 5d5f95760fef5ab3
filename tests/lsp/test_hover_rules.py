"""Hover shows a rule's own documentation (offline, from the rule class) on any finding's range and on a code in
a ``# noqa: BPxxx`` comment, with the ``bprop-lsp rule BPxxx`` command and the documentation URL."""
import asyncio

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from lsp_helpers import SEED, TIMEOUT, Session, units

from bprop_lsp.rules import RULES_BY_CODE

URI = "file:///tmp/bprop-lsp-tests/hover_rules.py"
OLD_IMPORT = "from mindspore.ops._grad.grad_base import bprop_getters  # 中文 😀\n"


async def _session(client, name) -> Session:
    caps = client_capabilities(name)
    result = await client.initialize_session(types.InitializeParams(capabilities=caps))
    enc = result.capabilities.position_encoding
    return Session(client, caps, str(getattr(enc, "value", enc) or "utf-16"))


async def _hover(client, line: int, character: int):
    return await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(line=line, character=character))),
        TIMEOUT)


def _assert_rule_doc(text: str, code: str) -> None:
    rule = RULES_BY_CODE[code]
    assert rule.summary in text
    assert rule.mindspore_says in text
    if rule.fix_title:
        assert rule.fix_title in text
    assert f"bprop-lsp rule {code}" in text
    assert rule.url() in text


@pytest.mark.parametrize("name", ["visual-studio-code", "neovim"])
async def test_hover_on_a_finding_outside_a_bprop_name(client, name):
    s = await _session(client, name)
    s.open(URI, OLD_IMPORT + SEED)
    diags = await s.diagnostics(URI, expect=lambda d: len(d) == 2)
    (bp045,) = [d for d in diags if d.code == "BP045"]
    hover = await _hover(client, 0, 20)
    assert hover.range == bp045.range
    text = hover.contents.value
    assert hover.contents.kind in s.capabilities.text_document.hover.content_format
    assert bp045.message in text
    _assert_rule_doc(text, "BP045")
    assert "BP001" not in text


async def test_hover_on_a_noqa_code(client):
    s = await _session(client, "visual-studio-code")
    def_line = '    def bprop(self, x: "中文😀", y, out):  # noqa: BP001, BP021'
    text = SEED.replace("    def bprop(self, x, y, out):", def_line)
    s.open(URI, text)
    # (BP021 suppresses nothing there: BP900 says so)
    await s.diagnostics(URI, expect=lambda d: [x.code for x in d] == ["BP900"])
    start = units(def_line[:def_line.index("BP021")], s.encoding)
    hover = await _hover(client, 4, start + 2)
    _assert_rule_doc(hover.contents.value, "BP021")
    assert "BP001" not in hover.contents.value
    assert (hover.range.start.character, hover.range.end.character) == (start, start + 5)
    first = await _hover(client, 4, units(def_line[:def_line.index("BP001") + 1], s.encoding))
    _assert_rule_doc(first.contents.value, "BP001")
    # elsewhere in the comment: nothing
    assert await _hover(client, 4, units(def_line[:def_line.index("noqa") + 1], s.encoding)) is None


async def test_unknown_noqa_code_hovers_as_its_bp900_finding(client):
    s = await _session(client, "neovim")
    text = SEED.replace("out):\n", "out):  # noqa: BP999\n", 1)
    s.open(URI, text)
    await s.diagnostics(URI, expect=bool)
    def_line = text.splitlines()[4]
    hover = await _hover(client, 4, def_line.index("BP999") + 2)
    assert "BP900 bprop-unused-noqa" in hover.contents.value and "unknown: `BP999`" in hover.contents.value


async def test_hover_on_a_bprop_parameter(client):
    s = await _session(client, "visual-studio-code")
    text = SEED.replace("    def bprop(self, x, y, out):", "    def bprop(self, x, y, out, dout):")
    s.open(URI, text)
    await s.diagnostics(URI, expect=lambda d: d == [])
    def_line = text.splitlines()[4]
    hover = await _hover(client, 4, def_line.index("y,"))
    assert hover.contents.value.startswith("`y` ← y: MindSpore passes the forward input y here")
    assert "bprop(self, x, y, out, dout)" in hover.contents.value
    assert (hover.range.start.character, hover.range.end.character) == (def_line.index("y,"), def_line.index("y,") + 1)
    hover = await _hover(client, 4, def_line.index("dout") + 2)
    assert hover.contents.value.startswith("`dout` ← dout")
