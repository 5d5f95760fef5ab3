"""BP002: a Cell's bprop takes more positional parameters than the forward inputs plus ``out`` and ``dout``."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.model import Fix
from ..engine.param_edits import is_dout_like, is_out_like, remove_params
from ..engine.trees import iter_own_nodes
from .base import BOTH, GRAPH, Draft, Invalid, Rule, Valid, example
from ._signature import arity_applies, counted_vararg, construct_related, counts, def_span, view


class ExtraParams(Rule):
    code = "BP002"
    depends_on_inputs = True
    scope = "cell"
    position_free = True
    name = "bprop-extra-params"
    summary = "A Cell's bprop takes more parameters than construct's inputs plus out and dout."
    mindspore_says = (
        "GRAPH: TypeError: Function <graph>, The number of parameter of this primal function is N, but the number "
        "of parameters of bprop is M. PYNATIVE: TypeError: <Cell>.bprop() missing 1 required positional argument "
        "(runs if the extras have defaults)."
    )
    fix_title = "Remove the extra parameters"
    valid = (
        Valid("from mindspore import nn\nclass Id(nn.Cell):\n    def construct(self, x):\n        return x\n"
              "    def bprop(self, x, out, dout):\n        return (dout,)\n"),
        Valid("from mindspore import nn\nclass D(nn.Cell):\n    def construct(self, x, y=None):\n        return x\n"
              "    def bprop(self, x, y, out, dout):\n        return dout, dout\n",
              "a defaulted construct input may be passed: the count depends on the call"),
    )
    invalid = (
        Invalid("from mindspore import nn\nclass C(nn.Cell):\n    def construct(self, x):\n        return x\n"
                "    def bprop(ctx, x, out, dout):\n        return (dout,)\n",
                note="the right count with `ctx` for self (a torch port): GRAPH skips only a parameter named self",
                at="5:9", message=("bprop of C names its first parameter `ctx`: GRAPH_MODE skips a first parameter "
                                   "only when it is named `self`, so it counts 4 parameters where MindSpore passes "
                                   "3; rename `ctx` to `self` [fails in GRAPH_MODE]")),
        Invalid("from mindspore import nn\nclass F(nn.Cell):\n    def construct(self, x, y):\n        return x + y\n"
                "    def bprop(self, x, y, z, out, dout):\n        return dout, dout\n",
                fixed="from mindspore import nn\nclass F(nn.Cell):\n    def construct(self, x, y):\n        return x + y\n"
                      "    def bprop(self, x, y, out, dout):\n        return dout, dout\n",
                note="copied from a three-input cell; z is unused, so the fix removes it",
                at="5:9", message=("bprop of F must take (self, x, y, out, dout): it has 5 parameters after self "
                                   "where MindSpore passes 4; extra: z")),
        Invalid("from mindspore import nn\nclass S(nn.Cell):\n    def construct(self, x):\n        return x\n"
                "    def bprop(self, x, out, dout, scale=2.0):\n        return (dout * scale,)\n",
                note="a defaulted extra after dout: PYNATIVE runs, GRAPH rejects; it is used, so no automatic fix",
                at="5:9", message=("bprop of S must take (self, x, out, dout): it has 4 parameters after self where "
                                   "MindSpore passes 3; extra: scale [fails in GRAPH_MODE]")),
        Invalid(example("""
            from mindspore import nn
            class Soft(nn.Cell):
                def construct(self, x):
                    return x
                def bprop(self, x, out, dout, *_):
                    return (dout,)
            """), fixed=example("""
            from mindspore import nn
            class Soft(nn.Cell):
                def construct(self, x):
                    return x
                def bprop(self, x, out, dout):
                    return (dout,)
            """), note="`*_` after dout: GRAPH counts it as a parameter, PYNATIVE runs",
                at="5:9", message=("bprop of Soft takes *_ after dout: GRAPH_MODE counts it as a parameter (4 after "
                                   "self where MindSpore passes 3); remove it [fails in GRAPH_MODE]")),
    )

    def check(self, ctx: Context):
        for site in ctx.cell_sites:
            v = view(ctx, site)
            if v is None:
                continue
            star = counted_vararg(v)
            if star is not None:
                yield from self._counted_vararg(ctx, site, v, star)
                continue
            if not arity_applies(v):
                continue
            lo, hi = v.input_range
            n = hi
            pynative_count, graph_count = counts(v)
            if not v.has_self:
                # GRAPH counts the first parameter as an input; PYNATIVE binds the cell to it.
                if graph_count <= n + 2:
                    continue
                first = v.fn.params[0].name
                if lo + 2 <= pynative_count <= n + 2:
                    fails_in = frozenset({GRAPH}) & site.modes
                    if fails_in:
                        yield Draft(def_span(ctx, v.fn),
                                    f"bprop of {site.owner_label} names its first parameter `{first}`: GRAPH_MODE "
                                    f"skips a first parameter only when it is named `self`, so it counts "
                                    f"{graph_count} parameters where MindSpore passes {n + 2}; rename `{first}` to `self`",
                                    fails_in=fails_in, related=construct_related(ctx, site), noqa_line=v.fn.def_line)
                    continue
                fails_in = BOTH & site.modes
                if fails_in and pynative_count > n + 2:
                    yield Draft(def_span(ctx, v.fn),
                                f"bprop of {site.owner_label} must take {v.expected_text()}: it has {v.count} "
                                f"parameters in all where MindSpore passes the cell, {n} input(s), out and dout",
                                fails_in=fails_in, related=construct_related(ctx, site), noqa_line=v.fn.def_line)
                continue
            kw_extras = [q for q in v.fn.params if q.kind == "kwonly"]
            if v.count <= n + 2 and not kw_extras:
                continue
            if v.count < lo + 2:
                continue  # too few positional parameters (a keyword-only dout): BP001 speaks for it
            extras = self._extras(v, n)
            positional_extras_defaulted = all(q.has_default for q in v.params[n + 2:]) if v.count > n + 2 else True
            kw_defaulted = all(q.has_default for q in kw_extras)
            fails = GRAPH if positional_extras_defaulted and kw_defaulted else None
            fix = None
            if extras and v.fn.node.type == "funcdef" and not (site.inherited and ctx.program.lookup(site.bprop.owner, "construct")):
                used = {node.value for node in iter_own_nodes(v.fn.node) if node.type == "name"}
                if not any(q.name in used for q in extras):
                    edits = remove_params(v.fn, extras, ctx.program.index)
                    if edits:
                        fix = Fix("Remove unused parameter" + ("s " if len(extras) > 1 else " ")
                                  + ", ".join(f"`{q.name}`" for q in extras), tuple(edits))
            count = v.count + len(kw_extras)
            names = ", ".join(q.name for q in extras) if extras else f"{count - (n + 2)} parameter(s)"
            fails_in = (frozenset({fails}) if fails else BOTH) & site.modes
            if not fails_in:
                continue
            yield Draft(
                span=def_span(ctx, v.fn),
                message=f"bprop of {site.owner_label} must take {v.expected_text()}: it has {count} parameters "
                        f"after self where MindSpore passes {n + 2}; extra: {names}",
                fails_in=fails_in,
                fix=fix,
                related=construct_related(ctx, site),
                noqa_line=v.fn.def_line,
            )

    @staticmethod
    def _counted_vararg(ctx: Context, site, v, star):
        """``bprop(self, x, out, dout, *_)``: GRAPH counts ``*_`` (PYNATIVE runs)."""
        fails_in = frozenset({GRAPH}) & site.modes
        if not fails_in:
            return
        fix = None
        used = {node.value for node in iter_own_nodes(v.fn.node) if node.type == "name"}
        if v.fn.node.type == "funcdef" and star.name not in used:
            edits = remove_params(v.fn, [star], ctx.program.index)
            if edits:
                fix = Fix(f"Remove unused parameter `*{star.name}`", tuple(edits))
        n = v.input_range[1]
        yield Draft(def_span(ctx, v.fn),
                    f"bprop of {site.owner_label} takes *{star.name} after dout: GRAPH_MODE counts it as a parameter "
                    f"({n + 3} after self where MindSpore passes {n + 2}); remove it",
                    fails_in=fails_in, fix=fix, related=construct_related(ctx, site), noqa_line=v.fn.def_line)

    @staticmethod
    def _extras(v, n):
        params = v.params
        kw = [q for q in v.fn.params if q.kind == "kwonly"]
        over = len(params) - (n + 2)
        if over <= 0:
            return kw
        inputs = v.inputs or []
        dout_at = next((i for i, q in enumerate(params) if is_dout_like(q.name) and q.name not in inputs), None)
        if dout_at is not None and dout_at == n + 1:
            return params[n + 2:] + kw  # trailing extras after dout
        unknown = [q for q in params if q.name not in inputs and not is_out_like(q.name) and not is_dout_like(q.name)]
        if len(unknown) == over:
            return unknown + kw
        return []
