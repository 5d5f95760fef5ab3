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


def _replace_all(s: Session, uri: str, text: str) -> None:
    old = s.texts[uri].split("\n")
    end = types.Position(line=len(old) - 1, character=len(old[-1]))
    s.change(uri, [types.TextEdit(range=types.Range(start=types.Position(line=0, character=0), end=end),
                                  new_text=text)])


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
    (diag,) = await s.diagnostics(model, expect=lambda d: len(d) == 1)
    assert diag.code == "BP020" and diag.severity == types.DiagnosticSeverity.Error
    related = [r for r in diag.related_information if r.location.uri == train]
    assert [r.location.range.start.line for r in related] == [5]  # train.py's set_context
    # train.py's mode typed in its open document (not saved): PYNATIVE runs the cell, the finding is info
    _replace_all(s, train, graph.replace("GRAPH_MODE", "PYNATIVE_MODE"))
    (diag,) = await s.diagnostics(model, expect=lambda d: len(d) == 1
                                  and d[0].severity == types.DiagnosticSeverity.Information)
    assert diag.code == "BP020"
    # and back
    _replace_all(s, train, graph)
    (diag,) = await s.diagnostics(model, expect=lambda d: len(d) == 1
                                  and d[0].severity == types.DiagnosticSeverity.Error)
