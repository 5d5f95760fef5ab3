"""BP014: the last two parameters are named ``dout, out``: positions decide, so the names lie."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.model import Applicability, Edit, Fix
from ..engine.trees import iter_scope_nodes
from .base import NEVER, Draft, Invalid, Rule, Valid
from ._signature import def_span, view


class SwappedOutDout(Rule):
    code = "BP014"
    scope = "cell"
    position_free = True
    name = "bprop-out-dout-swapped"
    summary = "bprop's last two parameters are named (dout, out): MindSpore passes out first, then dout, whatever the names."
    mindspore_says = "No error: the gradients are silently wrong."
    valid = (
        Valid("from mindspore import nn\nclass C(nn.Cell):\n    def construct(self, x):\n        return x\n"
              "    def bprop(self, x, out, dout):\n        return (dout,)\n"),
        Valid("from mindspore import nn\nclass C(nn.Cell):\n    def construct(self, x):\n        return x * 2\n"
              "    def bprop(self, x, dout, out):\n        return (out * 2,)\n",
              "swapped names used the way the positions fill them: `out` is read as the incoming gradient"),
    )
    invalid = (
        Invalid("from mindspore import nn\nclass C(nn.Cell):\n    def construct(self, x):\n        return x * 2\n"
                "    def bprop(self, x, dout, out):\n        return (dout * 2,)\n",
                fixed="from mindspore import nn\nclass C(nn.Cell):\n    def construct(self, x):\n        return x * 2\n"
                      "    def bprop(self, x, out, dout):\n        return (dout * 2,)\n",
                note="the (unsafe) fix swaps the names, so that `dout` is the incoming gradient",
                at="5:9", message=("bprop of C names its last parameters (dout, out): MindSpore passes out then "
                                   "dout by position, so `dout` holds the forward output")),
    )

    def check(self, ctx: Context):
        for site in ctx.cell_sites:
            v = view(ctx, site)
            if v is None or len(v.params) < 2:
                continue
            a, b = v.params[-2].name, v.params[-1].name
            if a == "dout" and b == "out":
                if _used_by_position(v.fn):
                    continue  # reads `out` (the incoming gradient by position) and never `dout`: the code is right
                yield Draft(def_span(ctx, v.fn),
                            f"bprop of {site.owner_label} names its last parameters (dout, out): MindSpore passes out "
                            f"then dout by position, so `dout` holds the forward output",
                            fails_in=NEVER, fix=_swap_fix(ctx, v) if ctx.want_fixes else None,
                            noqa_line=v.fn.def_line)


def _reads(fn, name: str) -> bool:
    for n in iter_scope_nodes(fn.body):
        if n.type == "name" and n.value == name:
            prev = n.get_previous_sibling()
            if not (n.parent is not None and n.parent.type == "trailer" and prev == "."):
                return True
    return False


def _used_by_position(fn) -> bool:
    """The names are swapped but used the way the positions fill them: the body reads `out` (what MindSpore passes
    last: the incoming gradient) and never `dout` (the forward output)."""
    if fn.node.type not in ("funcdef", "lambdef"):
        return False
    return _reads(fn, "out") and not _reads(fn, "dout")


def _swap_fix(ctx: Context, v) -> Fix | None:
    """Swap the two names, so that `dout` receives the incoming gradient as the body expects (unsafe)."""
    if v.fn.node.type not in ("funcdef", "lambdef"):
        return None
    p = ctx.program
    before, last = v.params[-2], v.params[-1]
    return Fix("Swap the names to (out, dout)", (Edit(p.span(before.node.name), "out"),
                                                  Edit(p.span(last.node.name), "dout")), Applicability.UNSAFE)
