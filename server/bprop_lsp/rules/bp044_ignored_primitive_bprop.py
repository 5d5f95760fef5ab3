"""BP044: a Python bprop MindSpore never calls: for a built-in op, or a ``bprop`` method on a Primitive."""
from __future__ import annotations

from functools import lru_cache
from importlib import resources

from ..engine.context import Context
from ..engine.program import BPROP_GETTER_REGISTRIES, Function, call_of, dotted, iter_scope_nodes
from .base import NEVER, Draft, Invalid, Rule, Valid


@lru_cache(maxsize=1)
def builtin_ops() -> frozenset[str]:
    text = resources.files("bprop_lsp").joinpath("data/builtin_ops.txt").read_text(encoding="utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


class IgnoredPrimitiveBprop(Rule):
    code = "BP044"
    name = "primitive-bprop-ignored"
    summary = ("MindSpore uses its built-in C++ bprop for built-in ops (and for a user Primitive re-declaring a built-in "
               "op's name), and never calls a `bprop` method on a Primitive: use ops.Custom(..., bprop=) or a Cell.")
    mindspore_says = "No error: the Python bprop is silently ignored and the built-in gradient is used."
    valid = (
        Valid("from mindspore import ops\n\ndef sq(x):\n    return x * x\n\ndef sq_bprop(x, out, dout):\n"
              "    return (2 * x * dout,)\n\nop = ops.Custom(sq, out_shape=lambda s: s, out_dtype=lambda t: t, "
              "func_type='pyfunc',\n                bprop=sq_bprop)\n"),
    )
    invalid = (
        Invalid("from mindspore import ops\nfrom mindspore.ops._grad_experimental.grad_base import bprop_getters\n\n"
                "@bprop_getters.register(ops.ReLU)\ndef get_bprop_relu(self):\n    def bprop(x, out, dout):\n"
                "        return (dout * 100,)\n    return bprop\n"),
        Invalid("from mindspore.ops import PrimitiveWithInfer, prim_attr_register\n\nclass Abs(PrimitiveWithInfer):\n"
                "    @prim_attr_register\n    def __init__(self):\n        pass\n    def bprop(self, x, out, dout):\n"
                "        return (dout * 100,)\n"),
    )

    def check(self, ctx: Context):
        p = ctx.program
        builtins = builtin_ops()
        # bprop_getters.register(ops.X) for a built-in X
        for fn, target in registered_getters(p):
            full = p.resolve_dotted(target)
            leaf = target.rsplit(".", 1)[-1]
            local = p.class_named(target) if "." not in target else None
            is_builtin = (full.startswith("mindspore.ops.") and leaf in builtins) or (
                local is not None and local.name in builtins and p.is_primitive(local))
            if not is_builtin:
                continue
            inner = _inner_bprop(fn) or fn
            yield Draft(p.span(inner.node.name), f"the bprop registered for built-in op {leaf} is never used: "
                        f"MindSpore's C++ bprop for {leaf} takes precedence; wrap your op in ops.Custom(..., "
                        f"bprop=) or a Cell with a bprop", fails_in=NEVER, noqa_line=inner.def_line)
        for cls in primitive_classes(p):
            if "bprop" in cls.members and cls.members["bprop"].function is not None:
                fn = cls.members["bprop"].function
                if fn.name_node is not None:
                    yield Draft(p.span(fn.name_node), f"a `bprop` method on Primitive {cls.name} is never called: "
                                f"MindSpore looks up get_bprop only; use ops.Custom(..., bprop=) or a Cell",
                                fails_in=NEVER, noqa_line=fn.def_line)
            getter = cls.members.get("get_bprop")
            if getter is not None and getter.function is not None and cls.name in builtins:
                inner = _inner_bprop(getter.function) or getter.function
                if inner.name_node is not None:
                    yield Draft(p.span(inner.name_node), f"{cls.name} re-declares the built-in op {cls.name}: "
                                f"MindSpore uses the built-in C++ bprop and never calls this one; rename the "
                                f"Primitive or use ops.Custom(..., bprop=)", fails_in=NEVER, noqa_line=inner.def_line)


def _inner_bprop(getter: Function) -> Function | None:
    for node in iter_scope_nodes(getter.body):
        if node.type == "funcdef" and node.name.value == "bprop":
            return Function(node, "bprop")
    return None


def primitive_classes(p):
    """The file's Primitive subclasses (not Cells)."""
    return [cls for cls in p.classes if p.is_primitive(cls) and not p.is_cell(cls)]


def registered_getters(p):
    """(getter function, dotted target) for every ``@bprop_getters.register(Target)`` / ``@bprops.register``."""
    if ".register" not in p.text:
        return
    for fns in p.functions.values():
        for fn in fns:
            for dec in fn.decorators:
                expr = dec.children[1]
                c = call_of(expr) if expr.type in ("power", "atom_expr") else None
                if not c or not c[0] or not c[0].endswith(".register") or c[0].rsplit(".", 2)[-2] not in BPROP_GETTER_REGISTRIES:
                    continue
                target = dotted(c[1].children[1]) if len(c[1].children) >= 3 else None
                if target is not None:
                    yield fn, target


def getter_sites(ctx):
    """(Primitive class, getter function, inner bprop or None) for get_bprop methods and for
    bprop_getters.register(Cls) where Cls is a Primitive class of this file."""
    p = ctx.program
    for cls in primitive_classes(p):
        getter = cls.members.get("get_bprop")
        if getter is not None and getter.function is not None and not getter.function.is_lambda:
            yield cls, getter.function, _inner_bprop(getter.function)
    for fn, target in registered_getters(p):
        local = p.class_named(target) if "." not in target else None
        if local is not None and p.is_primitive(local):
            yield local, fn, _inner_bprop(fn)
