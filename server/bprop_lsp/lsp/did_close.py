"""``textDocument/didClose``: forget the document and its parse tree; clear pushed diagnostics."""
from __future__ import annotations

from lsprotocol import types

from ..engine.parsing import forget
from .diagnostics import publish


def close_document(ls, uri: str) -> None:
    state = ls.store.close(uri)
    if state is None:
        return
    forget(uri)
    if not ls.caps.pull_diagnostics:
        publish(ls, uri, None, [])


def did_close(ls, params: types.DidCloseTextDocumentParams) -> None:
    close_document(ls, params.text_document.uri)
