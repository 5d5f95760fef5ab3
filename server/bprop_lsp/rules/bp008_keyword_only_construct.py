"""BP008: ``construct`` has keyword-only parameters: no bprop signature satisfies both modes."""
from __future__ import annotations

from ..engine.context import Context, Signature
from .base import BOTH, PYNATIVE, Draft, Invalid, Rule, Valid
from ._signature import construct_related, def_span, view


class KeywordOnlyConstruct(Rule):
    code = "BP008"
    scope = "cell"
    position_free = True
    name = "construct-keyword-only"
    summary = ("construct of a custom-bprop cell has keyword-only parameters: GRAPH ignores them, PYNATIVE passes "
               "them positionally and wants a gradient for them.")
    mindspore_says = ("bprop without them: PYNATIVE TypeError ... takes N positional arguments but N+1 were given. "
                      "With them: GRAPH BP002 message, PYNATIVE RuntimeError: Grad size should lager than forward inputs.")
    valid = (
        Valid("from mindspore import nn\nclass T(nn.Cell):\n    def __init__(self, temperature=2.0):\n        super().__init__()\n"
              "        self.temperature = temperature\n    def construct(self, logits):\n        return logits / self.temperature\n"
              "    def bprop(self, logits, out, dout):\n        return (dout / self.temperature,)\n",
              "the setting as a cell attribute"),
    )
    invalid = (
        Invalid("from mindspore import nn\nclass T(nn.Cell):\n    def construct(self, logits, *, temperature=2.0):\n"
                "        return logits / temperature\n    def bprop(self, logits, out, dout):\n        return (dout / 2.0,)\n",
                at="5:9", message=("construct of T has keyword-only parameter(s) temperature: PYNATIVE_MODE passes "
                                   "them to bprop positionally (and wants gradients for them) while GRAPH_MODE "
                                   "ignores them; make them positional inputs passed explicitly, or cell attributes "
                                   "[fails in PYNATIVE_MODE]")),
    )

    def check(self, ctx: Context):
        for site in ctx.cell_sites:
            v = view(ctx, site)
            if v is None or site.construct is None:
                continue
            kwonly = Signature(site.construct, skip_self=True).kwonly
            if not kwonly:
                continue
            n_pos = len(Signature(site.construct, skip_self=True).positional)
            names = ", ".join(q.name for q in kwonly)
            listed = v.count > n_pos + 2
            yield Draft(def_span(ctx, v.fn),
                        f"construct of {site.cls.name} has keyword-only parameter(s) {names}: PYNATIVE_MODE passes "
                        f"them to bprop positionally (and wants gradients for them) while GRAPH_MODE ignores them; "
                        f"make them positional inputs passed explicitly, or cell attributes",
                        fails_in=BOTH if listed else frozenset({PYNATIVE}),
                        related=construct_related(ctx, site), noqa_line=v.fn.def_line)
