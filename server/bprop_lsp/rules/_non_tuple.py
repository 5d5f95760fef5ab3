"""What a bprop that returns something other than a tuple (a bare Tensor, a list, a dict, None, nothing) is told,
shared by the Cell rule (BP020) and the ``ops.Custom`` one (BP041)."""
from __future__ import annotations

from ..engine.conditions import const_truth
from ..engine.model import Edit, Fix
from ..engine.trees import dotted
from .base import BOTH, GRAPH, NEVER, Draft
from ._returns import anchor_span, restrict, return_related, returns_of


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
