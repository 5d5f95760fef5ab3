"""BP020: a Cell's bprop returns something other than a tuple (a bare Tensor, a list, None)."""
from __future__ import annotations

from ..engine.conditions import const_truth
from ..engine.context import Context
from ..engine.model import Edit, Fix
from ..engine.trees import dotted
from .base import example, NEVER, BOTH, GRAPH, Draft, Invalid, Rule, Valid
from ._returns import anchor_span, cell_subjects, restrict, return_related, returns_of


class NonTupleReturn(Rule):
    code = "BP020"
    per_cell = True
    name = "bprop-returns-non-tuple"
    summary = "A Cell's bprop must return a tuple with one gradient per forward input, even for one input."
    mindspore_says = ("GRAPH: TypeError: For bprop function, output should be a tuple, but got <Abstract...>. "
                      "PYNATIVE: a bare Tensor is accepted for one input; None gives TypeError: The python function "
                      "output is none.")
    fix_title = "Return a tuple"
    valid = (
        Valid(example("""
            from mindspore import nn

            class Pair(nn.Cell):
                def construct(self, a, b):
                    return a + 0, b + 0
                def bprop(self, a, b, out, dout):
                    return dout
            """), "construct returns a pair: dout is a 2-tuple, one gradient per input"),
        Valid(example("""
            from mindspore import nn, ops

            class OptionalClip(nn.Cell):
                def __init__(self, clip=False):
                    super().__init__()
                    self.clip = clip
                def construct(self, x):
                    return x * 2.0
                def bprop(self, x, out, dout):
                    if self.clip:
                        return (ops.clip_by_value(dout * 2.0, -1.0, 1.0),)

            net = OptionalClip(clip=True)
            """), "every instance the file builds takes the returning path (GRAPH folds the attribute)"),
        Valid("from mindspore import nn\nclass Sq(nn.Cell):\n    def construct(self, x):\n        return x * x\n"
              "    def bprop(self, x, out, dout):\n        return (2 * x * dout,)\n"),
        Valid("from mindspore import nn\nclass Two(nn.Cell):\n    def construct(self, x, y):\n        return x + y\n"
              "    def bprop(self, x, y, out, dout):\n        grads = [dout, dout]\n        return tuple(grads)\n"),
    )
    invalid = (
        Invalid(example("""
            from mindspore import nn, ops

            class RoundST(nn.Cell):
                def construct(self, x):
                    return ops.round(x)
                def bprop(self, x, out, dout):
                    return dout
            """), line=6, note="construct returns a Tensor, so dout is one: GRAPH needs (dout,)",
                fixed=example("""
            from mindspore import nn, ops

            class RoundST(nn.Cell):
                def construct(self, x):
                    return ops.round(x)
                def bprop(self, x, out, dout):
                    return (dout,)
            """)),
        Invalid(example("""
            from mindspore import nn, ops

            class SinCos(nn.Cell):
                def construct(self, x):
                    return ops.sin(x), ops.cos(x)
                def bprop(self, x, out, dout):
                    return out[1]
            """), line=6, note="one Tensor of the forward pair", also=("BP028",)),
        Invalid(example("""
            from mindspore import nn

            class Scale(nn.Cell):
                def construct(self, x, s):
                    return x * s
                def bprop(self, x, s, out, dout):
                    return {"x": dout * s, "s": dout * x}
            """), line=6, note="a dict fails in both modes"),
        Invalid(example("""
            from mindspore import nn

            class Twice(nn.Cell):
                def construct(self, x, y):
                    return 2 * x + 2 * y
                def bprop(self, x, y, out, dout):
                    return [2 * dout for _ in (x, y)]
            """), line=6, note="a list comprehension is a list", fixed=example("""
            from mindspore import nn

            class Twice(nn.Cell):
                def construct(self, x, y):
                    return 2 * x + 2 * y
                def bprop(self, x, y, out, dout):
                    return tuple([2 * dout for _ in (x, y)])
            """)),
        Invalid(example("""
            from mindspore import nn, ops

            class OptionalClip(nn.Cell):
                def __init__(self, clip=True):
                    super().__init__()
                    self.clip = clip
                def construct(self, x):
                    return x * 2.0
                def bprop(self, x, out, dout):
                    if self.clip:
                        return (ops.clip_by_value(dout * 2.0, -1.0, 1.0),)

            net = OptionalClip(clip=False)
            """), line=9, note="the file builds an instance that falls off the end: an error"),
        Invalid(example("""
            from mindspore import nn

            def _masked_grad(dout, mask):
                return dout * mask

            class MaskedFill(nn.Cell):
                def construct(self, x, mask):
                    return x * mask
                def bprop(self, x, mask, out, dout):
                    return _masked_grad(dout, mask)
            """), line=9, note="a helper of the file returning one Tensor, for two inputs"),
        Invalid(example("""
            from mindspore import nn, ops

            class OptionalClip(nn.Cell):
                def __init__(self, clip=True):
                    super().__init__()
                    self.clip = clip
                def construct(self, x):
                    return x * 2.0
                def bprop(self, x, out, dout):
                    if self.clip:
                        return (ops.clip_by_value(dout * 2.0, -1.0, 1.0),)
            """), line=9, note="a path that reaches the end of the body returns None"),
        Invalid("from mindspore import nn\nclass Sq(nn.Cell):\n    def construct(self, x):\n        return x * x\n"
                "    def bprop(self, x, out, dout):\n        return 2 * x * dout\n",
                fixed="from mindspore import nn\nclass Sq(nn.Cell):\n    def construct(self, x):\n        return x * x\n"
                      "    def bprop(self, x, out, dout):\n        return (2 * x * dout,)\n"),
        Invalid("from mindspore import nn\nclass M(nn.Cell):\n    def construct(self, a, b):\n        return a * b\n"
                "    def bprop(self, a, b, out, dout):\n        return [dout * b, dout * a]\n",
                fixed="from mindspore import nn\nclass M(nn.Cell):\n    def construct(self, a, b):\n        return a * b\n"
                      "    def bprop(self, a, b, out, dout):\n        return (dout * b, dout * a)\n"),
        Invalid("from mindspore import nn\nclass C(nn.Cell):\n    def construct(self, x):\n        return x\n"
                "    def bprop(self, x, out, dout):\n        dx = dout * 2\n",
                note="no return statement: the bprop returns None"),
    )

    def check(self, ctx: Context):
        for subject in cell_subjects(ctx):
            yield from non_tuple_drafts(ctx, subject, graph_only_for_single=True)


