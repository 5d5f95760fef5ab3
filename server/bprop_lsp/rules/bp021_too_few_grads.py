"""BP021: a Cell's bprop returns fewer gradients than construct has inputs."""
from __future__ import annotations

from ..engine.context import Context
from .base import example, BOTH, GRAPH, Draft, Invalid, Rule, Valid
from ._returns import (anchor_span, cell_subjects, instance_truth, is_dict_display, is_nested_tuple, reachable_returns,
                       return_related, returns_of)


class TooFewGrads(Rule):
    code = "BP021"
    depends_on_inputs = True
    scope = "cell"
    position_free = True
    name = "bprop-too-few-gradients"
    summary = ("A Cell's bprop must return one gradient per forward input, non-Tensor inputs and inputs whose "
               "gradient is not requested included.")
    mindspore_says = ("GRAPH: RuntimeError: The output size of the 'bprop' must match the number of parameters in "
                      "its corresponding primal function: k vs. n. PYNATIVE: RuntimeError: Grad size should lager "
                      "than forward inputs, but got k vs n.")
    valid = (
        Valid(example("""
            from mindspore import nn

            N_IN = 3

            class Sum3(nn.Cell):
                def construct(self, a, b, c):
                    return a + b + c
                def bprop(self, a, b, c, out, dout):
                    return N_IN * (dout,)
            """), "a tuple repeated by a module constant: 3 gradients"),
        Valid(example("""
            from mindspore import nn

            class Sum3(nn.Cell):
                def construct(self, a, b, c):
                    return a + b + c
                def bprop(self, a, b, c, out, dout):
                    same = (dout, dout)
                    return (*same, dout)
            """), "a starred pair and one more: 3 gradients"),
        Valid(example("""
            from mindspore import nn

            class Lerp(nn.Cell):
                def construct(self, s, e, w):
                    return s + w * (e - s)
                def bprop(self, s, e, w, out, dout):
                    gs = [dout * (1 - w)]
                    gs.extend([dout * w, dout * (e - s)])
                    return tuple(gs)
            """), "a list extended in straight-line code, then converted"),
        Valid(example("""
            from mindspore import nn, ops

            class Swap(nn.Cell):
                def __init__(self, flip=False):
                    super().__init__()
                    self.flip = flip
                def construct(self, a, b):
                    return a - b
                def bprop(self, a, b, out, dout):
                    grads = (dout,)
                    grads = grads + (-dout,)
                    return (grads[1], grads[0]) if self.flip else grads
            """), "concatenation and a conditional expression of equal lengths"),
        Valid("from mindspore import nn, ops\nclass P(nn.Cell):\n    def construct(self, x, n):\n        return x ** n\n"
              "    def bprop(self, x, n, out, dout):\n        return dout * n * x ** (n - 1), ops.zeros_like(n)\n"),
        Valid(example("""
            from mindspore import nn

            class Mul(nn.Cell):
                def __init__(self, fast=False):
                    super().__init__()
                    self.fast = fast
                def construct(self, x, y):
                    return x * y
                def bprop(self, x, y, out, dout):
                    if self.fast:
                        return (dout * y,)
                    return dout * y, dout * x

            net = Mul()
            """), "the short path is under a flag no instance of the file sets (probe q29)"),
    )
    invalid = (
        Invalid(example("""
            from mindspore import nn

            class Mul(nn.Cell):
                def __init__(self, fast=False):
                    super().__init__()
                    self.fast = fast
                def construct(self, x, y):
                    return x * y
                def bprop(self, x, y, out, dout):
                    if self.fast:
                        return (dout * y,)
                    return dout * y, dout * x

            net = Mul(fast=True)
            """), note="every instance the file builds takes the short path: GRAPH folds `self.fast` (probe q28)",
                at="9:9", message=("bprop of Mul returns 1 gradient(s) for 2 input(s): return one gradient per "
                                   "input, ops.zeros_like(x) for those without one")),
        Invalid(example("""
            from mindspore import nn

            N_SHARED = 2

            class Sum3(nn.Cell):
                def construct(self, a, b, c):
                    return a + b + c
                def bprop(self, a, b, c, out, dout):
                    return (dout,) * N_SHARED
            """), note="a tuple repeated by a module constant",
                at="8:9", message=("bprop of Sum3 returns 2 gradient(s) for 3 input(s): return one gradient per "
                                   "input, ops.zeros_like(x) for those without one")),
        Invalid(example("""
            from mindspore import nn

            class Blend(nn.Cell):
                def __init__(self, learn=True):
                    super().__init__()
                    self.learn = learn
                def construct(self, a, b, t):
                    return a * t + b * (1 - t)
                def bprop(self, a, b, t, out, dout):
                    grads = (dout * t,)
                    if self.learn:
                        grads += (dout * (a - b),)
                    return grads
            """), note="1 or 2 gradients for 3 inputs, whichever branch runs",
                at="9:9", message=("bprop of Blend returns 1 or 2 gradient(s) for 3 input(s): return one gradient "
                                   "per input, ops.zeros_like(x) for those without one")),
        Invalid(example("""
            from mindspore import nn

            class Lerp(nn.Cell):
                def construct(self, s, e, w):
                    return s + w * (e - s)
                def bprop(self, s, e, w, out, dout):
                    parts = list()
                    parts.append(dout * (1 - w))
                    parts.append(dout * w)
                    return tuple(parts)
            """), note="list() and two appends, converted with tuple()",
                at="6:9", message=("bprop of Lerp returns 2 gradient(s) for 3 input(s): return one gradient per "
                                   "input, ops.zeros_like(x) for those without one")),
        Invalid(example("""
            from mindspore import nn

            class AddMul(nn.Cell):
                def construct(self, p, q, r):
                    return (p + q) * r
                def bprop(self, p, q, r, out, dout):
                    head = (dout * r,)
                    return (*head, dout * (p + q))
            """), note="a starred 1-tuple and one more",
                at="6:9", message=("bprop of AddMul returns 2 gradient(s) for 3 input(s): return one gradient per "
                                   "input, ops.zeros_like(x) for those without one")),
        Invalid(example("""
            from mindspore import nn, ops

            class A(nn.Cell):
                def construct(self, a, b, c):
                    return a * b + c
                def bprop(self, a, b, c, out, dout):
                    grads = (dout * b,)
                    grads += (dout * a,)
                    return grads
            """), note="`grads += (...)` counted: 2 gradients for 3 inputs",
                at="6:9", message=("bprop of A returns 2 gradient(s) for 3 input(s): return one gradient per input, "
                                   "ops.zeros_like(x) for those without one")),
        Invalid(example("""
            from mindspore import nn

            class A(nn.Cell):
                def construct(self, a, b, c):
                    return a * b + c
                def bprop(self, a, b, c, out, dout):
                    return tuple([dout * b, dout * a])
            """), note="tuple() of a list display",
                at="6:9", message=("bprop of A returns 2 gradient(s) for 3 input(s): return one gradient per input, "
                                   "ops.zeros_like(x) for those without one")),
        Invalid("from mindspore import nn\nclass A(nn.Cell):\n    def construct(self, a, b, c):\n        return a * b + c\n"
                "    def bprop(self, a, b, c, out, dout):\n        return dout * b, dout * a\n",
                at="5:9", message=("bprop of A returns 2 gradient(s) for 3 input(s): return one gradient per input, "
                                   "ops.zeros_like(x) for those without one")),
        Invalid("from mindspore import nn\nclass N(nn.Cell):\n    def construct(self, x, y):\n        return x - y\n"
                "    def bprop(self, x, y, out, dout):\n        grads = (dout, -dout)\n        return (grads,)\n",
                note="a nested tuple counts as one gradient (GRAPH_MODE)",
                at="5:9", message=("bprop of N returns 1 gradient(s) for 2 input(s) (a nested tuple counts as one): "
                                   "return one gradient per input, ops.zeros_like(x) for those without one [fails "
                                   "in GRAPH_MODE]")),
    )

    def check(self, ctx: Context):
        for subject in cell_subjects(ctx):
            info = returns_of(subject.fn, ctx.program)
            if info is None:
                continue
            returns = info.returns
            if len({r.shape.length for r in returns if r.shape.kind == "tuple"}) > 1:
                # Paths disagree. GRAPH folds conditions on module flags and on attributes every instance has alike
                # (PYNATIVE takes the same path): the returns left on the path taken are the ones that count.
                reachable = reachable_returns(subject.fn.node, lambda c: instance_truth(ctx, subject.site, c))
                if reachable is not None:
                    returns = [r for r in returns if id(r.stmt) in reachable]
                if len({r.shape.length for r in returns if r.shape.kind == "tuple"}) > 1:
                    continue  # paths still disagree: BP023 speaks for it
            for r in returns:
                s = r.shape
                if s.kind != "tuple" or s.length >= subject.lo:
                    continue
                if any(is_dict_display(i) for i in s.items):
                    continue  # ((dx,), {name: dw}): BP031
                nested = is_nested_tuple(s, subject.fn)
                yield Draft(anchor_span(ctx, subject.fn),
                            f"{subject.label} returns {s.length_text()} gradient(s) for {subject.lo} input(s)"
                            + (" (a nested tuple counts as one)" if nested else "")
                            + ": return one gradient per input, ops.zeros_like(x) for those without one",
                            fails_in=frozenset({GRAPH}) if nested else BOTH,
                            related=return_related(ctx, r, f"returns {s.length_text()} gradient(s) here"),
                            noqa_line=subject.fn.def_line, subject=subject.site)
