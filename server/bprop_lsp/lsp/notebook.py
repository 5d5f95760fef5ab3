"""LSP 3.17 notebook document sync: every Python code cell is analysed as its own document, so findings,
fixes and hovers are in cell coordinates on the cell's URI (a bprop class lives in one cell)."""
from __future__ import annotations

from lsprotocol import types

from .did_close import close_document
from .did_open import is_python
from .documents import Document

SYNC_OPTIONS = types.NotebookDocumentSyncOptions(
    notebook_selector=[types.NotebookDocumentFilterWithCells(
        notebook="*", cells=[types.NotebookCellLanguage(language="python")])],
    save=False,
)


def _open_cell(ls, notebook_uri: str, cell: types.TextDocumentItem) -> None:
    if not is_python(cell.language_id, cell.uri):
        return
    state = ls.store.open(Document(cell.uri, cell.text, cell.version, cell.language_id, notebook_uri=notebook_uri))
    ls.scheduler.schedule(state)


def did_open(ls, params: types.DidOpenNotebookDocumentParams) -> None:
    nb = params.notebook_document.uri
    ls.store.notebooks[nb] = [c.document for c in params.notebook_document.cells]
    for cell in params.cell_text_documents:
        _open_cell(ls, nb, cell)


def did_change(ls, params: types.DidChangeNotebookDocumentParams) -> None:
    nb = params.notebook_document.uri
    cells = params.change.cells
    if cells is None:
        return
    order = ls.store.notebooks.setdefault(nb, [])
    if cells.structure is not None:
        arr = cells.structure.array
        new = [c.document for c in (arr.cells or [])]
        order[arr.start:arr.start + arr.delete_count] = new
        for closed in cells.structure.did_close or []:
            close_document(ls, closed.uri)
        for opened in cells.structure.did_open or []:
            _open_cell(ls, nb, opened)
    for text in cells.text_content or []:
        state = ls.store.get(text.document.uri)
        if state is None:
            continue
        for change in text.changes:
            state.doc.apply_change(change, ls.caps.position_encoding)
        ls.store.touch(state, text.document.version)
        ls.scheduler.schedule(state)


def did_close(ls, params: types.DidCloseNotebookDocumentParams) -> None:
    for cell in params.cell_text_documents:
        close_document(ls, cell.uri)
    ls.store.notebooks.pop(params.notebook_document.uri, None)
