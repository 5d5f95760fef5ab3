"""BP014: the last two parameters are named ``dout, out``: positions decide, so the names lie."""
from __future__ import annotations

from ..engine.context import Context
from .base import NEVER, Draft, Invalid, Rule, Valid
from ._signature import def_span, view


class SwappedOutDout(Rule):
    code = "BP014"
    per_cell = True
    name = "bprop-out-dout-swapped"
    summary = "bprop's last two parameters are named (dout, out): MindSpore passes out first, then dout, whatever the names."
    mindspore_says = "No error: the gradients are silently wrong."
    valid = (
        Valid("from mindspore import nn\nclass C(nn.Cell):\n    def construct(self, x):\n        return x\n"
              "    def bprop(self, x, out, dout):\n        return (dout,)\n"),
    )
    invalid = (
        Invalid("from mindspore import nn\nclass C(nn.Cell):\n    def construct(self, x):\n        return x * 2\n"
                "    def bprop(self, x, dout, out):\n        return (dout * 2,)\n"),
    )

    def check(self, ctx: Context):
        for site in ctx.cell_sites:
            v = view(ctx, site)
            if v is None or len(v.params) < 2:
                continue
            a, b = v.params[-2].name, v.params[-1].name
            if a == "dout" and b == "out":
                yield Draft(def_span(ctx, v.fn),
                            f"bprop of {site.owner_label} names its last parameters (dout, out): MindSpore passes out "
                            f"then dout by position, so `dout` holds the forward output",
                            fails_in=NEVER, noqa_line=v.fn.def_line)
