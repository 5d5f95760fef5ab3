"""The workspace model (engine/workspace.py): a Cell whose base lives in another module of the project is checked
against that base, as MindSpore binds it. The fixtures in tests/fixtures/workspace are labelled by running
MindSpore (scripts/run_workspace_probes.py -> labels.json)."""
import json
import os
import shutil
from pathlib import Path

import pytest

from bprop_lsp.checker import DocumentSession, analyze
from bprop_lsp.engine import Workspace

FIXTURES = Path(__file__).parent / "fixtures" / "workspace"
LABELS = json.loads((FIXTURES / "labels.json").read_text()) if (FIXTURES / "labels.json").exists() else None

# fixture -> (the file with the Cell, whether bprop-lsp reports BP001 there)
CELLS = {
    "package_base": ("pkg/ste.py", True),
    "src_layout": ("src/mylib/cells.py", True),
    "reexport_init": ("pkg/cells.py", True),
    "module_cycle": ("pkg/b.py", True),
    "edited_base": ("pkg/cell.py", False),
    "valid_package": ("pkg/ste.py", False),
    "override_construct": ("pkg/ste.py", False),
}

# Bprops and ops.Custom bprops defined in another module (issue 23): fixture -> (the file of the Cell, the code
# reported there or None, the file of the def). Labelled by MindSpore: "broken" for a code that fails in both
# modes, "valid" otherwise (BP005: both modes run, with different gradients).
BOUND = {
    "bound_function": ("pkg/cells.py", "BP001", "pkg/grads.py"),
    "bound_module_attr": ("pkg/cells.py", None, "pkg/grads.py"),
    "bound_factory": ("pkg/cells.py", "BP001", "pkg/grads.py"),
    "bound_staticmethod": ("pkg/cells.py", "BP005", "pkg/grads.py"),
    "inherited_bprop": ("pkg/cells.py", "BP001", "pkg/base.py"),
    "inherited_bprop_valid": ("pkg/cells.py", None, "pkg/base.py"),
    "custom_bprop": ("pkg/cells.py", "BP040", "pkg/kernels.py"),
    "custom_valid": ("pkg/cells.py", None, "pkg/kernels.py"),
    "edited_grads": ("pkg/cells.py", None, "pkg/grads.py"),
}


def _check(root: Path, rel: str, ws: Workspace | None = None):
    path = root / rel
    ws = ws if ws is not None else Workspace([root])
    return analyze(path.read_text(), workspace=ws, path=str(path)).findings


@pytest.mark.parametrize("name", sorted(CELLS))
def test_fixture_findings(name):
    rel, broken = CELLS[name]
    root = FIXTURES / name
    findings = _check(root, rel)
    assert [f.code for f in findings] == (["BP001"] if broken else [])
    # one file alone (no workspace): as before, nothing is known of the base
    assert analyze((root / rel).read_text()).findings == []


@pytest.mark.parametrize("name", sorted(CELLS))
def test_fixture_agrees_with_mindspore(name):
    if LABELS is None:
        pytest.skip("no labels.json (scripts/run_workspace_probes.py)")
    label = LABELS["cases"][name]["initial"]
    assert label["observed"] == ("broken" if CELLS[name][1] else "valid")


def test_cross_file_finding_names_the_other_file():
    root = FIXTURES / "package_base"
    (finding,) = _check(root, "pkg/ste.py")
    assert finding.message == "bprop of Scaled must take (self, x, y, out, dout): it lacks y"
    assert finding.span.start.line == 4  # the bprop's parameters, in ste.py
    (related,) = finding.related
    assert related.path == str(root / "pkg" / "base.py")
    assert related.span.start.line == 4  # ``construct`` in base.py
    assert finding.fix is None or all(e.span.start.line >= 3 for e in finding.fix.edits)


def test_edited_base(tmp_path):
    root = tmp_path / "edited_base"
    shutil.copytree(FIXTURES / "edited_base", root)
    ws = Workspace([root])
    assert _check(root, "pkg/cell.py", ws) == []
    if LABELS is not None:
        assert LABELS["cases"]["edited_base"]["initial"]["observed"] == "valid"
        assert LABELS["cases"]["edited_base"]["after"]["observed"] == "broken"
    # the base's construct gains an input: in an editor (the overlay) ...
    edited = (root / "edits" / "base.py").read_text()
    ws.set_overlay(str(root / "pkg" / "base.py"), edited)
    assert [f.code for f in _check(root, "pkg/cell.py", ws)] == ["BP001"]
    ws.drop_overlay(str(root / "pkg" / "base.py"))
    assert _check(root, "pkg/cell.py", ws) == []
    # ... and on disk (a watched file)
    (root / "pkg" / "base.py").write_text(edited)
    ws.invalidate(str(root / "pkg" / "base.py"))
    assert [f.code for f in _check(root, "pkg/cell.py", ws)] == ["BP001"]


