"""``bprop-lsp check`` with the workspace model: a Cell whose base is in another module of the project is checked
against it (tests/fixtures/workspace, labelled by MindSpore), the finding names the other file in every format,
and the result cache re-checks a subclass when its base changes (and only then)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bprop_lsp.cli import cache as cache_mod
from bprop_lsp.cli import jobs
from bprop_lsp.cli.main import main

FIXTURES = Path(__file__).parent / "fixtures" / "workspace"


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "edited_base", root)
    shutil.rmtree(root / "edits")
    shutil.copytree(FIXTURES / "package_base" / "pkg", root / "other")
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    monkeypatch.chdir(root)
    monkeypatch.setenv(cache_mod.ENV_VAR, str(tmp_path / "cache"))
    return root


@pytest.fixture
def analysed(monkeypatch):
    seen: list[str] = []
    real = jobs.analyze

    def counting(text, settings, **kw):
        seen.append(text)
        return real(text, settings, **kw)

    monkeypatch.setattr(jobs, "analyze", counting)
    return seen


def _json(capsys, *args) -> list:
    capsys.readouterr()
    main(["check", *([] if "-j" in args else ["-j", "1"]), "--output-format", "json", *args])
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name,broken", [("package_base", ["pkg/ste.py"]), ("src_layout", ["src/mylib/cells.py"]),
                                         ("reexport_init", ["pkg/cells.py"]), ("module_cycle", ["pkg/b.py"]),
                                         ("edited_base", []), ("valid_package", []), ("override_construct", [])])
def test_fixtures(name, broken, tmp_path, monkeypatch, capsys):
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    monkeypatch.chdir(root)
    found = _json(capsys, "--no-cache", ".")
    assert sorted(f["filename"] for f in found) == broken
    assert all(f["code"] == "BP001" for f in found)


def test_related_names_the_other_file(tmp_path, monkeypatch, capsys):
    root = tmp_path / "package_base"
    shutil.copytree(FIXTURES / "package_base", root)
    monkeypatch.chdir(root)
    (finding,) = _json(capsys, "--no-cache", ".")
    assert finding["related"] == [{"message": "construct of Scaled takes 2 input(s)", "location": {"row": 5, "column": 9},
                                   "end_location": {"row": 5, "column": 18}, "filename": "pkg/base.py"}]
    main(["check", "--no-cache", "."])
    assert "= note: construct of Scaled takes 2 input(s) (pkg/base.py:5)" in capsys.readouterr().out
    main(["check", "--no-cache", "--output-format", "sarif", "."])
    (result,) = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    (loc,) = result["relatedLocations"]
    assert loc["physicalLocation"]["artifactLocation"]["uri"] == "pkg/base.py"
    assert loc["physicalLocation"]["region"]["startLine"] == 5


def test_cache_rechecks_a_subclass_when_its_base_changes(project, capsys, analysed):
    assert [f["filename"] for f in _json(capsys, ".")] == ["other/ste.py"]
    assert len(analysed) == 2  # pkg/cell.py, other/ste.py
    analysed.clear()
    assert _json(capsys, ".")[0]["filename"] == "other/ste.py"  # (a cached finding, replayed)
    assert analysed == []
    # the base's construct gains an input: its subclass is checked again, and now fails
    (project / "pkg" / "base.py").write_text((FIXTURES / "edited_base" / "edits" / "base.py").read_text())
    found = _json(capsys, ".")
    assert sorted(f["filename"] for f in found) == ["other/ste.py", "pkg/cell.py"]
    assert len(analysed) == 1 and "class TripleCell" in analysed[0]
    analysed.clear()
    _json(capsys, ".")
    assert analysed == []
    # a module looked for and absent appears: the files that looked for it are checked again
    entries = list((project.parent / "cache").rglob("*.json"))
    deps = [d for e in entries if e.name != cache_mod.INDEX_NAME
            for d in json.loads(e.read_text()).get("depends", [])]
    assert any(p.endswith("base.py") and h != "-" for p, h in deps)
    absent = [p for p, h in deps if h == "-"]
    assert absent
    Path(absent[0]).parent.mkdir(parents=True, exist_ok=True)
    Path(absent[0]).write_text("")
    _json(capsys, ".")
    assert analysed  # re-checked


def test_the_workers_of_a_pool_read_the_workspace_too(tmp_path, monkeypatch, capsys):
    root = tmp_path / "pool"
    shutil.copytree(FIXTURES / "package_base", root)
    padding = "# " + "x" * 1000 + "\n"
    for k in range(4):  # (enough files and bytes for the pool: jobs.POOL_MIN_FILES, POOL_MIN_BYTES)
        (root / "pkg" / f"more_{k}.py").write_text(
            padding + f"from .base import ScaleBase\n\n\nclass More{k}(ScaleBase):\n"
                      "    def bprop(self, x, y, out, dout):\n        return dout * y, dout * x\n")
    monkeypatch.chdir(root)
    found = _json(capsys, "--no-cache", "-j", "2", ".")
    assert [(f["filename"], f["code"]) for f in found] == [("pkg/ste.py", "BP001")]


# (the mode set in the entry script: tests/test_workspace.py's ENTRIES, labelled by MindSpore)
@pytest.mark.parametrize("name,expected", [
    ("entry_graph", ("pkg/model.py", "error", "train.py")),
    ("entry_pynative", ("pkg/model.py", "info", "train.py")),
    ("entries_disagree", ("pkg/model.py", "error", "train.py")),
    ("entry_in_tools", ("pkg/layers.py", "error", "tools/train.py")),
])
def test_mode_from_the_entry_script(name, expected, tmp_path, monkeypatch, capsys):
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    monkeypatch.chdir(root)
    labels = json.loads((FIXTURES / "labels.json").read_text())["cases"][name]
    assert any(s["observed"] == "broken" for s in labels.values()) == (expected[1] == "error")
    (finding,) = _json(capsys, "--no-cache", ".")
    assert (finding["filename"], finding["severity"], finding["related"][-1]["filename"]) == expected
    assert finding["code"] == "BP020"


def test_cache_rechecks_a_cell_when_its_entry_scripts_mode_changes(tmp_path, monkeypatch, capsys, analysed):
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "entry_graph", root)
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    monkeypatch.chdir(root)
    monkeypatch.setenv(cache_mod.ENV_VAR, str(tmp_path / "cache"))
    assert [f["severity"] for f in _json(capsys, ".")] == ["error"]
    analysed.clear()
    assert [f["severity"] for f in _json(capsys, ".")] == ["error"]
    assert analysed == []  # replayed
    train = root / "train.py"
    train.write_text(train.read_text().replace("GRAPH_MODE", "PYNATIVE_MODE"))
    assert [f["severity"] for f in _json(capsys, ".")] == ["info"]
    assert any("class ScaleCell" in text for text in analysed)  # model.py checked again


def test_a_run_keeps_none_of_its_modules_programs(tmp_path, monkeypatch, capsys):
    """The run's workspace (every module it parsed: megabytes per 10,000 lines) goes with the run: an in-process
    caller (``--watch``, an editor's task runner, these tests) does not carry it on."""
    import gc

    from bprop_lsp.engine.program import Program

    root = tmp_path / "entry_in_tools"
    shutil.copytree(FIXTURES / "entry_in_tools", root)
    monkeypatch.chdir(root)
    assert _json(capsys, "--no-cache", ".")
    gc.collect()
    assert [o for o in gc.get_objects() if isinstance(o, Program)] == []


def test_cache_sees_an_entry_script_created_or_edited_to_import_the_cell(tmp_path, monkeypatch, capsys, analysed):
    """A module whose mode was searched for in its importers depends on which files of the project import it: a
    cached result is not replayed once a file that does is created, or a file is edited to; a file created that
    does not, or a module that searched nothing, is not checked again for it."""
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "entry_graph", root)
    train = root / "train.py"
    graph = train.read_text()
    train.unlink()
    (root / "pkg" / "plain.py").write_text(
        "from mindspore import nn\n\n\nclass Plain(nn.Cell):\n    def construct(self, x):\n        return x\n\n"
        "    def bprop(self, x, out):\n        return (out,)\n")
    (root / "notes.py").write_text("import os\n")
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    monkeypatch.chdir(root)
    monkeypatch.setenv(cache_mod.ENV_VAR, str(tmp_path / "cache"))

    def severities():
        return sorted((f["filename"], f["code"], f["severity"]) for f in _json(capsys, "."))

    first = severities()
    assert ("pkg/model.py", "BP020", "warning") in first  # no entry script: the mode is unknown
    analysed.clear()
    assert severities() == first and analysed == []  # replayed
    train.write_text(graph)  # an entry script created: it imports the cell and sets GRAPH_MODE
    assert ("pkg/model.py", "BP020", "error") in severities()
    assert not any("class Plain" in text for text in analysed)  # (it searched for no importer)
    # the entry script gone, then an existing file edited to become one
    train.unlink()
    assert ("pkg/model.py", "BP020", "warning") in severities()
    analysed.clear()
    notes = root / "notes.py"
    notes.write_text(graph)
    assert ("pkg/model.py", "BP020", "error") in severities()
    assert [text.count("class ScaleCell") for text in analysed] == [1]  # model.py alone (notes.py: no bprop)
    # a file whose imports spell none of the words searched for: model.py's result holds
    analysed.clear()
    (root / "other.py").write_text("import os\n\nclass Model:\n    pass\n")
    assert ("pkg/model.py", "BP020", "error") in severities()
    assert analysed == []


