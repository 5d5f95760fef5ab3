"""BP006: ``@classmethod`` bprop: GRAPH counts ``cls`` as a parameter."""
from __future__ import annotations

from ..engine.context import Context
from .base import GRAPH, Draft, Invalid, Rule, Valid
from ._signature import def_span, view


class ClassMethodBprop(Rule):
    code = "BP006"
    scope = "cell"
    position_free = True
    name = "bprop-classmethod"
    summary = "A @classmethod bprop fails in GRAPH_MODE, which counts `cls` as one parameter too many."
    mindspore_says = "GRAPH: the BP002 message (number of parameters of bprop). PYNATIVE: runs."
    valid = (
        Valid("from mindspore import nn\nclass H(nn.Cell):\n    factor = 0.5\n    def construct(self, x):\n        return x\n"
              "    def bprop(self, x, out, dout):\n        return (dout * self.factor,)\n"),
    )
    invalid = (
        Invalid("from mindspore import nn\nclass H(nn.Cell):\n    factor = 0.5\n    def construct(self, x):\n        return x\n"
                "    @classmethod\n    def bprop(cls, x, out, dout):\n        return (dout * cls.factor,)\n",
                at="7:9", message=("bprop of H is a @classmethod: GRAPH_MODE counts `cls` as a parameter; make it a "
                                   "normal method taking self [fails in GRAPH_MODE]")),
    )

    def check(self, ctx: Context):
        for site in ctx.cell_sites:
            v = view(ctx, site)
            if v is None or v.kind != "classmethod":
                continue
            yield Draft(def_span(ctx, v.fn),
                        f"bprop of {site.owner_label} is a @classmethod: GRAPH_MODE counts `cls` as a parameter; "
                        f"make it a normal method taking self",
                        fails_in=frozenset({GRAPH}), noqa_line=v.fn.def_line)
