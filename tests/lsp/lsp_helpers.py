"""Helpers for the end-to-end language-server tests: documents, waiting, and a client-side edit applier
that works in the negotiated position encoding independently of the server's code."""
from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from lsprotocol import types

SERVER_COMMAND = [sys.executable, "-m", "bprop_lsp", "serve"]
TIMEOUT = 20.0

# The seed program (bprop lacks dout), shared by the test suites: tests/fixtures/seed_muladd.py.
SEED = (Path(__file__).resolve().parents[1] / "fixtures" / "seed_muladd.py").read_text(encoding="utf-8")
SEED_DEF_LINE = 4  # 0-based line of the def
FIXED_DEF = "    def bprop(self, x, y, out, dout):"

LINE_BREAK = re.compile(r"\r\n|\r|\n")


def lines_of(text: str) -> list[str]:
    return LINE_BREAK.split(text)


def units(s: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(s.encode("utf-8"))
    if encoding == "utf-16":
        return len(s.encode("utf-16-le")) // 2
    return len(s)


def offset_of(text: str, pos: types.Position, encoding: str) -> int:
    starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]
    if pos.line >= len(starts):
        return len(text)
    line = lines_of(text)[pos.line]
    # walk code points until the unit count is reached (must land on a boundary)
    count = 0
    for i, ch in enumerate(line):
        if count == pos.character:
            return starts[pos.line] + i
        count += units(ch, encoding)
    assert count == pos.character, f"position {pos} is inside a character or past the line end of {line!r}"
    return starts[pos.line] + len(line)


def position_of(text: str, offset: int, encoding: str) -> types.Position:
    starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]
    line = max(i for i, s in enumerate(starts) if s <= offset)
    return types.Position(line=line, character=units(text[starts[line]:offset], encoding))


def apply_text_edits(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    resolved = sorted(((offset_of(text, e.range.start, encoding), offset_of(text, e.range.end, encoding), e.new_text)
                       for e in edits), reverse=True)
    for start, end, new in resolved:
        text = text[:start] + new + text[end:]
    return text


def edits_for(edit: types.WorkspaceEdit, uri: str, *, versioned: bool, version: int | None = None) -> list[types.TextEdit]:
    """The edits for ``uri``, asserting the shape the client asked for (documentChanges vs changes)."""
    if versioned:
        assert edit.changes is None and edit.document_changes, edit
        (doc_edit,) = edit.document_changes
        assert doc_edit.text_document.uri == uri
        if version is not None:
            assert doc_edit.text_document.version == version
        return list(doc_edit.edits)
    assert edit.document_changes is None and edit.changes, edit
    return list(edit.changes[uri])


def change_events(text: str, edits: list[types.TextEdit]) -> list[types.TextDocumentContentChangePartial]:
    """The edits as incremental didChange events (applied back to front so ranges stay valid)."""
    ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)
    return [types.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in ordered]


async def wait_until(predicate, timeout: float = TIMEOUT, interval: float = 0.02):
    async def loop():
        while True:
            value = predicate()
            if value:
                return value
            await asyncio.sleep(interval)
    return await asyncio.wait_for(loop(), timeout)


def file_uri(path: Path) -> str:
    return path.resolve().as_uri()


class Session:
    """One initialised client plus the documents it opened."""

    def __init__(self, client, capabilities: types.ClientCapabilities, encoding: str = "utf-16"):
        self.client = client
        self.capabilities = capabilities
        self.encoding = encoding
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}

    @property
    def pull(self) -> bool:
        return self.capabilities.text_document is not None and self.capabilities.text_document.diagnostic is not None

    @property
    def versioned(self) -> bool:
        ws = self.capabilities.workspace
        return bool(ws and ws.workspace_edit and ws.workspace_edit.document_changes)

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.texts[uri], self.versions[uri] = text, version
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))

    def change(self, uri: str, edits: list[types.TextEdit]) -> None:
        self.versions[uri] += 1
        self.texts[uri] = apply_text_edits(self.texts[uri], edits, self.encoding)
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            content_changes=change_events(self.texts[uri], edits)))

    def replace_all(self, uri: str, text: str) -> None:
        """The document's whole text replaced by ``text`` (one edit, as an editor's "revert" or a paste over all)."""
        old = self.texts[uri]
        end = position_of(old, len(old), self.encoding)
        self.change(uri, [types.TextEdit(range=types.Range(start=types.Position(line=0, character=0), end=end),
                                         new_text=text)])

    async def diagnostics(self, uri: str, expect=lambda d: True) -> list[types.Diagnostic]:
        """The current diagnostics: pulled when the client pulls, else the last push that satisfies ``expect``."""
        if self.pull:
            async def pull():
                while True:
                    report = await self.client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
                        text_document=types.TextDocumentIdentifier(uri=uri)))
                    items = list(report.items)
                    if expect(items):
                        return items
                    await asyncio.sleep(0.05)
            return await asyncio.wait_for(pull(), TIMEOUT)

        def pushed():
            d = self.client.diagnostics.get(uri)
            return (list(d),) if d is not None and expect(list(d)) else None

        return (await wait_until(pushed))[0]

    async def code_actions(self, uri: str, diagnostics: list[types.Diagnostic], only=None, rng=None):
        rng = rng or (diagnostics[0].range if diagnostics else types.Range(
            start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)))
        return await asyncio.wait_for(self.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=rng,
            context=types.CodeActionContext(diagnostics=diagnostics, only=only))), TIMEOUT) or []
