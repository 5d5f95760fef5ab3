"""Where the "Add a custom bprop" action writes: the Cells without a bprop, spelled with the file's own
``mindspore.ops`` import, and the import line to add when the file has none.

    plan = plan_skeletons(text)                # or DocumentSession.plan_skeletons (shares the document's tree)
    plan.skeletons     # list[Skeleton] (hints.py), zeros_like spelled for this file
    plan.import_edit   # Edit | None: ``from mindspore import ops`` at the top of the imports

Runs no rule: only the parse (the document's, through its session) and the class scan.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from .hints import Skeleton, skeletons_of
from .context import Context
from .model import Edit
from .parsing import ParsedDocument, parse_text
from .program import Program
from .settings import Settings
from .zeros_like import zeros_like_call


@dataclass
class SkeletonPlan:
    skeletons: list[Skeleton] = field(default_factory=list)
    import_edit: Edit | None = None


def plan_skeletons(text: str, *, doc: ParsedDocument | None = None, lines: tuple[int, int] | None = None) -> SkeletonPlan:
    """The skeletons of the Cells whose ``construct`` starts within ``lines`` (0-based, inclusive; all without)."""
    if "construct" not in text:
        return SkeletonPlan()
    if doc is None:
        program = Program(parse_text(text), text)
    else:
        program = Program(doc.parse(text), text, doc.statements)
    classes = None
    if lines is not None:
        # Only the classes around the requested lines: a code action asks on every cursor move.
        first, last = lines[0] + 1, lines[1] + 1  # parso lines are 1-based
        classes = _classes_around(program, first, last)
    skeletons = skeletons_of(Context(program, Settings()), classes)
    if lines is not None:
        skeletons = [s for s in skeletons if lines[0] <= s.construct_span.start.line <= lines[1]]
    if not skeletons:
        return SkeletonPlan()
    # The names the new bprops bind (their parameters) would shadow a module-level one in their bodies.
    shadowed = {name for s in skeletons for name in (*s.inputs, s.out_name, s.dout_name)}
    spelling, import_edit = zeros_like_call(program, shadowed)
    return SkeletonPlan([replace(s, zeros_like=spelling) for s in skeletons], import_edit)


def _classes_around(p: Program, first: int, last: int) -> list:
    """The classes spanning any of the (1-based) lines ``first``..``last``, walking back from the last one that
    starts in them and stopping at the first top-level class that ends before them (no end position computed
    for the rest of the file)."""
    found = []
    for cls in reversed(p.classes):
        node = cls.node
        if node.start_pos[0] > last:
            continue
        if node.end_pos[0] >= first:
            found.append(cls)
        elif node.parent is not None and node.parent.type == "file_input":
            break  # every class before it ends before it
    return found[::-1]
