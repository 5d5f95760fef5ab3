"""Workspace edits in the shape the client supports, and minimal edits between two texts."""
from __future__ import annotations

import difflib

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
    """Edits (code-point spans in ``old``) turning ``old`` into ``new``, touching only the changed text."""
    if old == new:
        return []
    from ..engine.model import Span
    from ..engine.text import LineIndex

    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    # Common prefix/suffix first so the matcher sees only the changed middle.
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    s = 0
    while s < min(len(a), len(b)) - p and a[len(a) - 1 - s] == b[len(b) - 1 - s]:
        s += 1
    index = LineIndex(old)
    line_offsets = [0]
    for line in a:
        line_offsets.append(line_offsets[-1] + len(line))
    out: list = []
    matcher = difflib.SequenceMatcher(None, a[p:len(a) - s], b[p:len(b) - s], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start, end = line_offsets[p + i1], line_offsets[p + i2]
        old_chunk, new_chunk = old[start:end], "".join(b[p + j1:p + j2])
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
