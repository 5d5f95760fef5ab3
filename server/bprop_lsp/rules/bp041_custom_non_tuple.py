"""BP041: the ``bprop=`` function of ``ops.Custom`` returns something other than a tuple."""
from __future__ import annotations

from ..engine.context import Context
from .base import Invalid, Rule, Valid
from ._non_tuple import non_tuple_drafts
from ._returns import custom_subjects


class CustomNonTuple(Rule):
    code = "BP041"
    name = "custom-bprop-returns-non-tuple"
    summary = "The bprop of ops.Custom must return a tuple of gradients (GRAPH_MODE adds tuples)."
    mindspore_says = ("GRAPH: RuntimeError: The type of argument in TupleAdd operator should be tuple, but the first "
                      "argument is ... PYNATIVE: a bare Tensor runs; None gives TypeError: The python function output is none.")
    fix_title = "Return a tuple"
    valid = (
        Valid("from mindspore import ops\n\ndef sq(x):\n    return x * x\n\ndef sq_bprop(x, out, dout):\n"
              "    return (2 * x * dout,)\n\nop = ops.Custom(sq, out_shape=lambda s: s, out_dtype=lambda t: t, "
              "func_type='pyfunc',\n                bprop=sq_bprop)\n"),
    )
    invalid = (
        Invalid("from mindspore import ops\n\ndef sq(x):\n    return x * x\n\ndef sq_bprop(x, out, dout):\n"
                "    return 2 * x * dout\n\nop = ops.Custom(sq, out_shape=lambda s: s, out_dtype=lambda t: t, "
                "func_type='pyfunc',\n                bprop=sq_bprop)\n",
                fixed="from mindspore import ops\n\ndef sq(x):\n    return x * x\n\ndef sq_bprop(x, out, dout):\n"
                      "    return (2 * x * dout,)\n\nop = ops.Custom(sq, out_shape=lambda s: s, out_dtype=lambda t: t, "
                      "func_type='pyfunc',\n                bprop=sq_bprop)\n",
                at="6:5", message=("ops.Custom bprop sq_bprop returns a bare value, not a tuple: GRAPH_MODE "
                                   "requires a tuple even for one input [fails in GRAPH_MODE]")),
    )

    def check(self, ctx: Context):
        for subject in custom_subjects(ctx):
            yield from non_tuple_drafts(ctx, subject, graph_only_for_single=True)
