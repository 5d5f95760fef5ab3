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
