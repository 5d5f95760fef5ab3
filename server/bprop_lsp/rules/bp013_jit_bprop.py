"""BP013: ``@jit`` on a bprop: PYNATIVE refuses it."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.model import Fix
from ..engine.program import JIT_NAMES
from .base import PYNATIVE, Draft, Invalid, Rule, Valid
from ._signature import header_span, view
from .bp005_staticmethod import decorator_removal


class JitBprop(Rule):
    code = "BP013"
    name = "bprop-jit"
    summary = "A bprop decorated with @jit fails in PYNATIVE_MODE (GRAPH compiles the bprop anyway)."
    mindspore_says = "PYNATIVE: RuntimeError: Decorating bprop with '@jit' is not supported."
    fix_title = "Remove the @jit decorator"
    valid = (
        Valid("import mindspore as ms\nfrom mindspore import nn\nclass S(nn.Cell):\n    @ms.jit\n    def construct(self, x):\n"
              "        return x\n    def bprop(self, x, out, dout):\n        return (dout,)\n", "@jit on construct is fine"),
    )
    invalid = (
        Invalid("import mindspore as ms\nfrom mindspore import nn\nclass S(nn.Cell):\n    def construct(self, x):\n"
                "        return x\n    @ms.jit\n    def bprop(self, x, out, dout):\n        return (dout,)\n",
                fixed="import mindspore as ms\nfrom mindspore import nn\nclass S(nn.Cell):\n    def construct(self, x):\n"
                      "        return x\n    def bprop(self, x, out, dout):\n        return (dout,)\n"),
    )

    def check(self, ctx: Context):
        p = ctx.program
        for site in ctx.cell_sites:
            v = view(ctx, site)
            if v is None or not v.jit:
                continue
            name = next(n for n in v.decorators if p.is_mindspore(p.resolve_dotted(n), JIT_NAMES, bare=("jit", "ms.jit", "ms_function")))
            removal = decorator_removal(ctx, v.fn, name)
            fix = Fix(f"Remove @{name}", (removal,)) if removal is not None else None
            yield Draft(header_span(ctx, v.fn),
                        f"bprop of {site.owner_label} is decorated with @{name}: PYNATIVE_MODE rejects a jit bprop "
                        f"(GRAPH compiles it anyway); remove the decorator",
                        fails_in=frozenset({PYNATIVE}), fix=fix, noqa_line=v.fn.def_line)
