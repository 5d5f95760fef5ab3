"""BP025: ``None`` as a gradient entry (a PyTorch habit): GRAPH returns None, PYNATIVE zeros."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.model import Applicability, Edit, Fix
from ..engine.trees import is_within, unwrap_parens
from ..engine.zeros_like import zeros_like_call
from .base import example, GRAPH, NEVER, Draft, Invalid, Rule, Valid
from ._imports import ops_name
from ._returns import (AUGMENTED, leaves_of as _leaves, anchor_span, cell_subjects, instance_truth,
                       local_assignments, restrict, return_related, returns_of)


class NoneGradient(Rule):
    code = "BP025"
    scope = "cell"
    position_free = True
    name = "bprop-none-gradient"
    summary = ("None as a gradient: PYNATIVE uses zeros, GRAPH passes None on, and fails to compile when an op computed "
               "that input: return ops.zeros_like(x).")
    mindspore_says = ("For a network input no error, but the two modes return different gradients (GRAPH None, PYNATIVE "
                      "zeros). For an input an op computed: GRAPH RuntimeError: Bprop \"Muls\" encounter a problem: "
                      "[Calling GetType() on a None object ...; PYNATIVE runs.")
    fix_title = "Replace None with ops.zeros_like(<input>)"
    fix_safe = False
    valid = (
        Valid(example("""
            from mindspore import nn

            class Affine(nn.Cell):
                def construct(self, x, w=None):
                    return x if w is None else x * w
                def bprop(self, x, w, out, dout):
                    if w is not None:
                        return dout * w, dout * x
                    return dout, None
            """), "an optional input that is None gets None"),
        Valid(example("""
            from mindspore import nn, ops

            class Repeat(nn.Cell):
                def construct(self, x, times: int):
                    return ops.tile(x, (times,))
                def bprop(self, x, times, out, dout):
                    return dout.reshape((times, -1)).sum(0), None
            """), "None for an int argument (annotated, defaulted, or passed only Python literals)"),
        Valid(example("""
            from mindspore import nn

            class Pick(nn.Cell):
                def construct(self, x, axis):
                    return x.sum(axis)
                def bprop(self, x, axis, out, dout):
                    return dout, None

            y = Pick()(1.0, 0)
            """), "every call passes a Python number for axis"),
        Valid("from mindspore import nn, ops\nclass M(nn.Cell):\n    def construct(self, x, mask):\n        return x * mask\n"
              "    def bprop(self, x, mask, out, dout):\n        return dout * mask, ops.zeros_like(mask)\n"),
    )
    invalid = (
        Invalid(example("""
            from mindspore import nn, ops

            class Masked(nn.Cell):
                def __init__(self, mask_grad=False):
                    super().__init__()
                    self.mask_grad = mask_grad
                def construct(self, x, mask):
                    return x * mask
                def bprop(self, x, mask, out, dout):
                    return dout * mask, (ops.zeros_like(mask) if self.mask_grad else None)
            """), note="an arm of a conditional expression", fixed=example("""
            from mindspore import nn, ops

            class Masked(nn.Cell):
                def __init__(self, mask_grad=False):
                    super().__init__()
                    self.mask_grad = mask_grad
                def construct(self, x, mask):
                    return x * mask
                def bprop(self, x, mask, out, dout):
                    return dout * mask, (ops.zeros_like(mask) if self.mask_grad else ops.zeros_like(mask))
            """),
                at="9:9", message=("bprop of Masked returns None as gradient 2 (mask): GRAPH_MODE passes None on "
                                   "(and fails to compile wherever an op computed that input), PYNATIVE_MODE uses "
                                   "zeros; return ops.zeros_like(...) instead")),
        Invalid(example("""
            from mindspore import nn, ops

            class Mask(nn.Cell):
                def construct(self, x, mask):
                    return x * mask
                def bprop(self, x, mask, out, dout):
                    grads = [dout * mask]
                    grads.append(None)
                    return tuple(grads)
            """), note="None appended to a list returned as tuple(list)",
                at="6:9", message=("bprop of Mask returns None as gradient 2 (mask): GRAPH_MODE passes None on (and "
                                   "fails to compile wherever an op computed that input), PYNATIVE_MODE uses zeros; "
                                   "return ops.zeros_like(...) instead")),
        Invalid(example("""
            from mindspore import nn, ops

            class Gate(nn.Cell):
                def construct(self, x, g):
                    return x * ops.sigmoid(g)
                def bprop(self, x, g, out, dout):
                    return dout * ops.sigmoid(g), None

            class Outer(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.gate = Gate()
                def construct(self, x):
                    return self.gate(x, x * 3)
            """), note="the caller computes that input with an op: GRAPH fails to compile",
                at="6:9", message=("bprop of Gate returns None as the gradient of g, which the caller computes with "
                                   "an op: GRAPH_MODE fails to compile (the op's own bprop gets None), "
                                   "PYNATIVE_MODE uses zeros; return ops.zeros_like(g) instead [fails in "
                                   "GRAPH_MODE]")),
        Invalid("from mindspore import nn\nclass M(nn.Cell):\n    def construct(self, x, mask):\n        return x * mask\n"
                "    def bprop(self, x, mask, out, dout):\n        return dout * mask, None\n",
                fixed="from mindspore import ops\nfrom mindspore import nn\nclass M(nn.Cell):\n    def construct(self, x, mask):\n"
                      "        return x * mask\n    def bprop(self, x, mask, out, dout):\n"
                      "        return dout * mask, ops.zeros_like(mask)\n",
                note="ops not imported: the fix imports it",
                at="5:9", message=("bprop of M returns None as gradient 2 (mask): GRAPH_MODE passes None on (and "
                                   "fails to compile wherever an op computed that input), PYNATIVE_MODE uses zeros; "
                                   "return ops.zeros_like(...) instead")),
        Invalid("from mindspore import nn, ops\nclass M(nn.Cell):\n    def construct(self, x, mask):\n        return x * mask\n"
                "    def bprop(self, x, mask, out, dout):\n        return dout * mask, None\n",
                fixed="from mindspore import nn, ops\nclass M(nn.Cell):\n    def construct(self, x, mask):\n        return x * mask\n"
                      "    def bprop(self, x, mask, out, dout):\n        return dout * mask, ops.zeros_like(mask)\n",
                at="5:9", message=("bprop of M returns None as gradient 2 (mask): GRAPH_MODE passes None on (and "
                                   "fails to compile wherever an op computed that input), PYNATIVE_MODE uses zeros; "
                                   "return ops.zeros_like(...) instead")),
    )

    def check(self, ctx: Context):
        ops_alias = ops_name(ctx)
        sites = {id(site.function.node): site for site in ctx.cell_sites if site.function is not None}
        for subject in cell_subjects(ctx):
            info = returns_of(subject.fn, ctx.program)
            if info is None:
                continue
            site = sites.get(id(subject.fn.node))
            not_tensors = None  # read only when a None entry is found: it needs the file's call sites
            params = [p.name for p in subject.fn.params if p.kind in ("positional", "posonly")]
            if params and params[0] == "self":
                params = params[1:]
            assignments = local_assignments(subject.fn)
            for r in info.returns:
                s = r.shape
                entries = s.entries if s.kind == "tuple" else None
                if entries is None:
                    continue
                for i, item in enumerate(entries):
                    if i >= subject.hi:
                        break  # (entries past the inputs are dropped anyway: BP022)
                    none = _none_leaf(ctx.program, item, assignments, lambda c: instance_truth(ctx, site, c))
                    if none is None:
                        continue
                    if not_tensors is None:
                        not_tensors = ctx.non_tensor_inputs(site) if site is not None else set()
                    if i in not_tensors:
                        continue  # an int/shape/index argument: it has no gradient to diverge
                    if i < len(params) and _optional_input(subject.fn, params[i], site, i):
                        continue  # the input itself may be None (`w=None`, `if w is not None:`): None is its gradient
                    fix = None
                    if i < len(params) and i < subject.hi and is_within(subject.fn.node, none):
                        # (Without ``ops`` imported, the fix imports it, as the "Add a custom bprop" action does.)
                        spelling, import_edit = (f"{ops_alias}.zeros_like", None) if ops_alias else \
                            zeros_like_call(ctx.program, frozenset(params))
                        edits = (Edit(ctx.program.span(none), f"{spelling}({params[i]})"),)
                        fix = Fix(f"Replace None with {spelling}({params[i]})",
                                  edits + ((import_edit,) if import_edit is not None else ()), Applicability.UNSAFE)
                    computed = site is not None and _computed_at_calls(ctx, site, i)
                    name = params[i] if i < len(params) else f"input {i + 1}"
                    if computed:
                        msg = (f"{subject.label} returns None as the gradient of {name}, which the caller computes "
                               f"with an op: GRAPH_MODE fails to compile (the op's own bprop gets None), "
                               f"PYNATIVE_MODE uses zeros; return ops.zeros_like({name}) instead")
                    else:
                        msg = (f"{subject.label} returns None as gradient {i + 1} ({name}): GRAPH_MODE passes None on "
                               f"(and fails to compile wherever an op computed that input), PYNATIVE_MODE uses zeros; "
                               f"return ops.zeros_like(...) instead")
                    fails_in = (restrict(frozenset({GRAPH}), subject) if computed else None) or NEVER
                    yield Draft(anchor_span(ctx, subject.fn), msg, fails_in=fails_in, fix=fix,
                                related=return_related(ctx, r, "None returned here"),
                                noqa_line=subject.fn.def_line, subject=subject.site)
                    break


def _none_leaf(program, item, assignments, truth_of=None):
    """The ``None`` that makes a gradient entry None on some path: the entry itself, an arm of a conditional
    expression whose condition is not known to pick the other arm, or the value of a local bound once to such.
    Iterative over conditional arms (a bounded stack), so a long chain is read without recursion."""
    from ..engine.conditions import const_truth

    stack = [(item, 0)]
    while stack:
        node, d = stack.pop()
        if d > 6:
            continue
        node = unwrap_parens(node)
        if node.type == "keyword" and node.value == "None":
            return node
        if node.type == "test" and len(node.children) == 5 and node.children[1] == "if":
            truth = truth_of(node.children[2]) if truth_of is not None else const_truth(program, node.children[2])
            if truth is not False:
                stack.append((node.children[0], d + 1))
            if truth is not True:
                stack.append((node.children[4], d + 1))
            continue
        if node.type == "name":
            values = assignments.get(node.value, ())
            if len(values) == 1 and values[0] is not None and values[0] is not AUGMENTED and not is_within(values[0], node):
                stack.append((values[0], d + 1))
    return None


def _computed_at_calls(ctx, site, index: int) -> bool:
    """Every call of the Cell that the file shows passes, at ``index``, an arithmetic expression of a name or
    attribute (``x * 3``, ``self.w * 3``): an op's output, whose own bprop then receives the None (GRAPH fails,
    bprop-rules.md items 22 and 38). A network input passed as is, a literal or a call stays a divergence."""
    calls = [c for c in ctx.call_index.sites(site.cls)]
    if not calls:
        return False
    for call in calls:
        if call.has_star or index >= len(call.positional) or not _in_construct(call.node):
            return False  # (a call outside a construct computes its arguments eagerly: network inputs)
        arg = unwrap_parens(call.positional[index])
        if arg.type not in ("arith_expr", "term", "factor") or arg.type == "factor" and arg.children[0] != "-":
            return False
        if not any(leaf.type == "name" and leaf.value not in ("None", "True", "False") for leaf in _leaves(arg)):
            return False
    return True


def _in_construct(node) -> bool:
    """The call stands in a method named ``construct`` (where an argument expression is an op of the graph)."""
    parent = node.parent
    while parent is not None and parent.type not in ("funcdef", "file_input"):
        parent = parent.parent
    return parent is not None and parent.type == "funcdef" and parent.name.value == "construct" \
        and parent.parent is not None and parent.parent.type == "suite" and parent.parent.parent.type == "classdef"


def _optional_input(fn, name: str, site, index: int) -> bool:
    """An input that may be None: construct defaults it to None, or the bprop tests it against None."""
    code = fn.node.get_code()
    if f"{name} is None" in code or f"{name} is not None" in code:
        return True
    if site is not None and site.construct is not None:
        params = [q for q in site.construct.params if q.kind in ("positional", "posonly")][1:]
        if index < len(params):
            default = params[index].node.default
            return default is not None and default.type == "keyword" and default.value == "None"
    return False