def test_session_reruns_a_cell_only_when_its_base_changes(tmp_path):
    root = tmp_path / "edited_base"
    shutil.copytree(FIXTURES / "edited_base", root)
    ws = Workspace([root])
    cell = root / "pkg" / "cell.py"
    base = str(root / "pkg" / "base.py")
    text = cell.read_text()
    session = DocumentSession("cell.py")
    memo = session._doc.cell_memo
    assert session.analyse(text, workspace=ws, path=str(cell)).findings == []
    assert memo.ran == 1
    assert session.analyse(text, workspace=ws, path=str(cell)).findings == []
    assert (memo.ran, memo.reused) == (0, 1)  # nothing read changed: read back
    ws.set_overlay(base, (root / "edits" / "base.py").read_text())
    assert [f.code for f in session.analyse(text, workspace=ws, path=str(cell)).findings] == ["BP001"]
    assert memo.ran == 1  # the base changed: run again
    # an edit of the subclass's own file, the base as it is: the finding stays (carried caches checked)
    edited = text.replace("return (dout * 3.0,)", "return (dout * 3.0,)  # x")
    assert [f.code for f in session.analyse(edited, workspace=ws, path=str(cell)).findings] == ["BP001"]
    ws.drop_overlay(base)
    assert session.analyse(edited + "\n", workspace=ws, path=str(cell)).findings == []
    assert str(Path(base)) in ws.depends_on(str(cell))


def test_unresolved_and_third_party_bases_stay_unknown(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "cells.py").write_text(
        "from torchish.layers import Base\nfrom .missing import Other\n\n\n"
        "class A(Base):\n    def bprop(self, x, out, dout):\n        return (dout,)\n\n\n"
        "class B(Other):\n    def bprop(self, x, out, dout):\n        return (dout,)\n")
    assert _check(tmp_path, "pkg/cells.py") == []
    deps = Workspace([tmp_path])
    _check(tmp_path, "pkg/cells.py", deps)
    looked = deps.depends_on(str(tmp_path / "pkg" / "cells.py"))
    assert str(tmp_path / "pkg" / "missing.py") in looked and looked[str(tmp_path / "pkg" / "missing.py")] is None


def test_a_cycle_of_bases_across_modules_is_unknown(tmp_path):
    (tmp_path / "a.py").write_text("from mindspore import nn\nfrom b import Y\n\n\nclass X(Y):\n"
                                   "    def construct(self, x, y):\n        return x\n")
    (tmp_path / "b.py").write_text("from a import X\n\n\nclass Y(X):\n    def bprop(self, x, out, dout):\n"
                                   "        return (dout,)\n")
    assert _check(tmp_path, "b.py") == []


def test_a_base_bprop_of_another_module_is_checked_against_the_subclass_construct(tmp_path):
    (tmp_path / "base.py").write_text("from mindspore import nn\n\n\nclass B(nn.Cell):\n"
                                      "    def bprop(self, x, out, dout):\n        return (dout,)\n")
    (tmp_path / "sub.py").write_text("from base import B\n\n\nclass S(B):\n    def construct(self, x, y):\n"
                                     "        return x * y\n")
    (finding,) = _check(tmp_path, "sub.py")
    assert finding.code == "BP001" and finding.fix is None
    assert finding.message == "bprop of S (inherited from B) must take (self, x, y, out, dout): it lacks y"
    assert (finding.span.start.line, finding.span.start.column) == (3, 6)  # the class's name, in sub.py
    there, construct = finding.related
    assert (there.path, there.span.start.line, there.message) == (str(tmp_path / "base.py"), 4, "B.bprop is defined here")
    assert construct.path is None and construct.span.start.line == 4
    # base.py alone: B has no construct, nothing to report there; with a construct of the same inputs as S's, the
    # pair is base.py's to report (once), not sub.py's
    assert _check(tmp_path, "base.py") == []
    (tmp_path / "base.py").write_text("from mindspore import nn\n\n\nclass B(nn.Cell):\n"
                                      "    def construct(self, a, b):\n        return a\n\n"
                                      "    def bprop(self, x, out, dout):\n        return (dout,)\n")
    assert _check(tmp_path, "sub.py") == []
    assert [f.code for f in _check(tmp_path, "base.py")] == ["BP001"]