# Bprops and ops.Custom bprops defined in another module (tests/fixtures/workspace, labelled by MindSpore):
# fixture -> the finding `check .` reports ((file, code) or None), and the file of the def.
LABELS = json.loads((FIXTURES / "labels.json").read_text())
BOUND = {
    "bound_function": (("pkg/cells.py", "BP001"), "pkg/grads.py"),
    "bound_module_attr": (None, "pkg/grads.py"),
    "bound_factory": (("pkg/cells.py", "BP001"), "pkg/grads.py"),
    "bound_staticmethod": (("pkg/cells.py", "BP005"), "pkg/grads.py"),
    "inherited_bprop": (("pkg/cells.py", "BP001"), "pkg/base.py"),
    "inherited_bprop_valid": (None, "pkg/base.py"),
    "custom_bprop": (("pkg/cells.py", "BP040"), "pkg/kernels.py"),
    "custom_valid": (None, "pkg/kernels.py"),
    "edited_grads": (None, "pkg/grads.py"),
}


@pytest.mark.parametrize("name", sorted(BOUND))
def test_bprops_of_another_module_as_mindspore_labels_them(name, tmp_path, monkeypatch, capsys):
    expected, other = BOUND[name]
    label = LABELS["cases"][name]["initial"]
    if expected is None:
        assert label["observed"] == "valid"
    elif expected[1] == "BP005":  # runs in both modes, with different gradients
        assert label["observed"] == "valid" and label["GRAPH"]["grads_printed"] != label["PYNATIVE"]["grads_printed"]
    else:
        assert label["observed"] == "broken"
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    monkeypatch.chdir(root)
    for jobs_ in ("1", "2"):
        found = _json(capsys, "--no-cache", "-j", jobs_, ".")
        # one finding per mistake across the package: in the Cell's file, naming the def's file, with no fix
        assert [(f["filename"], f["code"]) for f in found] == ([expected] if expected else [])
        for f in found:
            assert f["fix"] is None
            assert other in [r.get("filename") for r in f["related"]]


