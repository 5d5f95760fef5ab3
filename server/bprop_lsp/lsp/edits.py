"""Workspace edits in the shape the client supports, and minimal edits between two texts."""
from __future__ import annotations

from lsprotocol import types

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engine.model import Span


def text_edit(item: list) -> types.TextEdit:
    sl, sc, el, ec, new_text = item
    return types.TextEdit(range=types.Range(start=types.Position(line=sl, character=sc),
                                            end=types.Position(line=el, character=ec)), new_text=new_text)


def workspace_edit(ls, uri: str, version, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
    if ls.caps.document_changes:
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=edits)])
    return types.WorkspaceEdit(changes={uri: edits})


def minimal_edits(old: str, new: str) -> list[tuple["Span", str]]:
    """Edits (code-point spans in ``old``) turning ``old`` into ``new``, touching only the changed text.

    The lines are matched by ``engine.text.line_opcodes`` (about linear in the lines: a fix-all changes lines
    all over a file, and difflib's matcher is cubic in them); each changed block is trimmed to the characters
    that differ."""
    if old == new:
        return []
    from ..engine.model import Span
    from ..engine.text import LineIndex, line_opcodes

    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    index = LineIndex(old)
    line_offsets = [0]
    for line in a:
        line_offsets.append(line_offsets[-1] + len(line))
    out: list = []
    for tag, i1, i2, j1, j2 in line_opcodes(a, b):
        if tag == "equal":
            continue
        start, end = line_offsets[i1], line_offsets[i2]
        old_chunk, new_chunk = old[start:end], "".join(b[j1:j2])
        # Trim the characters the chunks share at both ends.
        k = 0
        while k < min(len(old_chunk), len(new_chunk)) and old_chunk[k] == new_chunk[k]:
            k += 1
        m = 0
        while m < min(len(old_chunk), len(new_chunk)) - k and old_chunk[-1 - m] == new_chunk[-1 - m]:
            m += 1
        s0, s1 = start + k, end - m
        out.append((Span(index.position(s0), index.position(s1)), new_chunk[k:len(new_chunk) - m]))
    return out