def test_pyproject_src(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.bprop-lsp]\nsrc = [\"lib\"]\n")
    shutil.copytree(FIXTURES / "package_base" / "pkg", tmp_path / "lib" / "pkg")
    (tmp_path / "lib" / "pkg" / "ste.py").write_text(
        "from pkg.base import ScaleBase\n\n\nclass Scaled(ScaleBase):\n    def bprop(self, x, out, dout):\n"
        "        return (dout,)\n")
    ws = Workspace([tmp_path])
    assert ws.roots == [tmp_path / "lib"]
    assert [f.code for f in _check(tmp_path, "lib/pkg/ste.py", ws)] == ["BP001"]
    assert ws.module_name(str(tmp_path / "lib" / "pkg" / "__init__.py")) == ("pkg", True)


def test_modules_are_parsed_once_per_content(tmp_path):
    shutil.copytree(FIXTURES / "package_base", tmp_path / "p")
    ws = Workspace([tmp_path / "p"])
    base = str(tmp_path / "p" / "pkg" / "base.py")
    first = ws.program(base)
    ws.invalidate(base)
    assert ws.program(base) is first  # same bytes: the same program
    os.utime(base)


def test_a_base_star_exported_by_an_init(tmp_path):
    shutil.copytree(FIXTURES / "package_base" / "pkg", tmp_path / "pkg")
    (tmp_path / "pkg" / "__init__.py").write_text("from .base import *\n")
    (tmp_path / "pkg" / "ste.py").write_text(
        "from pkg import ScaleBase\n\n\nclass Scaled(ScaleBase):\n    def bprop(self, x, out, dout):\n"
        "        return (dout,)\n")
    assert [f.code for f in _check(tmp_path, "pkg/ste.py")] == ["BP001"]
    # an __all__ that leaves it out: ``import *`` does not bind it (unknown: no finding)
    (tmp_path / "pkg" / "base.py").write_text((tmp_path / "pkg" / "base.py").read_text() + '\n__all__ = ["Other"]\n')
    assert _check(tmp_path, "pkg/ste.py") == []
    (tmp_path / "pkg" / "base.py").write_text((tmp_path / "pkg" / "base.py").read_text().replace('"Other"',
                                                                                               '"ScaleBase"'))
    assert [f.code for f in _check(tmp_path, "pkg/ste.py")] == ["BP001"]


def test_programs_of_old_texts_are_not_kept_for_ever(tmp_path):
    shutil.copytree(FIXTURES / "package_base", tmp_path / "p")
    ws = Workspace([tmp_path / "p"])
    base = str(tmp_path / "p" / "pkg" / "base.py")
    text = (tmp_path / "p" / "pkg" / "base.py").read_text()
    for k in range(200):  # typing in the open base
        ws.set_overlay(base, text + f"# {k}\n")
        assert ws.program(base) is not None
    assert len(ws._programs) <= 40


# -- the mode set in the entry script that imports the network (issue 23) ---------------------------------------
# fixture -> (the file with the Cell, its finding's severity, the importing file its related note names or None)
ENTRIES = {
    "entry_graph": ("pkg/model.py", "error", "train.py"),  # train.py: set_context(GRAPH_MODE), then the gradient
    "entry_pynative": ("pkg/model.py", "info", "train.py"),  # main() sets PYNATIVE_MODE: `from pkg import model`
    "entries_disagree": ("pkg/model.py", "error", "train.py"),  # train.py GRAPH, eval.py PYNATIVE: both run
    "entry_in_tools": ("pkg/layers.py", "error", "tools/train.py"),  # layers <- model.Net <- __init__ <- tools/
}


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_mode_from_the_entry_script(name):
    rel, severity, note = ENTRIES[name]
    root = FIXTURES / name
    (finding,) = _check(root, rel)
    assert (finding.code, finding.severity.value) == ("BP020", severity)
    assert [r.path for r in finding.related if r.path] == [str(root / note)]
    # one file alone: the mode is not known (a warning, as before)
    (alone,) = analyze((root / rel).read_text()).findings
    assert alone.severity.value == "warning"


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_mode_from_the_entry_script_agrees_with_mindspore(name):
    if LABELS is None:
        pytest.skip("no labels.json (scripts/run_workspace_probes.py)")
    states = LABELS["cases"][name]
    severity = ENTRIES[name][1]
    # an error where some entry script's run fails (GRAPH runs it), info where every one runs
    assert any(s["observed"] == "broken" for s in states.values()) == (severity == "error")
    assert all(s["observed"] in ("broken", "valid") for s in states.values())  # (each entry sets its own mode)


