"""BP045: importing ``bprop_getters`` from the MindSpore 1.x module path."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.model import Edit, Fix
from .base import BOTH, Draft, Invalid, Rule, Valid

OLD = "mindspore.ops._grad.grad_base"
NEW = "mindspore.ops._grad_experimental.grad_base"


class OldGradBaseImport(Rule):
    code = "BP045"
    name = "old-grad-base-import"
    summary = "mindspore.ops._grad was removed in MindSpore 2.x; bprop_getters lives in mindspore.ops._grad_experimental.grad_base (a private API)."
    mindspore_says = "ModuleNotFoundError: No module named 'mindspore.ops._grad'"
    fix_title = f"Import from {NEW}"
    valid = (Valid(f"from {NEW} import bprop_getters\n"),)
    invalid = (Invalid(f"from {OLD} import bprop_getters\n", fixed=f"from {NEW} import bprop_getters\n"),)

    def check(self, ctx: Context):
        p = ctx.program
        for node in p.import_nodes:
            if node.type == "import_from":
                try:
                    names = node.get_from_names()
                except (AttributeError, IndexError):
                    continue
                if node.level or not names:
                    continue
                path = ".".join(n.value for n in names)
                if path == OLD or path.startswith("mindspore.ops._grad.") or path == "mindspore.ops._grad":
                    new = NEW if path == OLD else None
                    fix = None
                    if new is not None:
                        fix = Fix(f"Import from {NEW}", (Edit(p.span(names[0].start_pos, names[-1].end_pos), NEW),))
                    yield Draft(p.span(node), f"`{path}` does not exist in MindSpore 2.x (ModuleNotFoundError); "
                                f"bprop_getters is in {NEW}", fails_in=BOTH, fix=fix, noqa_line=node.start_pos[0] - 1)
            else:
                for path in node.get_paths():
                    dotted_path = ".".join(n.value for n in path)
                    if dotted_path == "mindspore.ops._grad" or dotted_path.startswith("mindspore.ops._grad."):
                        yield Draft(p.span(node), f"`{dotted_path}` does not exist in MindSpore 2.x "
                                    f"(ModuleNotFoundError); use {NEW}", fails_in=BOTH, noqa_line=node.start_pos[0] - 1)
