"""BP040: the ``bprop=`` function of ``ops.Custom`` takes the wrong number of parameters."""
from __future__ import annotations

from ..engine.context import Context, Signature
from ..engine.mindspore_api import builtin_ops
from ..engine.model import Related
from ..engine.model import Fix
from ..engine.param_edits import fresh, insert_after, is_dout_like, is_out_like, remove_params, used_names
from ..engine.primitive_bprops import getter_sites
from ..engine.trees import iter_own_nodes
from .base import example, BOTH, GRAPH, Draft, Invalid, Rule, Valid


class CustomArity(Rule):
    code = "BP040"
    depends_on_inputs = True
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
        Invalid(example("""
            import mindspore.ops as ops

            def cube_np(x):
                return x ** 3

            def cube_bprop(ctx, x, out, dout):
                return (3 * x * x * dout,)

            op = ops.Custom(cube_np, lambda s: s, lambda t: t, "pyfunc", cube_bprop)
            """), note="bprop as Custom's fifth positional argument",
                at="6:5", message=("ops.Custom bprop cube_bprop takes 4 parameter(s); the op has 1 input(s), so "
                                   "MindSpore passes 3: (x0, out, dout)")),
        Invalid(example("""
            from mindspore.ops import Custom

            def leaky_np(x):
                return x

            def make_bprop(alpha):
                def leaky_bprop(x, out):
                    return (x * alpha,)
                return leaky_bprop

            backward_fn = make_bprop(0.1)
            leaky = Custom(leaky_np, out_shape=lambda s: s, out_dtype=lambda t: t, func_type="pyfunc", bprop=backward_fn)
            """), note="a factory's result through a variable",
                at="7:9", message=("ops.Custom bprop leaky_bprop takes 2 parameter(s); the op has 1 input(s), so "
                                   "MindSpore passes 3: (x0, out, dout)")),
        Invalid(example("""
            from mindspore import ops

            def square(x):
                return x * x

            def square_bprop(x, out):
                return (2 * x,)

            def build_op(fn, bprop):
                return ops.Custom(fn, out_shape=lambda s: s, out_dtype=lambda t: t, func_type="pyfunc", bprop=bprop)

            op = build_op(square, bprop=square_bprop)
            """), note="followed into a project helper that builds the Custom op",
                at="6:5", message=("ops.Custom bprop square_bprop takes 2 parameter(s); the op has 1 input(s), so "
                                   "MindSpore passes 3: (x0, out, dout)")),
        Invalid("import numpy as np\nfrom mindspore import nn, ops\n\ndef gelu_np(x):\n    return x\n\n"
                "def gelu_bprop(x, out):\n    return (out * 0 + 1,)\n\n"
                "op = ops.Custom(gelu_np, out_shape=lambda s: s, out_dtype=lambda t: t, func_type='pyfunc',\n"
                "                bprop=gelu_bprop)\n",
                fixed="import numpy as np\nfrom mindspore import nn, ops\n\ndef gelu_np(x):\n    return x\n\n"
                      "def gelu_bprop(x, out, dout):\n    return (out * 0 + 1,)\n\n"
                      "op = ops.Custom(gelu_np, out_shape=lambda s: s, out_dtype=lambda t: t, func_type='pyfunc',\n"
                      "                bprop=gelu_bprop)\n",
                at="7:5", message=("ops.Custom bprop gelu_bprop takes 2 parameter(s); the op has 1 input(s), so "
                                   "MindSpore passes 3: (x0, out, dout)")),
        Invalid("from mindspore.ops import PrimitiveWithInfer\n\nclass MyScale(PrimitiveWithInfer):\n"
                "    def infer_shape(self, x_shape, y_shape):\n        return x_shape\n    def get_bprop(self):\n"
                "        def bprop(x, y, out):\n            return out, out\n        return bprop\n",
                note="the inner bprop of a user Primitive's get_bprop (GRAPH_MODE checks it when the op is used)",
                at="7:13", message=("the bprop returned for Primitive MyScale takes 3 parameter(s); MyScale has 2 "
                                    "input(s) (from its infer_shape), so MindSpore passes 4: (x0, x1, out, dout) "
                                    "[fails in GRAPH_MODE]")),
        Invalid(example("""
            from mindspore import nn, ops
            def fwd(x):
                return x
            def fwd_bprop(x, out, dout, eps=1e-6):
                return (dout / (1 + eps),)
            class Net(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.op = ops.Custom(fwd, lambda s: s, lambda t: t, func_type="pyfunc", bprop=fwd_bprop)
                def construct(self, x):
                    return self.op(x)
            """), note="a defaulted extra: PYNATIVE leaves it its default, GRAPH counts it",
                at="4:5", message=("ops.Custom bprop fwd_bprop takes 4 parameter(s) (eps defaulted); the op has 1 "
                                   "input(s), so MindSpore passes 3: GRAPH_MODE counts the defaulted ones too "
                                   "[fails in GRAPH_MODE]")),
    )

    def check(self, ctx: Context):
        yield from self._custom_ops(ctx)
        yield from self._primitive_getters(ctx)

    def _primitive_getters(self, ctx: Context):
        """Inner bprops of get_bprop / bprop_getters.register for the file's own (not built-in) Primitives."""
        p = ctx.program
        for prim, getter, inner in getter_sites(p):
            if prim.name in builtin_ops() or inner is None or inner.name_node is None:
                continue  # a built-in's Python bprop is never called: BP044
            n = ctx.primitive_inputs(prim)
            if n is None:
                continue
            sig = Signature(inner, skip_self=False)
            if sig.vararg is not None or sig.varkw is not None:
                continue
            if len([q for q in sig.positional if not q.has_default]) <= n + 2 <= len(sig.positional):
                continue
            yield Draft(p.span(inner.name_node),
                        f"the bprop returned for Primitive {prim.name} takes {len(sig.positional)} parameter(s); "
                        f"{prim.name} has {n} input(s) (from its infer_shape), so MindSpore passes {n + 2}: "
                        f"({', '.join([f'x{i}' for i in range(n)] + ['out', 'dout'])})",
                        fails_in=frozenset({GRAPH}), noqa_line=inner.def_line)

    @staticmethod
    def _defaulted_extras(ctx: Context, op, fn, positional, expected):
        """``def f_bprop(x, out, dout, eps=1e-6)``: PYNATIVE leaves the default, GRAPH counts every parameter
        (bprop-rules.md, further behaviours 36)."""
        p = ctx.program
        extras = positional[expected:]
        fix = None
        used = {node.value for node in iter_own_nodes(fn.node) if node.type == "name"} if fn.node.type == "funcdef" \
            else None
        if used is not None and not any(q.name in used for q in extras):
            edits = remove_params(fn, extras, p.index)
            if edits:
                fix = Fix("Remove unused parameter" + ("s " if len(extras) > 1 else " ")
                          + ", ".join(f"`{q.name}`" for q in extras), tuple(edits))
        span = p.span(fn.name_node) if fn.name_node is not None else p.span(fn.node)
        names = ", ".join(q.name for q in extras)
        yield Draft(span,
                    f"ops.Custom bprop {fn.name} takes {len(positional)} parameter(s) ({names} defaulted); the op has "
                    f"{op.inputs} input(s), so MindSpore passes {expected}: GRAPH_MODE counts the defaulted ones too",
                    fails_in=frozenset({GRAPH}), fix=fix,
                    related=(Related(p.span(op.call), "the ops.Custom that uses it"),), noqa_line=fn.def_line,
                    subject=op)

    def _custom_ops(self, ctx: Context):
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
            if len(required) <= expected < len(positional):
                yield from self._defaulted_extras(ctx, op, fn, positional, expected)
                continue
            if len(required) <= expected <= len(positional):
                continue
            fix = None
            if len(positional) < expected and fn.node.type == "funcdef":
                names = [q.name for q in positional]
                taken = used_names(fn, ctx.program)
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
                        noqa_line=fn.def_line, subject=op)