def _entry_project(tmp_path, train: str) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "entry_graph", root)
    (root / "train.py").write_text(train)
    return root


def _severity(root: Path, ws: Workspace | None = None) -> str:
    (finding,) = _check(root, "pkg/model.py", ws)
    return finding.severity.value


_TRAIN = ("import mindspore as ms\nfrom pkg.model import ScaleCell\n\n{setting}\nnet = ScaleCell()\n"
          "grads = ms.grad(net)(1)\n")


def test_an_entry_mode_the_script_does_not_spell_stays_unknown(tmp_path):
    root = _entry_project(tmp_path, _TRAIN.format(setting="ms.set_context(mode=args.mode)"))
    assert _severity(root) == "warning"
    root2 = _entry_project(tmp_path / "b", _TRAIN.format(setting=""))  # no mode set: unknown
    assert _severity(root2) == "warning"


def test_the_cells_own_file_wins(tmp_path):
    root = _entry_project(tmp_path, _TRAIN.format(setting="ms.set_context(mode=ms.GRAPH_MODE)"))
    model = root / "pkg" / "model.py"
    model.write_text("import mindspore as ms\n" + model.read_text() + "\n\nms.set_context(mode=ms.PYNATIVE_MODE)\n")
    (finding,) = _check(root, "pkg/model.py")
    assert finding.severity.value == "info" and not [r for r in finding.related if r.path]


def test_an_import_inside_a_function_and_an_aliased_module(tmp_path):
    root = _entry_project(tmp_path, "import mindspore as ms\n\n\ndef main():\n    import pkg.model as m\n"
                                    "    ms.set_context(mode=ms.GRAPH_MODE)\n    net = m.ScaleCell()\n"
                                    "    return ms.grad(net)(1)\n")
    assert _severity(root) == "error"


def test_a_module_of_the_same_name_in_another_folder_is_not_the_cells(tmp_path):
    root = _entry_project(tmp_path, _TRAIN.format(setting=""))
    other = root / "other"
    shutil.copytree(FIXTURES / "entry_graph", other)  # its own pkg/model.py beside its train.py (GRAPH)
    assert _severity(root) == "warning"
    assert _severity(other) == "error"


def test_an_entry_script_is_a_dependency(tmp_path):
    root = _entry_project(tmp_path, _TRAIN.format(setting="ms.set_context(mode=ms.GRAPH_MODE)"))
    model, train = str(root / "pkg" / "model.py"), str(root / "train.py")
    ws = Workspace([root])
    session = DocumentSession("model.py")
    text = Path(model).read_text()
    [finding] = session.analyse(text, workspace=ws, path=model).findings
    assert finding.severity.value == "error"
    assert train in ws.depends_on(model)
    assert train not in ws.depends_on(model, modes=False)
    assert ws.dependents(train, [model]) == [model]
    # train.py edited in an editor (the overlay): PYNATIVE now
    ws.set_overlay(train, _TRAIN.format(setting="ms.set_context(mode=ms.PYNATIVE_MODE)"))
    [finding] = session.analyse(text, workspace=ws, path=model).findings
    assert finding.severity.value == "info"
    ws.drop_overlay(train)
    [finding] = session.analyse(text, workspace=ws, path=model).findings
    assert finding.severity.value == "error"
    # a new entry script that imports the model: a change model.py depends on (its words name the module)
    new = root / "tools" / "eval.py"
    new.parent.mkdir()
    new.write_text(_TRAIN.format(setting="ms.set_context(mode=ms.PYNATIVE_MODE)"))
    ws.invalidate(str(new))
    assert ws.dependents(str(new), [model]) == [model]
    unrelated = root / "tools" / "plot.py"
    unrelated.write_text("import numpy\n")
    ws.invalidate(str(unrelated))
    assert ws.dependents(str(unrelated), [model]) == []


