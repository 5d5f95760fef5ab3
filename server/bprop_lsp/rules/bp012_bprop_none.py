"""BP012: ``bprop = None`` as a class attribute, to "disable" an inherited bprop."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.model import Related
from .base import PYNATIVE, Draft, Invalid, Rule, Valid, example


class BpropNone(Rule):
    code = "BP012"
    scope = "cell"
    position_free = True
    name = "bprop-none"
    summary = ("`bprop = None` does not disable an inherited bprop: PYNATIVE crashes calling it; restructure the "
               "hierarchy. A functools.partial bprop fails the same way (GRAPH ignores it).")
    mindspore_says = "PYNATIVE: AttributeError: 'NoneType' object has no attribute '__code__'. GRAPH: ignored."
    valid = (
        Valid("from mindspore import nn\nclass Base(nn.Cell):\n    def construct(self, x):\n        return x * 2\n"),
    )
    invalid = (
        Invalid("from mindspore import nn\nclass Base(nn.Cell):\n    def construct(self, x):\n        return x * 2\n"
                "    def bprop(self, x, out, dout):\n        return (dout * 10,)\n\nclass Plain(Base):\n    bprop = None\n",
                at="5:9", message=("`bprop = None` in Plain does not remove a custom bprop: PYNATIVE_MODE tries to "
                                   "call it and fails; move the bprop to a subclass that needs it instead [fails in "
                                   "PYNATIVE_MODE]")),
        Invalid(example("""
            import functools
            from mindspore import nn
            def scaled(self, x, out, dout, factor=1.0):
                return (dout * factor,)
            class Half(nn.Cell):
                def construct(self, x):
                    return x
                bprop = functools.partial(scaled, factor=0.5)
            """), note="a functools.partial object: GRAPH ignores it, PYNATIVE has no __code__ to call",
                at="8:5", message=("bprop of Half is a functools.partial object: GRAPH_MODE silently ignores it "
                                   "(automatic differentiation), PYNATIVE_MODE fails calling it (no __code__); bind "
                                   "a def with the parameters spelled out instead [fails in PYNATIVE_MODE]")),
    )

    def check(self, ctx: Context):
        p = ctx.program
        for site in ctx.cell_sites:  # a Cell whose lookup of `bprop` finds a class attribute
            cls, member = site.cls, site.bprop
            if member.owner is not cls:
                continue
            if member is None or member.value is None or member.function is not None:
                continue
            partial = _partial_call(p, member.value)
            if partial is not None:
                stmt = member.node
                yield Draft(p.span(stmt.children[0] if stmt.type == "expr_stmt" else member.value),
                            f"bprop of {cls.name} is a {partial} object: GRAPH_MODE silently ignores it (automatic "
                            f"differentiation), PYNATIVE_MODE fails calling it (no __code__); bind a def with the "
                            f"parameters spelled out instead",
                            fails_in=frozenset({PYNATIVE}), noqa_line=stmt.start_pos[0] - 1)
                continue
            if not (member.value.type == "keyword" and member.value.value == "None") or not p.is_cell(cls):
                continue
            stmt = member.node
            # MindSpore fails on the bprop the None was meant to hide: point there when it is in the file.
            hidden = next((k.members["bprop"].function for k in p.mro(cls)[1:]
                           if not isinstance(k, str) and "bprop" in k.members and k.members["bprop"].function), None)
            span = p.span(hidden.name_node) if hidden is not None and hidden.name_node is not None else p.span(stmt)
            related = (Related(p.span(stmt), "bprop = None set here"),) if hidden is not None else ()
            yield Draft(span,
                        f"`bprop = None` in {cls.name} does not remove a custom bprop: PYNATIVE_MODE tries to call it "
                        f"and fails; move the bprop to a subclass that needs it instead",
                        fails_in=frozenset({PYNATIVE}), related=related, noqa_line=stmt.start_pos[0] - 1)


def _partial_call(p, value) -> str | None:
    """``functools.partial(...)`` / ``functools.partialmethod(...)`` (bprop-rules.md, items 35 and further 6)."""
    from ..engine.trees import call_of

    call = call_of(value) if value.type in ("power", "atom_expr") else None
    if call is None or not call[0]:
        return None
    qualname = p.resolve_dotted(call[0])
    if qualname in ("functools.partial", "functools.partialmethod"):
        return qualname
    return None
