"""BP022: a Cell's bprop returns more gradients than construct has inputs (silently truncated)."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.model import Edit, Fix
from .base import NEVER, Draft, Invalid, Rule, Valid
from ._returns import anchor_span, cell_subjects, is_dict_display, return_related, returns_of


class TooManyGrads(Rule):
    code = "BP022"
    depends_on_inputs = True
    scope = "cell"
    position_free = True
    name = "bprop-too-many-gradients"
    summary = "A Cell's bprop returns more gradients than construct has inputs: MindSpore silently drops the extras."
    mindspore_says = "No error in either mode: the extra gradients are truncated."
    fix_title = "Drop the extra gradients"
    valid = (
        Valid("from mindspore import nn\nclass A(nn.Cell):\n    def construct(self, x, b):\n        return x + b\n"
              "    def bprop(self, x, b, out, dout):\n        return dout, dout\n"),
    )
    invalid = (
        Invalid("from mindspore import nn\nclass A(nn.Cell):\n    def construct(self, x, b):\n        return x + b\n"
                "    def bprop(self, x, b, out, dout):\n        return dout, dout, dout\n",
                fixed="from mindspore import nn\nclass A(nn.Cell):\n    def construct(self, x, b):\n        return x + b\n"
                      "    def bprop(self, x, b, out, dout):\n        return dout, dout\n",
                at="5:9", message="bprop of A returns 3 gradients for 2 input(s): MindSpore silently drops the last 1"),
    )

    def check(self, ctx: Context):
        for subject in cell_subjects(ctx):
            info = returns_of(subject.fn, ctx.program)
            if info is None or len({r.shape.length for r in info.returns if r.shape.kind == "tuple"}) > 1:
                continue  # paths disagree: BP023 speaks for it
            for r in info.returns:
                s = r.shape
                if s.kind != "tuple" or s.min_length <= subject.hi or any(is_dict_display(i) for i in s.items):
                    continue
                fix = None
                extras = s.items[subject.hi:]
                if s.via_name is None and not s.computed and subject.hi >= 1 and extras and all(_pure(e) for e in extras):
                    last_kept = s.items[subject.hi - 1]
                    end = extras[-1].end_pos
                    fix = Fix(f"Drop the {len(extras)} extra gradient(s)",
                              (Edit(ctx.program.span(last_kept.end_pos, end), ""),))
                yield Draft(anchor_span(ctx, subject.fn),
                            f"{subject.label} returns {s.length_text()} gradients for {subject.hi} input(s): MindSpore "
                            f"silently drops the last {s.min_length - subject.hi}"
                            + (" or more" if s.lengths and len(s.lengths) > 1 else ""),
                            fails_in=NEVER, fix=fix,
                            related=return_related(ctx, r, f"returns {s.length_text()} gradients here"),
                            noqa_line=subject.fn.def_line, subject=subject.site)


def _pure(node) -> bool:
    """Expressions whose removal cannot drop a side effect: names, literals, arithmetic and attribute reads
    (calls are allowed only for the well-known ops.zeros_like/ones_like)."""
    code = node.get_code(include_prefix=False)
    if "(" not in code:
        return True
    return code.replace(" ", "").startswith(("ops.zeros_like(", "ops.ones_like(", "P.ZerosLike()(", "zeros_like("))