def test_importers_are_searched_by_their_import_words_and_parsed_once(tmp_path, monkeypatch):
    from bprop_lsp.engine import workspace as workspace_mod

    root = _entry_project(tmp_path, _TRAIN.format(setting="ms.set_context(mode=ms.GRAPH_MODE)"))
    for k in range(5):
        (root / f"noise_{k}.py").write_text("import numpy as np\n\nmodel = 1\nScaleCell = None\n")
    parsed = []
    real = workspace_mod.Program

    def counting(module, text, **kw):
        parsed.append(os.path.basename(kw["path"]))
        return real(module, text, **kw)

    monkeypatch.setattr(workspace_mod, "Program", counting)
    ws = Workspace([root])
    assert _severity(root, ws) == "error"
    assert parsed == ["train.py"]  # ("model" is in no other file's import statements)
    assert _severity(root, ws) == "error"
    assert parsed == ["train.py"]  # (the same content: the same program)


def test_a_parenthesised_import_of_the_module(tmp_path):
    root = _entry_project(tmp_path, "import mindspore as ms\nfrom pkg import (\n    model,\n)\n\n"
                                    "ms.set_context(mode=ms.PYNATIVE_MODE)\nnet = model.ScaleCell()\n"
                                    "grads = ms.grad(net)(1)\n")
    assert _severity(root) == "info"
    (root / "train.py").write_text('"""from pkg import model: a docstring"""\nnet = model.ScaleCell()\n')
    assert _severity(root) == "warning"


def test_an_index_left_for_later_knows_no_importer_until_it_is_built(tmp_path):
    """``index_later`` (the server): before ``build_index`` the importers are not known (the mode only the entry
    script tells stays unknown: no error yet, never a guess), the modules that asked are handed back by
    ``build_index``, and after it a session gives what a fresh analysis does."""
    root = _entry_project(tmp_path, _TRAIN.format(setting="ms.set_context(mode=ms.GRAPH_MODE)"))
    model = str(root / "pkg" / "model.py")
    text = Path(model).read_text()
    ws = Workspace([root], index_later=True)
    assert not ws.indexed
    assert ws.importers(model, "ScaleCell", asking=model) is None
    session = DocumentSession("model.py")
    [finding] = session.analyse(text, workspace=ws, path=model).findings
    assert finding.severity.value == "warning"
    reports = []
    assert ws.build_index(progress=lambda done, total: reports.append((done, total))) == {model}
    assert ws.indexed and reports[-1] == (len(ws.python_files()),) * 2
    [finding] = session.analyse(text, workspace=ws, path=model).findings
    assert finding.severity.value == "error"
    assert finding == analyze(text, workspace=Workspace([root]), path=model).findings[0]
    assert ws.build_index() == set()  # (nobody waits now)


@pytest.mark.parametrize("name", sorted(BOUND))
def test_a_bprop_of_another_module(name):
    rel, code, other = BOUND[name]
    root = FIXTURES / name
    findings = _check(root, rel)
    assert [f.code for f in findings] == ([code] if code else [])
    for f in findings:
        # shown in the file checked, on the Cell's binding (or class, or the bprop= argument), without a fix, with a
        # note at the def naming the other file
        assert f.fix is None
        assert any(r.path == str(root / other) for r in f.related)
        line = (root / rel).read_text().splitlines()[f.span.start.line]
        assert "bprop" in line or "class " in line
    # the def's own module reports nothing of it (it has no Cell or op using it): never twice
    assert _check(root, other) == []
    # one file alone (no workspace): nothing is known of the other module
    assert analyze((root / rel).read_text()).findings == []


@pytest.mark.parametrize("name", sorted(BOUND))
def test_a_bprop_of_another_module_agrees_with_mindspore(name):
    if LABELS is None or name not in LABELS["cases"]:
        pytest.skip("no label (scripts/run_workspace_probes.py)")
    label = LABELS["cases"][name]["initial"]
    code = BOUND[name][1]
    if code == "BP005":  # both modes run, and give different gradients
        assert label["observed"] == "valid"
        assert label["GRAPH"]["grads_printed"] != label["PYNATIVE"]["grads_printed"]
    else:
        assert label["observed"] == ("broken" if code else "valid")


def test_an_edited_bprop_of_another_module(tmp_path):
    root = tmp_path / "edited_grads"
    shutil.copytree(FIXTURES / "edited_grads", root)
    ws = Workspace([root])
    cells, grads = root / "pkg" / "cells.py", str(root / "pkg" / "grads.py")
    text = cells.read_text()
    if LABELS is not None:
        assert LABELS["cases"]["edited_grads"]["after"]["observed"] == "broken"
    session = DocumentSession("cells.py")
    assert session.analyse(text, workspace=ws, path=str(cells)).findings == []
    ws.set_overlay(grads, (root / "edits" / "grads.py").read_text())
    (finding,) = session.analyse(text, workspace=ws, path=str(cells)).findings
    assert finding.code == "BP001" and finding.message.endswith("it lacks y")
    assert grads in ws.depends_on(str(cells))
    ws.drop_overlay(grads)
    assert session.analyse(text, workspace=ws, path=str(cells)).findings == []


