"""BP020: a Cell's bprop returns something other than a tuple (a bare Tensor, a list, None)."""
from __future__ import annotations

from ..engine.context import Context
from .base import example, Invalid, Rule, Valid
from ._non_tuple import non_tuple_drafts
from ._returns import cell_subjects


class NonTupleReturn(Rule):
    code = "BP020"
    scope = "cell"
    position_free = True
    name = "bprop-returns-non-tuple"
    summary = "A Cell's bprop must return a tuple with one gradient per forward input, even for one input."
    mindspore_says = ("GRAPH: TypeError: For bprop function, output should be a tuple, but got <Abstract...>. "
                      "PYNATIVE: a bare Tensor is accepted for one input; None gives TypeError: The python function "
                      "output is none.")
    fix_title = "Return a tuple"
    valid = (
        Valid(example("""
            from mindspore import nn

            class Pair(nn.Cell):
                def construct(self, a, b):
                    return a + 0, b + 0
                def bprop(self, a, b, out, dout):
                    return dout
            """), "construct returns a pair: dout is a 2-tuple, one gradient per input"),
        Valid(example("""
            from mindspore import nn, ops

            class OptionalClip(nn.Cell):
                def __init__(self, clip=False):
                    super().__init__()
                    self.clip = clip
                def construct(self, x):
                    return x * 2.0
                def bprop(self, x, out, dout):
                    if self.clip:
                        return (ops.clip_by_value(dout * 2.0, -1.0, 1.0),)

            net = OptionalClip(clip=True)
            """), "every instance the file builds takes the returning path (GRAPH folds the attribute)"),
        Valid("from mindspore import nn\nclass Sq(nn.Cell):\n    def construct(self, x):\n        return x * x\n"
              "    def bprop(self, x, out, dout):\n        return (2 * x * dout,)\n"),
        Valid("from mindspore import nn\nclass Two(nn.Cell):\n    def construct(self, x, y):\n        return x + y\n"
              "    def bprop(self, x, y, out, dout):\n        grads = [dout, dout]\n        return tuple(grads)\n"),
    )
    invalid = (
        Invalid(example("""
            from mindspore import nn, ops

            class Add(nn.Cell):
                def construct(self, x, y):
                    return x + y
                def bprop(self, x, y, out, dout):
                    return ops.stack([dout, dout])
            """), note="one stacked Tensor, not a tuple of two gradients (probe q14)",
                at="6:9", message=("bprop of Add returns one bare value for 2 inputs: return a tuple with one "
                                   "gradient per input")),
        Invalid(example("""
            from mindspore import nn, ops

            class RoundST(nn.Cell):
                def construct(self, x):
                    return ops.round(x)
                def bprop(self, x, out, dout):
                    return dout
            """), note="construct returns a Tensor, so dout is one: GRAPH needs (dout,)",
                fixed=example("""
            from mindspore import nn, ops

            class RoundST(nn.Cell):
                def construct(self, x):
                    return ops.round(x)
                def bprop(self, x, out, dout):
                    return (dout,)
            """),
                at="6:9", message=("bprop of RoundST returns a bare value, not a tuple: GRAPH_MODE requires a tuple "
                                   "even for one input [fails in GRAPH_MODE]")),
        Invalid(example("""
            from mindspore import nn, ops

            class SinCos(nn.Cell):
                def construct(self, x):
                    return ops.sin(x), ops.cos(x)
                def bprop(self, x, out, dout):
                    return out[1]
            """), note="one Tensor of the forward pair", also=("BP028",),
                at="6:9", message=("bprop of SinCos returns a bare value, not a tuple: GRAPH_MODE requires a tuple "
                                   "even for one input [fails in GRAPH_MODE]")),
        Invalid(example("""
            from mindspore import nn

            class Scale(nn.Cell):
                def construct(self, x, s):
                    return x * s
                def bprop(self, x, s, out, dout):
                    return {"x": dout * s, "s": dout * x}
            """), note="a dict fails in both modes",
                at="6:9", message=("bprop of Scale returns a dict: MindSpore needs a tuple with one gradient per "
                                   "input (GRAPH: output should be a tuple; PYNATIVE: unreasonable data type dict)")),
        Invalid(example("""
            from mindspore import nn

            class Twice(nn.Cell):
                def construct(self, x, y):
                    return 2 * x + 2 * y
                def bprop(self, x, y, out, dout):
                    return [2 * dout for _ in (x, y)]
            """), note="a list comprehension is a list", fixed=example("""
            from mindspore import nn

            class Twice(nn.Cell):
                def construct(self, x, y):
                    return 2 * x + 2 * y
                def bprop(self, x, y, out, dout):
                    return tuple([2 * dout for _ in (x, y)])
            """),
                at="6:9", message="bprop of Twice returns a list: GRAPH_MODE requires a tuple [fails in GRAPH_MODE]"),
        Invalid(example("""
            from mindspore import nn, ops

            class OptionalClip(nn.Cell):
                def __init__(self, clip=True):
                    super().__init__()
                    self.clip = clip
                def construct(self, x):
                    return x * 2.0
                def bprop(self, x, out, dout):
                    if self.clip:
                        return (ops.clip_by_value(dout * 2.0, -1.0, 1.0),)

            net = OptionalClip(clip=False)
            """), note="the file builds an instance that falls off the end: an error",
                at="9:9", message=("bprop of OptionalClip can reach the end of its body without a return and then "
                                   "returns None when `self.clip` is false (as the file builds it): MindSpore fails "
                                   "on that path (GRAPH: output should be a tuple; PYNATIVE: the python function "
                                   "output is none); return a tuple with one gradient per input on every path")),
        Invalid(example("""
            from mindspore import nn

            def _masked_grad(dout, mask):
                return dout * mask

            class MaskedFill(nn.Cell):
                def construct(self, x, mask):
                    return x * mask
                def bprop(self, x, mask, out, dout):
                    return _masked_grad(dout, mask)
            """), note="a helper of the file returning one Tensor, for two inputs",
                at="9:9", message=("bprop of MaskedFill returns one bare value for 2 inputs: return a tuple with "
                                   "one gradient per input")),
        Invalid(example("""
            from mindspore import nn, ops

            class OptionalClip(nn.Cell):
                def __init__(self, clip=True):
                    super().__init__()
                    self.clip = clip
                def construct(self, x):
                    return x * 2.0
                def bprop(self, x, out, dout):
                    if self.clip:
                        return (ops.clip_by_value(dout * 2.0, -1.0, 1.0),)
            """), note="a path that reaches the end of the body returns None",
                at="9:9", message=("bprop of OptionalClip can reach the end of its body without a return and then "
                                   "returns None when `self.clip` is false: MindSpore fails on that path (GRAPH: "
                                   "output should be a tuple; PYNATIVE: the python function output is none); return "
                                   "a tuple with one gradient per input on every path")),
        Invalid("from mindspore import nn\nclass Sq(nn.Cell):\n    def construct(self, x):\n        return x * x\n"
                "    def bprop(self, x, out, dout):\n        return 2 * x * dout\n",
                fixed="from mindspore import nn\nclass Sq(nn.Cell):\n    def construct(self, x):\n        return x * x\n"
                      "    def bprop(self, x, out, dout):\n        return (2 * x * dout,)\n",
                at="5:9", message=("bprop of Sq returns a bare value, not a tuple: GRAPH_MODE requires a tuple even "
                                   "for one input [fails in GRAPH_MODE]")),
        Invalid("from mindspore import nn\nclass M(nn.Cell):\n    def construct(self, a, b):\n        return a * b\n"
                "    def bprop(self, a, b, out, dout):\n        return [dout * b, dout * a]\n",
                fixed="from mindspore import nn\nclass M(nn.Cell):\n    def construct(self, a, b):\n        return a * b\n"
                      "    def bprop(self, a, b, out, dout):\n        return (dout * b, dout * a)\n",
                at="5:9", message="bprop of M returns a list: GRAPH_MODE requires a tuple [fails in GRAPH_MODE]"),
        Invalid("from mindspore import nn\nclass C(nn.Cell):\n    def construct(self, x):\n        return x\n"
                "    def bprop(self, x, out, dout):\n        dx = dout * 2\n",
                note="no return statement: the bprop returns None",
                at="5:9", message=("bprop of C has no return statement, so it returns None: return a tuple with one "
                                   "gradient per input")),
    )

    def check(self, ctx: Context):
        for subject in cell_subjects(ctx):
            yield from non_tuple_drafts(ctx, subject, graph_only_for_single=True)
