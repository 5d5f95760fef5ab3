"""BP011: ``self.bprop = fn`` in ``__init__``: MindSpore decided ``has_bprop`` before, so it is ignored."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.model import Related
from ..engine.trees import dotted
from .base import NEVER, Draft, Invalid, Rule, Valid, example
from ._parameters import _self_assignments_of


class InstanceAttributeBprop(Rule):
    code = "BP011"
    name = "bprop-instance-attribute"
    summary = ("Assigning self.bprop in __init__ does not install a custom bprop: Cell.__init__ has already decided "
               "has_bprop (a bound method assigned there is used by GRAPH only, and so is a bprop bound on the class "
               "after an instance exists). Define bprop as a method.")
    mindspore_says = "No error: the assignment is silently ignored (a bound method: used by GRAPH, ignored by PYNATIVE)."
    valid = (
        Valid("from mindspore import nn\nclass Sq(nn.Cell):\n    def construct(self, x):\n        return x * x\n"
              "    def bprop(self, x, out, dout):\n        return (2 * x * dout,)\n"),
    )
    invalid = (
        Invalid("from mindspore import nn\n\ndef custom_grad(x, out, dout):\n    return (dout * 100,)\n\n"
                "class Sq(nn.Cell):\n    def __init__(self):\n        super().__init__()\n        self.bprop = custom_grad\n"
                "    def construct(self, x):\n        return x * x\n",
                at="9:9", message=("self.bprop assigned on an instance of Sq is ignored as a custom bprop "
                                   "(Cell.__init__ already decided has_bprop); define `def bprop(self, ..., out, "
                                   "dout)` on the class")),
        Invalid(example("""
            from mindspore import nn
            class Sq(nn.Cell):
                def construct(self, x):
                    return x * x
            def sq_grad(self, x, out, dout):
                return (2 * x * dout,)
            net = Sq()
            Sq.bprop = sq_grad
            """), note="bound on the class after the instance exists: GRAPH uses it, PYNATIVE does not",
                at="5:5", message=("bprop of Sq is bound on the class after an instance exists: GRAPH_MODE uses it "
                                   "for that instance, PYNATIVE_MODE does not (Cell.__init__ already decided "
                                   "has_bprop), so the modes compute different gradients; define `def bprop(self, "
                                   "..., out, dout)` in the class body")),
    )

    def check(self, ctx: Context):
        yield from self._after_an_instance(ctx)
        p = ctx.program
        for cls in p.classes:
            if not cls.mentions("bprop") or not p.is_cell(cls):
                continue  # (``self.bprop = ...`` says bprop in the class)
            for value, stmt in _self_assignments_of(ctx, cls, "bprop"):
                target = stmt.children[0]
                text = dotted(value) or ""
                if text.startswith("self.") and text.count(".") == 1:
                    yield Draft(p.span(target),
                                f"self.bprop = {text} in {cls.name}: GRAPH_MODE uses this bound method as the custom "
                                f"bprop but PYNATIVE_MODE ignores it (Cell.__init__ already decided has_bprop), so the "
                                f"modes compute different gradients; define `def bprop(self, ..., out, dout)` on the class",
                                fails_in=NEVER, noqa_line=stmt.start_pos[0] - 1)
                    continue
                yield Draft(p.span(target),
                            f"self.bprop assigned on an instance of {cls.name} is ignored as a custom bprop "
                            f"(Cell.__init__ already decided has_bprop); define `def bprop(self, ..., out, dout)` "
                            f"on the class",
                            fails_in=NEVER, noqa_line=stmt.start_pos[0] - 1)

    @staticmethod
    def _after_an_instance(ctx: Context):
        """A bprop bound on the class after an instance exists (``type(self).bprop = f`` after
        ``super().__init__()``, ``Cls.bprop = f`` after ``net = Cls()``): GRAPH uses it, PYNATIVE does not for that
        instance (bprop-rules.md, further behaviours 34)."""
        p = ctx.program
        for site in ctx.cell_sites:
            member = site.bprop
            if not member.graph_only or member.node is None or site.inherited:
                continue
            stmt = member.node
            fn = site.function
            if fn is None or fn.name_node is None:
                continue
            # At the function's def (where MindSpore points for a bprop), the binding beside it.
            yield Draft(p.span(fn.name_node),
                        f"bprop of {site.cls.name} is bound on the class after an instance exists: GRAPH_MODE uses it "
                        f"for that instance, PYNATIVE_MODE does not (Cell.__init__ already decided has_bprop), so the "
                        f"modes compute different gradients; define `def bprop(self, ..., out, dout)` in the class body",
                        fails_in=NEVER, related=(Related(p.span(stmt), "bound on the class here"),),
                        noqa_line=fn.def_line)