def test_the_cache_rechecks_a_cell_when_the_bprop_it_binds_changes(tmp_path, monkeypatch, capsys, analysed):
    root = tmp_path / "edited_grads"
    shutil.copytree(FIXTURES / "edited_grads", root)
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    monkeypatch.chdir(root)
    monkeypatch.setenv(cache_mod.ENV_VAR, str(tmp_path / "cache"))
    assert _json(capsys, "pkg") == []
    analysed.clear()
    assert _json(capsys, "pkg") == []
    assert analysed == []
    assert LABELS["cases"]["edited_grads"]["after"]["observed"] == "broken"
    (root / "pkg" / "grads.py").write_text((root / "edits" / "grads.py").read_text())
    assert [(f["filename"], f["code"]) for f in _json(capsys, "pkg")] == [("pkg/cells.py", "BP001")]
    assert any("class Scaled" in t for t in analysed)


def test_a_subclass_that_does_not_say_bprop_is_rechecked_when_its_base_gains_one(tmp_path, monkeypatch, capsys):
    root = tmp_path / "inherited"
    shutil.copytree(FIXTURES / "inherited_bprop_valid", root)
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    monkeypatch.chdir(root)
    monkeypatch.setenv(cache_mod.ENV_VAR, str(tmp_path / "cache"))
    assert "bprop" not in (root / "pkg" / "cells.py").read_text()
    assert _json(capsys, "pkg") == []
    base = root / "pkg" / "base.py"
    base.write_text(base.read_text().replace("def bprop(self, x, y, out, dout)", "def bprop(self, x, out, dout)"))
    assert [(f["filename"], f["code"]) for f in _json(capsys, "pkg")] == [("pkg/cells.py", "BP001")]


def test_a_run_after_one_edit_reads_no_other_file_for_its_importers(tmp_path, monkeypatch, capsys):
    """The import words of every file read are kept in the cache's stat index: a run after one edit searches the
    project for the edited module's importers (its mode) without opening the files that did not change."""
    import os
    import time

    from bprop_lsp.engine import workspace as workspace_mod

    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "entry_graph", root)
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    for i in range(30):
        (root / "pkg" / f"util{i}.py").write_text(f"import os\n\nVALUE = {i}\n")
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)  # (files written a moment ago: their stats trusted all the same)
    monkeypatch.chdir(root)
    monkeypatch.setenv(cache_mod.ENV_VAR, str(tmp_path / "cache"))
    assert [f["severity"] for f in _json(capsys, ".")] == ["error"]
    read = []
    real = workspace_mod.import_words

    def counting(raw):
        read.append(raw)
        return real(raw)

    monkeypatch.setattr(workspace_mod, "import_words", counting)
    model = root / "pkg" / "model.py"
    model.write_text(model.read_text() + "# edited\n")
    assert [f["severity"] for f in _json(capsys, ".")] == ["error"]
    assert [raw for raw in read if b"# edited" not in raw] == []  # (model.py itself is read by the run)
