"""BP023: return paths of a bprop return tuples of different lengths."""
from __future__ import annotations

from ..engine.context import Context
from .base import GRAPH, Draft, Invalid, Rule, Valid
from ._returns import anchor_span, cell_subjects, return_related, returns_of


class InconsistentArity(Rule):
    code = "BP023"
    per_cell = True
    name = "bprop-inconsistent-arity"
    summary = "Every return path of a bprop must return the same number of gradients (GRAPH_MODE types the output)."
    mindspore_says = "GRAPH: RuntimeError: Can not get size for dynamic length sequence. PYNATIVE: runs."
    valid = (
        Valid("from mindspore import nn, ops\nclass D(nn.Cell):\n    def __init__(self, fast=True):\n        super().__init__()\n"
              "        self.fast = fast\n    def construct(self, x, y):\n        return x / y\n"
              "    def bprop(self, x, y, out, dout):\n        if self.fast:\n            return dout / y, -dout * x / (y * y)\n"
              "        return dout / y, -dout * x / (y * y), ops.zeros_like(x)\n",
              "GRAPH folds a condition on a Python attribute and types only the path taken"),
        Valid("from mindspore import nn, ops\nclass D(nn.Cell):\n    def construct(self, x, y):\n        return x / y\n"
              "    def bprop(self, x, y, out, dout):\n        if x.shape[0] > 2:\n            return ops.zeros_like(x), ops.zeros_like(y)\n"
              "        return dout / y, -dout * x / (y * y)\n"),
    )
    invalid = (
        Invalid("from mindspore import nn, ops\nclass D(nn.Cell):\n    def construct(self, x, y):\n        return x / y\n"
                "    def bprop(self, x, y, out, dout):\n        if (x > 0).all():\n            return (ops.zeros_like(x),)\n"
                "        return dout / y, -dout * x / (y * y)\n", also=("BP021",)),
    )

    def check(self, ctx: Context):
        for subject in cell_subjects(ctx):
            info = returns_of(subject.fn, ctx.program)
            if info is None:
                continue
            tuples = [r for r in info.returns if r.shape.kind == "tuple"]
            lengths = sorted({r.shape.length for r in tuples})
            if len(lengths) < 2 or not _depends_on_inputs(subject.fn, tuples):
                continue
            first = tuples[0]
            odd = next(r for r in tuples if r.shape.length != first.shape.length)
            yield Draft(anchor_span(ctx, subject.fn),
                        f"{subject.label} returns tuples of different lengths ({', '.join(map(str, lengths))}) on "
                        f"different paths: GRAPH_MODE needs one fixed length",
                        fails_in=frozenset({GRAPH}),
                        related=return_related(ctx, first, f"returns {first.shape.length} here")
                        + return_related(ctx, odd, f"returns {odd.shape.length} here"),
                        noqa_line=subject.fn.def_line, subject=subject.site)


def _depends_on_inputs(fn, returns) -> bool:
    """GRAPH_MODE constant-folds conditions on attributes and on dout; only a branch on a forward input
    (or out) leaves the output length dynamic. True if some return is guarded by such a condition."""
    params = [q.name for q in fn.params if q.kind in ("positional", "posonly")]
    if params and params[0] == "self":
        params = params[1:]
    data = set(params[:-1])  # inputs and out, not dout
    for r in returns:
        node = r.stmt.parent
        while node is not None and node is not fn.node:
            if node.type in ("if_stmt", "while_stmt"):
                conditions = [c for i, c in enumerate(node.children) if i > 0 and node.children[i - 1] in ("if", "elif", "while")]
                for cond in conditions:
                    if any(n.type == "name" and n.value in data for n in _leaves(cond)):
                        return True
            node = node.parent
    return False


def _leaves(node):
    stack = [node]
    while stack:
        n = stack.pop()
        if hasattr(n, "children"):
            stack.extend(n.children)
        else:
            yield n
