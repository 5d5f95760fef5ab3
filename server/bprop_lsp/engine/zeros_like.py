"""How code the engine adds to a file (the "Add a custom bprop" action, a rule's fix) calls MindSpore's
``zeros_like``: spelled with the file's own module-level ``mindspore.ops`` import, or with the import line to add
when the file has none.
"""
from __future__ import annotations

import itertools

from .definitions import import_bindings
from .model import Edit, Position, Span
from .program import Program

_OPS_MODULES = ("mindspore.ops", "mindspore.ops.functional")
_ZEROS_LIKE = ("mindspore.ops.zeros_like", "mindspore.ops.functional.zeros_like")


def zeros_like_call(p: Program, shadowed: set[str] = frozenset()) -> tuple[str, Edit | None]:
    """How code added to the file (the "Add a custom bprop" action, a rule's fix) calls zeros_like, and the import
    that makes the name resolve (None: already does).

    Only the file's module-level imports count (one inside a function or a class binds nothing the bprop
    sees), and none whose name a parameter of the bprop (``shadowed``) would hide."""
    imports = [(local, full) for local, full in _module_imports(p) if local not in shadowed]
    for local, full in imports:
        if full in _OPS_MODULES:
            return f"{local}.zeros_like", None
    for local, full in imports:
        if full in _ZEROS_LIKE:
            return local, None
    at = _import_position(p)
    if at is None:
        return "ops.zeros_like", None
    newline = p.index.newline()
    # ``ops`` already names something else in this file, or a parameter: import MindSpore's under another name.
    alias = next(name for name in _aliases() if name not in shadowed and not _bound(p, name))
    line = "from mindspore import ops" + ("" if alias == "ops" else f" as {alias}")
    return f"{alias}.zeros_like", Edit(Span(at, at), line + newline)


def zeros_like_spelling(p: Program, shadowed: set[str] = frozenset()) -> str:
    """How a bprop whose parameters are ``shadowed`` calls zeros_like in this file (the import may be missing)."""
    return zeros_like_call(p, shadowed)[0]


def _aliases():
    yield "ops"
    yield "ms_ops"
    for n in itertools.count(2):
        yield f"ms_ops{n}"


def _module_imports(p: Program) -> list[tuple[str, str]]:
    """(local, full) of the imports that bind a module-level name, in text order (later ones win: reversed)."""
    bound: dict[str, str] = {}
    for node in p.import_nodes:
        if _module_level(node):
            for local, full in import_bindings(node):
                bound.pop(local, None)
                bound[local] = full
    return list(bound.items())


def _module_level(node) -> bool:
    """Whether a statement runs at module level (not in a function, class or lambda body, nor under
    ``if TYPE_CHECKING:``, which never runs)."""
    parent = node.parent
    while parent is not None and parent.type != "file_input":
        if parent.type in ("funcdef", "classdef", "lambdef", "async_funcdef", "async_stmt"):
            return False
        if parent.type == "if_stmt" and "TYPE_CHECKING" in parent.children[1].get_code():
            return False
        parent = parent.parent
    return True


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