def non_tuple_drafts(ctx, subject, graph_only_for_single: bool):
    info = returns_of(subject.fn, ctx.program)
    if info is None:
        return
    fn = subject.fn
    if info.missing:
        yield Draft(anchor_span(ctx, fn), f"{subject.label} has no return statement, so it returns None: "
                    f"return a tuple with one gradient per input", fails_in=BOTH, noqa_line=fn.def_line, subject=subject.site or subject)
        return
    if info.falls_through and not any(r.shape.kind == "none" for r in info.returns):
        # Python returns None from the end of the body; MindSpore fails when that path is taken. Whether it is taken
        # depends on the conditions on the way: on attributes the file's instances fix, it is known (GRAPH folds
        # those); otherwise a warning.
        taken = _fall_through_taken(ctx, subject, info.fall_conditions)
        if taken is not False:
            conditions = [c.get_code(include_prefix=False).strip() for c in info.fall_conditions]
            when = f" when {' and '.join(f'`{c}`' for c in conditions[:2])} is false" if conditions else ""
            fails_in = restrict(BOTH, subject) if taken else NEVER
            if fails_in is not None:
                yield Draft(anchor_span(ctx, fn),
                            f"{subject.label} can reach the end of its body without a return and then returns "
                            f"None{when}" + (" (as the file builds it)" if taken else "")
                            + ": MindSpore fails on that path (GRAPH: output should be a tuple; PYNATIVE: the "
                            "python function output is none); return a tuple with one gradient per input on every path",
                            fails_in=fails_in, noqa_line=fn.def_line, subject=subject.site or subject)
    for r in info.returns:
        shape = r.shape
        if shape.kind == "none":
            yield Draft(anchor_span(ctx, fn), f"{subject.label} returns None: return a tuple with one gradient per input",
                        fails_in=BOTH, related=return_related(ctx, r, "returns None here"), noqa_line=fn.def_line, subject=subject.site or subject)
        elif shape.kind == "list":
            fix = None
            if shape.via_name is None and shape.node is not None and _is_comprehension(shape.node):
                code = shape.node.get_code(include_prefix=False)
                fix = Fix("Return tuple(...) of the list", (Edit(ctx.program.span(shape.node), f"tuple({code})"),))
            elif shape.via_name is None and shape.node is not None and shape.node.type == "atom":
                node = shape.node
                inner = node.get_code(include_prefix=False)[1:-1]
                trailing = "," if shape.length == 1 and not inner.rstrip().endswith(",") else ""
                fix = Fix("Return a tuple instead of a list", (Edit(ctx.program.span(node), f"({inner}{trailing})"),))
            elif shape.via_name is not None:
                fix = Fix("Return tuple(...) of the list", (Edit(ctx.program.span(shape.via_name), f"tuple({shape.via_name.value})"),))
            yield Draft(anchor_span(ctx, fn), f"{subject.label} returns a list: GRAPH_MODE requires a tuple",
                        fails_in=frozenset({GRAPH}), fix=fix,
                        related=return_related(ctx, r, "returns a list here"), noqa_line=fn.def_line, subject=subject.site or subject)
        elif shape.kind == "dict":
            yield Draft(anchor_span(ctx, fn), f"{subject.label} returns a dict: MindSpore needs a tuple with one gradient "
                        f"per input (GRAPH: output should be a tuple; PYNATIVE: unreasonable data type dict)",
                        fails_in=BOTH, related=return_related(ctx, r, "returns a dict here"),
                        noqa_line=fn.def_line, subject=subject.site or subject)
        elif shape.kind == "value":
            single = subject.lo == subject.hi == 1
            fix = None
            target = shape.via_name or shape.node
            if single and target is not None:
                code = target.get_code(include_prefix=False)
                fix = Fix("Wrap the gradient in a one-element tuple", (Edit(ctx.program.span(target), f"({code},)"),))
            msg = (f"{subject.label} returns a bare value, not a tuple: GRAPH_MODE requires a tuple even for one input"
                   if single else
                   f"{subject.label} returns one bare value for {subject.hi} inputs: return a tuple with one gradient per input")
            yield Draft(anchor_span(ctx, fn), msg,
                        fails_in=frozenset({GRAPH}) if single and graph_only_for_single else BOTH,
                        fix=fix if single else None, related=return_related(ctx, r, "returns here"),
                        noqa_line=fn.def_line, subject=subject.site or subject)


