"""BP023: return paths of a bprop return tuples of different lengths."""
from __future__ import annotations

from ..engine.context import Context
from .base import GRAPH, Draft, Invalid, Rule, Valid
from ._returns import leaves_of as _leaves, anchor_span, cell_subjects, return_related, returns_of


class InconsistentArity(Rule):
    code = "BP023"
    scope = "cell"
    position_free = True
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
        Valid("from mindspore import nn, ops\nclass D(nn.Cell):\n    def construct(self, x, y):\n        return x * y\n"
              "    def bprop(self, x, y, out, dout):\n        if dout.shape[0] > 1 and len(x) > 1 and y is not None:\n"
              "            return dout * y, dout * x\n        return dout * y, dout * x, ops.zeros_like(x)\n",
              "conditions on shapes, lengths and None are folded by GRAPH_MODE: only the path taken is typed"),
    )
    invalid = (
        Invalid("from mindspore import nn, ops\nclass D(nn.Cell):\n    def construct(self, x, y):\n        return x / y\n"
                "    def bprop(self, x, y, out, dout):\n        if (x > 0).all():\n            return (ops.zeros_like(x),)\n"
                "        return dout / y, -dout * x / (y * y)\n", also=("BP021",),
                at="5:9", message=("bprop of D returns tuples of different lengths (1, 2) on different paths: "
                                   "GRAPH_MODE needs one fixed length [fails in GRAPH_MODE]")),
        Invalid("from mindspore import nn, ops\nclass D(nn.Cell):\n    def construct(self, x, y):\n        return x * y\n"
                "    def bprop(self, x, y, out, dout):\n        if (dout > 0).all():\n            return dout * y, dout * x\n"
                "        return (dout * y,)\n", also=("BP021",),
                at="5:9", message=("bprop of D returns tuples of different lengths (1, 2) on different paths: "
                                   "GRAPH_MODE needs one fixed length [fails in GRAPH_MODE]")),
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
    """Whether some return is guarded by a condition on the value of a Tensor the bprop is given.

    GRAPH_MODE folds what it knows when compiling: Python attributes, and a Tensor's metadata (``x.shape``,
    ``x.dtype``, ``len(x)``, ``x is None``). A condition on a Tensor's value (``(x > 0).all()``, ``dout.sum() > 1``)
    leaves the output length dynamic ("Can not get size for dynamic length sequence"); this holds for ``dout`` as
    for the inputs and ``out`` (probes: ``(dout > 0).all()`` fails, ``dout.shape[0] > 1`` does not). GRAPH may still
    fold a value condition on a constant ``dout`` (a top-level default sensitivity); the bprop of a Cell inside a
    network is not given one."""
    params = [q.name for q in fn.params if q.kind in ("positional", "posonly")]
    if params and params[0] == "self":
        params = params[1:]
    data = set(params)
    for r in returns:
        node = r.stmt.parent
        while node is not None and node is not fn.node:
            if node.type in ("if_stmt", "while_stmt"):
                conditions = [c for i, c in enumerate(node.children) if i > 0 and node.children[i - 1] in ("if", "elif", "while")]
                for cond in conditions:
                    if any(n.type == "name" and n.value in data and not _metadata_use(n) for n in _leaves(cond)):
                        return True
            node = node.parent
    return False


# A Tensor's compile-time facts: GRAPH_MODE folds conditions on them.
_METADATA_ATTRIBUTES = frozenset({"shape", "dtype", "ndim", "size"})
_METADATA_CALLS = frozenset({"len", "isinstance", "type", "shape", "dtype", "rank", "Shape", "DType", "Rank"})


def _metadata_use(name) -> bool:
    """Whether this use of a name reads only what GRAPH_MODE knows at compile time (not the Tensor's value)."""
    parent = name.parent
    if parent is None:
        return False
    if parent.type in ("power", "atom_expr") and parent.children[0] is name and len(parent.children) > 1:
        trailer = parent.children[1]
        return (trailer.type == "trailer" and trailer.children[0] == "."
                and trailer.children[1].value in _METADATA_ATTRIBUTES)
    if parent.type == "comparison":
        ops = parent.children[1::2]  # operand, operator, operand, ...
        return bool(ops) and all(op.get_code().split() in (["is"], ["is", "not"]) for op in ops)
    holder = parent.parent if parent.type == "arglist" else parent
    if holder is not None and holder.type == "trailer" and holder.children[0] == "(":
        call = holder.parent
        index = call.children.index(holder) if call is not None else 0
        callee = call.children[index - 1] if index > 0 else None
        if callee is not None:
            last = callee.children[1] if callee.type == "trailer" and len(callee.children) > 1 else callee
            return getattr(last, "value", None) in _METADATA_CALLS
    return False
