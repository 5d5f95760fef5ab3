"""BP013: ``@jit`` on a bprop: PYNATIVE refuses it."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.mindspore_api import JIT_NAMES, is_mindspore
from ..engine.model import Related
from ..engine.model import Edit, Fix
from ..engine.trees import call_arguments, call_of
from .base import example, PYNATIVE, Draft, Invalid, Rule, Valid
from ._signature import decorator_removal, header_span, view


class JitBprop(Rule):
    code = "BP013"
    scope = "cell"
    position_free = True
    name = "bprop-jit"
    summary = "A bprop decorated with @jit fails in PYNATIVE_MODE (GRAPH compiles the bprop anyway)."
    mindspore_says = "PYNATIVE: RuntimeError: Decorating bprop with '@jit' is not supported."
    fix_title = "Remove the @jit decorator"
    valid = (
        Valid("import mindspore as ms\nfrom mindspore import nn\nclass S(nn.Cell):\n    @ms.jit\n    def construct(self, x):\n"
              "        return x\n    def bprop(self, x, out, dout):\n        return (dout,)\n", "@jit on construct is fine"),
    )
    invalid = (
        Invalid(example("""
            import mindspore as ms
            from mindspore import nn

            def _grad(self, x, out, dout):
                return (dout,)

            class Id(nn.Cell):
                def construct(self, x):
                    return x
                bprop = ms.jit(_grad)
            """), note="`bprop = ms.jit(f)` is a jit-decorated bprop",
                at="4:5", message=("bprop of Id is wrapped by ms.jit: PYNATIVE_MODE rejects a jit bprop (GRAPH "
                                   "compiles it anyway); bind the plain function [fails in PYNATIVE_MODE]")),
        Invalid("import mindspore as ms\nfrom mindspore import nn\nclass S(nn.Cell):\n    def construct(self, x):\n"
                "        return x\n    @ms.jit\n    def bprop(self, x, out, dout):\n        return (dout,)\n",
                fixed="import mindspore as ms\nfrom mindspore import nn\nclass S(nn.Cell):\n    def construct(self, x):\n"
                      "        return x\n    def bprop(self, x, out, dout):\n        return (dout,)\n",
                at="6:5", message=("bprop of S is decorated with @ms.jit: PYNATIVE_MODE rejects a jit bprop (GRAPH "
                                   "compiles it anyway); remove the decorator [fails in PYNATIVE_MODE]")),
    )

    def check(self, ctx: Context):
        p = ctx.program
        for site in ctx.cell_sites:
            v = view(ctx, site)
            if v is None or not v.jit:
                continue
            name = next((n for n in v.decorators if is_mindspore(p.resolve_dotted(n), JIT_NAMES, bare=("jit", "ms.jit", "ms_function"))), None)
            if name is None:
                yield from self._wrapped(ctx, site)
                continue
            removal = decorator_removal(ctx, v.fn, name)
            fix = Fix(f"Remove @{name}", (removal,)) if removal is not None else None
            yield Draft(header_span(ctx, v.fn),
                        f"bprop of {site.owner_label} is decorated with @{name}: PYNATIVE_MODE rejects a jit bprop "
                        f"(GRAPH compiles it anyway); remove the decorator",
                        fails_in=frozenset({PYNATIVE}), fix=fix, noqa_line=v.fn.def_line)

    @staticmethod
    def _wrapped(ctx: Context, site):
        """``bprop = ms.jit(f)`` in the class body: the same as decorating f."""
        p = ctx.program
        stmt, value = site.bprop.node, site.bprop.value
        if stmt is None or value is None or stmt.type != "expr_stmt":
            return
        call = call_of(value)
        fix = None
        if call is not None:
            positional, keywords, has_star = call_arguments(call[1])
            if len(positional) == 1 and not keywords and not has_star:
                fix = Fix(f"Bind {positional[0].get_code(include_prefix=False)} without {call[0]}",
                          (Edit(p.span(value), positional[0].get_code(include_prefix=False)),))
        fn = site.function
        message = (f"bprop of {site.owner_label} is wrapped by {call[0] if call else 'jit'}: PYNATIVE_MODE rejects a "
                   f"jit bprop (GRAPH compiles it anyway); bind the plain function")
        if fn is not None and fn.name_node is not None:
            # At the function's def, where MindSpore's own messages about a bprop point; the binding beside it.
            yield Draft(p.span(fn.name_node), message, fails_in=frozenset({PYNATIVE}), fix=fix,
                        related=(Related(p.span(stmt), f"wrapped by {call[0] if call else 'jit'} here"),),
                        noqa_line=fn.def_line)
            return
        yield Draft(p.span(stmt.children[0]), message, fails_in=frozenset({PYNATIVE}), fix=fix,
                    noqa_line=stmt.start_pos[0] - 1)
