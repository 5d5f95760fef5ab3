"""BP004: a Cell's bprop method whose first parameter is not ``self``."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.model import Fix
from ..engine.param_edits import insert_after
from .base import PYNATIVE, Draft, Invalid, Rule, Valid
from ._signature import construct_related, def_span, view


class MissingSelf(Rule):
    code = "BP004"
    scope = "cell"
    position_free = True
    name = "bprop-missing-self"
    summary = ("A bprop method must take `self` first: PYNATIVE passes the cell, and GRAPH skips a first "
               "parameter only if it is literally named `self`.")
    mindspore_says = ("PYNATIVE: TypeError: <Cell>.bprop() takes N positional arguments but N+1 were given "
                      "(GRAPH runs). With the first parameter named ctx/this: GRAPH fails with the BP002 message.")
    fix_title = "Add `self` as the first parameter"
    valid = (
        Valid("from mindspore import nn\nclass C(nn.Cell):\n    def construct(self, x):\n        return x\n"
              "    def bprop(self, x, out, dout):\n        return (dout,)\n"),
    )
    invalid = (
        Invalid("from mindspore import nn\nclass Cube(nn.Cell):\n    def construct(self, x):\n        return x * x * x\n"
                "    def bprop(x, out, dout):\n        return (3 * x * x * dout,)\n",
                fixed="from mindspore import nn\nclass Cube(nn.Cell):\n    def construct(self, x):\n        return x * x * x\n"
                      "    def bprop(self, x, out, dout):\n        return (3 * x * x * dout,)\n",
                at="5:9", message=("bprop of Cube has no `self`: MindSpore calls it as a method, so every argument "
                                   "shifts by one; expected (self, x, out, dout) [fails in PYNATIVE_MODE]")),
    )

    def check(self, ctx: Context):
        for site in ctx.cell_sites:
            v = view(ctx, site)
            if v is None or v.kind != "method" or v.has_self or v.input_range is None:
                continue
            if v.opaque_decorator or v.unwrapped_decorator or any(q.kind in ("vararg", "varkw") for q in v.fn.params):
                continue
            if site.construct is not None and any(q.kind == "kwonly" for q in site.construct.params):
                continue
            lo, hi = v.input_range
            positional = [q for q in v.fn.params if q.kind in ("positional", "posonly")]
            total = len(positional)
            if lo + 2 <= total <= hi + 2:
                # The count is right without self: GRAPH runs, PYNATIVE passes the cell as well.
                fix = None
                if v.fn.node.type == "funcdef" and "self" not in {q.name for q in v.fn.params}:
                    fix = Fix("Add `self` as the first parameter", tuple(insert_after(v.fn, None, ["self"], ctx.program.index)))
                if PYNATIVE not in site.modes:
                    continue
                yield Draft(def_span(ctx, v.fn),
                            f"bprop of {site.owner_label} has no `self`: MindSpore calls it as a method, so every "
                            f"argument shifts by one; expected {v.expected_text()}",
                            fails_in=frozenset({PYNATIVE}), fix=fix, related=construct_related(ctx, site),
                            noqa_line=v.fn.def_line)
            # Other counts are BP001's (too few even for GRAPH, e.g. a torch-style ``backward(ctx, grad)``) or BP002's
            # (``bprop(ctx, <inputs>, out, dout)``: GRAPH counts ctx as an input): one finding per mistake.
