"""The mode set in the entry script, in the server (lsp/projects.py), end to end over real stdio: a Cell whose own
file sets no mode is judged by the mode of the module that imports it and takes the gradient (train.py); editing
train.py's ``set_context`` in its open document updates the diagnostics of model.py's open document
(tests/fixtures/workspace/entry_graph and entry_pynative, labelled by MindSpore: GRAPH_MODE fails, PYNATIVE_MODE
runs)."""
import shutil
from pathlib import Path

from lsprotocol import types
from pytest_lsp import client_capabilities

from lsp_helpers import Session, file_uri

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "workspace" / "entry_graph"


async def test_editing_the_entry_scripts_mode_updates_the_model(client, tmp_path):
    root = tmp_path / "proj"
    shutil.copytree(FIXTURE, root)
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    caps = client_capabilities("neovim")  # (push diagnostics)
    await client.initialize_session(types.InitializeParams(
        capabilities=caps, workspace_folders=[types.WorkspaceFolder(uri=file_uri(root), name="proj")]))
    s = Session(client, caps)
    model, train = file_uri(root / "pkg" / "model.py"), file_uri(root / "train.py")
    graph = (root / "train.py").read_text()
    s.open(train, graph)
    s.open(model, (root / "pkg" / "model.py").read_text())
    # (Once the workspace is indexed, in the background: until then the mode only train.py tells is unknown.)
    (diag,) = await s.diagnostics(model, expect=lambda d: len(d) == 1
                                  and d[0].severity == types.DiagnosticSeverity.Error)
    assert diag.code == "BP020"
    related = [r for r in diag.related_information if r.location.uri == train]
    assert [r.location.range.start.line for r in related] == [5]  # train.py's set_context
    # train.py's mode typed in its open document (not saved): PYNATIVE runs the cell, the finding is info
    s.replace_all(train, graph.replace("GRAPH_MODE", "PYNATIVE_MODE"))
    (diag,) = await s.diagnostics(model, expect=lambda d: len(d) == 1
                                  and d[0].severity == types.DiagnosticSeverity.Information)
    assert diag.code == "BP020"
    # and back
    s.replace_all(train, graph)
    (diag,) = await s.diagnostics(model, expect=lambda d: len(d) == 1
                                  and d[0].severity == types.DiagnosticSeverity.Error)


async def test_the_workspace_is_indexed_in_the_background_with_progress(client, tmp_path):
    """The index the entry script's mode is searched with (every file's import words) is built off the analysis
    worker, with ``$/progress``; the open model's first diagnostics do not wait for it, and once it is done the
    model is analysed again: its finding is an error (train.py sets GRAPH_MODE)."""
    root = tmp_path / "proj"
    shutil.copytree(FIXTURE, root)
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    filler = root / "pkg" / "filler"
    filler.mkdir()
    (filler / "__init__.py").write_text("")
    for i in range(400):  # (files that import other things: read, never parsed)
        (filler / f"m{i:03d}.py").write_text(f"import os\nfrom math import sqrt\n\nVALUE_{i} = sqrt({i})\n")
    caps = client_capabilities("neovim")
    assert caps.window is not None and caps.window.work_done_progress
    await client.initialize_session(types.InitializeParams(
        capabilities=caps, workspace_folders=[types.WorkspaceFolder(uri=file_uri(root), name="proj")]))
    s = Session(client, caps)
    model = file_uri(root / "pkg" / "model.py")
    s.open(model, (root / "pkg" / "model.py").read_text())
    (diag,) = await s.diagnostics(model, expect=lambda d: len(d) == 1
                                  and d[0].severity == types.DiagnosticSeverity.Error)
    assert diag.code == "BP020"
    assert any(r.location.uri == file_uri(root / "train.py") for r in diag.related_information)
    indexing = [reports for reports in client.progress_reports.values()
                if reports and isinstance(reports[0], types.WorkDoneProgressBegin)
                and reports[0].title == "bprop-lsp: indexing the workspace"]
    assert len(indexing) == 1
    assert isinstance(indexing[0][-1], types.WorkDoneProgressEnd)
    assert indexing[0][-1].message == "404 files indexed"  # (train.py, pkg/__init__.py, model.py, filler/__init__.py, 400)
