"""Where the "Add a custom bprop" action writes: the Cells without a bprop, spelled with the file's own
``mindspore.ops`` import, and the import line to add when the file has none.

    plan = plan_skeletons(text)                # or DocumentSession.plan_skeletons (shares the document's tree)
    plan.skeletons     # list[Skeleton] (analysis.py), zeros_like spelled for this file
    plan.import_edit   # Edit | None: ``from mindspore import ops`` at the top of the imports

Runs no rule: only the parse (the document's, through its session) and the class scan.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from .analysis import Skeleton, _skeletons
from .context import Context
from .model import Edit, Position, Span
from .parsing import ParsedDocument, parse_text
from .program import Program
from .settings import Settings

_OPS_MODULES = ("mindspore.ops", "mindspore.ops.functional")
_ZEROS_LIKE = ("mindspore.ops.zeros_like", "mindspore.ops.functional.zeros_like")


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
    skeletons = _skeletons(Context(program, Settings()), classes)
    if lines is not None:
        skeletons = [s for s in skeletons if lines[0] <= s.construct_span.start.line <= lines[1]]
    if not skeletons:
        return SkeletonPlan()
    spelling, import_edit = _zeros_like(program)
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


def zeros_like_spelling(p: Program) -> tuple[str, Edit | None]:
    """How code added to the file calls zeros_like, and the import that makes the name resolve (None: already
    does): what the "Add a custom bprop" action and BP025's fix write."""
    return _zeros_like(p)


def _zeros_like(p: Program) -> tuple[str, Edit | None]:
    """How the new bprop calls zeros_like, and the import that makes the name resolve (None: already does)."""
    for local, full in p.imports.items():
        if full in _OPS_MODULES:
            return f"{local}.zeros_like", None
    for local, full in p.imports.items():
        if full in _ZEROS_LIKE:
            return local, None
    at = _import_position(p)
    if at is None:
        return "ops.zeros_like", None
    newline = p.index.newline()
    # ``ops`` already names something else in this file: import MindSpore's under another name.
    alias = "ops" if not _bound(p, "ops") else "ms_ops"
    line = "from mindspore import ops" + ("" if alias == "ops" else f" as {alias}")
    return f"{alias}.zeros_like", Edit(Span(at, at), line + newline)


def _bound(p: Program, name: str) -> bool:
    if name not in p.text:
        return False  # the common case, without building every assignment and def of the file
    return name in p.imports or name in p.assignments or any(c.name == name for c in p.classes) \
        or name in p.functions


def _import_position(p: Program) -> Position | None:
    """Start of the first top-level import after the docstring and ``from __future__`` imports (or of the first
    statement when the file imports nothing)."""
    first_other = None
    for i, child in enumerate(p.module.children):
        if child.type == "endmarker":
            break
        head = child.children[0] if child.type == "simple_stmt" and child.children else child
        if i == 0 and head.type == "string":
            continue  # the module docstring
        if head.type == "import_from" and _is_future(head):
            continue
        if child.start_pos[1] != 0:
            return None  # error recovery left something odd at the top level: do not guess
        pos = Position(child.start_pos[0] - 1, 0)
        if head.type in ("import_name", "import_from"):
            return pos
        if first_other is None:
            first_other = pos
    return first_other


def _is_future(node) -> bool:
    try:
        return [n.value for n in node.get_from_names()] == ["__future__"]
    except (AttributeError, IndexError, ValueError):
        return False
