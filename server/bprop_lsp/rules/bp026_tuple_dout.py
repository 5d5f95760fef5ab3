"""BP026: construct returns a tuple, so ``dout`` is a tuple, but the bprop uses it as one Tensor."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.model import Related
from ..engine.trees import iter_own_nodes
from .base import BOTH, NEVER, PYNATIVE, Draft, Invalid, Rule, Valid
from ._returns import ARITH, anchor_span, local_assignments, returns_of


class TupleDout(Rule):
    code = "BP026"
    depends_on_inputs = True
    scope = "cell"
    position_free = True
    name = "bprop-tuple-dout"
    summary = ("When construct returns a tuple, out and dout are tuples too: unpack them (d0, d1 = dout) before "
               "doing arithmetic.")
    mindspore_says = ("PYNATIVE: TypeError: Failed calling Mul with \"Mul()(input=Tensor, other=Tuple<Tensor, Tensor>)\". "
                      "GRAPH: with a Python number, TypeError: can't multiply sequence by non-int; with a Tensor operand "
                      "it silently stacks the tuple into one Tensor.")
    valid = (
        Valid("from mindspore import nn\nclass Two(nn.Cell):\n    def construct(self, x):\n        return x * 2, x * 3\n"
              "    def bprop(self, x, out, dout):\n        d0, d1 = dout\n        return (d0 * 2 + d1 * 3,)\n"),
    )
    invalid = (
        Invalid("from mindspore import nn\nclass Two(nn.Cell):\n    def construct(self, x):\n        return x * 0.5, x * 0.5\n"
                "    def bprop(self, x, out, dout):\n        return (dout * 0.5,)\n",
                at="5:9", message=("construct of Two returns 2 values, so `dout` is a 2-tuple, but bprop uses dout "
                                   "in arithmetic with a number; unpack it first")),
    )

    def check(self, ctx: Context):
        p = ctx.program
        for site in ctx.cell_sites:
            fn = site.function
            if fn is None or fn.node.type != "funcdef" or site.construct is None or site.construct.node.type != "funcdef":
                continue
            outs = returns_of(site.construct, ctx.program)
            if outs is None or not outs.returns or any(r.shape.kind != "tuple" or r.shape.length < 2 for r in outs.returns):
                continue
            params = [q.name for q in fn.params if q.kind in ("positional", "posonly")]
            if len(params) < 3 or params[0] != "self":
                continue
            dout = params[-1]
            assigned = local_assignments(fn).get(dout, [])
            if len(assigned) != 1:
                continue  # dout is rebound in the body
            hit = None
            for node in iter_own_nodes(fn.node):
                if node.type in ARITH and any(c.type == "name" and c.value == dout for c in node.children):
                    others = [c for c in node.children if c.type != "operator" and not (c.type == "name" and c.value == dout)]
                    number = any(c.type == "number" for c in others)
                    hit = (node, BOTH if number else frozenset({PYNATIVE}),
                           f"uses {dout} in arithmetic" + (" with a number" if number else ""))
                    break
            n_inputs = len(site.inputs) if site.inputs is not None else None
            if hit is None and n_inputs is not None and n_inputs < outs.returns[0].shape.length:
                info = returns_of(fn, ctx.program)
                for r in info.returns if info else ():
                    value = r.stmt.children[1] if r.stmt.type == "return_stmt" and len(r.stmt.children) > 1 else None
                    if value is not None and value.type == "name" and value.value == dout:
                        hit = (r.stmt, NEVER, f"returns {dout} itself as the gradient tuple (extra entries are silently dropped)")
                        break
            if hit is None:
                continue
            node, fails, what = hit
            n_out = outs.returns[0].shape.length
            yield Draft(anchor_span(ctx, fn),
                        f"construct of {site.cls.name} returns {n_out} values, so `{dout}` is a {n_out}-tuple, but "
                        f"bprop {what}; unpack it first",
                        fails_in=fails, related=(Related(p.span(node), "here"),), noqa_line=fn.def_line)
