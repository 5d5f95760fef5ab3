"""The workspace model in the server (lsp/projects.py), end to end over real stdio: a Cell whose base is in
another module is checked against it; editing the base's ``construct`` in one open document updates the
diagnostics of the subclass's open document, and only documents that depend on the changed file are analysed
again (tests/fixtures/workspace/edited_base, labelled by MindSpore: valid, then BP001 once the base's construct
gains an input)."""
import asyncio
import shutil
from pathlib import Path

from lsprotocol import types
from pytest_lsp import client_capabilities

from lsp_helpers import Session, file_uri, wait_until

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "workspace" / "edited_base"
UNRELATED = ("from mindspore import nn\n\n\nclass Alone(nn.Cell):\n    def construct(self, x):\n        return x\n\n"
             "    def bprop(self, x, out, dout):\n        return (dout,)\n")


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(FIXTURE, root)
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (root / "pkg" / "alone.py").write_text(UNRELATED)
    return root


async def test_editing_the_base_updates_the_subclass(client, tmp_path):
    root = _project(tmp_path)
    caps = client_capabilities("neovim")  # (push diagnostics)
    await client.initialize_session(types.InitializeParams(
        capabilities=caps, workspace_folders=[types.WorkspaceFolder(uri=file_uri(root), name="proj")]))
    s = Session(client, caps)
    base, cell, alone = (file_uri(root / "pkg" / n) for n in ("base.py", "cell.py", "alone.py"))
    s.open(base, (root / "pkg" / "base.py").read_text())
    s.open(cell, (root / "pkg" / "cell.py").read_text())
    s.open(alone, UNRELATED)
    assert await s.diagnostics(cell) == []
    assert await s.diagnostics(alone) == []
    await asyncio.sleep(0.3)
    alone_before = client.diagnostics.get(alone)
    # the base's construct gains an input, typed in its open document (not saved)
    s.replace_all(base, (root / "edits" / "base.py").read_text())
    (diag,) = await s.diagnostics(cell, expect=lambda d: len(d) == 1)
    assert diag.code == "BP001"
    assert diag.message.startswith("bprop of TripleCell must take (self, x, y, out, dout)")
    (related,) = diag.related_information
    assert related.location.uri == base  # the other file
    assert related.location.range.start.line == 4
    await asyncio.sleep(0.3)
    assert client.diagnostics.get(alone) is alone_before  # depends on nothing that changed: not published again
    # and back
    s.replace_all(base, (root / "pkg" / "base.py").read_text())
    assert await s.diagnostics(cell, expect=lambda d: d == []) == []


async def test_a_base_changed_on_disk(client, tmp_path):
    root = _project(tmp_path)
    caps = client_capabilities("neovim")
    await client.initialize_session(types.InitializeParams(
        capabilities=caps, workspace_folders=[types.WorkspaceFolder(uri=file_uri(root), name="proj")]))
    s = Session(client, caps)
    cell = file_uri(root / "pkg" / "cell.py")
    s.open(cell, (root / "pkg" / "cell.py").read_text())
    assert await s.diagnostics(cell) == []
    await asyncio.sleep(0.2)
    (root / "pkg" / "base.py").write_text((root / "edits" / "base.py").read_text())
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[types.FileEvent(
        uri=file_uri(root / "pkg" / "base.py"), type=types.FileChangeType.Changed)]))
    (diag,) = await s.diagnostics(cell, expect=lambda d: len(d) == 1)
    assert diag.code == "BP001"


async def test_pull_clients_are_asked_to_refresh(client, tmp_path):
    root = _project(tmp_path)
    caps = client_capabilities("visual-studio-code")
    caps.text_document.diagnostic = types.DiagnosticClientCapabilities()  # pull diagnostics, with refresh
    caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    await client.initialize_session(types.InitializeParams(
        capabilities=caps, workspace_folders=[types.WorkspaceFolder(uri=file_uri(root), name="proj")]))
    s = Session(client, caps)
    base, cell = (file_uri(root / "pkg" / n) for n in ("base.py", "cell.py"))
    s.open(base, (root / "pkg" / "base.py").read_text())
    s.open(cell, (root / "pkg" / "cell.py").read_text())
    assert await s.diagnostics(cell) == []
    await asyncio.sleep(0.2)
    before = client.diagnostic_refresh_count
    s.replace_all(base, (root / "edits" / "base.py").read_text())
    await wait_until(lambda: client.diagnostic_refresh_count > before)
    (diag,) = await s.diagnostics(cell, expect=lambda d: len(d) == 1)
    assert diag.code == "BP001"


GRADS_FIXTURE = FIXTURE.parent / "edited_grads"


async def test_editing_a_bprop_of_another_module_updates_the_cell_that_binds_it(client, tmp_path):
    # tests/fixtures/workspace/edited_grads (labelled by MindSpore: valid, then BP001 once grads.py's bprop loses y)
    root = tmp_path / "grads_proj"
    shutil.copytree(GRADS_FIXTURE, root)
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    caps = client_capabilities("neovim")
    await client.initialize_session(types.InitializeParams(
        capabilities=caps, workspace_folders=[types.WorkspaceFolder(uri=file_uri(root), name="proj")]))
    s = Session(client, caps)
    grads, cells = (file_uri(root / "pkg" / n) for n in ("grads.py", "cells.py"))
    s.open(grads, (root / "pkg" / "grads.py").read_text())
    s.open(cells, (root / "pkg" / "cells.py").read_text())
    assert await s.diagnostics(cells) == []
    assert await s.diagnostics(grads) == []
    await asyncio.sleep(0.2)
    s.replace_all(grads, (root / "edits" / "grads.py").read_text())  # typed, not saved
    (diag,) = await s.diagnostics(cells, expect=lambda d: len(d) == 1)
    assert diag.code == "BP001"
    assert diag.message == "bprop of Scaled must take (self, x, y, out, dout): it lacks y"
    assert diag.range.start.line == 9  # ``bprop = scale_bprop``, in cells.py
    assert any(r.location.uri == grads and r.location.range.start.line == 0 for r in diag.related_information)
    assert await s.diagnostics(grads) == []  # the def's own file: no Cell there, nothing to report
    s.replace_all(grads, (root / "pkg" / "grads.py").read_text())
    assert await s.diagnostics(cells, expect=lambda d: d == []) == []