def _is_comprehension(node) -> bool:
    """``[f(g) for g in ...]``: a list display holding a comprehension."""
    return (node.type == "atom" and node.children[0] == "[" and len(node.children) == 3
            and node.children[1].type == "testlist_comp"
            and any(c.type in ("comp_for", "sync_comp_for") for c in node.children[1].children))


def _fall_through_taken(ctx, subject, conditions) -> bool | None:
    """True when an instance the file builds takes the path to the end of the body (every condition on the way is
    false for it), False when none does, None when that cannot be told. Reads ``self.flag`` / ``not self.flag``."""
    site = subject.site
    if site is None or not conditions:
        return None
    per_condition = []
    for cond in conditions:
        negated = cond.type == "not_test"
        expr = cond.children[1] if negated else cond
        text = dotted(expr)
        if text is None or not text.startswith("self.") or text.count(".") != 1:
            return None
        values = ctx.attribute_values(site.cls, text[5:])
        if values is None:
            return None
        truths = []
        for v in values:
            truth = const_truth(ctx.program, v)
            if truth is None:
                return None
            truths.append(truth != negated)
        per_condition.append(truths)
    # One instance per call: the end is reached when all conditions are false for that instance.
    reached = [not any(t[i] for t in per_condition) for i in range(len(per_condition[0]))]
    return any(reached)
