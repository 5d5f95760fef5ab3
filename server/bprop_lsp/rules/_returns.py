"""What a bprop returns, read from its ``return`` statements with light, local dataflow.

Each return is classified as a tuple of known length, a list, ``None``, a bare (Tensor) value, or
unknown. Only literal shapes and names bound once to a literal in the same function count; calls,
subscripts, tuple repetition and everything else are unknown and left alone.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.program import Function, iter_own_nodes

ARITH = {"arith_expr", "term", "factor", "power", "shift_expr", "and_expr", "xor_expr", "expr"}


@dataclass
class Shape:
    kind: str  # "tuple" | "list" | "none" | "value" | "unknown" | "dict"
    items: list = field(default_factory=list)  # element nodes for tuple/list
    node: object = None  # the expression (None for a bare/missing return)
    via_name: object = None  # the Name the return used, when resolved through an assignment

    @property
    def length(self) -> int:
        return len(self.items)


@dataclass
class ReturnInfo:
    stmt: object  # return_stmt node, or the lambda body
    shape: Shape


@dataclass
class Returns:
    returns: list[ReturnInfo]
    missing: bool  # the body can fall off its end without returning (and has no return at all)


def _unwrap_parens(node):
    while node.type == "atom" and node.children[0] == "(" and len(node.children) == 3 and node.children[1].type != "testlist_comp":
        node = node.children[1]
    return node


def _elements(node):
    """Elements of a tuple display ``a, b`` / ``(a, b)`` / ``()`` or None if not a tuple display."""
    if node.type == "atom" and node.children[0] == "(":
        if len(node.children) == 2:
            return []
        inner = node.children[1]
        if inner.type == "testlist_comp":
            if any(c.type == "comp_for" or c.type == "sync_comp_for" for c in inner.children):
                return None  # generator expression
            if any(c == "," for c in inner.children):
                return [c for c in inner.children if c != ","]
        return None
    if node.type in ("testlist_star_expr", "testlist", "exprlist"):
        return [c for c in node.children if c != ","]
    return None


def classify(node, fn: Function, assignments: dict, depth: int = 0) -> Shape:
    if node is None:
        return Shape("none")
    node = _unwrap_parens(node)
    t = node.type
    if t == "keyword" and node.value == "None":
        return Shape("none", node=node)
    items = _elements(node)
    if items is not None:
        if any(i.type in ("star_expr",) for i in items):
            return Shape("unknown", node=node)
        return Shape("tuple", items=items, node=node)
    if t == "atom" and node.children[0] == "[":
        if len(node.children) == 2:
            return Shape("list", items=[], node=node)
        inner = node.children[1]
        if inner.type == "testlist_comp":
            if any(c.type in ("comp_for", "sync_comp_for") for c in inner.children):
                return Shape("unknown", node=node)
            return Shape("list", items=[c for c in inner.children if c != ","], node=node)
        return Shape("list", items=[inner], node=node)
    if t == "atom" and node.children[0] == "{":
        return Shape("dict", node=node)
    if t in ("number", "string"):
        return Shape("value", node=node)
    if t == "name":
        if depth < 3 and node.value in assignments and len(assignments[node.value]) == 1:
            inner = classify(assignments[node.value][0], fn, assignments, depth + 1)
            inner.via_name = node
            if inner.kind in ("tuple", "list", "value", "dict"):
                return inner
        return Shape("unknown", node=node)
    if t in ARITH and _is_arith(node, fn, assignments):
        return Shape("value", node=node)
    return Shape("unknown", node=node)


def _is_arith(node, fn, assignments) -> bool:
    """An arithmetic expression on names/numbers/attribute reads: it yields a Tensor or a number,
    unless an operand is a sequence (then it might be tuple repetition/concatenation)."""
    for child in node.children:
        if child.type == "operator":
            continue
        c = _unwrap_parens(child)
        if c.type in ("number", "name"):
            if c.type == "name" and c.value in assignments and len(assignments[c.value]) == 1:
                inner = classify(assignments[c.value][0], fn, assignments, 2)
                if inner.kind in ("tuple", "list"):
                    return False
            continue
        if c.type == "atom":
            return False  # a display: tuple/list/dict literal arithmetic
        if c.type in ARITH:
            if not _is_arith(c, fn, assignments):
                return False
            continue
        if c.type in ("atom_expr", "power"):
            continue  # calls/attributes on tensors: ops.sin(x), x.T, dout.sum()
        if c.type == "keyword":
            return False
    return True


def local_assignments(fn: Function) -> dict:
    """name -> right-hand sides of plain ``name = value`` statements in the function's own body.

    Names also bound another way (augmented assignment, for-loop target, unpacking, with/except, walrus)
    get an extra ``None`` entry so that they never look single-assigned."""
    result: dict = {}
    for node in iter_own_nodes(fn.node):
        if node.type == "expr_stmt":
            children = node.children
            if len(children) >= 3 and children[1] == "=":
                value = children[-1]
                for target in children[:-1:2]:
                    if target.type == "name":
                        result.setdefault(target.value, []).append(value)
                    else:
                        for n in _names_in(target):
                            result.setdefault(n, []).append(None)
            elif len(children) >= 2 and children[1].type == "operator" and children[1].value.endswith("="):
                if children[0].type == "name":
                    result.setdefault(children[0].value, []).append(None)
            elif len(children) >= 2 and children[1].type == "annassign":
                ann = children[1]
                if children[0].type == "name" and len(ann.children) >= 4:
                    result.setdefault(children[0].value, []).append(ann.children[-1])
        elif node.type in ("for_stmt", "comp_for", "sync_comp_for", "with_item", "except_clause", "namedexpr_test"):
            for n in _names_in(node.children[1] if node.type in ("for_stmt", "sync_comp_for") else node):
                result.setdefault(n, []).append(None)
    for p in fn.params:
        result.setdefault(p.name, []).append(None)
    return result


def _names_in(node):
    if node.type == "name":
        yield node.value
        return
    for c in getattr(node, "children", []):
        yield from _names_in(c)


def returns_of(fn: Function) -> Returns | None:
    """The function's returns, or None when it is a generator or cannot be read."""
    if fn.node.type == "lambdef":
        body = fn.node.children[-1]
        return Returns([ReturnInfo(body, classify(body, fn, {}))], missing=False)
    assignments = local_assignments(fn)
    found: list[ReturnInfo] = []
    for node in iter_own_nodes(fn.node):
        if node.type in ("yield_expr", "yield_arg") or (node.type == "keyword" and node.value == "yield"):
            return None
        if node.type == "return_stmt":
            value = node.children[1] if len(node.children) > 1 else None
            found.append(ReturnInfo(node, classify(value, fn, assignments)))
        elif node.type == "keyword" and node.value == "return" and node.parent.type != "return_stmt":
            found.append(ReturnInfo(node, Shape("none")))  # a bare `return`
    missing = not found and not _ends_in_raise(fn)
    return Returns(found, missing)


