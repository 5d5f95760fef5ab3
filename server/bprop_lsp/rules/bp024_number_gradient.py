"""BP024: a Python number returned as the gradient of a Tensor input (PYNATIVE checks its shape)."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.model import Applicability, Edit, Fix, Related
from ..engine.trees import call_of
from .base import PYNATIVE, Draft, Invalid, Rule, Valid
from ._imports import ops_name
from ._returns import anchor_span, cell_subjects, returns_of

TENSOR_NAMES = ("Tensor", "ms.Tensor", "mindspore.Tensor")


class NumberGradient(Rule):
    code = "BP024"
    scope = "cell"
    position_free = True
    name = "bprop-number-gradient"
    summary = ("A Python number as the gradient of a Tensor input has the wrong shape: PYNATIVE rejects it. Return "
               "ops.zeros_like(x); a number is fine for a number input.")
    mindspore_says = ("PYNATIVE: RuntimeError: For grad interface or custom function, grad tensor should be broadcast to "
                      "expected shape, but got [const vector]{} vs [const vector]{2}. GRAPH: runs.")
    fix_title = "Return ops.zeros_like(<input>)"
    fix_safe = False
    valid = (
        Valid("import numpy as np\nfrom mindspore import nn, ops, Tensor\nclass P(nn.Cell):\n    def construct(self, x, n):\n"
              "        return x ** n\n    def bprop(self, x, n, out, dout):\n        return dout * n * x ** (n - 1), 0\n\n"
              "x = Tensor(np.ones(2, np.float32))\nprint(ops.GradOperation(get_all=True)(P())(x, 3))\n",
              "the second input is an int"),
    )
    invalid = (
        Invalid("import numpy as np\nfrom mindspore import nn, ops, Tensor\nclass G(nn.Cell):\n    def construct(self, x, gate):\n"
                "        return x * gate\n    def bprop(self, x, gate, out, dout):\n        return dout * gate, 0\n\n"
                "x = Tensor(np.ones(2, np.float32))\ng = Tensor(np.ones(2, np.float32))\n"
                "print(ops.GradOperation(get_all=True)(G())(x, g))\n",
                fixed="import numpy as np\nfrom mindspore import nn, ops, Tensor\nclass G(nn.Cell):\n    def construct(self, x, gate):\n"
                      "        return x * gate\n    def bprop(self, x, gate, out, dout):\n        return dout * gate, ops.zeros_like(gate)\n\n"
                      "x = Tensor(np.ones(2, np.float32))\ng = Tensor(np.ones(2, np.float32))\n"
                      "print(ops.GradOperation(get_all=True)(G())(x, g))\n",
                at="6:9", message=("bprop of G returns the number 0 as the gradient of input 2, which is a Tensor "
                                   "at the call: PYNATIVE_MODE rejects its shape; return ops.zeros_like(...) [fails "
                                   "in PYNATIVE_MODE]")),
    )

    def check(self, ctx: Context):
        p = ctx.program
        ops_alias = ops_name(ctx)
        by_fn = {}
        for site in ctx.cell_sites:
            if site.function is not None:
                by_fn.setdefault(site.function, site)
        for subject in cell_subjects(ctx):
            site = by_fn.get(subject.fn)
            if site is None:
                continue
            calls = [c for c in ctx.call_index.sites(site.cls) if not c.has_star and not c.keywords]
            if not calls:
                continue
            info = returns_of(subject.fn, ctx.program)
            if info is None:
                continue
            params = [q.name for q in subject.fn.params if q.kind in ("positional", "posonly")][1:]
            for r in info.returns:
                if r.shape.kind != "tuple":
                    continue
                for i, item in enumerate(r.shape.items):
                    if item.type != "number" or i >= subject.hi:
                        continue
                    tensor_call = next((c for c in calls if i < len(c.positional) and _is_tensor(p, c.positional[i])), None)
                    if tensor_call is None:
                        continue
                    fix = None
                    if ops_alias and r.shape.via_name is None and i < len(params):
                        fix = Fix(f"Return {ops_alias}.zeros_like({params[i]})",
                                  (Edit(p.span(item), f"{ops_alias}.zeros_like({params[i]})"),), Applicability.UNSAFE)
                    yield Draft(anchor_span(ctx, subject.fn),
                                f"{subject.label} returns the number {item.value} as the gradient of input {i + 1}, "
                                f"which is a Tensor at the call: PYNATIVE_MODE rejects its shape; return "
                                f"ops.zeros_like(...)",
                                fails_in=frozenset({PYNATIVE}), fix=fix,
                                related=(Related(p.span(tensor_call.positional[i]), "a Tensor is passed here"),),
                                noqa_line=subject.fn.def_line)
                    break


def _is_tensor(p, node) -> bool:
    seen = set()
    while node.type == "name":  # (a name bound once, to a name ...: ``t = t`` ends)
        values = p.assignments.get(node.value, [])
        if len(values) != 1 or node.value in seen:
            return False
        seen.add(node.value)
        node = values[0]
    c = call_of(node) if node.type in ("power", "atom_expr") else None
    return bool(c and c[0] and (c[0] in TENSOR_NAMES or p.resolve_dotted(c[0]) in ("mindspore.Tensor", "mindspore.common.tensor.Tensor")))
