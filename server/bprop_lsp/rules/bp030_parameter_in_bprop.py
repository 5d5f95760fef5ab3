"""BP030: a Cell's bprop reads or writes a ``Parameter`` (GRAPH refuses it)."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.model import Related
from ..engine.trees import iter_own_nodes
from .base import example, GRAPH, Draft, Invalid, Rule, Valid
from ._parameters import LAYER_PARAMETERS, child_cells, parameter_attrs
from ._signature import def_span, view


class ParameterInBprop(Rule):
    code = "BP030"
    scope = "cell"
    position_free = True
    same_mistake = ("BP031",)  # a Parameter owned by a custom-bprop cell: one finding at the def
    name = "bprop-uses-parameter"
    summary = "A Cell's bprop must not touch a Parameter (its own, a child cell's, or one from a base class) in GRAPH_MODE."
    mindspore_says = "GRAPH: RuntimeError: The user defined 'bprop' function in scope Default does not support using Parameter. PYNATIVE: runs."
    valid = (
        Valid(example("""
            import numpy as np
            import mindspore as ms
            from mindspore import nn, Parameter

            LEARN_K = False

            class Scaler(nn.Cell):
                def __init__(self):
                    super().__init__()
                    if LEARN_K:
                        self.k = Parameter(ms.Tensor(np.ones(1, np.float32)), name="k")
                    else:
                        self.k = 2.0
                def construct(self, x):
                    return x * self.k
                def bprop(self, x, out, dout):
                    return (dout * self.k,)
            """), "the Parameter is made only under a module flag that is False: self.k is a float"),
        Valid("from mindspore import nn\nclass G(nn.Cell):\n    def __init__(self, lambd=1.0):\n        super().__init__()\n"
              "        self.lambd = lambd\n    def construct(self, x):\n        return x\n"
              "    def bprop(self, x, out, dout):\n        return (-self.lambd * dout,)\n", "a float attribute is fine"),
    )
    invalid = (
        Invalid(example("""
            import numpy as np
            import mindspore as ms
            from mindspore import nn, Parameter

            class Poly(nn.Cell):
                def __init__(self):
                    super().__init__()
                    for i in range(2):
                        setattr(self, f"w{i}", Parameter(ms.Tensor(np.ones(1, np.float32)), name=f"w{i}"))
                def construct(self, x):
                    return x * 2.0
                def bprop(self, x, out, dout):
                    return (dout * self.w1,)
            """), note="a Parameter made by setattr in a loop",
                at="12:9", message=("bprop of Poly uses the Parameter self.w1: GRAPH_MODE does not support "
                                    "Parameters in a custom bprop; pass the tensor as a construct input instead "
                                    "[fails in GRAPH_MODE]")),
        Invalid(example("""
            import numpy as np
            import mindspore as ms
            from mindspore import nn, Parameter

            class Amp(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.insert_param_to_cell("gain", Parameter(ms.Tensor(np.ones(1, np.float32)), name="gain"))
                def construct(self, x):
                    return x * 3.0
                def bprop(self, x, out, dout):
                    return (dout * self.gain,)
            """), note="a Parameter registered with insert_param_to_cell",
                at="11:9", message=("bprop of Amp uses the Parameter self.gain: GRAPH_MODE does not support "
                                    "Parameters in a custom bprop; pass the tensor as a construct input instead "
                                    "[fails in GRAPH_MODE]")),
        Invalid(example("""
            from mindspore import nn, Parameter, ParameterTuple, Tensor

            class Pair(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.ws = ParameterTuple([Parameter(Tensor(1.0), name="a"), Parameter(Tensor(2.0), name="b")])
                def construct(self, x):
                    return x * self.ws[0]
                def bprop(self, x, out, dout):
                    return (dout * self.ws[1],)
            """), note="a Parameter reached through a ParameterTuple", also=("BP031",),
                at="9:9", message=("bprop of Pair uses the Parameter self.ws: GRAPH_MODE does not support "
                                   "Parameters in a custom bprop; pass the tensor as a construct input instead "
                                   "[fails in GRAPH_MODE]")),
        Invalid("import numpy as np\nfrom mindspore import nn, Parameter, Tensor\nclass G(nn.Cell):\n    def __init__(self):\n"
                "        super().__init__()\n        self.coeff = Parameter(Tensor(np.ones(1, np.float32)), name='coeff')\n"
                "    def construct(self, x):\n        return x * 1.0\n    def bprop(self, x, out, dout):\n"
                "        return (-self.coeff * dout,)\n", also=("BP031",),
                at="9:9", message=("bprop of G uses the Parameter self.coeff: GRAPH_MODE does not support "
                                   "Parameters in a custom bprop; pass the tensor as a construct input instead "
                                   "[fails in GRAPH_MODE]")),
    )

    def check(self, ctx: Context):
        p = ctx.program
        for site in ctx.cell_sites:
            v = view(ctx, site)
            if v is None:
                continue
            params = parameter_attrs(ctx, site.cls)
            children = child_cells(ctx, site.cls)
            chains = p.node_fact(v.fn.node, "self_chains", _self_chains) if v.fn.node.type == "funcdef" else ()
            for node, names in chains:
                hit = None
                if names[0] in params:
                    hit = f"self.{names[0]}"
                elif len(names) >= 2 and names[0] in children:
                    child = children[names[0]]
                    if child == "layer" and names[1] in LAYER_PARAMETERS:
                        hit = f"self.{names[0]}.{names[1]}"
                    elif child != "layer" and names[1] in parameter_attrs(ctx, child):
                        hit = f"self.{names[0]}.{names[1]}"
                if hit is None:
                    continue
                related = (Related(p.span(node), f"{hit} is a Parameter"),)
                yield Draft(def_span(ctx, v.fn),
                            f"bprop of {site.owner_label} uses the Parameter {hit}: GRAPH_MODE does not support "
                            f"Parameters in a custom bprop; pass the tensor as a construct input instead",
                            fails_in=frozenset({GRAPH}), related=related, noqa_line=v.fn.def_line)
                break


def _self_chains(fn_node) -> list:
    """(node, attribute names) of each ``self.a.b...`` read in the function's own body, in order."""
    found = []
    for node in iter_own_nodes(fn_node):
        if node.type not in ("power", "atom_expr") or node.children[0].type != "name" or node.children[0].value != "self":
            continue
        names = []
        for t in node.children[1:]:
            if t.children[0] != ".":
                break
            names.append(t.children[1].value)
        if names:
            found.append((node, names))
    return found