def _ends_in_raise(fn: Function) -> bool:
    body = fn.body
    stmts = [c for c in getattr(body, "children", []) if c.type not in ("newline", "indent", "dedent")]
    if not stmts:
        return False
    last = stmts[-1]
    code = last.get_code().strip()
    return code.startswith("raise") or code.startswith("assert False") or "NotImplementedError" in code


def is_nested_tuple(shape: Shape, fn: Function) -> bool:
    """``((dx, dy),)``: one element that is itself a tuple display or a name bound to one."""
    if shape.kind != "tuple" or shape.length != 1:
        return False
    inner = classify(shape.items[0], fn, local_assignments(fn) if fn.node.type != "lambdef" else {})
    return inner.kind == "tuple"


@dataclass
class Subject:
    """A bprop whose return is checked against the number of forward inputs."""

    fn: Function
    label: str  # "bprop of MulAdd" / "ops.Custom bprop square_bprop"
    lo: int
    hi: int
    kind: str  # "cell" | "custom-op"
    input_names: list | None = None


def cell_subjects(ctx):
    from ._signature import view

    seen = set()
    for site in ctx.cell_sites:
        v = view(ctx, site)
        if v is None or v.input_range is None or v.fn in seen:
            continue
        if v.kind in ("staticmethod", "classmethod") or v.opaque_decorator:
            continue
        lo, hi = v.input_range
        if v.has_self and not (lo + 2 <= v.count <= hi + 2):
            continue  # the signature is already wrong: BP001/BP002 speak first
        seen.add(v.fn)
        yield Subject(v.fn, f"bprop of {site.owner_label}", lo, hi, "cell", v.inputs)


def custom_subjects(ctx):
    from ..engine.context import Signature

    for op in ctx.custom_op_sites:
        if op.function is None or op.inputs is None:
            continue
        sig = Signature(op.function, skip_self=op.bound)
        if sig.vararg is not None or len(sig.positional) != op.inputs + 2:
            continue
        yield Subject(op.function, f"ops.Custom bprop {op.function.name}", op.inputs, op.inputs, "custom-op")


def return_related(ctx, info: ReturnInfo, what: str):
    from ..engine.model import Related

    return (Related(ctx.program.span(info.stmt), what),)


def anchor_span(ctx, fn: Function):
    from ._signature import def_span

    return def_span(ctx, fn)
