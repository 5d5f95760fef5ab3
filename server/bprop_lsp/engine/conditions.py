"""Which way a condition Python evaluates goes, as far as the file tells, without running anything.

* ``const_truth`` — whether a condition is known: ``TYPE_CHECKING``, literals, ``sys.version_info`` comparisons,
  ``not``/``and``/``or``, and module names bound once to a literal (read through the program's imports and
  module-level assignments and defs).
* ``never_taken`` — whether a node sits in a branch Python never takes.

``program`` is the ``Program`` (``program.py``) of the file; only its name tables are read, so a class body's
``if`` can be decided while the classes are read (``definitions.py``). Every walk is bounded (``_MAX_DEPTH``).
"""
from __future__ import annotations

from .trees import call_of, dotted, scope_of, unwrap_parens

_MAX_DEPTH = 8
# Oldest Python MindSpore 2.10 supports: `sys.version_info >= (3, N)` is known True up to it.
_MIN_PYTHON = (3, 9)


def const_truth(program, expr, depth: int = 0):
    """True/False when the condition's value is known without running the program, else None."""
    if expr is None or depth > _MAX_DEPTH:
        return None
    expr = unwrap_parens(expr)
    t = expr.type
    if t == "keyword":
        return {"True": True, "False": False, "None": False}.get(expr.value)
    if t == "number":
        try:
            return bool(complex(expr.value.replace("_", "")))
        except ValueError:
            return None
    if t == "string":
        import ast

        try:
            return bool(ast.literal_eval(expr.value))
        except (ValueError, SyntaxError):
            return None
    if t == "not_test":
        inner = const_truth(program, expr.children[1], depth + 1)
        return None if inner is None else not inner
    if t in ("and_test", "or_test"):
        values = [const_truth(program, c, depth + 1) for c in expr.children[::2]]
        if t == "and_test":
            if any(v is False for v in values):
                return False
            return True if all(v is True for v in values) else None
        if any(v is True for v in values):
            return True
        return False if all(v is False for v in values) else None
    text = dotted(expr)
    if text is not None and call_of(expr) is None:
        if text.rsplit(".", 1)[-1] == "TYPE_CHECKING" and (
                text == "TYPE_CHECKING" and program.imports.get("TYPE_CHECKING", "").endswith("TYPE_CHECKING")
                or program.resolve_dotted(text) in ("typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING")):
            return False
        if t == "name":
            values = program.assignments.get(text, [])
            defs = program.functions.get(text, [])
            if len(values) == 1 and not defs and scope_of(values[0]).type == "file_input" and text not in program.imports:
                value = unwrap_parens(values[0])
                if value.type in ("keyword", "number"):
                    return const_truth(program, value, depth + 1)
        return None
    if t == "comparison" and len(expr.children) == 3:
        left, op, right = expr.children
        if program.resolve_dotted(dotted(left) or "") == "sys.version_info":
            version = _int_tuple(right)
            if version is None:
                return None
            op = op.value if hasattr(op, "value") else op.get_code().strip()
            if op in (">=", ">") and version <= _MIN_PYTHON[: len(version)] and not (op == ">" and version == _MIN_PYTHON[: len(version)]):
                return True
            if op in ("<", "<=") and version <= _MIN_PYTHON[: len(version)] and not (op == "<=" and version == _MIN_PYTHON[: len(version)]):
                return False
        return None
    return None


def _int_tuple(node):
    node = unwrap_parens(node)
    if node.type == "atom" and node.children[0] == "(" and len(node.children) == 3:
        inner = node.children[1]
        items = [c for c in inner.children if c != ","] if inner.type == "testlist_comp" else [inner]
        if all(i.type == "number" and i.value.isdigit() for i in items):
            return tuple(int(i.value) for i in items)
    return None



def never_taken(program, node, stop) -> bool:
    """Whether ``node`` (inside ``stop``, a function) sits in a branch Python never takes: under ``if C:`` with C
    known False (``const_truth``: module flags, literals, ``TYPE_CHECKING``), in the ``else`` of a known-True
    condition, or in the unused arm of a conditional expression on such a condition. Walks up the parents."""
    child, parent = node, getattr(node, "parent", None)
    steps = 0
    while parent is not None and child is not stop and steps < 200:
        steps += 1
        if parent.type == "if_stmt":
            children = parent.children
            i = children.index(child) if child in children else -1
            if i > 0 and children[i - 1] == ":":
                # the suite of branch k: its own condition stands before its ':' (none for the else's)
                own = None if children[i - 2] == "else" else children[i - 2]
                earlier = [children[j + 1] for j, c in enumerate(children) if c in ("if", "elif") and j + 1 < i - 2]
                if own is not None and const_truth(program, own) is False:
                    return True
                if any(const_truth(program, c) is True for c in earlier):
                    return True  # an earlier branch is always taken
        elif parent.type == "test" and len(parent.children) == 5 and parent.children[1] == "if":
            truth = const_truth(program, parent.children[2])
            if truth is not None and (child is parent.children[0]) != truth and child is not parent.children[2]:
                return True
        child, parent = parent, parent.parent
    return False
