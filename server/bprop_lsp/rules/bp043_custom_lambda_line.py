"""BP043: a lambda given as ``bprop=`` whose source line does not parse on its own (GRAPH re-parses it)."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.trees import iter_scope_nodes
from .base import GRAPH, Draft, Invalid, Rule, Valid


class CustomLambdaLine(Rule):
    code = "BP043"
    name = "custom-bprop-lambda-line"
    summary = ("GRAPH_MODE re-reads a lambda bprop from its source line: it must end its line alone — no other "
               "lambda on the line, no `,` or `)` after it. Prefer a def.")
    mindspore_says = ("GRAPH: TypeError: Parse Lambda Function Fail. Node type must be Lambda, but got Call. Please "
                      "check lambda expression to make sure it is defined on a separate line. PYNATIVE: runs.")
    valid = (
        Valid("from mindspore import ops\n\ndef double_bprop(a, out, dout):\n    return (dout * 2,)\n\n"
              "double = ops.Custom(lambda a: a * 2, out_shape=lambda s: s, out_dtype=lambda t: t, func_type='pyfunc',\n"
              "                    bprop=double_bprop)\n"),
    )
    invalid = (
        Invalid("from mindspore import ops\n\ndouble = ops.Custom(lambda a: a * 2, out_shape=lambda s: s, "
                "out_dtype=lambda t: t, func_type='pyfunc', bprop=lambda a, out, dout: (dout * 2,))\n",
                at="3:110", message=("lambda bprop of ops.Custom: another lambda shares its line, so GRAPH_MODE "
                                     "cannot re-parse it from its source line; define the bprop with def (or give "
                                     "the lambda a line of its own) [fails in GRAPH_MODE]")),
    )

    def check(self, ctx: Context):
        p = ctx.program
        for op in ctx.custom_op_sites:
            lam = op.bprop_arg
            if lam.type != "lambdef":
                continue
            first, last = lam.start_pos[0], lam.end_pos[0]
            lines = range(first, last + 1)
            others = [n for n in iter_scope_nodes(op.call) if n.type == "lambdef" and n is not lam
                      and (n.start_pos[0] in lines or n.end_pos[0] in lines)]
            after = p.index.line_text(last - 1)[lam.end_pos[1]:]
            code_after = after.split("#", 1)[0].strip()
            if not others and not code_after:
                continue
            why = "another lambda shares its line" if others else f"`{code_after[:10]}` follows it on the line"
            yield Draft(p.span(lam),
                        f"lambda bprop of ops.Custom: {why}, so GRAPH_MODE cannot re-parse it from its source line; "
                        f"define the bprop with def (or give the lambda a line of its own)",
                        fails_in=frozenset({GRAPH}), noqa_line=first - 1)
