"""BP005: ``@staticmethod`` bprop: GRAPH ignores it silently, PYNATIVE uses it."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.model import Fix, Related
from ..engine.param_edits import insert_after
from .base import example, NEVER, Draft, Invalid, Rule, Valid
from ._signature import decorator_removal, def_span, view


class StaticMethodBprop(Rule):
    code = "BP005"
    scope = "cell"
    position_free = True
    name = "bprop-staticmethod"
    summary = "A @staticmethod bprop is used by PYNATIVE but silently ignored by GRAPH: the gradients differ."
    mindspore_says = "No error: GRAPH uses automatic differentiation instead, PYNATIVE calls the bprop."
    fix_title = "Make bprop a normal method"
    valid = (
        Valid("from mindspore import nn\nclass R(nn.Cell):\n    def construct(self, x):\n        return x\n"
              "    @staticmethod\n    def helper(x):\n        return x\n    def bprop(self, x, out, dout):\n"
              "        return (self.helper(dout),)\n", "a staticmethod helper that is not the bprop"),
    )
    invalid = (
        Invalid(example("""
            from mindspore import nn, ops

            def _clip_grad(x, out, dout):
                return (ops.clip_by_value(dout, -0.1, 0.1),)

            class GradClip(nn.Cell):
                def construct(self, x):
                    return x * 1.0
                bprop = staticmethod(_clip_grad)
            """), note="`bprop = staticmethod(f)` binds like the decorator",
                at="3:5", message=("bprop of GradClip is a @staticmethod: GRAPH_MODE silently ignores it and uses "
                                   "automatic differentiation, PYNATIVE_MODE calls it — the gradients differ")),
        Invalid("from mindspore import nn, ops\nclass R(nn.Cell):\n    def construct(self, x):\n        return ops.round(x)\n"
                "    @staticmethod\n    def bprop(x, out, dout):\n        return (dout,)\n",
                fixed="from mindspore import nn, ops\nclass R(nn.Cell):\n    def construct(self, x):\n        return ops.round(x)\n"
                      "    def bprop(self, x, out, dout):\n        return (dout,)\n",
                at="6:9", message=("bprop of R is a @staticmethod: GRAPH_MODE silently ignores it and uses "
                                   "automatic differentiation, PYNATIVE_MODE calls it — the gradients differ")),
    )

    def check(self, ctx: Context):
        for site in ctx.cell_sites:
            v = view(ctx, site)
            if v is None or v.kind != "staticmethod":
                continue
            fix = None
            removal = decorator_removal(ctx, v.fn, "staticmethod")
            if removal is not None and "self" not in {q.name for q in v.fn.params}:
                fix = Fix("Make bprop a normal method taking self",
                          (removal, *insert_after(v.fn, None, ["self"], ctx.program.index)))
            # `bprop = staticmethod(f)`: the finding stands at f's def, the note at the binding that made it static.
            stmt = site.bprop.node if site.bprop is not None else None
            related = ((Related(ctx.program.span(stmt), "bound with staticmethod here"),)
                       if stmt is not None and stmt.type == "expr_stmt" else ())
            yield Draft(def_span(ctx, v.fn),
                        f"bprop of {site.owner_label} is a @staticmethod: GRAPH_MODE silently ignores it and uses "
                        f"automatic differentiation, PYNATIVE_MODE calls it — the gradients differ",
                        fails_in=NEVER, fix=fix, related=related, noqa_line=v.fn.def_line)
