"""``textDocument/didOpen``: store the text and analyse it (Python documents only)."""
from __future__ import annotations

from lsprotocol import types

from .documents import Document


def is_python(language_id: str | None, uri: str) -> bool:
    return language_id == "python" or uri.endswith((".py", ".pyi"))


def did_open(ls, params: types.DidOpenTextDocumentParams) -> None:
    item = params.text_document
    if not is_python(item.language_id, item.uri):
        return
    state = ls.store.open(Document(item.uri, item.text, item.version, item.language_id))
    ls.projects.opened(state)
    ls.scheduler.schedule(state)
