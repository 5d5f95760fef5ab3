"""BP001: a Cell's bprop takes fewer positional parameters than the forward inputs plus ``out`` and ``dout``."""
from __future__ import annotations

from ..engine.context import Context
from .base import BOTH, GRAPH, Draft, Invalid, Rule, Valid
from ._signature import arity_applies, construct_related, counts, def_span, missing_params_fix, view


class MissingParams(Rule):
    code = "BP001"
    name = "bprop-missing-params"
    summary = "A Cell's bprop must take every forward input of construct, then out, then dout."
    mindspore_says = (
        "GRAPH: TypeError: The params of function 'bprop' of Primitive or Cell requires the forward inputs as well "
        "as the 'out' and 'dout'. PYNATIVE: TypeError: <Cell>.bprop() takes N positional arguments but M were given."
    )
    fix_title = "Add the missing trailing parameters"
    valid = (
        Valid("from mindspore import nn\nclass MulAdd(nn.Cell):\n    def construct(self, x, y):\n        return 2 * x + y\n"
              "    def bprop(self, x, y, out, dout):\n        return 2 * dout, dout\n"),
        Valid("from mindspore import nn\nclass Renamed(nn.Cell):\n    def construct(self, x):\n        return x\n"
              "    def bprop(self, a, fwd, g):\n        return (g,)\n", "names do not matter, only positions"),
        Valid("from mindspore import nn\nclass Free(nn.Cell):\n    def construct(self, *inputs):\n        return inputs[0]\n"
              "    def bprop(self, x, out, dout):\n        return (dout,)\n", "*inputs: the count depends on the call"),
    )
    invalid = (
        Invalid("from mindspore import nn\nclass MulAdd(nn.Cell):\n    def construct(self, x, y):\n        return 2 * x + y\n"
                "    def bprop(self, x, y, out):\n        return 2 * out, out\n",
                fixed="from mindspore import nn\nclass MulAdd(nn.Cell):\n    def construct(self, x, y):\n        return 2 * x + y\n"
                      "    def bprop(self, x, y, out, dout):\n        return 2 * out, out\n"),
        Invalid("from mindspore import nn\nclass Rev(nn.Cell):\n    def construct(self, x):\n        return x\n"
                "    def bprop(self, grad_output):\n        return (-grad_output,)\n",
                fixed="from mindspore import nn\nclass Rev(nn.Cell):\n    def construct(self, x):\n        return x\n"
                      "    def bprop(self, x, out, grad_output):\n        return (-grad_output,)\n",
                note="torch-style backward(ctx, grad): inputs and out are inserted before the gradient"),
        Invalid("from mindspore import nn\nclass F(nn.Cell):\n    def construct(self, x):\n        return x\n"
                "    def bprop(\n        self,\n        x,  # input\n        out,\n    ):\n        return (out,)\n",
                fixed="from mindspore import nn\nclass F(nn.Cell):\n    def construct(self, x):\n        return x\n"
                      "    def bprop(\n        self,\n        x,  # input\n        out,\n        dout,\n    ):\n        return (out,)\n",
                note="one parameter per line: the new one gets its own line"),
    )

    def check(self, ctx: Context):
        for site in ctx.cell_sites:
            v = view(ctx, site)
            if v is None or not arity_applies(v):
                continue
            lo, hi = v.input_range
            pynative_count, graph_count = counts(v)
            if graph_count >= lo + 2:
                continue  # enough for GRAPH; a first parameter not named self is BP004's (PYNATIVE shifts)
            fix, missing = missing_params_fix(ctx, v)
            # MindSpore 2.10 PYNATIVE tolerates `bprop(self, dout)` for a cell without inputs (case 104).
            fails = GRAPH if lo == 0 and hi == 0 and v.count == 1 and v.has_self else None
            lacks = ", ".join(missing) if missing else "parameters"
            message = f"bprop of {site.owner_label} must take {v.expected_text()}: it lacks {lacks}"
            if not v.has_self:
                message = (f"bprop of {site.owner_label} must take {v.expected_text()}: it has {v.count} parameter(s) "
                           f"in all, too few for {lo} input(s), out and dout (a torch-style backward(ctx, grad) "
                           f"signature lacks the forward inputs, out and dout)")
            kw_only = [q for q in v.fn.params if q.kind == "kwonly" and not q.has_default]
            if kw_only:
                message += (f"; {', '.join(f'`{q.name}`' for q in kw_only)} is keyword-only, but MindSpore passes "
                            f"every argument positionally")
            if lo != hi:
                message += f" (construct has {hi - lo} defaulted input(s))"
            fails_in = (frozenset({fails}) if fails else BOTH) & site.modes
            if not fails_in:
                continue
            yield Draft(
                span=def_span(ctx, v.fn),
                message=message,
                fails_in=fails_in,
                fix=fix,
                related=construct_related(ctx, site),
                noqa_line=v.fn.def_line,
            )
