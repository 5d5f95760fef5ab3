"""BP040: the ``bprop=`` function of ``ops.Custom`` takes the wrong number of parameters."""
from __future__ import annotations

from ..engine.context import Context, Signature
from ..engine.model import Related
from ..engine.param_edits import fresh, insert_after, is_dout_like, is_out_like, used_names
from ..engine.model import Fix
from .base import BOTH, Draft, Invalid, Rule, Valid


class CustomArity(Rule):
    code = "BP040"
    name = "custom-bprop-arity"
    summary = "The bprop of ops.Custom must take the op's inputs, then out, then dout: fn(*inputs, out, dout)."
    mindspore_says = ("GRAPH: TypeError: The parameters number of the function is K, but the number of provided "
                      "arguments is N (pointing at the op call in construct). PYNATIVE: TypeError: fn() takes/missing ...")
    fix_title = "Add the missing trailing parameters"
    valid = (
        Valid("import numpy as np\nfrom mindspore import nn, ops\n\ndef softplus_np(x):\n    return np.log1p(np.exp(x))\n\n"
              "def softplus_bprop(x, out, dout):\n    return (dout * ops.sigmoid(x),)\n\n"
              "op = ops.Custom(softplus_np, out_shape=lambda s: s, out_dtype=lambda t: t, func_type='pyfunc',\n"
              "                bprop=softplus_bprop)\n"),
    )
    invalid = (
        Invalid("import numpy as np\nfrom mindspore import nn, ops\n\ndef gelu_np(x):\n    return x\n\n"
                "def gelu_bprop(x, out):\n    return (out * 0 + 1,)\n\n"
                "op = ops.Custom(gelu_np, out_shape=lambda s: s, out_dtype=lambda t: t, func_type='pyfunc',\n"
                "                bprop=gelu_bprop)\n",
                fixed="import numpy as np\nfrom mindspore import nn, ops\n\ndef gelu_np(x):\n    return x\n\n"
                      "def gelu_bprop(x, out, dout):\n    return (out * 0 + 1,)\n\n"
                      "op = ops.Custom(gelu_np, out_shape=lambda s: s, out_dtype=lambda t: t, func_type='pyfunc',\n"
                      "                bprop=gelu_bprop)\n"),
    )

    def check(self, ctx: Context):
        p = ctx.program
        for op in ctx.custom_op_sites:
            fn = op.function
            if fn is None or op.inputs is None:
                continue
            sig = Signature(fn, skip_self=op.bound)
            if sig.vararg is not None or sig.varkw is not None:
                continue
            positional = sig.positional
            expected = op.inputs + 2
            required = [q for q in positional if not q.has_default]
            if len(required) <= expected <= len(positional):
                continue
            fix = None
            if len(positional) < expected and fn.node.type == "funcdef":
                names = [q.name for q in positional]
                taken = used_names(fn)
                has_dout = bool(names) and is_dout_like(names[-1])
                has_out = (len(names) >= 2 and is_out_like(names[-2])) if has_dout else (bool(names) and is_out_like(names[-1]))
                if len(positional) == expected - 1 and not has_dout and (has_out or len(names) == op.inputs + 1):
                    fix = Fix("Add missing parameter `dout`", tuple(insert_after(fn, positional[-1], [fresh("dout", taken)], p.index)))
                elif len(positional) == op.inputs and not has_dout and not has_out:
                    anchor = positional[-1] if positional else None
                    new = [fresh("out", taken), fresh("dout", taken)]
                    fix = Fix("Add missing parameters `out`, `dout`", tuple(insert_after(fn, anchor, new, p.index)))
            label = "bound method " if op.bound else ""
            span = p.span(fn.name_node) if fn.name_node is not None else p.span(fn.node)
            yield Draft(span,
                        f"ops.Custom bprop {label}{fn.name} takes {len(positional)} parameter(s); the op has "
                        f"{op.inputs} input(s), so MindSpore passes {expected}: ({', '.join([f'x{i}' for i in range(op.inputs)] + ['out', 'dout'])})",
                        fails_in=BOTH, fix=fix,
                        related=(Related(p.span(op.call), "the ops.Custom that uses it"),),
                        noqa_line=fn.def_line)