def test_a_name_the_cell_file_binds_otherwise_leaves_the_def_unknown(tmp_path):
    # the def's body reads ``_half``; the Cell's file has a ``_half`` of its own: the body would be read against
    # the wrong one, so the site is not checked (no finding, never a guess)
    shutil.copytree(FIXTURES / "bound_function", tmp_path / "p")
    (tmp_path / "p" / "pkg" / "grads.py").write_text(
        "def _half(g):\n    return g * 0.5\n\n\ndef scale_bprop(self, x, out, dout):\n    return (_half(dout),)\n")
    assert [f.code for f in _check(tmp_path / "p", "pkg/cells.py")] == ["BP001"]
    cells = tmp_path / "p" / "pkg" / "cells.py"
    cells.write_text(cells.read_text() + "\n\ndef _half(g):\n    return g\n")
    assert _check(tmp_path / "p", "pkg/cells.py") == []


def test_a_def_its_own_module_uses_is_reported_there_and_only_its_input_mistakes_here(tmp_path):
    shutil.copytree(FIXTURES / "bound_function", tmp_path / "p")
    grads = tmp_path / "p" / "pkg" / "grads.py"
    # returns a list (BP020: the def's own mistake), used by a Cell of grads.py too
    grads.write_text("from mindspore import nn\n\n\ndef scale_bprop(self, x, y, out, dout):\n    return [dout, dout]\n"
                     "\n\nclass Local(nn.Cell):\n    def construct(self, x, y):\n        return x * y\n\n"
                     "    bprop = scale_bprop\n")
    assert [f.code for f in _check(tmp_path / "p", "pkg/grads.py")] == ["BP020"]
    assert _check(tmp_path / "p", "pkg/cells.py") == []  # (reported once: there)
    # a Cell of cells.py with other inputs: what depends on them is this pair's, reported here
    cells = tmp_path / "p" / "pkg" / "cells.py"
    text = cells.read_text()
    cells.write_text(text.replace("def construct(self, x, y):\n        return x * y * 0.5",
                                  "def construct(self, x):\n        return x * 0.5"))
    assert [f.code for f in _check(tmp_path / "p", "pkg/cells.py")] == ["BP002"]
    # no Cell of grads.py uses it any more: the Cell that does reports all of it, on its binding
    cells.write_text(text)
    grads.write_text(grads.read_text().split("\n\n\nclass Local")[0] + "\n")
    assert _check(tmp_path / "p", "pkg/grads.py") == []
    assert [f.code for f in _check(tmp_path / "p", "pkg/cells.py")] == ["BP020"]


def test_noqa_on_the_binding_line(tmp_path):
    shutil.copytree(FIXTURES / "bound_function", tmp_path / "p")
    cells = tmp_path / "p" / "pkg" / "cells.py"
    cells.write_text(cells.read_text().replace("bprop = scale_bprop", "bprop = scale_bprop  # noqa: BP001"))
    assert _check(tmp_path / "p", "pkg/cells.py") == []  # (and the noqa is used: no BP900)


def test_a_bprop_of_another_module_in_a_session_follows_that_module(tmp_path):
    shutil.copytree(FIXTURES / "inherited_bprop_valid", tmp_path / "p")
    root = tmp_path / "p"
    ws = Workspace([root])
    cells, base = root / "pkg" / "cells.py", str(root / "pkg" / "base.py")
    text = cells.read_text()
    assert "bprop" not in text
    session = DocumentSession("cells.py")
    assert session.analyse(text, workspace=ws, path=str(cells)).findings == []
    assert base in ws.depends_on(str(cells))  # (read for it although the file does not say "bprop")
    broken = Path(base).read_text().replace("def bprop(self, x, y, out, dout)", "def bprop(self, x, out, dout)")
    ws.set_overlay(base, broken)
    assert [f.code for f in session.analyse(text, workspace=ws, path=str(cells)).findings] == ["BP001"]
    assert [f.code for f in session.analyse(text + "\n", workspace=ws, path=str(cells)).findings] == ["BP001"]
    ws.set_overlay(base, "from mindspore import nn\n\n\nclass PairBase(nn.Cell):\n    pass\n")
    assert session.analyse(text, workspace=ws, path=str(cells)).findings == []
