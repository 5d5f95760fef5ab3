"""plan_skeletons: the Cells an "Add a custom bprop" action writes into, spelled with the file's ops import, and
where ``from mindspore import ops`` goes when the file has none; the result checks clean."""
import pytest

from bprop_lsp.checker import analyze
from bprop_lsp.engine.model import Edit, Span
from bprop_lsp.engine.skeletons import plan_skeletons
from bprop_lsp.engine.text import apply_edits

CELL = "class Plain(nn.Cell):\n    def construct(self, a):\n        return a\n"


def _apply(text: str) -> str:
    plan = plan_skeletons(text)
    (sk,) = plan.skeletons
    edits = [Edit(Span(sk.insert_at, sk.insert_at), sk.text())]
    if plan.import_edit is not None:
        edits.append(plan.import_edit)
    return apply_edits(text, edits)


@pytest.mark.parametrize("head, expected_head, zeros", [
    ('"""Doc."""\nfrom __future__ import annotations\n# imports\nfrom mindspore import nn\n',
     '"""Doc."""\nfrom __future__ import annotations\n# imports\nfrom mindspore import ops\nfrom mindspore import nn\n',
     "ops.zeros_like"),
    ("import mindspore.nn as nn\nfrom mindspore.ops import functional as F\n",
     "import mindspore.nn as nn\nfrom mindspore.ops import functional as F\n", "F.zeros_like"),
    ("from mindspore import nn\nfrom mindspore.ops import zeros_like\n",
     "from mindspore import nn\nfrom mindspore.ops import zeros_like\n", "zeros_like"),
    ("import numpy as ops\nfrom mindspore import nn\n",
     "from mindspore import ops as ms_ops\nimport numpy as ops\nfrom mindspore import nn\n", "ms_ops.zeros_like"),
], ids=["after-docstring-and-future", "functional-alias", "zeros-like-import", "ops-taken"])
def test_import_and_spelling(head, expected_head, zeros):
    fixed = _apply(head + CELL)
    assert fixed.startswith(expected_head + CELL)
    assert fixed.endswith(f"\n    def bprop(self, a, out, dout):\n        return ({zeros}(a),)\n")
    assert analyze(fixed).findings == []


def test_no_skeleton_without_construct_or_with_a_bprop():
    assert plan_skeletons("x = 1\n").skeletons == []
    with_bprop = "from mindspore import nn\n" + CELL + "    def bprop(self, a, out, dout):\n        return (dout,)\n"
    assert plan_skeletons(with_bprop).skeletons == []


def test_lines_pick_the_cell_whose_construct_is_there():
    text = ("from mindspore import nn\n" + CELL + CELL.replace("Plain", "Other")
            + "class Outer(nn.Cell):\n    class Inner(nn.Cell):\n        def construct(self, b):\n            return b\n"
            "    def construct(self, c):\n        return c\n")
    lines = text.splitlines()
    construct_lines = [i for i, line in enumerate(lines) if "def construct" in line]
    everything = plan_skeletons(text).skeletons
    by_line = sorted(everything, key=lambda s: s.construct_span.start.line)
    assert [s.owner for s in by_line] == ["Plain", "Other", "Inner", "Outer"]
    for line, skeleton in zip(construct_lines, by_line):
        assert plan_skeletons(text, lines=(line, line)).skeletons == [skeleton]
    assert plan_skeletons(text, lines=(0, 0)).skeletons == []
    assert plan_skeletons(text, lines=(0, len(lines))).skeletons == everything


def _run_bprop(fixed: str, cell: str, args: tuple, monkeypatch):
    """Run the written bprop under stand-in ``mindspore`` modules (``nn.Cell``, ``ops.zeros_like``): a name the
    skeleton calls but the file does not bind at module level raises NameError here, as it would under MindSpore."""
    import sys
    import types

    ms = types.ModuleType("mindspore")
    nn = types.ModuleType("mindspore.nn")
    ops = types.ModuleType("mindspore.ops")
    functional = types.ModuleType("mindspore.ops.functional")
    nn.Cell = type("Cell", (), {})
    ops.zeros_like = functional.zeros_like = lambda x: ("zeros", x)
    ops.functional = functional
    ms.nn, ms.ops = nn, ops
    for name, module in [("mindspore", ms), ("mindspore.nn", nn), ("mindspore.ops", ops),
                         ("mindspore.ops.functional", functional)]:
        monkeypatch.setitem(sys.modules, name, module)
    namespace: dict = {"__name__": "skeleton_under_test"}
    exec(compile(fixed, "<skeleton>", "exec"), namespace)  # noqa: S102 - the skeleton's own output
    return namespace[cell]().bprop(*args, "out", "dout")


@pytest.mark.parametrize("text, args", [
    # ``ops`` is imported only inside a function: the bprop cannot see it.
    ("from mindspore import nn\n\ndef helper():\n    from mindspore import ops\n    return ops\n\n"
     "class Plain(nn.Cell):\n    def construct(self, a):\n        return a\n", (1,)),
    # ... only in a class body (a class attribute, not a global).
    ("from mindspore import nn\n\nclass Holder:\n    from mindspore import ops\n\n"
     "class Plain(nn.Cell):\n    def construct(self, a):\n        return a\n", (1,)),
    # ... only under ``if TYPE_CHECKING:``.
    ("from typing import TYPE_CHECKING\nfrom mindspore import nn\nif TYPE_CHECKING:\n    from mindspore import ops\n\n"
     "class Plain(nn.Cell):\n    def construct(self, a):\n        return a\n", (1,)),
    # A construct input named like the module import: ``ops.zeros_like`` would call the input's attribute.
    ("from mindspore import nn, ops\n\nclass Plain(nn.Cell):\n    def construct(self, ops, b):\n        return b\n",
     (1, 2)),
    # ... or like the imported function.
    ("from mindspore import nn\nfrom mindspore.ops import zeros_like\n\n"
     "class Plain(nn.Cell):\n    def construct(self, zeros_like):\n        return zeros_like\n", (1,)),
    # ... or like the alias the skeleton would pick next.
    ("import json as ops\nfrom mindspore import nn\n\n"
     "class Plain(nn.Cell):\n    def construct(self, ms_ops):\n        return ms_ops\n", (1,)),
    # An input named ``out``/``dout`` is renamed and still shadows nothing.
    ("from mindspore import nn\nfrom mindspore import ops as F\n\n"
     "class Plain(nn.Cell):\n    def construct(self, F, dout):\n        return dout\n", (1, 2)),
], ids=["import-in-function", "import-in-class", "type-checking-import", "input-named-ops",
        "input-named-zeros-like", "input-named-alias", "input-named-functional-alias"])
def test_written_bprop_runs(text, args, monkeypatch):
    fixed = _apply(text)
    grads = _run_bprop(fixed, "Plain", args, monkeypatch)
    assert grads == tuple(("zeros", a) for a in args)
    assert analyze(fixed).findings == []


def test_analysis_skeletons_spell_zeros_like_like_the_plan():
    text = "from mindspore import nn, ops\n\nclass Plain(nn.Cell):\n    def construct(self, ops):\n        return ops\n"
    (from_analysis,) = analyze(text, with_skeletons=True).skeletons
    (from_plan,) = plan_skeletons(text).skeletons
    assert from_analysis.zeros_like == from_plan.zeros_like != "ops.zeros_like"
