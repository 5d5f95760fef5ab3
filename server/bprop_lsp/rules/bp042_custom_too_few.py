"""BP042: the ``bprop=`` function of ``ops.Custom`` returns fewer gradients than the op has inputs."""
from __future__ import annotations

from ..engine.context import Context
from .base import example, BOTH, Draft, Invalid, Rule, Valid
from ._returns import anchor_span, custom_subjects, return_related, returns_of


class CustomTooFew(Rule):
    code = "BP042"
    depends_on_inputs = True
    name = "custom-bprop-too-few-gradients"
    summary = "The bprop of ops.Custom must return one gradient per op input."
    mindspore_says = ("GRAPH: IndexError: The tuple_getitem index should be less than k, but got k. PYNATIVE: "
                      "RuntimeError: Fn gradient size should larger than next edges size, but got k vs n.")
    valid = (
        Valid("from mindspore import ops\n\ndef mul(x, y):\n    return x * y\n\ndef mul_bprop(x, y, out, dout):\n"
              "    return dout * y, dout * x\n\nop = ops.Custom(mul, out_shape=lambda a, b: a, out_dtype=lambda a, b: a, "
              "func_type='pyfunc',\n                bprop=mul_bprop)\n"),
    )
    invalid = (
        Invalid(example("""
            from mindspore import ops
            from mindspore.ops import PrimitiveWithInfer, prim_attr_register

            class PairOp(PrimitiveWithInfer):
                @prim_attr_register
                def __init__(self):
                    pass
                def infer_shape(self, x1, x2):
                    return x1
                def infer_dtype(self, x1, x2):
                    return x1
                def get_bprop(self):
                    def bprop(x1, x2, out, dout):
                        return (dout,)
                    return bprop
            """), note="the bprop a user Primitive's get_bprop returns (GRAPH calls it: no C++ bprop by that name)",
                at="13:13", message=("the bprop of Primitive PairOp returns 1 gradient(s) for 2 op input(s): return "
                                     "one per input [fails in GRAPH_MODE]")),
        Invalid("from mindspore import ops\n\ndef mul(x, y):\n    return x * y\n\ndef mul_bprop(x, y, out, dout):\n"
                "    return (dout * y,)\n\nop = ops.Custom(mul, out_shape=lambda a, b: a, out_dtype=lambda a, b: a, "
                "func_type='pyfunc',\n                bprop=mul_bprop)\n",
                at="6:5", message=("ops.Custom bprop mul_bprop returns 1 gradient(s) for 2 op input(s): return one "
                                   "per input")),
    )

    def check(self, ctx: Context):
        for subject in custom_subjects(ctx):
            info = returns_of(subject.fn, ctx.program)
            if info is None:
                continue
            for r in info.returns:
                if r.shape.kind == "tuple" and r.shape.length < subject.lo:
                    yield Draft(anchor_span(ctx, subject.fn),
                                f"{subject.label} returns {r.shape.length} gradient(s) for {subject.lo} op input(s): "
                                f"return one per input",
                                fails_in=BOTH, related=return_related(ctx, r, f"returns {r.shape.length} here"),
                                noqa_line=subject.fn.def_line, subject=subject)
