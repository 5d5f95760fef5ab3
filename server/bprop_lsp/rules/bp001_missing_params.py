"""BP001: a Cell's bprop takes fewer positional parameters than the forward inputs plus ``out`` and ``dout``."""
from __future__ import annotations

from ..engine.context import Context
from .base import example, BOTH, GRAPH, Draft, Invalid, Rule, Valid
from ._signature import arity_applies, construct_related, counts, def_span, missing_params_fix, view


class MissingParams(Rule):
    code = "BP001"
    depends_on_inputs = True
    scope = "cell"
    position_free = True
    name = "bprop-missing-params"
    summary = "A Cell's bprop must take every forward input of construct, then out, then dout."
    mindspore_says = (
        "GRAPH: TypeError: The params of function 'bprop' of Primitive or Cell requires the forward inputs as well "
        "as the 'out' and 'dout'. PYNATIVE: TypeError: <Cell>.bprop() takes N positional arguments but M were given."
    )
    fix_title = "Add the missing trailing parameters"
    valid = (
        Valid(example("""
            from mindspore import nn

            def _square_grad(self, x, out):
                return (2 * x,)

            def _full_grad(self, x, out, dout):
                return (2 * x * dout,)

            GRADS = {"square": _square_grad}
            GRADS["square"] = _full_grad

            class Square(nn.Cell):
                def construct(self, x):
                    return x * x
                bprop = GRADS["square"]
            """), "the table is changed in place before the class reads it: which entry is live is not guessed"),
        Valid(example("""
            import os
            from mindspore import nn

            class Clip(nn.Cell):
                def construct(self, x):
                    return x
                if os.environ.get("V2"):
                    def bprop(self, x, out):
                        return (out,)
                else:
                    def bprop(self, x, out, dout):
                        return (dout,)
            """), "which branch runs is unknown: no finding may rest on a definition the other branch replaces"),
        Valid(example("""
            from typing import TYPE_CHECKING
            from mindspore import nn

            class Clip(nn.Cell):
                def construct(self, x):
                    return x
                if TYPE_CHECKING:
                    def bprop(self, x): ...
                def bprop(self, x, out, dout):
                    return (dout,)
            """), "a TYPE_CHECKING stub is never defined"),
        Valid(example("""
            from mindspore import nn, ops

            class Quantize(nn.Cell):
                def construct(self, x):
                    return ops.round(x * 4) / 4
                def bprop(self, x, out):
                    return (ops.ones_like(x),)

            class QuantBlock(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.q = Quantize()
                def construct(self, x):
                    return self.q(x) * 3.0
                def bprop(self, x, out, dout):
                    return (dout * 3.0,)
            """), "the outer cell's bprop replaces the backward of its subtree: the inner bprop is never called"),
        Valid(example("""
            from mindspore import nn, ops

            class Round(nn.Cell):
                def construct(self, x):
                    return ops.round(x)
                def _back(self, x, out, dout):
                    return (dout,)
                @property
                def bprop(self):
                    return self._back
            """), "a property returning a bound method of the right shape"),
        Valid("from mindspore import nn\nclass MulAdd(nn.Cell):\n    def construct(self, x, y):\n        return 2 * x + y\n"
              "    def bprop(self, x, y, out, dout):\n        return 2 * dout, dout\n"),
        Valid("from mindspore import nn\nclass Renamed(nn.Cell):\n    def construct(self, x):\n        return x\n"
              "    def bprop(self, a, fwd, g):\n        return (g,)\n", "names do not matter, only positions"),
        Valid("from mindspore import nn\nclass Free(nn.Cell):\n    def construct(self, *inputs):\n        return inputs[0]\n"
              "    def bprop(self, x, out, dout):\n        return (dout,)\n", "*inputs: the count depends on the call"),
    )
    invalid = (
        Invalid(example("""
            from mindspore import nn

            def _square_grad(self, x, out):
                return (2 * x,)

            def _cube_grad(self, x, out, dout):
                return (3 * x * x * dout,)

            GRADS = {"square": _square_grad, "cube": _cube_grad}

            class Square(nn.Cell):
                def construct(self, x):
                    return x * x
                bprop = GRADS["square"]
            """), note="the bprop is an entry of a module dict of functions (probe r09)",
                fixed=example("""
            from mindspore import nn

            def _square_grad(self, x, out, dout):
                return (2 * x,)

            def _cube_grad(self, x, out, dout):
                return (3 * x * x * dout,)

            GRADS = {"square": _square_grad, "cube": _cube_grad}

            class Square(nn.Cell):
                def construct(self, x):
                    return x * x
                bprop = GRADS["square"]
            """),
                at="3:5", message=("bprop of Square must take (self, x, out, dout): it lacks dout")),
        Invalid(example("""
            from mindspore import nn

            class Scale(nn.Cell):
                def construct(self, x):
                    return x * 3
                def bprop(self, x, out, dout):
                    return (dout * 3,)

            class ScaleAdd(nn.Cell):
                def construct(self, x, y):
                    return 3 * x + y
                bprop = Scale.bprop
            """), note="another class's bprop read through the class (probe r02); no fix: Scale needs it as it is",
                at="6:9", message=("bprop of ScaleAdd must take (self, x, y, out, dout): it lacks y")),
        Invalid(example("""
            from mindspore import nn

            class MyReLU(nn.ReLU):
                def bprop(self, x, dout):
                    return (dout,)
            """), note="a subclass of a built-in layer is checked against the construct it inherits",
                at="4:9", message="bprop of MyReLU must take (self, input, out, dout): it lacks out"),
        Invalid(example("""
            from mindspore import nn

            def _fwd(self, x):
                return x * 2

            def _bwd(self, x, out):
                return (out * 2,)

            def make_cell():
                return type("Doubler", (nn.Cell,), {"construct": _fwd, "bprop": _bwd})
            """), note="a class built by type(name, bases, namespace)",
                at="6:5", message="bprop of Doubler must take (self, x, out, dout): it lacks dout"),
        Invalid(example("""
            from mindspore import nn

            class Sum(nn.Cell):
                def construct(self, *inputs):
                    return inputs[0] + inputs[1]
                def bprop(self, a, out):
                    return (out, out)

            net = Sum()
            y = net(1.0, 2.0)
            """), note="construct(*inputs): the file's calls pass two inputs",
                at="6:9", message=("bprop of Sum must take (self, inputs_0, inputs_1, out, dout): it lacks "
                                   "inputs_1, dout")),
        Invalid(example("""
            from mindspore import nn

            class Scale(nn.Cell):
                def construct(self, x, scale=None):
                    return x * scale
                def bprop(self, x, out, dout):
                    return (dout,)

            y = Scale()(1.0, 2.0)
            """), note="a defaulted input that every call passes is an input",
                at="6:9", message="bprop of Scale must take (self, x, scale, out, dout): it lacks scale"),
        Invalid(example("""
            from mindspore import nn, ops

            def _straight_through(self, x, out):
                return (ops.ones_like(x),)

            class Binarize(nn.Cell):
                def construct(self, x):
                    return ops.sign(x)
                bprop = _straight_through
            """), note="a module function bound in the class body is the bprop, called with self",
                at="3:5", message="bprop of Binarize must take (self, x, out, dout): it lacks dout"),
        Invalid(example("""
            from mindspore import nn

            class Identity(nn.Cell):
                def construct(self, x):
                    return x
                def backward(ctx, grad_output):
                    return (grad_output,)
                bprop = backward
            """), note="a torch-style backward(ctx, grad) aliased as bprop lacks the inputs, out and dout",
                at="6:9", message=("bprop of Identity must take (self, x, out, dout): it has 2 parameter(s) in all, "
                                   "too few for 1 input(s), out and dout (a torch-style backward(ctx, grad) "
                                   "signature lacks the forward inputs, out and dout)")),
        Invalid(example("""
            from mindspore import nn

            Base = nn.Cell

            class Scale(Base):
                def construct(self, x):
                    return x
                def bprop(self, x, out, dout):
                    return (dout,)

            class Shifted(Scale):
                def construct(self, x, bias):
                    return x + bias
            """), note="base-class alias; the inherited bprop no longer matches the subclass construct",
                at="8:9", message=("bprop of Shifted (inherited from Scale) must take (self, x, bias, out, dout): "
                                   "it lacks bias")),
        Invalid(example("""
            from mindspore import nn, ops

            def make_bprop(scale):
                def bprop(self, x, out):
                    return (ops.ones_like(x) * scale,)
                return bprop

            class Quant(nn.Cell):
                def construct(self, x):
                    return ops.round(x)
                bprop = make_bprop(0.5)
            """), note="the function a factory returns is the bprop",
                at="4:9", message="bprop of Quant must take (self, x, out, dout): it lacks dout"),
        Invalid(example("""
            from mindspore import nn

            USE_V2 = True

            class Clip(nn.Cell):
                def construct(self, x):
                    return x
                if USE_V2:
                    def bprop(self, x, out):
                        return (out,)
                else:
                    def bprop(self, x, out, dout):
                        return (dout,)
            """), note="a class-body `if` on a module constant: only the taken branch is defined",
                at="9:13", message="bprop of Clip must take (self, x, out, dout): it lacks dout"),
        Invalid(example("""
            from mindspore import nn

            class Clip(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.bprop = self._clip_bprop
                def construct(self, x):
                    return x * 2.0
                def _clip_bprop(self, x, out):
                    return (out,)
            """), note="a bound method assigned to self.bprop is used by GRAPH (only), arity check included",
                also=("BP011",),
                at="9:9", message="bprop of Clip must take (self, x, out, dout): it lacks dout [fails in GRAPH_MODE]"),
        Invalid(example("""
            from mindspore import nn, ops

            class LogCosh(nn.Cell):
                def construct(self, x):
                    return ops.log(ops.cosh(x))
                def bprop(self, x, out, *, dout):
                    return (dout * ops.tanh(x),)
            """), note="a keyword-only dout: MindSpore passes every argument positionally",
                at="6:9", message=("bprop of LogCosh must take (self, x, out, dout): it lacks dout; `dout` is "
                                   "keyword-only, but MindSpore passes every argument positionally")),
        Invalid("from mindspore import nn\nclass MulAdd(nn.Cell):\n    def construct(self, x, y):\n        return 2 * x + y\n"
                "    def bprop(self, x, y, out):\n        return 2 * out, out\n",
                fixed="from mindspore import nn\nclass MulAdd(nn.Cell):\n    def construct(self, x, y):\n        return 2 * x + y\n"
                      "    def bprop(self, x, y, out, dout):\n        return 2 * out, out\n",
                at="5:9", message="bprop of MulAdd must take (self, x, y, out, dout): it lacks dout"),
        Invalid("from mindspore import nn\nclass Rev(nn.Cell):\n    def construct(self, x):\n        return x\n"
                "    def bprop(self, grad_output):\n        return (-grad_output,)\n",
                fixed="from mindspore import nn\nclass Rev(nn.Cell):\n    def construct(self, x):\n        return x\n"
                      "    def bprop(self, x, out, grad_output):\n        return (-grad_output,)\n",
                note="torch-style backward(ctx, grad): inputs and out are inserted before the gradient",
                at="5:9", message="bprop of Rev must take (self, x, out, dout): it lacks x, out"),
        Invalid("from mindspore import nn\nclass F(nn.Cell):\n    def construct(self, x):\n        return x\n"
                "    def bprop(\n        self,\n        x,  # input\n        out,\n    ):\n        return (out,)\n",
                fixed="from mindspore import nn\nclass F(nn.Cell):\n    def construct(self, x):\n        return x\n"
                      "    def bprop(\n        self,\n        x,  # input\n        out,\n        dout,\n    ):\n        return (out,)\n",
                note="one parameter per line: the new one gets its own line",
                at="5:9", message="bprop of F must take (self, x, out, dout): it lacks dout"),
    )

    def check(self, ctx: Context):
        for site in ctx.cell_sites:
            v = view(ctx, site)
            if v is None or not arity_applies(v):
                continue
            lo, hi = v.input_range
            pynative_count, graph_count = counts(v)
            if graph_count >= lo + 2:
                continue  # enough for GRAPH; a first parameter not named self is BP004's (PYNATIVE shifts)
            fix, missing = missing_params_fix(ctx, v)
            # MindSpore 2.10 PYNATIVE tolerates `bprop(self, dout)` for a cell without inputs (case 104).
            fails = GRAPH if lo == 0 and hi == 0 and v.count == 1 and v.has_self else None
            if v.adapted:
                fails = GRAPH  # PYNATIVE calls the functools.wraps adapter, GRAPH the signature it wraps
            lacks = ", ".join(missing) if missing else "parameters"
            message = f"bprop of {site.owner_label} must take {v.expected_text()}: it lacks {lacks}"
            if not v.has_self:
                message = (f"bprop of {site.owner_label} must take {v.expected_text()}: it has {v.count} parameter(s) "
                           f"in all, too few for {lo} input(s), out and dout (a torch-style backward(ctx, grad) "
                           f"signature lacks the forward inputs, out and dout)")
            kw_only = [q for q in v.fn.params if q.kind == "kwonly" and not q.has_default]
            if kw_only:
                message += (f"; {', '.join(f'`{q.name}`' for q in kw_only)} is keyword-only, but MindSpore passes "
                            f"every argument positionally")
            if lo != hi:
                message += f" (construct has {hi - lo} defaulted input(s))"
            fails_in = (frozenset({fails}) if fails else BOTH) & site.modes
            if not fails_in:
                continue
            yield Draft(
                span=def_span(ctx, v.fn),
                message=message,
                fails_in=fails_in,
                fix=fix,
                related=construct_related(ctx, site),
                noqa_line=v.fn.def_line,
            )
