"""BP009: ``construct(self, x, **kwargs)`` called with keyword arguments: they are forward inputs too."""
from __future__ import annotations

from ..engine.context import Context, Signature
from ..engine.model import Related
from .base import BOTH, Draft, Invalid, Rule, Valid
from ._signature import def_span, view


class ConstructKwargs(Rule):
    code = "BP009"
    scope = "cell"
    position_free = True
    name = "construct-kwargs-passed"
    summary = ("Keyword arguments passed into construct's **kwargs count as forward inputs in both modes: the bprop "
               "must take a parameter (and return a gradient) for each.")
    mindspore_says = "GRAPH: the BP001 message. PYNATIVE: TypeError: <Cell>.bprop() takes 4 positional arguments but 5 were given."
    valid = (
        Valid("import numpy as np\nfrom mindspore import nn, ops, Tensor\nclass S(nn.Cell):\n"
              "    def construct(self, x, **kwargs):\n        return x\n    def bprop(self, x, out, dout):\n"
              "        return (dout,)\n\nx = Tensor(np.ones(2, np.float32))\nprint(ops.GradOperation(get_all=True)(S())(x))\n",
              "no keyword argument passed"),
    )
    invalid = (
        Invalid("import numpy as np\nfrom mindspore import nn, ops, Tensor\nclass S(nn.Cell):\n"
                "    def construct(self, x, **kwargs):\n        return x + kwargs['offset']\n    def bprop(self, x, out, dout):\n"
                "        return (dout,)\n\nx = Tensor(np.ones(2, np.float32))\n"
                "print(ops.GradOperation(get_all=True)(S())(x, offset=x))\n",
                at="6:9", message=("S is called with keyword argument(s) offset into construct's **kwargs: "
                                   "MindSpore passes them to bprop as forward inputs (2 in all), so bprop must take "
                                   "4 parameters after self, not 3")),
    )

    def check(self, ctx: Context):
        for site in ctx.cell_sites:
            v = view(ctx, site)
            if v is None or site.construct is None or not v.has_self or v.kind != "method":
                continue
            sig = Signature(site.construct, skip_self=True)
            if sig.varkw is None or sig.vararg is not None:
                continue
            named = [q.name for q in sig.positional]
            for call in ctx.call_index.sites(site.cls):
                if call.has_star:
                    continue
                extra = [k for k in call.keywords if k not in named]
                if not extra:
                    continue
                passed = len(call.positional) + sum(1 for k in call.keywords if k in named) + len(extra)
                if v.count == passed + 2:
                    continue
                yield Draft(def_span(ctx, v.fn),
                            f"{site.cls.name} is called with keyword argument(s) {', '.join(extra)} into construct's "
                            f"**{sig.varkw.name}: MindSpore passes them to bprop as forward inputs ({passed} in all), "
                            f"so bprop must take {passed + 2} parameters after self, not {v.count}",
                            fails_in=BOTH,
                            related=(Related(ctx.program.span(call.node), "called with keyword arguments here"),),
                            noqa_line=v.fn.def_line)
                break
