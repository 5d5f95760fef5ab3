"""BP003: ``*args``/``**kwargs`` (or a signature-hiding decorator, or ``/``) in a Cell's bprop."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.model import Edit, Fix, Related
from .base import GRAPH, Draft, Invalid, Rule, Valid
from ._signature import counted_vararg, construct_related, def_span, header_span, view


class VarArgs(Rule):
    code = "BP003"
    scope = "cell"
    position_free = True
    name = "bprop-varargs"
    summary = ("GRAPH_MODE cannot see through *args/**kwargs in a bprop, a decorator whose wrapper takes *args "
               "without functools.wraps, or positional-only parameters.")
    mindspore_says = ("GRAPH: RuntimeError: The function 'bprop' of Primitive or Cell requires at least 2 params 'out' "
                      "and 'dout', but got only 1. PYNATIVE: runs.")
    fix_title = "Remove the positional-only marker `/`"
    valid = (
        Valid("import functools\nfrom mindspore import nn\n\ndef traced(fn):\n    @functools.wraps(fn)\n"
              "    def wrapper(*args):\n        return fn(*args)\n    return wrapper\n\n"
              "class Sq(nn.Cell):\n    def construct(self, x):\n        return x * x\n    @traced\n"
              "    def bprop(self, x, out, dout):\n        return (2 * x * dout,)\n",
              "functools.wraps keeps the real signature visible"),
    )
    invalid = (
        Invalid("from mindspore import nn\nclass P(nn.Cell):\n    def construct(self, x, y):\n        return x + y\n"
                "    def bprop(self, *args):\n        return args[-1], args[-1]\n",
                at="5:9", message=("bprop of P takes *args: GRAPH_MODE needs the parameters spelled out as (self, "
                                   "x, y, out, dout) [fails in GRAPH_MODE]")),
        Invalid("from mindspore import nn\n\ndef traced(fn):\n    def wrapper(*args):\n        return fn(*args)\n"
                "    return wrapper\n\nclass Sq(nn.Cell):\n    def construct(self, x):\n        return x * x\n"
                "    @traced\n    def bprop(self, x, out, dout):\n        return (2 * x * dout,)\n",
                at="4:9", message=("decorator @traced replaces bprop of Sq with this *args wrapper: GRAPH_MODE sees "
                                   "no parameters; decorate the wrapper with @functools.wraps(fn) [fails in "
                                   "GRAPH_MODE]")),
        Invalid("from mindspore import nn\nclass Q(nn.Cell):\n    def construct(self, x):\n        return x\n"
                "    def bprop(self, x, out, dout, /):\n        return (dout,)\n",
                fixed="from mindspore import nn\nclass Q(nn.Cell):\n    def construct(self, x):\n        return x\n"
                      "    def bprop(self, x, out, dout):\n        return (dout,)\n",
                at="5:9", message=("bprop of Q has positional-only parameters (`/`): GRAPH_MODE binds none of them "
                                   "and fails with NameError [fails in GRAPH_MODE]")),
    )

    def check(self, ctx: Context):
        for site in ctx.cell_sites:
            v = view(ctx, site)
            if v is None:
                continue
            star = [q for q in v.fn.params if q.kind in ("vararg", "varkw")]
            if star and counted_vararg(v) is None:
                spelled = ", ".join(("*" if q.kind == "vararg" else "**") + q.name for q in star)
                yield Draft(def_span(ctx, v.fn),
                            f"bprop of {site.owner_label} takes {spelled}: GRAPH_MODE needs the parameters spelled "
                            f"out as {v.expected_text() if v.inputs is not None else '(self, <inputs>, out, dout)'}",
                            fails_in=frozenset({GRAPH}), related=construct_related(ctx, site), noqa_line=v.fn.def_line)
                continue
            if v.unwrapped_decorator:
                # MindSpore reports the wrapper (what it sees as the bprop); point there, and back at the bprop.
                w = v.wrapper
                related = (Related(header_span(ctx, v.fn), f"bprop of {site.owner_label}, decorated here"),)
                yield Draft(def_span(ctx, w),
                            f"decorator @{v.unwrapped_decorator} replaces bprop of {site.owner_label} with this *args "
                            f"wrapper: GRAPH_MODE sees no parameters; decorate the wrapper with @functools.wraps(fn)",
                            fails_in=frozenset({GRAPH}), related=related, noqa_line=w.def_line)
                continue
            slash = _slash(v.fn)
            if slash is not None:
                fix = Fix("Remove the positional-only marker `/`", (Edit(ctx.program.span(*slash), ""),))
                yield Draft(def_span(ctx, v.fn),
                            f"bprop of {site.owner_label} has positional-only parameters (`/`): GRAPH_MODE binds none "
                            f"of them and fails with NameError",
                            fails_in=frozenset({GRAPH}), fix=fix, noqa_line=v.fn.def_line)


def _slash(fn):
    """(start, end) of ``/`` and its separating comma, for deletion."""
    node = fn.params_node
    if node is None:
        return None
    children = node.children
    for i, child in enumerate(children):
        if child.type == "operator" and child.value == "/":
            prev = children[i - 1]
            nxt = children[i + 1] if i + 1 < len(children) else None
            if nxt is not None and nxt.type == "operator" and nxt.value == ",":
                # "a, /, b" -> "a, b": drop "/, " up to the next parameter
                after = children[i + 2] if i + 2 < len(children) else None
                end = after.start_pos if after is not None and after.type == "param" else nxt.end_pos
                return child.start_pos, end
            # "a, /)" -> "a)": drop the comma that ends the previous parameter, and the slash
            if prev.type == "param" and prev.children[-1].type == "operator" and prev.children[-1].value == ",":
                return prev.children[-1].start_pos, child.end_pos
            return child.start_pos, child.end_pos
    return None
