"""BP044: a Python bprop MindSpore never calls: for an op with a built-in C++ bprop, or a ``bprop`` method on a
Primitive."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.mindspore_api import ops_with_cpp_bprop
from ..engine.primitive_bprops import inner_bprop, primitive_classes_with_bprop, registrations
from .base import NEVER, Draft, Invalid, Rule, Valid


class IgnoredPrimitiveBprop(Rule):
    code = "BP044"
    name = "primitive-bprop-ignored"
    summary = ("MindSpore uses its built-in C++ bprop for ops that have one (and for a user Primitive re-declaring "
               "such an op's name), and never calls a `bprop` method on a Primitive: use ops.Custom(..., bprop=) or "
               "a Cell. The ops with a C++ bprop are those of data/cpp_bprop_ops.txt, found by differentiating a "
               "same-named PrimitiveWithInfer in GRAPH_MODE under MindSpore 2.10 and seeing whether its get_bprop "
               "runs (scripts/extract_mindspore_data.py); exported ops without one, such as the _thor_ops Cus* "
               "ops, do call a Python bprop.")
    mindspore_says = "No error: the Python bprop is silently ignored and the built-in gradient is used."
    valid = (
        Valid("from mindspore import ops\n\ndef sq(x):\n    return x * x\n\ndef sq_bprop(x, out, dout):\n"
              "    return (2 * x * dout,)\n\nop = ops.Custom(sq, out_shape=lambda s: s, out_dtype=lambda t: t, "
              "func_type='pyfunc',\n                bprop=sq_bprop)\n"),
        Valid("from mindspore import ops\nfrom mindspore.ops import PrimitiveWithInfer, prim_attr_register\n\n"
              "class MyPairOp(PrimitiveWithInfer):\n    @prim_attr_register\n    def __init__(self):\n        pass\n\n"
              "    def get_bprop(self):\n        def bprop(x1, x2, out, dout):\n"
              "            return (ops.zeros_like(x1), ops.zeros_like(x2))\n        return bprop\n",
              "no C++ bprop is registered under MyPairOp: GRAPH_MODE calls this get_bprop"),
        Valid("from mindspore.ops._grad_experimental.grad_base import bprop_getters\n\n"
              "@bprop_getters.register(\"CusMatMulCube\")\ndef get_bprop_cube(self):\n"
              "    def bprop(x1, x2, out, dout):\n        return (dout, dout)\n    return bprop\n",
              "an exported op without a C++ bprop: the registered getter is the one used"),
    )
    invalid = (
        Invalid("from mindspore import ops\nfrom mindspore.ops._grad_experimental.grad_base import bprop_getters\n\n"
                "@bprop_getters.register(ops.ReLU)\ndef get_bprop_relu(self):\n    def bprop(x, out, dout):\n"
                "        return (dout * 100,)\n    return bprop\n",
                at="6:9", message=("the bprop registered for ReLU is never used: MindSpore's C++ bprop for ReLU "
                                   "takes precedence; wrap your op in ops.Custom(..., bprop=) or a Cell with a "
                                   "bprop")),
        Invalid("from mindspore.ops._grad_experimental.grad_base import bprop_getters\n\nKEY = \"Sigmoid\"\n\n\n"
                "@bprop_getters.register(KEY)\ndef get_bprop_sigmoid(self):\n    def bprop(x, out, dout):\n"
                "        return (dout,)\n    return bprop\n",
                note="a string key, here through a module constant",
                at="8:9", message=("the bprop registered for Sigmoid is never used: MindSpore's C++ bprop for "
                                   "Sigmoid takes precedence; wrap your op in ops.Custom(..., bprop=) or a Cell "
                                   "with a bprop")),
        Invalid("from mindspore.ops import PrimitiveWithInfer, prim_attr_register\n\nclass Abs(PrimitiveWithInfer):\n"
                "    @prim_attr_register\n    def __init__(self):\n        pass\n    def bprop(self, x, out, dout):\n"
                "        return (dout * 100,)\n",
                at="7:9", message=("a `bprop` method on Primitive Abs is never called: MindSpore looks up get_bprop "
                                   "only; use ops.Custom(..., bprop=) or a Cell")),
    )

    def check(self, ctx: Context):
        p = ctx.program
        cpp = ops_with_cpp_bprop()
        for reg in registrations(p):
            if reg.key is None or reg.key not in cpp:
                continue
            fn = reg.bprop or reg.getter
            yield Draft(p.span(fn.node.name), f"the bprop registered for {reg.key} is never used: MindSpore's C++ "
                        f"bprop for {reg.key} takes precedence; wrap your op in ops.Custom(..., bprop=) or a Cell "
                        f"with a bprop", fails_in=NEVER, noqa_line=fn.def_line)
        for cls in primitive_classes_with_bprop(p):
            if "bprop" in cls.members and cls.members["bprop"].function is not None:
                fn = cls.members["bprop"].function
                if fn.name_node is not None:
                    yield Draft(p.span(fn.name_node), f"a `bprop` method on Primitive {cls.name} is never called: "
                                f"MindSpore looks up get_bprop only; use ops.Custom(..., bprop=) or a Cell",
                                fails_in=NEVER, noqa_line=fn.def_line)
            getter = cls.members.get("get_bprop")
            if getter is not None and getter.function is not None and cls.name in cpp:
                inner = inner_bprop(getter.function) or getter.function
                if inner.name_node is not None:
                    yield Draft(p.span(inner.name_node), f"{cls.name} re-declares the built-in op {cls.name}: "
                                f"MindSpore uses the built-in C++ bprop and never calls this one; rename the "
                                f"Primitive or use ops.Custom(..., bprop=)", fails_in=NEVER, noqa_line=inner.def_line)
