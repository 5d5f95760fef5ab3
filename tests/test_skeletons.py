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
