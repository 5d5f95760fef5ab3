"""Notebook document sync: findings and fixes per cell, in cell coordinates; cells added and removed."""
from lsprotocol import types
from pytest_lsp import client_capabilities

from lsp_helpers import SEED, SEED_DEF_LINE, Session, apply_text_edits, change_events, edits_for, lines_of, wait_until

NB = "file:///tmp/bprop-lsp-tests/demo.ipynb"
CELL = [f"vscode-notebook-cell:/tmp/bprop-lsp-tests/demo.ipynb#cell{i}" for i in range(4)]


def _item(uri, text, language="python", version=1):
    return types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)


async def test_notebook_cells(client):
    caps = client_capabilities("visual-studio-code")
    caps.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities(execution_summary_support=False))
    result = await client.initialize_session(types.InitializeParams(capabilities=caps))
    assert result.capabilities.notebook_document_sync is not None
    s = Session(client, caps)
    cells = [
        types.NotebookCell(kind=types.NotebookCellKind.Markup, document=CELL[0]),
        types.NotebookCell(kind=types.NotebookCellKind.Code, document=CELL[1]),
        types.NotebookCell(kind=types.NotebookCellKind.Code, document=CELL[2]),
    ]
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(uri=NB, notebook_type="jupyter-notebook", version=1, cells=cells),
        cell_text_documents=[_item(CELL[0], "# bprop notes", "markdown"), _item(CELL[1], "import numpy as np\n"),
                             _item(CELL[2], SEED)]))
    (diag,) = await s.diagnostics(CELL[2], expect=bool)
    assert diag.range.start.line == SEED_DEF_LINE  # cell coordinates, not notebook-wide lines
    assert diag.related_information[0].location.uri == CELL[2]
    assert client.diagnostics.get(CELL[0]) is None  # markdown cell not analysed

    (fix,) = [a for a in await s.code_actions(CELL[2], [diag]) if a.is_preferred]
    edits = edits_for(fix.edit, CELL[2], versioned=True, version=1)
    fixed = apply_text_edits(SEED, edits, "utf-16")
    assert lines_of(fixed)[SEED_DEF_LINE] == "    def bprop(self, x, y, out, dout):"
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(uri=NB, version=2),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=CELL[2], version=2),
                changes=change_events(fixed, edits))]))))
    assert await s.diagnostics(CELL[2], expect=lambda d: d == []) == []

    # A new cell with the mistake gets its own diagnostics; removing it clears them.
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(uri=NB, version=3),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
            structure=types.NotebookDocumentCellChangeStructure(
                array=types.NotebookCellArrayChange(start=3, delete_count=0, cells=[
                    types.NotebookCell(kind=types.NotebookCellKind.Code, document=CELL[3])]),
                did_open=[_item(CELL[3], "\n\n" + SEED)])))))
    (new,) = await s.diagnostics(CELL[3], expect=bool)
    assert new.range.start.line == SEED_DEF_LINE + 2
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(uri=NB, version=4),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
            structure=types.NotebookDocumentCellChangeStructure(
                array=types.NotebookCellArrayChange(start=3, delete_count=1),
                did_close=[types.TextDocumentIdentifier(uri=CELL[3])])))))
    await wait_until(lambda: len(client.diagnostics[CELL[3]]) == 0)


async def test_notebook_cells_use_the_notebooks_pyproject(client, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.bprop-lsp]\nignore = ["BP001"]\n')
    nb = (tmp_path / "demo.ipynb").as_uri()
    cell = f"vscode-notebook-cell:{tmp_path / 'demo.ipynb'}#c0"
    caps = client_capabilities("neovim")
    await client.initialize_session(types.InitializeParams(capabilities=caps))
    s = Session(client, caps, "utf-8")
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(uri=nb, notebook_type="jupyter-notebook", version=1, cells=[
            types.NotebookCell(kind=types.NotebookCellKind.Code, document=cell)]),
        cell_text_documents=[_item(cell, SEED)]))
    assert await s.diagnostics(cell, expect=lambda d: True) == []
    (tmp_path / "pyproject.toml").write_text("[tool.bprop-lsp]\n")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=(tmp_path / "pyproject.toml").as_uri(), type=types.FileChangeType.Changed)]))
    (diag,) = await s.diagnostics(cell, expect=bool)
    assert diag.range.start.line == SEED_DEF_LINE
