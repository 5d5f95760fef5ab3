"""BP050: ``cell.bprop_debug = True`` on a cell with a custom bprop fails in GRAPH_MODE."""
from __future__ import annotations


from ..engine.context import Context
from ..engine.model import Related
from ..engine.program import call_of
from .base import GRAPH, Draft, Invalid, Rule, Valid
from ._signature import def_span


class BpropDebug(Rule):
    code = "BP050"
    name = "bprop-debug-graph"
    summary = "Setting bprop_debug = True on a cell with a custom bprop breaks GRAPH_MODE, even for a correct bprop."
    mindspore_says = "GRAPH: RuntimeError: The pointer[graph] is null. PYNATIVE: runs."
    valid = (
        Valid("from mindspore import nn\nclass P(nn.Cell):\n    def construct(self, x):\n        return x\n\n"
              "net = P()\nnet.bprop_debug = True\n", "no custom bprop on that cell: harmless"),
    )
    invalid = (
        Invalid("from mindspore import nn\nclass D(nn.Cell):\n    def construct(self, x):\n        return x\n"
                "    def bprop(self, x, out, dout):\n        return (dout,)\n\nnet = D()\nnet.bprop_debug = True\n"),
    )

    def check(self, ctx: Context):
        p = ctx.program
        sites = {id(s.cls): s for s in ctx.cell_sites}
        for node in p.nodes_matching("bprop_debug", ("expr_stmt",)):
            if len(node.children) != 3 or node.children[1] != "=":
                continue
            target, value = node.children[0], node.children[2]
            if not (value.type == "keyword" and value.value == "True"):
                continue
            if target.type not in ("power", "atom_expr") or len(target.children) != 2:
                continue
            trailer = target.children[1]
            if trailer.children[0] != "." or trailer.children[1].value != "bprop_debug":
                continue
            owner = target.children[0]
            if owner.type != "name":
                continue
            cls = None
            if owner.value == "self":
                cls_node = node.search_ancestor("classdef")
                cls = next((c for c in p.classes if c.node is cls_node), None)
            else:
                values = p.assignments.get(owner.value, [])
                if len(values) == 1:
                    c = call_of(values[0])
                    if c and c[0] and "." not in c[0]:
                        cls = p.class_named(c[0])
            if cls is None or id(cls) not in sites or sites[id(cls)].function is None:
                continue
            site = sites[id(cls)]
            yield Draft(def_span(ctx, site.function),
                        f"bprop_debug = True on {cls.name}, which has a custom bprop: GRAPH_MODE fails "
                        f"('The pointer[graph] is null'); drop bprop_debug or run in PYNATIVE_MODE",
                        fails_in=frozenset({GRAPH}),
                        related=(Related(p.span(node), "bprop_debug set here"),),
                        noqa_line=site.function.def_line)
