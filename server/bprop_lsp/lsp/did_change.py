"""``textDocument/didChange``: apply the (incremental) edits, then schedule a debounced analysis."""
from __future__ import annotations

from lsprotocol import types


def did_change(ls, params: types.DidChangeTextDocumentParams) -> None:
    state = ls.store.get(params.text_document.uri)
    if state is None:
        return
    doc = state.doc
    for change in params.content_changes:
        doc.apply_change(change, ls.caps.position_encoding)
    ls.store.touch(state, params.text_document.version)
    ls.projects.changed(state)
    ls.scheduler.schedule(state)
