"""BP007: ``construct`` has defaulted inputs and a call leaves them out: no bprop fits both modes."""
from __future__ import annotations

from ..engine.context import Context, Signature
from ..engine.model import Related
from .base import GRAPH, PYNATIVE, Draft, Invalid, Rule, Valid
from ._signature import def_span, view


def passed_inputs(site_call, construct_params) -> int | None:
    """How many forward inputs a call passes (None: cannot tell, e.g. *args at the call)."""
    if site_call.has_star:
        return None
    names = [q.name for q in construct_params]
    count = len(site_call.positional)
    for kw in site_call.keywords:
        if kw in names[count:]:
            count += 1
        else:
            return None  # an unknown keyword: BP009 territory
    return count


class ConstructDefaults(Rule):
    code = "BP007"
    scope = "cell"
    position_free = True
    name = "construct-defaults-omitted"
    summary = ("construct has defaulted inputs and a call in this file leaves them out: GRAPH counts the arguments "
               "passed, PYNATIVE all parameters, so no bprop signature satisfies both. Pass every input, or drop the default.")
    mindspore_says = ("bprop listing the default: GRAPH TypeError ... number of parameter of this primal function is 1, "
                      "but ... bprop is 2. Omitting it: PYNATIVE TypeError: <Cell>.bprop() takes 4 positional arguments but 5 were given.")
    valid = (
        Valid("import numpy as np\nfrom mindspore import nn, ops, Tensor\nclass M(nn.Cell):\n"
              "    def construct(self, x, mask=None):\n        return x * 3\n    def bprop(self, x, mask, out, dout):\n"
              "        return dout * 3, ops.zeros_like(mask)\n\nx = Tensor(np.ones(2, np.float32))\n"
              "print(ops.GradOperation(get_all=True)(M())(x, x))\n", "every call passes every input"),
    )
    invalid = (
        Invalid("import numpy as np\nfrom mindspore import nn, ops, Tensor\nclass M(nn.Cell):\n"
                "    def construct(self, x, mask=None):\n        return x * 3\n    def bprop(self, x, mask, out, dout):\n"
                "        return dout * 3, ops.zeros_like(x)\n\nx = Tensor(np.ones(2, np.float32))\n"
                "print(ops.GradOperation(get_all=True)(M())(x))\n",
                at="6:9", message=("M(x, mask) is called with 1 input(s): GRAPH_MODE passes the bprop 1 "
                                   "input(s), PYNATIVE_MODE all 2 (defaults filled in), so bprop's 2 cannot satisfy "
                                   "both; pass every input at the call [fails in GRAPH_MODE]")),
    )

    def check(self, ctx: Context):
        for site in ctx.cell_sites:
            v = view(ctx, site)
            if v is None or site.construct is None or v.input_range is None or not v.has_self:
                continue
            lo, hi = v.input_range
            if lo == hi or v.kind != "method" or v.opaque_decorator or v.unwrapped_decorator:
                continue
            if not (lo + 2 <= v.count <= hi + 2):
                continue  # BP001/BP002 speak for it
            params = Signature(site.construct, skip_self=True).positional
            for call in ctx.call_index.sites(site.cls):
                passed = passed_inputs(call, params)
                if passed is None or passed >= hi:
                    continue
                b = v.count - 2
                fails = {GRAPH} if b != passed else set()
                if b != hi:
                    fails.add(PYNATIVE)
                if not fails:
                    continue
                call_span = ctx.program.span(call.node)
                # The finding is on the bprop's def; the call is its related place (a message names no line: the
                # drafts of a Cell that only moved are moved, not written again).
                yield Draft(def_span(ctx, v.fn),
                            f"{site.cls.name}({', '.join(q.name for q in params)}) is called with {passed} input(s): "
                            f"GRAPH_MODE passes the bprop {passed} input(s), "
                            f"PYNATIVE_MODE all {hi} (defaults filled in), so bprop's {b} cannot satisfy both; pass "
                            f"every input at the call",
                            fails_in=frozenset(fails),
                            related=(Related(call_span, f"called with {passed} input(s) here"),),
                            noqa_line=v.fn.def_line)
                break
