"""BP025: ``None`` as a gradient entry (a PyTorch habit): GRAPH returns None, PYNATIVE zeros."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.model import Applicability, Edit, Fix
from ..engine.skeletons import zeros_like_spelling
from .base import example, NEVER, Draft, Invalid, Rule, Valid
from ._returns import anchor_span, cell_subjects, return_related, returns_of


class NoneGradient(Rule):
    code = "BP025"
    per_cell = True
    name = "bprop-none-gradient"
    summary = "None as a gradient gives different results in GRAPH (None) and PYNATIVE (zeros): return ops.zeros_like(x)."
    mindspore_says = "No error: the two modes return different gradients."
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
        Invalid("from mindspore import nn\nclass M(nn.Cell):\n    def construct(self, x, mask):\n        return x * mask\n"
                "    def bprop(self, x, mask, out, dout):\n        return dout * mask, None\n",
                fixed="from mindspore import ops\nfrom mindspore import nn\nclass M(nn.Cell):\n    def construct(self, x, mask):\n"
                      "        return x * mask\n    def bprop(self, x, mask, out, dout):\n"
                      "        return dout * mask, ops.zeros_like(mask)\n",
                note="ops not imported: the fix imports it"),
        Invalid("from mindspore import nn, ops\nclass M(nn.Cell):\n    def construct(self, x, mask):\n        return x * mask\n"
                "    def bprop(self, x, mask, out, dout):\n        return dout * mask, None\n",
                fixed="from mindspore import nn, ops\nclass M(nn.Cell):\n    def construct(self, x, mask):\n        return x * mask\n"
                      "    def bprop(self, x, mask, out, dout):\n        return dout * mask, ops.zeros_like(mask)\n"),
    )

    def check(self, ctx: Context):
        ops_alias = _ops_alias(ctx)
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
            for r in info.returns:
                s = r.shape
                if s.kind != "tuple":
                    continue
                for i, item in enumerate(s.items):
                    if not (item.type == "keyword" and item.value == "None") or i >= subject.hi:
                        continue  # (entries past the inputs are dropped anyway: BP022)
                    if not_tensors is None:
                        not_tensors = ctx.non_tensor_inputs(site) if site is not None else set()
                    if i in not_tensors:
                        continue  # an int/shape/index argument: it has no gradient to diverge
                    if i < len(params) and _optional_input(subject.fn, params[i], site, i):
                        continue  # the input itself may be None (`w=None`, `if w is not None:`): None is its gradient
                    fix = None
                    if s.via_name is None and i < len(params) and i < subject.hi:
                        # (Without ``ops`` imported, the fix imports it, as the "Add a custom bprop" action does.)
                        spelling, import_edit = (f"{ops_alias}.zeros_like", None) if ops_alias else \
                            zeros_like_spelling(ctx.program)
                        edits = (Edit(ctx.program.span(item), f"{spelling}({params[i]})"),)
                        fix = Fix(f"Replace None with {spelling}({params[i]})",
                                  edits + ((import_edit,) if import_edit is not None else ()), Applicability.UNSAFE)
                    yield Draft(anchor_span(ctx, subject.fn),
                                f"{subject.label} returns None as gradient {i + 1}: GRAPH_MODE returns None, "
                                f"PYNATIVE_MODE zeros; return ops.zeros_like(...) instead",
                                fails_in=NEVER, fix=fix, related=return_related(ctx, r, "None returned here"),
                                noqa_line=subject.fn.def_line, subject=subject.site)
                    break


def _ops_alias(ctx) -> str | None:
    for name, full in ctx.program.imports.items():
        if full == "mindspore.ops":
            return name
    for name, full in ctx.program.imports.items():
        if full == "mindspore":
            return f"{name}.ops"
    return None


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
